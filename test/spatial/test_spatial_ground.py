"""RANSAC ground plane: iterative plane removal and the gravity / camera-up choice."""

from __future__ import annotations

import numpy as np
import pytest

from rynnec_ros.spatial.ground import GroundParams, detect_planes, find_ground, rotation_aligning


def _room_points(rng: np.random.Generator) -> np.ndarray:
    floor = np.column_stack([rng.uniform(-2, 2, 4000), rng.uniform(-2, 2, 4000), np.zeros(4000)])
    table = np.column_stack([rng.uniform(0, 1, 1500), rng.uniform(0, 0.6, 1500), np.full(1500, 0.75)])
    wall = np.column_stack([np.full(3000, 2.0), rng.uniform(-2, 2, 3000), rng.uniform(0, 2.5, 3000)])
    ceiling = np.column_stack([rng.uniform(-2, 2, 1000), rng.uniform(-2, 2, 1000), np.full(1000, 2.6)])
    pts = np.concatenate([floor, table, wall, ceiling])
    return pts + rng.normal(0, 0.005, pts.shape)


def test_floor_is_the_lowest_horizontal_plane() -> None:
    pts = _room_points(np.random.default_rng(1))
    plane = find_ground(pts, np.array([0.0, 0.0, 1.0]))
    assert plane is not None
    assert plane.normal @ np.array([0, 0, 1.0]) > 0.999
    assert plane.offset == pytest.approx(0.0, abs=0.01)
    assert plane.height(np.array([[0.0, 0.0, 0.75]]))[0] == pytest.approx(0.75, abs=0.01)


def test_iterative_removal_finds_several_planes() -> None:
    planes = detect_planes(_room_points(np.random.default_rng(2)), GroundParams())
    normals = np.abs(np.array([p.normal for p in planes[:3]]))
    assert len(planes) >= 3
    assert any(n[0] > 0.99 for n in normals)  # the wall
    assert any(n[2] > 0.99 for n in normals)  # floor / table / ceiling


def test_camera_up_prior_finds_a_pitched_floor() -> None:
    """Camera at 1.2 m looking along +x, pitched 25° down; points given in its optical frame."""
    world = _room_points(np.random.default_rng(3))
    pitch = np.deg2rad(25)
    z = np.array([np.cos(pitch), 0.0, -np.sin(pitch)])  # forward
    x = np.array([0.0, -1.0, 0.0])  # right
    y = np.cross(z, x)  # down
    R = np.column_stack([x, y, z])  # world_R_optical
    cam = (world - np.array([-1.0, 0.0, 1.2])) @ R
    plane = find_ground(cam, np.array([0.0, -1.0, 0.0]), from_prior=True)
    assert plane is not None
    assert plane.normal @ (R.T @ np.array([0, 0, 1.0])) > 0.999
    assert plane.offset == pytest.approx(-1.2, abs=0.02)  # the floor is 1.2 m below the camera


def test_no_floor_gives_none() -> None:
    rng = np.random.default_rng(4)
    wall = np.column_stack([np.full(3000, 2.0), rng.uniform(-2, 2, 3000), rng.uniform(0, 2.5, 3000)])
    assert find_ground(wall, np.array([0.0, 0.0, 1.0])) is None


@pytest.mark.parametrize("a", [[0, 0, 1.0], [0, -1.0, 0], [1.0, 1.0, 0], [0, 0, -1.0]])
def test_rotation_aligning(a: list[float]) -> None:
    a_ = np.array(a) / np.linalg.norm(a)
    R = rotation_aligning(a_, np.array([0, 0, 1.0]))
    np.testing.assert_allclose(R @ a_, [0, 0, 1.0], atol=1e-9)
    np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-9)
    assert np.linalg.det(R) == pytest.approx(1.0)


def test_hypothesis_distances_are_point_plane_distances() -> None:
    """``_abs_distances`` against the formula |n·p − d| written out (numpy matrix product)."""
    from rynnec_ros.spatial.ground import _abs_distances

    rng = np.random.default_rng(3)
    pts = rng.normal(size=(1000, 3))
    normals = rng.normal(size=(37, 3))
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    offsets = rng.normal(size=37)
    got = _abs_distances(np.ascontiguousarray(pts.T), normals, offsets)
    np.testing.assert_allclose(got, np.abs(normals @ pts.T - offsets[:, None]), atol=1e-12)
    # Hand value: the plane z = 1 and the point (5, -2, 3) are 2 apart.
    one = _abs_distances(np.array([[5.0], [-2.0], [3.0]]), np.array([[0.0, 0.0, 1.0]]), np.array([1.0]))
    assert one[0, 0] == 2.0
