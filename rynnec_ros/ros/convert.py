"""Message <-> numpy conversions at the edge of the node.

Every function raises ValueError naming what was wrong (unknown encoding, wrong size, malformed RLE) so
the node can answer ``success=false`` with that reason instead of dying. Raw ``sensor_msgs/Image`` is
decoded by ``core/images.py`` (numpy, shared with the bag reader); ``CompressedImage`` goes through OpenCV's
``imdecode`` (what cv_bridge's ``compressed_imgmsg_to_cv2`` calls), after its size is read from the header.
"""

from __future__ import annotations

import array
import io
import struct
import warnings
from typing import Any

import cv2
import numpy as np
from builtin_interfaces.msg import Time
from PIL import Image as PILImage
from sensor_msgs.msg import CompressedImage, Image, RegionOfInterest

from rynnec_ros.core.images import pixels
from rynnec_ros.core.types import NS_PER_S, RequestError

INT32_MAX = 2**31 - 1

def stamp_to_ns(stamp: Any) -> int:
    """builtin_interfaces/Time -> integer nanoseconds (the buffer's key); ValueError for invalid times.

    REP 103 / builtin_interfaces: ``nanosec`` is the fraction below one second, so >= 10^9 is malformed;
    a negative ``sec`` cannot be sent back (our responses carry stamps) and no camera clock produces it.
    """
    sec, nanosec = int(stamp.sec), int(stamp.nanosec)
    if sec < 0:
        raise RequestError(f"stamp sec={sec} is negative")
    if not 0 <= nanosec < NS_PER_S:
        raise RequestError(f"stamp nanosec={nanosec} is not below 10^9")
    return sec * NS_PER_S + nanosec


def ns_to_stamp(ns: int) -> Time:
    ns = int(ns)
    if ns < 0:
        raise ValueError(f"negative stamp {ns} ns")
    if ns // NS_PER_S > INT32_MAX:
        raise ValueError(f"stamp {ns} ns does not fit builtin_interfaces/Time (int32 seconds)")
    return Time(sec=ns // NS_PER_S, nanosec=ns % NS_PER_S)


def check_size(width: int, height: int, max_pixels: int, what: str) -> None:
    """Refuse an image before decoding it when its declared size is over the budget (decompression bombs,
    8K frames a 1080p pipeline never asked for): ValueError naming the size and the limit."""
    if width <= 0 or height <= 0:
        raise RequestError(f"{what} has an empty size {width}x{height}")
    if width * height > max_pixels:
        raise RequestError(f"{what} is {width}x{height} = {width * height} pixels, more than "
                           f"max_image_pixels={max_pixels}")


def compressed_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a JPEG/PNG header without decoding the pixels; ValueError when unreadable."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PILImage.DecompressionBombWarning)
            with PILImage.open(io.BytesIO(data)) as img:
                width, height = img.size
    except PILImage.DecompressionBombError as exc:
        raise RequestError(f"compressed image header declares an implausible size: {exc}") from exc
    except Exception as exc:
        raise RequestError(f"cannot decode compressed image header: {exc}") from exc
    return int(width), int(height)


def compressed_to_rgb(msg: CompressedImage, max_pixels: int) -> np.ndarray:
    """sensor_msgs/CompressedImage (jpeg/png) -> H×W×3 uint8 RGB, the size checked from the header first."""
    data = bytes(msg.data)
    width, height = compressed_size(data)
    check_size(width, height, max_pixels, f"compressed image ({msg.format})")
    try:
        bgr = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    except cv2.error as exc:
        raise RequestError(f"cannot decode compressed image ({msg.format}): {exc}") from exc
    if bgr is None or bgr.shape[:2] != (height, width):
        raise RequestError(f"cannot decode compressed image of format '{msg.format}' ({len(data)} bytes)")
    return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)


# compressed_depth_image_transport: a 12-byte ConfigHeader (int32 format, float32 depthParam[2]) then a
# PNG; 16UC1 is stored as is, 32FC1 as inverse depth quantised with depthParam (a / (q - b) metres).
_CDEPTH_HEADER = struct.Struct("<iff")


def compressed_depth_to_depth(msg: CompressedImage, depth_scale: float, max_pixels: int) -> np.ndarray:
    """compressedDepth (``16UC1; compressedDepth png`` or ``32FC1; compressedDepth png``) -> metres."""
    fmt = msg.format.replace(" ", "")
    encoding = fmt.split(";", 1)[0]
    if "compressedDepth" not in fmt or encoding not in ("16UC1", "32FC1") or fmt.endswith("rvl"):
        raise RequestError(f"unsupported compressed depth format '{msg.format}' (accepted: 16UC1 or 32FC1 "
                           "'; compressedDepth png')")
    data = bytes(msg.data)
    if len(data) <= _CDEPTH_HEADER.size:
        raise RequestError(f"compressedDepth message has {len(data)} bytes, no room for its header and PNG")
    _, quant_a, quant_b = _CDEPTH_HEADER.unpack_from(data)
    png = data[_CDEPTH_HEADER.size:]
    width, height = compressed_size(png)
    check_size(width, height, max_pixels, "compressed depth image")
    try:
        raw = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_UNCHANGED)
    except cv2.error as exc:
        raise RequestError(f"cannot decode compressed depth: {exc}") from exc
    if raw is None or raw.dtype != np.uint16 or raw.ndim != 2:
        raise RequestError("compressed depth PNG is not a 16-bit single-channel image")
    if encoding == "16UC1":
        depth = raw.astype(np.float32) * np.float32(depth_scale)
    else:
        with np.errstate(divide="ignore"):
            depth = (np.float32(quant_a) / (raw.astype(np.float32) - np.float32(quant_b))).astype(np.float32)
    depth[(raw == 0) | ~np.isfinite(depth) | (depth <= 0)] = np.nan
    return depth


