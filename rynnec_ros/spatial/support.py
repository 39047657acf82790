"""Remove mask bleed onto supporting and background surfaces (floor, table top, wall).

A segmenter's mask spills a few pixels past the object. Where it spills onto the background the
depth gate removes it, but where the object touches a surface (a box on the floor, a vase on a table,
a cabinet against a wall) the spilled pixels have the object's depth and survive. Such points lie on
one of the scene's large planes that extends well beyond the object, so they are dropped; an object
whose lowest points were removed this way rests on that surface, and its bottom is set to it.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rynnec_ros.spatial.ground import Plane
from rynnec_ros.spatial.points import ObjectGeometry


def _is_foreign(plane: Plane, box: tuple[np.ndarray, np.ndarray]) -> bool:
    """Whether most of the plane lies outside the object's box (so it is not the object's own face)."""
    if plane.sample is None or plane.sample.shape[0] == 0:
        return False
    lo, hi = box
    inside = np.all((plane.sample >= lo) & (plane.sample <= hi), axis=1)
    return bool(inside.mean() < 0.5)


def remove_support_points(
    pts: np.ndarray,
    planes: list[Plane],
    threshold: float,
    n_points: int,
    min_support_horizontal: float = 0.02,
    min_support_other: float = 0.04,
    margin: float = 0.05,
) -> tuple[np.ndarray, list[Plane]]:
    """Object points minus those on large foreign planes; also returns the planes that lost points.

    Only well-supported planes count (a share of the ``n_points`` scene points): horizontal ones
    (floor, table tops) from ``min_support_horizontal``, others (walls) from ``min_support_other``,
    because RANSAC's late, weak planes cut through objects (a row of table legs).
    """
    touched: list[Plane] = []
    keep = np.ones(pts.shape[0], dtype=bool)
    box: tuple[np.ndarray, np.ndarray] | None = None  # the object's 2–98 % box, once for all planes
    for plane in planes:
        horizontal = abs(float(plane.normal[2])) >= np.cos(np.deg2rad(15.0))
        need = min_support_horizontal if horizontal else min_support_other
        if plane.n_inliers < need * n_points:
            continue
        on = np.abs(plane.height(pts)) < threshold
        if not on.any() or on.mean() > 0.25:
            continue
        if box is None:
            lo, hi = np.percentile(pts, [2, 98], axis=0)
            box = (lo - margin, hi + margin)
        if not _is_foreign(plane, box):
            continue
        keep &= ~on
        touched.append(plane)
    if keep.sum() < 3:  # nothing but surface: leave the points alone rather than invent an object
        return pts, []
    return pts[keep], touched


def rest_on_support(
    geom: ObjectGeometry, supports: list[Plane], reach: float, max_tilt_deg: float = 15.0
) -> ObjectGeometry:
    """Set the bottom to the horizontal support just below it (its contact points were removed)."""
    cos_max = np.cos(np.deg2rad(max_tilt_deg))
    best: float | None = None
    for plane in supports:
        n = plane.normal if plane.normal[2] >= 0 else -plane.normal
        if n[2] < cos_max:
            continue
        off = plane.offset if plane.normal[2] >= 0 else -plane.offset
        # plane height under the object's centre: n·(x, y, z) = off
        z_plane = (off - n[0] * geom.center[0] - n[1] * geom.center[1]) / n[2]
        gap = geom.z_min - z_plane
        if 0.0 <= gap <= reach and (best is None or z_plane > best):
            best = float(z_plane)
    if best is None:
        return geom
    center = geom.center.copy()
    center[2] = (best + geom.z_max) / 2
    return dataclasses.replace(geom, z_min=best, center=center)
