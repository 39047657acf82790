"""Camera inputs: CompressedImage transport, registered depth with NaN/inf, bad camera_info, bad frames."""

from __future__ import annotations

import time

import cv2
import numpy as np
import pytest

pytestmark = pytest.mark.ros

H, W = 40, 56


def test_compressed_colour_depth_and_bad_inputs(node_factory, segmenting_checkpoint) -> None:
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from rynnec_ros.srv import ListFrames
    from sensor_msgs.msg import CameraInfo, CompressedImage, Image

    from rynnec_ros.ros.client import CognitionClient
    from rynnec_ros.ros.convert import ns_to_stamp

    node = node_factory({
        "checkpoint": str(segmenting_checkpoint), "qos_reliability": "reliable", "qos_depth": 20,
        "color_topic": "/cam/color", "color_transport": "compressed", "depth_topic": "/cam/depth",
        "camera_info_topic": "/cam/info", "ingest_fps": 0.0, "max_new_tokens": 2,
    })
    with CognitionClient(client_name="test_inputs_client") as client:
        assert client.wait_for_node(60.0), node.output()
        qos = QoSProfile(depth=20, reliability=ReliabilityPolicy.RELIABLE)
        pub_c = client.node.create_publisher(CompressedImage, "/cam/color/compressed", qos)
        pub_d = client.node.create_publisher(Image, "/cam/depth", qos)
        pub_i = client.node.create_publisher(CameraInfo, "/cam/info", qos)
        deadline = time.monotonic() + 20
        while min(p.get_subscription_count() for p in (pub_c, pub_d, pub_i)) == 0:
            assert time.monotonic() < deadline, node.output()
            time.sleep(0.05)

        stamps = [10**9 * (i + 1) for i in range(3)]
        rgb = np.zeros((H, W, 3), np.uint8)
        rgb[:, : W // 2] = (0, 200, 0)
        png = cv2.imencode(".png", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))[1].tobytes()
        depth = np.full((H, W), 2.0, np.float32)
        depth[0, :] = np.nan
        depth[1, :] = np.inf
        # Discovery is complete on the publisher side first; re-send until the node has everything.
        deadline = time.monotonic() + 20
        while True:
            # An invalid K (all zeros) must not stop frames; a valid one follows.
            pub_i.publish(CameraInfo(height=H, width=W))
            pub_i.publish(CameraInfo(height=H, width=W, k=[50.0, 0, W / 2, 0, 50.0, H / 2, 0, 0, 1]))
            for s in stamps:
                dmsg = Image(height=H, width=W, encoding="32FC1", step=W * 4, data=depth.tobytes())
                dmsg.header.stamp = ns_to_stamp(s)
                dmsg.header.frame_id = "cam_optical"  # registered depth carries the colour optical frame
                pub_d.publish(dmsg)  # depth may come first: it is held until its colour frame arrives
                cmsg = CompressedImage(format="png", data=png)
                cmsg.header.stamp = ns_to_stamp(s)
                cmsg.header.frame_id = "cam_optical"
                pub_c.publish(cmsg)
            bad = CompressedImage(format="jpeg", data=b"\xff\xd8 definitely not a jpeg")
            bad.header.stamp = ns_to_stamp(5 * 10**9)
            pub_c.publish(bad)
            bad_depth = Image(height=H, width=W, encoding="64FC1", step=W * 8, data=bytes(W * H * 8))
            bad_depth.header.stamp = ns_to_stamp(stamps[0])
            pub_d.publish(bad_depth)
            time.sleep(0.5)
            res = client._call(client._list_frames, ListFrames.Request(), 10.0)
            if list(res.has_depth) == [True, True, True]:
                break
            assert time.monotonic() < deadline, (res, node.output())
        assert res.active
        assert client.buffered_stamps() == stamps  # the undecodable frame was dropped
        ans = client.ask("What colour is the left half?", frame_stamps_ns=stamps)
        assert isinstance(ans.text, str)
        assert "dropping colour frame: cannot decode" in node.output()
        assert "unsupported depth encoding '64FC1'" in node.output()
        assert "not a valid intrinsics matrix" in node.output()
    assert node.alive()
