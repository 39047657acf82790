"""Camera poses from TF: a /tf + /tf_static listener over the ROS-free ``core.transforms.TransformStore``.

One implementation on every machine, the one the tests run: tf2_ros is not a wheel, so a tf2_ros
branch would only ever run on robots. The subscriptions take tf2_ros' ``TransformListener`` defaults
(/tf: keep-last 100, volatile; /tf_static: keep-last 100, reliable, transient-local), so latched static
transforms from any broadcaster arrive. The node asks one question,
``world_T_frame(world, frame, stamp_ns)``, and gets a 4×4 numpy array or a ``LookupError`` with the reason.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from tf2_msgs.msg import TFMessage

from rynnec_ros.core.transforms import TransformStore
from rynnec_ros.ros.convert import stamp_to_ns


class PoseSource:
    """Looks up ``world_T_frame`` at a stamp in the transforms received on /tf and /tf_static."""

    def __init__(self, node: Node, cache_s: float = 30.0, tolerance_s: float = 0.1) -> None:
        self._node = node
        self._tolerance_ns = int(tolerance_s * 1e9)
        self._store = TransformStore(cache_s=cache_s)
        static_qos = QoSProfile(
            depth=100, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE
        )
        group = MutuallyExclusiveCallbackGroup()
        self._subs: list[Any] = [
            node.create_subscription(TFMessage, "/tf", lambda m: self._on_tf(m, False), 100,
                                     callback_group=group),
            node.create_subscription(TFMessage, "/tf_static", lambda m: self._on_tf(m, True), static_qos,
                                     callback_group=group),
        ]

    def _on_tf(self, msg: Any, static: bool) -> None:
        for tr in msg.transforms:
            try:
                self._store.set_stamped(tr, stamp_to_ns(tr.header.stamp), static)
            except ValueError as exc:
                self._node.get_logger().warning(f"ignoring transform: {exc}", throttle_duration_sec=5.0)

    def world_T_frame(self, world: str, frame: str, stamp_ns: int) -> np.ndarray:
        """4×4 pose of ``frame`` in ``world`` at ``stamp_ns``; LookupError with the reason otherwise.

        After a time jump nothing needs clearing: the store restarts an edge's history by itself when
        that edge's clock goes back, which keeps the new timeline's transforms that arrived while the
        jump was being confirmed.
        """
        return self._store.lookup(world, frame, stamp_ns, self._tolerance_ns)

    def destroy(self) -> None:
        """Drop the /tf subscriptions (deactivate): an inactive node must not keep receiving TF."""
        for sub in self._subs:
            self._node.destroy_subscription(sub)
        self._subs = []
