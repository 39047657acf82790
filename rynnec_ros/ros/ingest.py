"""Camera messages -> frames in the buffer: decoding, size limits, depth pairing, intrinsics.

Runs in the node's ingest callback group. Anything wrong with a message raises ValueError with the reason;
the node drops that message, counts it and logs it (throttled). Nothing here holds a reference to a message.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from sensor_msgs.msg import CameraInfo, CompressedImage, Image

from rynnec_ros.core.buffer import NS_PER_S, FrameBuffer
from rynnec_ros.core.images import depth_pixels, depth_to_metres, image_to_rgb
from rynnec_ros.core.types import Frame
from rynnec_ros.ros import convert
from rynnec_ros.ros.params import NodeParams

MAX_PENDING_DEPTH = 8  # depth frames waiting for their colour frame (drivers publish them a few ms apart)


@dataclass(frozen=True)
class PendingDepth:
    """A depth image kept for a colour frame still to come.

    16UC1/mono16 depth is kept as its uint16 units with the ``depth_scale`` in force when it arrived (half
    the bytes of float32 metres: 1.8 MB instead of 3.7 MB at 720p, and most of them are never attached at
    the default ``ingest_fps``); :meth:`metres` converts it when it is attached. Other depth is float32
    metres already.
    """

    frame_id: str
    depth: np.ndarray
    depth_scale: float

    def metres(self) -> np.ndarray:
        """float32 metres, NaN where unknown: for units exactly what ``images.image_to_depth`` returns."""
        if self.depth.dtype != np.uint16:
            return self.depth
        return depth_to_metres(self.depth, self.depth_scale)


@dataclass
class IngestStats:
    frames_in: int = 0
    frames_kept: int = 0
    last_frame_wall: float = 0.0


class CameraIngest:
    """Colour, depth and camera_info callbacks' logic; depth is paired with colour by stamp and frame_id."""

    def __init__(self, buffer: FrameBuffer, params: Callable[[], NodeParams]) -> None:
        self.buffer = buffer
        self._params = params
        """The node's parameters as they are now (ingest_fps, max_image_pixels and depth_scale are live)."""
        self.stats = IngestStats()
        self.camera_k: np.ndarray | None = None
        self.distortion = ""
        self._pending_depth: dict[int, PendingDepth] = {}
        self._last_kept_ns: int | None = None
        self._resets_seen = buffer.resets

    def on_color(self, msg: Image | CompressedImage) -> str:
        """Buffer one colour frame; returns a note for the log ("" normally)."""
        self.stats.frames_in += 1
        stamp = convert.stamp_to_ns(msg.header.stamp)
        p = self._params()
        fps = p.buffer.ingest_fps
        last = self._last_kept_ns
        if fps > 0 and last is not None and 0 <= stamp - last < NS_PER_S / fps - 1:
            return ""  # thinned before decoding: a dropped frame costs only the deserialisation
        max_pixels = p.inputs.max_image_pixels
        if isinstance(msg, Image):
            convert.check_size(int(msg.width), int(msg.height), max_pixels, f"colour image ({msg.encoding})")
            rgb = image_to_rgb(msg)
        else:
            rgb = convert.compressed_to_rgb(msg, max_pixels)
        frame_id = msg.header.frame_id
        depth = None
        pending = self._pending_depth.pop(stamp, None)
        if pending is not None and self._registered(pending.frame_id, pending.depth.shape, frame_id,
                                                    rgb.shape[:2]):
            depth = pending.metres()
        note = ""
        if self.buffer.get(stamp) is not None:
            # Legal (a driver re-sending), but a camera or bag that repeats stamps for new images makes
            # exact-stamp questions ambiguous; the buffer keeps the newest and its features are recomputed.
            note = f"colour frame stamp {stamp} ns is already buffered: replacing that frame"
        self.buffer.add(Frame(rgb=rgb, stamp_ns=stamp, frame_id=frame_id, depth=depth, K=self.camera_k))
        if self.buffer.resets != self._resets_seen:  # also when a read settled a held-back jump
            self._resets_seen = self.buffer.resets
            note = "camera stamps jumped (looping bag or clock reset): buffer reset"
        self._attach_pending()

        self._last_kept_ns = stamp
        self.stats.frames_kept += 1
        self.stats.last_frame_wall = time.monotonic()
        return note

    def on_depth(self, msg: Image | CompressedImage) -> None:
        stamp = convert.stamp_to_ns(msg.header.stamp)
        p = self._params()
        max_pixels = p.inputs.max_image_pixels
        scale = p.inputs.depth_scale  # the scale in force now, even if it changes before colour
        frame_id = msg.header.frame_id
        if isinstance(msg, Image):
            convert.check_size(int(msg.width), int(msg.height), max_pixels, f"depth image ({msg.encoding})")
            raw = depth_pixels(msg)
            # Units are held as a copy (no view of the message's buffer) and converted when attached.
            kept = raw.copy() if raw.dtype == np.uint16 else depth_to_metres(raw, scale)
            held = PendingDepth(frame_id, kept, scale)
        else:
            held = PendingDepth(frame_id, convert.compressed_depth_to_depth(msg, scale, max_pixels), scale)
        frame = self.buffer.get(stamp)
        if frame is not None:
            self._registered(frame_id, held.depth.shape, frame.frame_id, frame.rgb.shape[:2], strict=True)
            depth = held.metres()
            self.buffer.update(stamp, depth=depth)
            # Keep the buffered array itself: while its frame is buffered it costs nothing more.
            held = PendingDepth(frame_id, depth, scale)
        # Kept for a colour frame with this stamp still to come: a re-sent one, or one held back while a
        # time jump is confirmed (a looping bag has both timelines' frames at the same stamps). The
        # oldest ARRIVAL goes first: evicting the smallest stamp threw away exactly the new timeline's
        # depth after a jump back, so its first frames were buffered without depth.
        self._pending_depth.pop(stamp, None)
        self._pending_depth[stamp] = held
        while len(self._pending_depth) > MAX_PENDING_DEPTH:
            self._pending_depth.pop(next(iter(self._pending_depth)))

    def _attach_pending(self) -> None:
        """Depth that arrived while its colour frame was held back (a time jump being confirmed)."""
        for stamp in list(self._pending_depth):
            frame = self.buffer.get(stamp)
            held = self._pending_depth[stamp]
            if frame is not None and frame.depth is None and self._registered(
                    held.frame_id, held.depth.shape, frame.frame_id, frame.rgb.shape[:2]):
                depth = held.metres()
                self.buffer.update(stamp, depth=depth)
                self._pending_depth[stamp] = PendingDepth(held.frame_id, depth, held.depth_scale)

    @staticmethod
    def _registered(depth_frame: str, depth_shape: tuple[int, ...], color_frame: str,
                    color_shape: tuple[int, ...], strict: bool = False) -> bool:
        """Depth registered to colour has the colour's optical frame_id and size (REP 118; RealSense
        ``aligned_depth_to_color``). Anything else would put depth pixels under the wrong colour pixels."""
        why = ""
        if depth_frame != color_frame:
            why = (f"depth frame_id '{depth_frame}' is not the colour frame_id '{color_frame}': subscribe to "
                   "a depth topic registered to colour (e.g. .../aligned_depth_to_color/image_raw)")
        elif depth_shape != color_shape:
            why = f"depth {depth_shape} is not the size of colour {color_shape}: not registered to colour"
        if why and strict:
            raise ValueError(why)
        return not why

    def on_info(self, msg: CameraInfo) -> str:
        """Keep K; returns a note when the distortion changed (geometry assumes rectified images)."""
        try:
            self.camera_k = convert.camera_info_k(msg)
        except ValueError:
            self.camera_k = None
            raise
        distortion = convert.camera_info_distortion(msg)
        changed = distortion != self.distortion
        self.distortion = distortion
        if changed and distortion:
            return (f"camera_info has distortion ({distortion}); spatial answers assume a rectified image: "
                    "use the rectified colour/depth topics (image_rect) for metric answers")
        return ""

    def reset(self) -> None:
        self._pending_depth.clear()
        self._last_kept_ns = None