def _rgb_message(msg: Any, rgb: np.ndarray, stamp_ns: int, frame_id: str) -> Any:
    """``msg`` (Image or CompressedImage) with its header filled, after checking ``rgb`` is H×W×3 uint8."""
    if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
        raise ValueError(f"expected HxWx3 uint8 RGB, got {rgb.shape} {rgb.dtype}")
    msg.header.stamp = ns_to_stamp(stamp_ns)
    msg.header.frame_id = frame_id
    return msg


def rgb_to_image(rgb: np.ndarray, stamp_ns: int, frame_id: str) -> Image:
    """H×W×3 uint8 RGB -> sensor_msgs/Image rgb8 (overlays, replayed frames, client publishing)."""
    msg = _rgb_message(Image(), rgb, stamp_ns, frame_id)
    msg.height, msg.width = int(rgb.shape[0]), int(rgb.shape[1])
    msg.encoding = "rgb8"
    msg.is_bigendian = 0
    msg.step = int(rgb.shape[1]) * 3
    # array('B') skips the per-byte range check Humble's generated setter runs on bytes (≈0.7 s per 720p
    # frame on x86); every distro accepts it as uint8[] data.
    msg.data = array.array("B", np.ascontiguousarray(rgb).tobytes())
    return msg


def rgb_to_compressed(rgb: np.ndarray, stamp_ns: int, frame_id: str, quality: int) -> CompressedImage:
    """H×W×3 uint8 RGB -> sensor_msgs/CompressedImage JPEG as image_transport's ``compressed`` plugin
    publishes it (``<base>/compressed``): ``format`` is the raw encoding then ``"; jpeg compressed bgr8"``
    (compressed_image_transport's compressed_publisher.cpp), so ``republish compressed raw``, RViz's
    compressed transport and Foxglove decode it, and viewers off the robot need a fraction of the
    raw image's bandwidth."""
    msg = _rgb_message(CompressedImage(), rgb, stamp_ns, frame_id)
    bgr = cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)
    ok, jpeg = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise ValueError("JPEG encoding of the overlay failed")
    msg.format = "rgb8; jpeg compressed bgr8"
    msg.data = array.array("B", jpeg.tobytes())
    return msg


def mono8_to_mask(msg: Image) -> np.ndarray:
    """mono8 (or 8UC1) mask image -> boolean mask (non-zero = object)."""
    if msg.encoding not in ("mono8", "8UC1"):
        raise RequestError(f"mask image must be mono8, got '{msg.encoding}'")
    return pixels(msg, 1, "u1")[:, :, 0] > 0


def mask_bbox(mask: np.ndarray) -> RegionOfInterest:
    """Tight pixel bounding box of a mask (all zero for an empty mask)."""
    roi = RegionOfInterest()
    ys, xs = np.nonzero(mask)
    if xs.size:
        roi.x_offset, roi.y_offset = int(xs.min()), int(ys.min())
        roi.width, roi.height = int(xs.max() - xs.min() + 1), int(ys.max() - ys.min() + 1)
    return roi


def camera_info_distortion(msg: Any) -> str:
    """"" for an undistorted (rectified) camera, else a description: geometry assumes rectified images."""
    d = [float(v) for v in msg.d]
    if not any(abs(v) > 1e-9 for v in d):
        return ""
    return f"{msg.distortion_model or 'unknown model'} D={[round(v, 5) for v in d]}"


def camera_info_k(msg: Any) -> np.ndarray:
    """CameraInfo -> 3×3 float64 intrinsics; ValueError when K is missing, NaN or degenerate."""
    k = np.asarray(msg.k, dtype=np.float64).reshape(3, 3)
    if not np.all(np.isfinite(k)) or k[0, 0] <= 0 or k[1, 1] <= 0:
        raise RequestError(f"camera_info K is not a valid intrinsics matrix: {k.ravel().tolist()}")
    return k


# One colour per drawn object, in drawing order: the overlay's tints and ~/annotations' outlines agree.
OVERLAY_COLOURS = np.array(
    [[230, 25, 75], [60, 180, 75], [255, 225, 25], [0, 130, 200], [245, 130, 48], [145, 30, 180]], np.uint8
)


def draw_overlay(rgb: np.ndarray, masks: list[np.ndarray], labels: list[str] | None = None) -> np.ndarray:
    """Masks blended onto a copy of the frame with outlines and labels (the RViz overlay)."""
    out = rgb.copy()
    for i, mask in enumerate(masks):
        if mask is None or not mask.any():
            continue
        colour = OVERLAY_COLOURS[i % len(OVERLAY_COLOURS)]
        out[mask] = (0.5 * out[mask] + 0.5 * colour).astype(np.uint8)
        contours, _ = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        cv2.drawContours(out, contours, -1, tuple(int(c) for c in colour), 2)
        if labels and i < len(labels) and labels[i]:
            ys, xs = np.nonzero(mask)
            org = (int(xs.min()), max(int(ys.min()) - 4, 12))
            rgb_colour = tuple(int(c) for c in colour)
            cv2.putText(out, labels[i][:40], org, cv2.FONT_HERSHEY_SIMPLEX, 0.5, rgb_colour, 1)
    return out
