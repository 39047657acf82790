"""Egocentric quantities relative to "me": the camera pose at the last frame of the window.

Directions are measured in the horizontal plane of the gravity-aligned world frame: 12 o'clock /
0° is where the camera looks (its optical axis projected on the floor), angles grow clockwise as
seen from above, so 3 o'clock / 90° is to my right.
"""

from __future__ import annotations

import numpy as np

from rynnec_ros.core.types import RequestError


def heading(world_T_camera: np.ndarray) -> np.ndarray:
    """Unit horizontal forward direction of a camera pose (optical z projected on the xy plane).

    A camera looking straight down has no horizontal optical axis; the image-up direction (−y of
    the optical frame) is used then, which is where a robot looking down is facing.
    """
    R = np.asarray(world_T_camera)[:3, :3]
    for axis in (R[:, 2], -R[:, 1]):
        h = np.array([axis[0], axis[1]])
        n = np.linalg.norm(h)
        if n > 0.1:
            return h / n
    raise RequestError("camera pose has no horizontal heading")


def bearing_cw_deg(origin: np.ndarray, forward: np.ndarray, target: np.ndarray) -> float:
    """Clockwise angle in [0, 360) from ``forward`` to the horizontal direction of ``target``."""
    d = np.asarray(target, dtype=np.float64)[:2] - np.asarray(origin, dtype=np.float64)[:2]
    if np.linalg.norm(d) < 1e-9:
        raise ValueError("target is at my position; its direction is undefined")
    ccw = np.degrees(np.arctan2(forward[0] * d[1] - forward[1] * d[0], forward @ d))
    return float(np.mod(-ccw, 360.0))


def to_clock(bearing_deg: float) -> int:
    """Nearest clock hour (1..12) of a clockwise bearing; 12 is straight ahead."""
    hour = int(np.round(np.mod(bearing_deg, 360.0) / 30.0)) % 12
    return 12 if hour == 0 else hour


def after_turn(bearing_deg: float, turn_ccw_deg: float) -> float:
    """Bearing of a fixed target after I turn ``turn_ccw_deg`` to the left (negative = right)."""
    return float(np.mod(bearing_deg + turn_ccw_deg, 360.0))


def lateral_and_forward(origin: np.ndarray, forward: np.ndarray, target: np.ndarray) -> tuple[float, float]:
    """(rightward, forward) horizontal offsets of ``target`` in my egocentric frame, metres."""
    d = np.asarray(target, dtype=np.float64)[:2] - np.asarray(origin, dtype=np.float64)[:2]
    right = np.array([forward[1], -forward[0]])  # forward rotated 90° clockwise
    return float(d @ right), float(d @ forward)


def path_length_xy(positions: np.ndarray) -> float:
    """Horizontal path length of successive positions (walking ignores camera height changes)."""
    p = np.asarray(positions, dtype=np.float64)
    if p.shape[0] < 2:
        return 0.0
    return float(np.linalg.norm(np.diff(p[:, :2], axis=0), axis=1).sum())
