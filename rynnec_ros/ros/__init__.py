"""The thin ROS 2 layer: the only package that imports rclpy or message types.

Wiring only: the node (lifecycle, services, action, subscriptions), message <-> Request/Answer
conversion shared with the planner client, the deferred replies, the callback guard, diagnostics and
bag replay. Decisions (routing, buffering, queueing) live in the ROS-free modules below it.
"""
