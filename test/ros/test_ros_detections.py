"""~/detections_3d and ~/detections_2d content (rynnec_ros/ros/detections.py) as vision_msgs defines it.

Expected values are worked by hand from vision_msgs 4.1.1's message definitions: BoundingBox3D is the
box's centre pose and its size along the pose's axes; BoundingBox2D's centre is in pixels and its size
the box's full width and height; a Detection carries its own header, an id string and hypotheses
(class_id + score) each with a pose. The 2D centre convention (pixel edges at integers, so that
``centre - size / 2`` is the leftmost pixel, as ``sensor_msgs/RegionOfInterest.x_offset``) is the one the
module documents; the numbers below are that arithmetic on hand-picked masks.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pytestmark = pytest.mark.ros


def _request(stamps=(1_000_000_000, 2_500_000_000)):
    from rynnec_ros.core.types import Frame, Request

    frames = [Frame(rgb=np.zeros((2, 2, 3), np.uint8), stamp_ns=s, frame_id="cam") for s in stamps]
    return Request(question="How far is <object0> from <object1>?", frames=frames, regions=[])


def test_every_measured_box_is_a_detection_in_the_world_frame() -> None:
    from rynnec_ros.core.types import Answer, ObjectBox
    from rynnec_ros.ros.detections import answer_detections_3d

    boxes = [
        ObjectBox(object_id=7, label="mug", center=(2.0, 0.6, 0.35), size=(0.6, 0.4, 0.7), yaw=0.3,
                  orientation=(0.0, 0.0, math.sin(0.15), math.cos(0.15))),
        ObjectBox(object_id=9, label="", center=(1.6, -0.9, 0.25), size=(0.4, 0.3, 0.5), yaw=0.0,
                  frame_id="camera_color_optical_frame"),
    ]
    ans = Answer(text="1.55 m", value=1.55, unit="m", source="geometry", object_ids=[7, 9], boxes=boxes)
    arr = answer_detections_3d(ans, _request(), "odom")
    # The array and each detection stamped with the newest frame (2.5 s); a box without its own frame is
    # in the world frame.
    assert (arr.header.stamp.sec, arr.header.stamp.nanosec, arr.header.frame_id) == (2, 500_000_000, "odom")
    assert [d.header.frame_id for d in arr.detections] == ["odom", "camera_color_optical_frame"]
    first, second = arr.detections
    assert (first.id, second.id) == ("7", "9")
    c, q, s = first.bbox.center.position, first.bbox.center.orientation, first.bbox.size
    assert (c.x, c.y, c.z) == pytest.approx((2.0, 0.6, 0.35))
    assert (q.x, q.y, q.z, q.w) == pytest.approx((0.0, 0.0, math.sin(0.15), math.cos(0.15)))
    assert (s.x, s.y, s.z) == pytest.approx((0.6, 0.4, 0.7))
    (hyp,) = first.results
    assert (hyp.hypothesis.class_id, hyp.hypothesis.score) == ("mug", 1.0)
    assert hyp.pose.pose == first.bbox.center
    assert second.results[0].hypothesis.class_id == "object 9"  # no label: the region's id
    assert (second.bbox.size.x, second.bbox.size.y, second.bbox.size.z) == pytest.approx((0.4, 0.3, 0.5))


def test_an_answer_without_boxes_publishes_an_empty_array() -> None:
    from rynnec_ros.core.types import Answer
    from rynnec_ros.ros.detections import answer_detections_3d

    arr = answer_detections_3d(Answer(text="a red mug", source="model"), _request(), "map")
    assert arr.detections == [] and arr.header.frame_id == "map"


def _mask_msg(mask: np.ndarray, stamp_ns: int, score: float = 0.8):
    from rynnec_ros.msg import ObjectMask
    from std_msgs.msg import Header

    from rynnec_ros.core import masks as rle_codec
    from rynnec_ros.ros import convert

    rle = rle_codec.encode(mask)
    return ObjectMask(header=Header(stamp=convert.ns_to_stamp(stamp_ns), frame_id="cam"), object_id=3,
                      label="the red mug", size=rle["size"], counts=rle["counts"],
                      bbox=convert.mask_bbox(mask), score=score)


def test_the_newest_mask_is_a_pixel_box_detection() -> None:
    from rynnec_ros.ros.detections import mask_detections_2d

    old = np.zeros((40, 60), bool)
    old[0:5, 0:5] = True
    new = np.zeros((40, 60), bool)
    new[10:20, 30:36] = True  # rows 10..19, columns 30..35: 6 wide, 10 tall
    arr = mask_detections_2d([_mask_msg(old, 1_000_000_000), _mask_msg(new, 2_000_000_000, 0.625)])
    assert arr is not None and (arr.header.stamp.sec, arr.header.frame_id) == (2, "cam")
    (det,) = arr.detections
    b = det.bbox
    # Columns 30..35 span pixel edges 30..36: centre 33, width 6; rows 10..19: edges 10..20, centre 15.
    assert (b.center.position.x, b.center.position.y, b.size_x, b.size_y) == (33.0, 15.0, 6.0, 10.0)
    assert b.center.theta == 0.0 and det.id == "3"
    assert det.results[0].hypothesis.class_id == "the red mug"
    assert det.results[0].hypothesis.score == pytest.approx(0.625)


def test_an_empty_mask_is_not_a_detection_and_no_masks_publish_nothing() -> None:
    from rynnec_ros.ros.detections import mask_detections_2d

    arr = mask_detections_2d([_mask_msg(np.zeros((8, 8), bool), 5)])
    assert arr is not None and arr.detections == []
    assert mask_detections_2d([]) is None


# RIHS01 type hashes of the upstream package: ros-perception/vision_msgs 4.1.1 (branch ros2, e77fa2d) built
# from its own sources with this machine's rosidl generators (2026-12-04). Equal hashes mean a robot's
# real vision_msgs subscribers match the node's publishers, whichever package built the type here.
UPSTREAM_TYPE_HASHES = {
    "Detection3DArray": "RIHS01_793f5eab9595ac1c0da07873cc859db42eae51f0ee76056db8562515d830e018",
    "Detection2DArray": "RIHS01_214274120007f4a683866481336b70310268cfa107aebe9d594a6acf75bda968",
}


@pytest.mark.parametrize("name", sorted(UPSTREAM_TYPE_HASHES))
def test_the_built_types_hash_as_upstream_vision_msgs(name: str) -> None:
    import json
    from pathlib import Path

    from ament_index_python.packages import get_package_share_directory

    desc = json.loads((Path(get_package_share_directory("vision_msgs")) / "msg" / f"{name}.json").read_text())
    (own,) = [h["hash_string"] for h in desc["type_hashes"] if h["type_name"] == f"vision_msgs/msg/{name}"]
    assert own == UPSTREAM_TYPE_HASHES[name]
