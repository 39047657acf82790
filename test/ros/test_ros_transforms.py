"""The built-in transform store behind the node's /tf + /tf_static listener."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rynnec_ros.core.transforms import TransformStore

S = 1_000_000_000


def _yaw(deg: float) -> tuple[float, float, float, float]:
    h = math.radians(deg) / 2
    return (0.0, 0.0, math.sin(h), math.cos(h))


def test_chain_with_static_and_interpolated_dynamic_edges() -> None:
    tf = TransformStore()
    tf.set("odom", "base_link", 0, (0, 0, 0), _yaw(0))
    tf.set("odom", "base_link", 2 * S, (2, 0, 0), _yaw(90))
    tf.set("base_link", "camera", 0, (0, 0, 1.0), _yaw(0), static=True)
    T = tf.lookup("odom", "camera", S)
    assert np.allclose(T[:3, 3], [1, 0, 1])
    assert math.degrees(math.atan2(T[1, 0], T[0, 0])) == pytest.approx(45)
    # The inverse direction and a common-ancestor lookup agree.
    assert np.allclose(tf.lookup("camera", "odom", S), np.linalg.inv(T))
    tf.set("odom", "marker", 0, (5, 5, 0), _yaw(0), static=True)
    assert np.allclose(tf.lookup("marker", "camera", S)[:3, 3], [-4, -5, 1])


def test_lookup_outside_history_or_unconnected_fails_with_reason() -> None:
    tf = TransformStore()
    tf.set("odom", "base_link", 10 * S, (0, 0, 0), _yaw(0))
    tf.set("odom", "base_link", 11 * S, (1, 0, 0), _yaw(0))
    assert np.allclose(tf.lookup("odom", "base_link", 11 * S + 1000, tolerance_ns=10**6)[:3, 3], [1, 0, 0])
    with pytest.raises(LookupError, match="no transform odom -> base_link"):
        tf.lookup("odom", "base_link", 20 * S)
    with pytest.raises(LookupError, match="not connected"):
        tf.lookup("map", "base_link", 10 * S)


def test_static_outlives_the_cache_and_bad_input_is_rejected() -> None:
    tf = TransformStore(cache_s=1.0)
    tf.set("a", "b", 0, (0, 0, 0), _yaw(0), static=True)
    for i in range(30):
        tf.set("b", "c", i * S // 10, (i, 0, 0), _yaw(0))
    with pytest.raises(LookupError):
        tf.lookup("b", "c", 0)  # evicted by the 1 s cache
    assert np.allclose(tf.lookup("a", "b", 123), np.eye(4))
    with pytest.raises(ValueError, match="invalid quaternion"):
        tf.set("a", "d", 0, (0, 0, 0), (0, 0, 0, 0))
    with pytest.raises(ValueError, match="non-finite"):
        tf.set("a", "d", 0, (math.nan, 0, 0), _yaw(0))
    with pytest.raises(ValueError, match="bad transform"):
        tf.set("a", "a", 0, (0, 0, 0), _yaw(0))


def test_an_edge_whose_clock_goes_back_restarts_its_history() -> None:
    """A looping bag republishes /tf from the start: those samples are older than the whole cache window
    behind the newest, and would be evicted on arrival; the edge restarts its history instead."""
    tf = TransformStore(cache_s=1.0)
    for i in range(30):
        tf.set("odom", "cam", 100 * S + i * S // 10, (i, 0, 0), _yaw(0))
    tf.set("odom", "cam", 0, (7, 0, 0), _yaw(0))
    assert np.allclose(tf.lookup("odom", "cam", 0)[:3, 3], (7, 0, 0))
    with pytest.raises(LookupError):
        tf.lookup("odom", "cam", 100 * S)


@pytest.mark.parametrize(
    ("translation", "quaternion", "reason"),
    [
        # An attacker's pose: once answered "How far is <object0>?" with "0.00 meters" (truth 1.55 m).
        ((1e300, 1e300, 1e300), _yaw(0), "beyond 1e\\+07 m"),
        ((float("inf"), 0.0, 0.0), _yaw(0), "non-finite"),
        # tf2 BufferCore::setTransform: |x²+y²+z²+w²-1| must be below 10e-3 (TF_DENORMALIZED_QUATERNION).
        ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 2.0), "not a unit quaternion"),
        ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, math.sqrt(1.011)), "not a unit quaternion"),
    ],
)
def test_absurd_poses_are_refused_and_leave_the_history_alone(translation, quaternion, reason) -> None:
    tf = TransformStore()
    tf.set("odom", "camera", S, (1.0, 2.0, 0.5), _yaw(0))
    with pytest.raises(ValueError, match=reason):
        tf.set("odom", "camera", 2 * S, translation, quaternion)
    assert np.allclose(tf.lookup("odom", "camera", S)[:3, 3], [1.0, 2.0, 0.5])
    # Within tf2's tolerance (|q|² = 1.009) and an Earth-centred translation are accepted.
    tf.set("odom", "camera", 3 * S, (6.4e6, 0.0, 0.0), (0.0, 0.0, 0.0, math.sqrt(1.009)))
