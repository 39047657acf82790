"""~/markers content (rynnec_ros/ros/markers.py) as RViz reads visualization_msgs/Marker.

Expected values are worked by hand from the Marker message definition (visualization_msgs/msg/Marker.msg:
a CUBE's pose is its centre and ``scale`` its full size along the pose's axes; TEXT_VIEW_FACING uses
only ``scale.z``, the height of an uppercase "A"; DELETEALL, action 3, clears every marker of the display
before the array's following markers are applied, so one array replaces the last answer's drawing).
"""

from __future__ import annotations

import math

import pytest

pytestmark = pytest.mark.ros


def _answer(**kw):
    from rynnec_ros.core.types import Answer, ObjectBox

    boxes = [
        ObjectBox(object_id=7, label="mug", center=(2.0, 0.6, 0.35), size=(0.6, 0.4, 0.7), yaw=0.3,
                  orientation=(0.0, 0.0, math.sin(0.15), math.cos(0.15))),
        ObjectBox(object_id=9, label="", center=(1.6, -0.9, 0.25), size=(0.4, 0.4, 0.5), yaw=0.0),
    ]
    fields = dict(text="1.55 m", value=1.5546, unit="m", source="geometry", task="distance_between",
                  object_ids=[7, 9], boxes=boxes)
    fields.update(kw)
    return Answer(**fields)


def _request(stamps=(1_000_000_000, 2_500_000_000)):
    import numpy as np

    from rynnec_ros.core.types import Frame, Request

    frames = [Frame(rgb=np.zeros((2, 2, 3), np.uint8), stamp_ns=s, frame_id="cam") for s in stamps]
    return Request(question="How far is <object0> from <object1>?", frames=frames, regions=[])


def test_one_array_replaces_the_last_answer_with_a_box_and_a_label_per_object() -> None:
    from visualization_msgs.msg import Marker

    from rynnec_ros.ros.markers import answer_markers

    markers = answer_markers(_answer(), _request(), "odom").markers
    assert [m.action for m in markers] == [Marker.DELETEALL, Marker.ADD, Marker.ADD, Marker.ADD, Marker.ADD]
    assert [m.type for m in markers[1:]] == [Marker.CUBE, Marker.TEXT_VIEW_FACING] * 2
    assert {m.ns for m in markers} == {"rynnec"} and len({m.id for m in markers[1:]}) == 4
    # Stamped with the newest frame (2.5 s), in the world frame the boxes were measured in.
    for m in markers:
        assert (m.header.stamp.sec, m.header.stamp.nanosec, m.header.frame_id) == (2, 500_000_000, "odom")
    cube = markers[1]
    p, q, s = cube.pose.position, cube.pose.orientation, cube.scale
    assert (p.x, p.y, p.z) == pytest.approx((2.0, 0.6, 0.35))
    assert (q.x, q.y, q.z, q.w) == pytest.approx((0.0, 0.0, math.sin(0.15), math.cos(0.15)))
    assert (s.x, s.y, s.z) == pytest.approx((0.6, 0.4, 0.7))
    assert 0.0 < cube.color.a < 1.0  # see-through: the object stays visible inside its box
    text = markers[2]
    # Above the top face (0.35 + 0.7 / 2 = 0.7 m) by the 0.08 m gap and one 0.12 m text height.
    at = text.pose.position
    assert (at.x, at.y, at.z) == pytest.approx((2.0, 0.6, 0.9))
    assert text.scale.z == pytest.approx(0.12) and text.text == "mug: 1.55 m"
    assert markers[4].text == "object 9: 1.55 m"  # no label: the region's id
    assert markers[1].color != markers[3].color


def test_labels_carry_the_answer_only_on_the_objects_it_is_about() -> None:
    from rynnec_ros.ros.markers import answer_markers

    markers = answer_markers(_answer(object_ids=[9], value=None, text="<object1> is closer to me."),
                             _request(), "odom").markers
    assert [m.text for m in markers[2::2]] == ["mug", "object 9: <object1> is closer to me."]


def test_camera_frame_boxes_keep_their_frame_and_no_boxes_only_clear() -> None:
    from visualization_msgs.msg import Marker

    from rynnec_ros.core.types import ObjectBox
    from rynnec_ros.ros.markers import answer_markers

    box = ObjectBox(object_id=1, label="box", center=(0.0, 0.2, 1.5), size=(0.3, 0.2, 0.4), yaw=0.0,
                    frame_id="camera_color_optical_frame",
                    orientation=(math.sqrt(0.5), 0.0, 0.0, math.sqrt(0.5)))
    markers = answer_markers(_answer(boxes=[box], object_ids=[1]), _request(), "").markers
    assert {m.header.frame_id for m in markers} == {"camera_color_optical_frame"}
    # The box's height axis is its own z: turned +90° about x, z goes to -y, up in the optical frame.
    assert markers[2].pose.position.y == pytest.approx(0.2 - (0.2 + 0.08 + 0.12))
    cleared = answer_markers(_answer(boxes=[]), _request(), "odom").markers
    assert [(m.action, m.header.frame_id) for m in cleared] == [(Marker.DELETEALL, "odom")]
