"""sensor_msgs/Image payloads to arrays, ROS-free: one decoder for the node (``ros/convert``,
``ros/ingest``) and the bag reader (``scenes/bagio``), so a live topic and a recorded bag give the same
pixels and depths.

The functions take any object with sensor_msgs/Image's fields (``height``, ``width``, ``step``,
``encoding``, ``is_bigendian``, ``data``): an rclpy message or one ``rosbags`` deserialised.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

# channels, dtype, and how to reach RGB, for the colour encodings accepted (sensor_msgs image_encodings).
COLOR_ENCODINGS: dict[str, tuple[int, str, int | None]] = {
    "rgb8": (3, "u1", None),
    "bgr8": (3, "u1", cv2.COLOR_BGR2RGB),
    "rgba8": (4, "u1", cv2.COLOR_RGBA2RGB),
    "bgra8": (4, "u1", cv2.COLOR_BGRA2RGB),
    "mono8": (1, "u1", cv2.COLOR_GRAY2RGB),
}
DEPTH_ENCODINGS = {"16UC1": "u2", "mono16": "u2", "32FC1": "f4"}


def pixels(msg: Any, channels: int, dtype: str) -> np.ndarray:
    """View the image payload as H×W×C honouring ``step`` padding and ``is_bigendian``."""
    h, w, step = int(msg.height), int(msg.width), int(msg.step)
    if h <= 0 or w <= 0:
        raise ValueError(f"image has an empty size {w}x{h}")
    dt = np.dtype(dtype).newbyteorder(">" if msg.is_bigendian else "<")
    row = w * channels * dt.itemsize
    if step < row:
        raise ValueError(f"image step {step} is smaller than width*channels*bytes = {row} ({msg.encoding})")
    data = msg.data
    buf = np.frombuffer(data, np.uint8) if not isinstance(data, np.ndarray) else data.view(np.uint8)
    if buf.size != step * h:  # sensor_msgs/Image: "data: actual matrix data, size is (step * rows)"
        raise ValueError(f"image data has {buf.size} bytes, expected step*height = {step * h}")
    rows = buf[: step * h].reshape(h, step)[:, :row]
    arr = np.ascontiguousarray(rows).view(dt).reshape(h, w, channels)
    return arr.astype(dt.newbyteorder("="), copy=False)


def image_to_rgb(msg: Any) -> np.ndarray:
    """Image (rgb8, bgr8, rgba8, bgra8, mono8) -> H×W×3 uint8 RGB."""
    enc = msg.encoding.lower()
    if enc not in COLOR_ENCODINGS:
        raise ValueError(
            f"unsupported colour encoding '{msg.encoding}' (accepted: {', '.join(COLOR_ENCODINGS)})"
        )
    channels, dtype, code = COLOR_ENCODINGS[enc]
    arr = pixels(msg, channels, dtype)
    if code is None:
        return arr
    src = arr[:, :, 0] if channels == 1 else arr
    return cv2.cvtColor(src, code)


def depth_pixels(msg: Any) -> np.ndarray:
    """A depth image's own H×W values (uint16 units for 16UC1/mono16, float32 for 32FC1), step padding
    and byte order honoured; may view the message's buffer."""
    enc = msg.encoding
    if enc not in DEPTH_ENCODINGS:
        raise ValueError(f"unsupported depth encoding '{enc}' (accepted: {', '.join(DEPTH_ENCODINGS)})")
    return pixels(msg, 1, DEPTH_ENCODINGS[enc])[:, :, 0]


def image_to_depth(msg: Any, depth_scale: float = 0.001) -> np.ndarray:
    """Depth image -> float32 metres with NaN where unknown (:func:`depth_to_metres` of its values)."""
    return depth_to_metres(depth_pixels(msg), depth_scale)


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
