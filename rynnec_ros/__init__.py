"""rynnec_ros: embodied cognition for ROS 2 robots with the RynnEC video MLLM.

Only ``rynnec_ros.ros`` imports rclpy; everything else (engine, geometry, evaluation) is ROS-free.
"""

__version__ = "0.1.0"
