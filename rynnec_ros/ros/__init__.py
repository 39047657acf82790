"""The thin ROS 2 layer: the only package that imports rclpy or message types."""
