"""Depth values to metres, ROS-free: one definition for the node (``ros/convert``, ``ros/ingest``) and the
bag reader (``scenes/bagio``), so a live topic and a recorded bag give the same depths."""

from __future__ import annotations

import numpy as np


def depth_to_metres(raw: np.ndarray, depth_scale: float) -> np.ndarray:
    """A depth image's own values -> float32 metres (a new array), NaN where unknown.

    Integer units (16UC1/mono16) are ``units * depth_scale`` taken in float32, 0 meaning no return
    (millimetres by REP 118's convention; some drivers record 0.1 mm or other units). Float values
    (32FC1) are metres whatever the scale, and NaN, inf and non-positive values become NaN.
    """
    if raw.dtype == np.uint16:
        depth = raw.astype(np.float32) * np.float32(depth_scale)
        depth[raw == 0] = np.nan
        return depth
    depth = raw.astype(np.float32, copy=True)
    depth[~np.isfinite(depth) | (depth <= 0)] = np.nan
    return depth
