"""The RynnEC model and its inference engine (ROS-free)."""
