"""A 3D point on an object (RViz's "Publish Point", a planner's target) as click prompts on the frames
that see it.

A point projects into every frame of a window, but it is on the object there only where nothing stands
between it and the camera: the depth the frame measured at the projected pixel must be the point's own
depth. Nearer means something occludes it on that frame; farther means the point floats in front of
what that frame sees (a point off the surface, or a stale TF). Both are left out, so SAM 2 is never
prompted on the wrong object; a frame without depth or pose cannot be checked and is left out too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rynnec_ros.core.types import Frame, Prompt, RequestError

from .points import transform, validate_K, validate_pose

DEPTH_TOLERANCE_M = 0.05
"""Least gap accepted between the measured and the point's depth (clicks land on a noisy surface)."""
DEPTH_TOLERANCE_REL = 0.03
"""... growing with distance, as a depth camera's noise does (about 1–3 % of range for stereo/ToF)."""
_WINDOW = 1  # a hole's depth comes from the (2·1 + 1)² pixels around it


@dataclass(frozen=True)
class PointView:
    """Where a 3D point falls on one frame: its pixel (x = column, y = row) when visible, else why not."""

    frame: int
    pixel: tuple[float, float] | None
    why: str  # "visible", "behind the camera", "outside the image", "occluded", "in front of the surface",
    # "no depth there", "no depth", "no pose"


def point_views(world_point: Sequence[float], frames: Sequence[Frame]) -> list[PointView]:
    """One ``PointView`` per frame for ``world_point`` (x, y, z) in the frames' world frame (the frame their
    ``world_T_camera`` poses are in)."""
    p = np.asarray(world_point, dtype=np.float64).reshape(3)
    if not np.isfinite(p).all():
        raise RequestError(f"the 3D point {p.tolist()} is not finite")
    return [_view(i, f, p) for i, f in enumerate(frames)]


def _view(i: int, frame: Frame, p: np.ndarray) -> PointView:
    if frame.world_T_camera is None or frame.K is None:
        return PointView(i, None, "no pose")
    T = validate_pose(frame.world_T_camera)
    K = validate_K(frame.K)
    x, y, z = transform(np.linalg.inv(T), p[None])[0]
    if z <= 0:
        return PointView(i, None, "behind the camera")
    u, v = K[0, 0] * x / z + K[0, 2], K[1, 1] * y / z + K[1, 2]  # pixel-index coordinates
    h, w = frame.rgb.shape[:2]
    col, row = int(np.floor(u + 0.5)), int(np.floor(v + 0.5))
    if not (0 <= col < w and 0 <= row < h):
        return PointView(i, None, "outside the image")
    if frame.depth is None:
        return PointView(i, None, "no depth")
    measured = _depth_at(frame.depth, row, col)
    if measured is None:
        return PointView(i, None, "no depth there")
    tolerance = _tolerance(z)
    if measured < z - tolerance:
        return PointView(i, None, "occluded")
    if measured > z + tolerance:
        return PointView(i, None, "in front of the surface")
    return PointView(i, (float(u), float(v)), "visible")


def point_prompts(world_point: Sequence[float], frames: Sequence[Frame], what: str) -> tuple[Prompt, ...]:
    """A positive click on every frame where ``world_point`` is visible; ``ValueError`` saying where it
    fell when it is visible on none (``what`` names it in the message)."""
    views = point_views(world_point, frames)
    prompts = tuple(Prompt(v.frame, (v.pixel,), (1,)) for v in views if v.pixel is not None)
    if not prompts:
        counts = Counter(v.why for v in views)
        summary = ", ".join(f"{n} {why}" for why, n in sorted(counts.items()))
        raise RequestError(f"{what} is visible on none of the {len(views)} frames ({summary})")
    return prompts


def pixel_point(frame: Frame, pixel: tuple[float, float]) -> np.ndarray:
    """The world point a click (x = column, y = row) on ``frame`` lands on: the pixel's depth (or, in a
    hole, its neighbours' when they agree) back-projected through K and the frame's pose."""
    if frame.world_T_camera is None or frame.K is None or frame.depth is None:
        raise RequestError("a click becomes a 3D point only on a frame with depth, camera_info and a TF pose")
    T, K = validate_pose(frame.world_T_camera), validate_K(frame.K)
    u, v = float(pixel[0]), float(pixel[1])
    col, row = int(np.floor(u + 0.5)), int(np.floor(v + 0.5))
    h, w = frame.depth.shape[:2]
    if not (0 <= col < w and 0 <= row < h):
        raise RequestError(f"pixel ({u}, {v}) is outside the {w}×{h} depth image")
    z = _depth_at(frame.depth, row, col)
    if z is None:
        raise RequestError(f"no depth at pixel ({u}, {v})")
    camera = np.array([(u - K[0, 2]) * z / K[0, 0], (v - K[1, 2]) * z / K[1, 1], z])
    return transform(T, camera[None])[0]


def _depth_at(depth: np.ndarray, row: int, col: int) -> float | None:
    """The pixel's depth; in a hole, its neighbours' median when they agree (within the tolerance at
    their depth), so a hole on a silhouette, whose neighbours straddle two surfaces, gives ``None``."""
    own = float(depth[row, col])
    if np.isfinite(own) and own > 0:
        return own
    patch = depth[max(row - _WINDOW, 0) : row + _WINDOW + 1, max(col - _WINDOW, 0) : col + _WINDOW + 1]
    patch = patch[np.isfinite(patch) & (patch > 0)]
    if not patch.size:
        return None
    median = float(np.median(patch))
    return median if float(patch.max() - patch.min()) <= _tolerance(median) else None


def _tolerance(z: float) -> float:
    return max(DEPTH_TOLERANCE_M, DEPTH_TOLERANCE_REL * z)
