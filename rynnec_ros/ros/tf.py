"""Camera poses from TF: tf2_ros when it is installed (robots), else our own /tf + /tf_static listener.

Both sides answer one question, ``world_T_frame(world, frame, stamp_ns)``, as a 4×4 numpy array or
None with the reason logged once, so the rest of the node never touches TF types.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.time import Time

from rynnec_ros.core.transforms import TransformStore, make_transform
from rynnec_ros.ros.convert import stamp_to_ns


def _matrix(transform: Any) -> np.ndarray:
    t, r = transform.translation, transform.rotation
    return make_transform((t.x, t.y, t.z), (r.x, r.y, r.z, r.w))


class PoseSource:
    """Looks up ``world_T_frame`` at a stamp through tf2_ros or the built-in store."""

    def __init__(self, node: Node, cache_s: float = 30.0, tolerance_s: float = 0.1) -> None:
        self._node = node
        self._tolerance_ns = int(tolerance_s * 1e9)
        self._tf2: Any | None = None
        self._listener: Any | None = None
        self._store: TransformStore | None = None
        self._subs: list[Any] = []
        try:
            import tf2_ros

            self._tf2 = tf2_ros.Buffer(cache_time=Duration(seconds=cache_s))
            self._listener = tf2_ros.TransformListener(self._tf2, node, spin_thread=False)
            self.backend = "tf2_ros"
        except ImportError:
            from tf2_msgs.msg import TFMessage

            self._store = TransformStore(cache_s=cache_s)
            static_qos = QoSProfile(
                depth=100, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE
            )
            group = MutuallyExclusiveCallbackGroup()
            self._subs = [
                node.create_subscription(TFMessage, "/tf", lambda m: self._on_tf(m, False), 100,
                                         callback_group=group),
                node.create_subscription(TFMessage, "/tf_static", lambda m: self._on_tf(m, True), static_qos,
                                         callback_group=group),
            ]
            self.backend = "rynnec_ros.transforms"

    def _on_tf(self, msg: Any, static: bool) -> None:
        assert self._store is not None
        for tr in msg.transforms:
            t, r = tr.transform.translation, tr.transform.rotation
            try:
                self._store.set(
                    tr.header.frame_id, tr.child_frame_id, stamp_to_ns(tr.header.stamp),
                    (t.x, t.y, t.z), (r.x, r.y, r.z, r.w), static=static,
                )
            except ValueError as exc:
                self._node.get_logger().warning(f"ignoring transform: {exc}", throttle_duration_sec=5.0)

    def reset(self) -> None:
        """After a confirmed time jump: tf2_ros ignores data older than its history (TF_OLD_DATA), so it
        is cleared; the built-in store restarts each edge's history by itself when that edge's clock goes
        back, which keeps the new timeline's transforms that arrived while the jump was being confirmed."""
        if self._tf2 is not None:
            self._tf2.clear()

    def world_T_frame(self, world: str, frame: str, stamp_ns: int) -> np.ndarray:
        """4×4 pose of ``frame`` in ``world`` at ``stamp_ns``; LookupError with the reason otherwise."""
        if self._store is not None:
            return self._store.lookup(world, frame, stamp_ns, self._tolerance_ns)
        assert self._tf2 is not None
        try:
            tr = self._tf2.lookup_transform(world, frame, Time(nanoseconds=stamp_ns))
        except Exception as exc:  # tf2 raises several exception types; all mean "not available"
            raise LookupError(str(exc)) from exc
        return _matrix(tr.transform)

    def destroy(self) -> None:
        """Drop the /tf subscriptions (deactivate): an inactive node must not keep receiving TF."""
        if self._listener is not None:
            self._listener.unregister()  # tf2_ros (Humble on) destroys its /tf and /tf_static subscriptions
            self._listener = None
        for sub in self._subs:
            self._node.destroy_subscription(sub)
        self._subs = []
