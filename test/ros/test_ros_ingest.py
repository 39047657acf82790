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
    from rynnec_ros.ros.params import PARAMS

    params = {spec.name: spec.default for spec in PARAMS}
    params["ingest_fps"] = 0.0  # keep every frame
    buffer = FrameBuffer(BufferLimits(max_frames=100, max_bytes=1 << 30, max_age_s=300.0, jump_back_s=5.0,
                                      jump_confirm_frames=3))
    ingest = CameraIngest(buffer, params)
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
