"""A small transform store (pure numpy; ``ros/tf.py`` feeds it from /tf and /tf_static).

It keeps a bounded, sorted history per child frame, interpolates between neighbouring samples
(linear translation, quaternion slerp) and chains transforms through the tree, as tf2's BufferCore
does for what the node needs: "where was the camera in the world frame at this stamp".
"""

from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rynnec_ros.core.types import NS_PER_S

# A transform is refused when a translation component exceeds this (Earth-centred frames reach 6.4e6 m),
# or when its quaternion's squared norm is 1 ± QUATERNION_TOLERANCE or worse: tf2's BufferCore::setTransform
# rejects such a quaternion as TF_DENORMALIZED_QUATERNION with the same tolerance (10e-3).
MAX_TRANSLATION_M = 1e7
QUATERNION_TOLERANCE = 1e-2


def quat_to_matrix(x: float, y: float, z: float, w: float) -> np.ndarray:
    q = np.array([x, y, z, w], dtype=np.float64)
    n = np.linalg.norm(q)
    if not np.isfinite(n) or n < 1e-9:
        raise ValueError(f"invalid quaternion {q.tolist()}")
    x, y, z, w = q / n
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def make_transform(translation: tuple[float, float, float], quaternion: tuple[float, float, float, float]):
    """4×4 homogeneous parent_T_child from a ROS translation and (x, y, z, w) rotation."""
    t = np.eye(4)
    t[:3, :3] = quat_to_matrix(*quaternion)
    t[:3, 3] = translation
    if not np.all(np.isfinite(t)):
        raise ValueError("transform has non-finite values")
    return t


def _slerp(q0: np.ndarray, q1: np.ndarray, a: float) -> np.ndarray:
    if np.dot(q0, q1) < 0:
        q1 = -q1
    d = float(np.clip(np.dot(q0, q1), -1.0, 1.0))
    if d > 0.9995:
        q = q0 + a * (q1 - q0)
        return q / np.linalg.norm(q)
    th = np.arccos(d)
    return (np.sin((1 - a) * th) * q0 + np.sin(a * th) * q1) / np.sin(th)


@dataclass
class _Edge:
    parent: str
    stamps: list[int] = field(default_factory=list)
    samples: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)  # (translation, quat xyzw)
    static: bool = False


