"""rynnec_ros: embodied cognition for ROS 2 robots with the RynnEC video MLLM.

Only ``rynnec_ros.ros`` imports rclpy; everything else (engine, geometry, evaluation) is ROS-free.

In a development checkout (``. scripts/env.sh``) the Python sources are imported from the work tree while
colcon installs the generated interfaces (``rynnec_ros.msg``/``.srv``/``.action``) into a second
``rynnec_ros`` directory under ``install/``. Extending the package path here, at the first import, makes
``from rynnec_ros.srv import AskQuestion`` work on its own, as a planner's first line does; on robots
both halves share one installed directory and this changes nothing.
"""

import pkgutil

__path__ = pkgutil.extend_path(__path__, __name__)

__version__ = "0.1.0"
