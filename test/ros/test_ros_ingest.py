"""Colour/depth pairing in CameraIngest across a time jump, fed real sensor_msgs/Image messages in-process.

The stream is a looping bag as ``ros2 bag play --loop`` replays it: the same 24 stamps (0.5 s apart) twice,
each loop's depth a different constant (1000 mm, then 1001 mm) so the test can tell which loop's depth a
frame holds. Expected: after the buffer resets onto the second loop, every frame has the second loop's
depth (issue 25: the first two frames of the new timeline were buffered without depth, so a
``distance_to_camera`` question under ``spatial_source: geometry`` failed after every loop).
"""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.ros

T0 = 1_700_000_000 * 10**9
STEP_NS = 500_000_000


def _image(stamp_ns: int, encoding: str, data: bytes, step: int):
    from sensor_msgs.msg import Image

    msg = Image()
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp_ns, 10**9)
    msg.header.frame_id = "camera_color_optical_frame"
    msg.height, msg.width, msg.encoding, msg.step, msg.data = 4, 4, encoding, step, data
    return msg


@pytest.mark.parametrize("depth_first", [False, True], ids=["colour-then-depth", "depth-then-colour"])
def test_a_looping_bag_keeps_depth_on_the_new_timelines_first_frames(depth_first: bool) -> None:
    from rynnec_ros.core.buffer import BufferLimits, FrameBuffer
    from rynnec_ros.ros.ingest import CameraIngest
    from rynnec_ros.ros.params import NodeParams

    params = NodeParams.from_values({"ingest_fps": 0.0})  # keep every frame
    buffer = FrameBuffer(BufferLimits(max_frames=100, max_bytes=1 << 30, max_age_s=300.0, jump_back_s=5.0,
                                      jump_confirm_frames=3))
    ingest = CameraIngest(buffer, lambda: params)
    for loop, millimetres in enumerate((1000, 1001)):
        for i in range(24):
            stamp = T0 + i * STEP_NS
            colour = _image(stamp, "rgb8", bytes(48), 12)
            depth = _image(stamp, "16UC1", np.full(16, millimetres, np.uint16).tobytes(), 8)
            if depth_first:
                ingest.on_depth(depth)
            ingest.on_color(colour)
            if not depth_first:
                ingest.on_depth(depth)
        assert buffer.resets == loop
    frames = buffer.frames()
    assert [f.stamp_ns for f in frames] == [T0 + i * STEP_NS for i in range(24)]
    held = [None if f.depth is None else float(np.nanmax(f.depth)) for f in frames]
    assert held == [pytest.approx(1.001)] * 24  # depth_scale 0.001: millimetres


# Hand-made 16UC1 units: 0 is "no return" (REP 118), the rest spans the range up to the largest value.
UNITS = np.array([[0, 1, 2, 3], [250, 999, 1000, 1001], [4095, 12345, 0, 40000], [65534, 65535, 7, 0]],
                 np.uint16)


def _depth_image(stamp_ns: int, units: np.ndarray, big_endian: bool):
    """16UC1 as a driver sends it; big-endian rows padded to 10 bytes exercise step and is_bigendian."""
    if not big_endian:
        return _image(stamp_ns, "16UC1", units.astype("<u2").tobytes(), 8)
    rows = [units[r].astype(">u2").tobytes() + b"\xab\xcd" for r in range(units.shape[0])]
    msg = _image(stamp_ns, "16UC1", b"".join(rows), 10)
    msg.is_bigendian = 1
    return msg


@pytest.mark.parametrize("big_endian", [False, True], ids=["little-endian", "big-endian-padded"])
@pytest.mark.parametrize("depth_first", [False, True], ids=["colour-then-depth", "depth-then-colour"])
def test_pending_16uc1_depth_is_held_as_uint16_and_converted_exactly(depth_first: bool,
                                                                    big_endian: bool) -> None:
    """Depth waiting for its colour frame is kept as uint16 units (half the bytes of float32 metres) with
    the depth_scale of its arrival; attached, it is exactly units × scale in float32 with 0 -> NaN, for
    either message order, even when depth_scale changes in between."""
    from rynnec_ros.core.buffer import BufferLimits, FrameBuffer
    from rynnec_ros.ros.ingest import CameraIngest
    from rynnec_ros.ros.params import NodeParams

    scale = 0.000125  # e.g. an Orbbec at 1/8 mm units; not the default, so the parameter is what is used
    params = NodeParams.from_values({"ingest_fps": 0.0, "depth_scale": scale})
    buffer = FrameBuffer(BufferLimits(max_frames=100, max_bytes=1 << 30, max_age_s=300.0, jump_back_s=5.0,
                                      jump_confirm_frames=3))
    ingest = CameraIngest(buffer, lambda: params)
    expected = UNITS.astype(np.float32) * np.float32(scale)
    expected[UNITS == 0] = np.nan
    colour = _image(T0, "rgb8", bytes(48), 12)
    depth = _depth_image(T0, UNITS, big_endian)
    if depth_first:
        ingest.on_depth(depth)
        held = ingest._pending_depth[T0]
        assert held.depth.dtype == np.uint16 and held.depth.nbytes == UNITS.size * 2
        assert np.array_equal(held.depth, UNITS)
        assert not np.shares_memory(held.depth, np.frombuffer(depth.data, np.uint8))  # no view of the msg
        params = params.replace({"depth_scale": 0.001})  # changed before the colour frame: the arrival's
        # scale still applies
        ingest.on_color(colour)
        assert T0 not in ingest._pending_depth
    else:
        ingest.on_color(colour)
        ingest.on_depth(depth)
    frame = buffer.get(T0)
    assert frame is not None and frame.depth is not None
    assert frame.depth.dtype == np.float32 and frame.depth.shape == (4, 4)
    assert np.array_equal(frame.depth, expected, equal_nan=True)
    assert np.array_equal(np.isnan(frame.depth), UNITS == 0)
    if not depth_first:
        # Attached on arrival: what is kept for a re-sent colour frame is the buffered array, not a copy.
        assert ingest._pending_depth[T0].depth is frame.depth
        ingest.on_color(colour)  # the driver re-sends the colour frame
        resent = buffer.get(T0)
        assert resent is not None and resent.depth is not None
        assert np.array_equal(resent.depth, expected, equal_nan=True)