class TransformStore:
    """Thread-safe parent/child transform history with interpolation and chaining."""

    def __init__(self, cache_s: float = 10.0) -> None:
        self._cache_ns = int(cache_s * NS_PER_S)
        self._edges: dict[str, _Edge] = {}
        self._lock = threading.Lock()

    def set(
        self,
        parent: str,
        child: str,
        stamp_ns: int,
        translation: tuple[float, float, float],
        quaternion: tuple[float, float, float, float],
        static: bool = False,
    ) -> None:
        parent, child = parent.lstrip("/"), child.lstrip("/")
        if not parent or not child or parent == child:
            raise ValueError(f"bad transform {parent!r} -> {child!r}")
        t = np.asarray(translation, dtype=np.float64)
        q = np.asarray(quaternion, dtype=np.float64)
        quat_to_matrix(*q)  # validates
        if not np.all(np.isfinite(t)):
            raise ValueError(f"transform {parent} -> {child} translation has non-finite values {t.tolist()}")
        if np.max(np.abs(t)) > MAX_TRANSLATION_M:
            # (1e300, 1e300, 1e300) once made a distance overflow to "0.00 meters" with success.
            raise ValueError(f"transform {parent} -> {child} translation {t.tolist()} is beyond "
                             f"{MAX_TRANSLATION_M:.0e} m of its parent frame")
        if abs(float(q @ q) - 1.0) >= QUATERNION_TOLERANCE:
            raise ValueError(f"transform {parent} -> {child} rotation {q.tolist()} is not a unit quaternion "
                             f"(|q|^2 - 1 = {float(q @ q) - 1.0:.3g})")
        q = q / np.linalg.norm(q)
        with self._lock:
            edge = self._edges.get(child)
            if edge is None or edge.parent != parent or edge.static != static:
                edge = self._edges[child] = _Edge(parent=parent, static=static)
            if static:
                edge.stamps, edge.samples = [0], [(t, q)]
                return
            if edge.stamps and stamp_ns < edge.stamps[-1] - self._cache_ns:
                # Older than the whole history window: this edge's clock went back (a looping bag, a
                # restarted simulator), so its history restarts instead of dropping the new sample.
                edge.stamps, edge.samples = [], []
            i = bisect.bisect_left(edge.stamps, stamp_ns)
            if i < len(edge.stamps) and edge.stamps[i] == stamp_ns:
                edge.samples[i] = (t, q)
            else:
                edge.stamps.insert(i, stamp_ns)
                edge.samples.insert(i, (t, q))
            cut = bisect.bisect_left(edge.stamps, edge.stamps[-1] - self._cache_ns)
            if cut:
                del edge.stamps[:cut], edge.samples[:cut]

    def set_stamped(self, transform: Any, stamp_ns: int, static: bool = False) -> None:
        """One geometry_msgs/TransformStamped (an rclpy or a ``rosbags`` message: the node's /tf listener
        and the bag reader) at ``stamp_ns``, its header stamp as the caller reads it; see :meth:`set`."""
        t, r = transform.transform.translation, transform.transform.rotation
        self.set(transform.header.frame_id, transform.child_frame_id, stamp_ns, (t.x, t.y, t.z),
                 (r.x, r.y, r.z, r.w), static=static)

    def _edge_at(self, child: str, stamp_ns: int, tolerance_ns: int) -> np.ndarray:
        edge = self._edges[child]
        if edge.static:
            t, q = edge.samples[0]
        else:
            st = edge.stamps
            i = bisect.bisect_left(st, stamp_ns)
            if i < len(st) and st[i] == stamp_ns:
                t, q = edge.samples[i]
            elif 0 < i < len(st):
                a = (stamp_ns - st[i - 1]) / (st[i] - st[i - 1])
                (t0, q0), (t1, q1) = edge.samples[i - 1], edge.samples[i]
                t, q = t0 + a * (t1 - t0), _slerp(q0, q1, a)
            else:
                j = 0 if i == 0 else len(st) - 1
                if abs(st[j] - stamp_ns) > tolerance_ns:
                    raise LookupError(
                        f"no transform {edge.parent} -> {child} at {stamp_ns} ns "
                        f"(history {st[0]}..{st[-1]} ns)"
                    )
                t, q = edge.samples[j]
        out = np.eye(4)
        out[:3, :3] = quat_to_matrix(*q)
        out[:3, 3] = t
        return out

    def _chain(self, frame: str) -> list[str]:
        chain = [frame]
        while chain[-1] in self._edges:
            nxt = self._edges[chain[-1]].parent
            if nxt in chain:
                raise LookupError(f"transform loop through {nxt}")
            chain.append(nxt)
        return chain

    def lookup(self, target: str, source: str, stamp_ns: int, tolerance_ns: int = 0) -> np.ndarray:
        """4×4 target_T_source at ``stamp_ns``; LookupError when the frames are not connected then."""
        target, source = target.lstrip("/"), source.lstrip("/")
        with self._lock:
            up_s, up_t = self._chain(source), self._chain(target)
            common = next((f for f in up_s if f in up_t), None)
            if common is None:
                raise LookupError(f"frames {target!r} and {source!r} are not connected")
            root_T_source = np.eye(4)
            for child in up_s[: up_s.index(common)]:
                root_T_source = self._edge_at(child, stamp_ns, tolerance_ns) @ root_T_source
            root_T_target = np.eye(4)
            for child in up_t[: up_t.index(common)]:
                root_T_target = self._edge_at(child, stamp_ns, tolerance_ns) @ root_T_target
        return np.linalg.inv(root_T_target) @ root_T_source
