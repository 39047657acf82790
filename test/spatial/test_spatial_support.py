"""Mask bleed onto supporting planes: removed, and the object's bottom set on its support."""

from __future__ import annotations

import numpy as np
import pytest

from rynnec_ros.spatial.ground import Plane
from rynnec_ros.spatial.points import summarise
from rynnec_ros.spatial.support import remove_support_points, rest_on_support

rng = np.random.default_rng(0)
FLOOR_PTS = np.column_stack([rng.uniform(-3, 3, 1000), rng.uniform(-3, 3, 1000), np.zeros(1000)])
FLOOR = Plane(np.array([0.0, 0.0, 1.0]), 0.0, 20000, FLOOR_PTS)


def _box_on_floor_with_bleed() -> np.ndarray:
    faces = np.column_stack(
        [rng.uniform(-0.2, 0.2, 3000), rng.uniform(-0.15, 0.15, 3000), rng.uniform(0, 0.5, 3000)]
    )
    faces[:, 0] = np.where(rng.random(3000) < 0.5, faces[:, 0], np.sign(faces[:, 0]) * 0.2)
    # a segmenter's spill onto the floor around the box's foot, up to 25 cm away
    spill = np.column_stack([rng.uniform(-0.45, 0.45, 300), rng.uniform(-0.4, 0.4, 300), np.zeros(300)])
    return np.concatenate([faces, spill])


def test_floor_spill_is_removed_and_the_box_rests_on_the_floor() -> None:
    pts = _box_on_floor_with_bleed()
    kept, touched = remove_support_points(pts, [FLOOR], threshold=0.03, n_points=30000)
    assert touched == [FLOOR]
    geom = rest_on_support(summarise(kept, 1), touched, reach=0.075)
    assert geom.length == pytest.approx(0.4, abs=0.02)
    assert geom.width == pytest.approx(0.3, abs=0.02)
    assert geom.z_min == pytest.approx(0.0, abs=1e-9)
    assert geom.height == pytest.approx(0.5, abs=0.02)


def test_the_objects_own_plane_and_weak_planes_are_kept() -> None:
    top = np.column_stack([rng.uniform(0, 1.2, 2000), rng.uniform(0, 0.7, 2000), np.full(2000, 0.75)])
    legs = np.column_stack([np.full(400, 0.05), np.full(400, 0.05), rng.uniform(0, 0.73, 400)])
    table = np.concatenate([top, legs])
    own = Plane(np.array([0.0, 0.0, 1.0]), 0.75, 5000, top[:500])
    kept, touched = remove_support_points(table, [own], threshold=0.03, n_points=30000)
    assert touched == [] and len(kept) == len(table)
    weak = Plane(
        np.array([1.0, 0.0, 0.0]),
        0.05,
        300,
        np.column_stack([np.full(50, 0.05), rng.uniform(-3, 3, 50), rng.uniform(0, 2, 50)]),
    )
    kept, touched = remove_support_points(table, [weak], threshold=0.03, n_points=30000)
    assert touched == [] and len(kept) == len(table)
