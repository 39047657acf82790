"""Egocentric directions (o'clock / clockwise degrees), turns and walked distance by hand."""

from __future__ import annotations

import numpy as np
import pytest

from rynnec_ros.scenes.scene import LINK_R_OPTICAL, make_T, pitch_matrix, yaw_matrix
from rynnec_ros.spatial.egocentric import (
    after_turn,
    bearing_cw_deg,
    heading,
    lateral_and_forward,
    path_length_xy,
    to_clock,
)


def _camera(yaw_deg: float, pitch_deg: float = 20.0) -> np.ndarray:
    R = yaw_matrix(np.deg2rad(yaw_deg)) @ pitch_matrix(np.deg2rad(pitch_deg)) @ LINK_R_OPTICAL
    return make_T(R, np.array([1.0, 2.0, 1.3]))


def test_heading_is_the_horizontal_optical_axis() -> None:
    np.testing.assert_allclose(heading(_camera(0)), [1, 0], atol=1e-9)
    np.testing.assert_allclose(heading(_camera(90)), [0, 1], atol=1e-9)
    # looking straight down: image-up (−y optical) is where the robot faces
    np.testing.assert_allclose(heading(_camera(0, 90)), [1, 0], atol=1e-9)


@pytest.mark.parametrize(
    ("target", "bearing", "clock"),
    [
        ([3.0, 2.0], 0.0, 12),  # straight ahead (+x)
        ([1.0, 0.0], 90.0, 3),  # right of a robot facing +x is −y
        ([-1.0, 2.0], 180.0, 6),
        ([1.0, 4.0], 270.0, 9),  # left
        ([1.0 + np.sqrt(3), 1.0], 30.0, 1),
    ],
)
def test_bearing_and_clock(target: list[float], bearing: float, clock: int) -> None:
    me = np.array([1.0, 2.0, 1.3])
    b = bearing_cw_deg(me, np.array([1.0, 0.0]), np.array([*target, 0.5]))
    assert b == pytest.approx(bearing, abs=1e-6)
    assert to_clock(b) == clock


def test_turning_left_moves_targets_clockwise() -> None:
    # after a 90° left turn an object that was straight ahead is on my right: 3 o'clock
    assert to_clock(after_turn(0.0, 90.0)) == 3
    assert to_clock(after_turn(0.0, -90.0)) == 9
    assert to_clock(after_turn(90.0, 90.0)) == 6
    assert after_turn(350.0, -45.0) == pytest.approx(305.0)


def test_clock_rounding_boundaries() -> None:
    assert to_clock(14.9) == 12
    assert to_clock(15.1) == 1
    assert to_clock(345.1) == 12
    assert to_clock(359.0) == 12


def test_lateral_and_forward() -> None:
    right, fwd = lateral_and_forward(np.zeros(3), np.array([0.0, 1.0]), np.array([2.0, 3.0, 0.0]))
    assert (right, fwd) == pytest.approx((2.0, 3.0))


def test_walked_distance_ignores_height_changes() -> None:
    path = np.array([[0, 0, 1.0], [3, 4, 1.5], [3, 4, 0.8], [3, 0, 1.2]])
    assert path_length_xy(path) == pytest.approx(9.0)
    assert path_length_xy(path[:1]) == 0.0


def test_bearing_of_my_own_position_is_an_error() -> None:
    with pytest.raises(ValueError, match="undefined"):
        bearing_cw_deg(np.zeros(3), np.array([1.0, 0.0]), np.array([0.0, 0.0, 2.0]))
