"""QoS shared by the node's services/action and the planner client.

Deep enough that a burst of requests waits in DDS until the executor takes each one and the job queue
accepts or rejects it with a reason (rclpy's default service profile keeps the last 10 and silently
drops the rest), and that a client receiving a burst of answers keeps them all.
"""

from __future__ import annotations

from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy

from rynnec_ros.ros.params import SERVICE_QUEUE_DEPTH

SERVICE_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=SERVICE_QUEUE_DEPTH,
                         reliability=ReliabilityPolicy.RELIABLE)
