"""~/annotations content (rynnec_ros/ros/annotations.py) and its wire type.

Expected values are worked by hand from hand-picked masks and the conventions the sources state:
foxglove_msgs' PointsAnnotation (LINE_LOOP = 2: a closed polygon; ``thickness`` in pixels; points "use the
top-left corner of the top-left pixel of the image as the origin"), so a pixel (c, r) is centred at
(c + 0.5, r + 0.5) and a box's edges lie on integers; TextAnnotation's ``position`` is the text's
bottom-left corner; OpenCV's ``CHAIN_APPROX_SIMPLE`` (a straight run of a contour keeps its end points
only: an axis-aligned rectangle is its four corner pixels).
"""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.ros


def _stamp(sec: int = 3, nanosec: int = 250_000_000):
    from builtin_interfaces.msg import Time

    return Time(sec=sec, nanosec=nanosec)


def _xy(annotation) -> list[tuple[float, float]]:
    return [(p.x, p.y) for p in annotation.points]


def test_a_rectangle_is_its_corner_pixels_centres_its_pixel_edge_box_and_its_label() -> None:
    from foxglove_msgs.msg import PointsAnnotation

    from rynnec_ros.ros.annotations import image_annotations

    mask = np.zeros((40, 60), bool)
    mask[20:30, 30:36] = True  # rows 20..29, columns 30..35
    arr = image_annotations([mask], ["the red mug"], _stamp())
    contour, box = arr.points
    (label,) = arr.texts
    assert arr.circles == []
    for a in (contour, box, label):
        assert (a.timestamp.sec, a.timestamp.nanosec) == (3, 250_000_000)
    assert contour.type == box.type == PointsAnnotation.LINE_LOOP == 2
    # the corner pixels (30, 20), (30, 29), (35, 29), (35, 20) at their centres
    assert set(_xy(contour)) == {(30.5, 20.5), (30.5, 29.5), (35.5, 29.5), (35.5, 20.5)}
    assert contour.thickness == 2.0 and contour.fill_color.a > 0
    # the box around columns 30..35 and rows 20..29: pixel edges 30..36 and 20..30; not filled
    assert _xy(box) == [(30.0, 20.0), (36.0, 20.0), (36.0, 30.0), (30.0, 30.0)]
    assert box.thickness == 1.0 and box.fill_color.a == 0.0
    # the label sits on the box's top-left corner (its bottom-left corner there), white
    assert (label.text, label.position.x, label.position.y) == ("the red mug", 30.0, 20.0)
    assert (label.text_color.r, label.text_color.g, label.text_color.b, label.text_color.a) == (1, 1, 1, 1)
    assert label.font_size > 0


def test_each_part_of_a_mask_is_a_polygon_and_empty_masks_are_skipped() -> None:
    from rynnec_ros.ros.annotations import image_annotations

    two = np.zeros((20, 20), bool)
    two[2:5, 2:5] = True  # 3x3 at columns/rows 2..4
    two[12:14, 10:18] = True  # 8 wide, 2 tall
    empty = np.zeros((20, 20), bool)
    single = np.zeros((20, 20), bool)
    single[17, 7] = True
    arr = image_annotations([two, empty, single], ["a", "b", "c"], _stamp())
    assert len(arr.points) == 5 and [t.text for t in arr.texts] == ["a", "c"]  # 2 contours + box, 1 + box
    parts = sorted(sorted(_xy(a)) for a in arr.points[:2])
    assert parts == [[(2.5, 2.5), (2.5, 4.5), (4.5, 2.5), (4.5, 4.5)],
                     [(10.5, 12.5), (10.5, 13.5), (17.5, 12.5), (17.5, 13.5)]]
    # the box spans both parts: columns 2..17, rows 2..13
    assert _xy(arr.points[2]) == [(2.0, 2.0), (18.0, 2.0), (18.0, 14.0), (2.0, 14.0)]
    # "a"'s box starts 2 pixels below the image's top, too near for a 12-pixel text above it: inside
    assert (arr.texts[0].position.x, arr.texts[0].position.y) == (2.0, 2.0 + arr.texts[0].font_size)
    # a one-pixel mask: one vertex at the pixel's centre, a 1x1 box around it, the label above it
    assert _xy(arr.points[3]) == [(7.5, 17.5)]
    assert _xy(arr.points[4]) == [(7.0, 17.0), (8.0, 17.0), (8.0, 18.0), (7.0, 18.0)]
    assert (arr.texts[1].position.x, arr.texts[1].position.y) == (7.0, 17.0)
    empty_only = image_annotations([empty], ["b"], _stamp())
    assert empty_only.points == [] and empty_only.texts == []


def test_outlines_have_the_colours_the_overlay_draws() -> None:
    """The n-th object's outline is the colour ~/overlay draws the n-th mask's contour in: read back from
    the overlay's pixels on the mask's boundary (a grey frame, so the colour there is the outline's)."""
    from rynnec_ros.ros.annotations import image_annotations
    from rynnec_ros.ros.convert import draw_overlay

    rgb = np.full((30, 40, 3), 128, np.uint8)
    a, b = np.zeros((30, 40), bool), np.zeros((30, 40), bool)
    a[5:15, 5:15] = True
    b[18:28, 22:35] = True
    drawn = draw_overlay(rgb, [a, b])
    arr = image_annotations([a, b], ["a", "b"], _stamp())
    for mask, contour, box in ((a, arr.points[0], arr.points[1]), (b, arr.points[2], arr.points[3])):
        rows, cols = np.nonzero(mask)
        on_edge = drawn[rows.min(), cols.min()]  # a corner pixel lies on the contour line
        outline = contour.outline_color
        assert [round(outline.r * 255), round(outline.g * 255), round(outline.b * 255)] == on_edge.tolist()
        assert outline.a == 1.0 and box.outline_color == outline


# RIHS01 type hash of the upstream package as robots install it: ros/rosdistro at the commit pinned in
# test/data/rosdep_keys.yaml (8468e88) releases foxglove_msgs from foxglove/foxglove-sdk at 3.4.3 for Humble
# (3.4.3-2) and Jazzy (3.4.3-1). Its ros/src/foxglove_msgs/ros2 definitions at tag ros-v3.4.3 of
# ImageAnnotations and what it holds (CircleAnnotation, PointsAnnotation, TextAnnotation, Color, Point2,
# KeyValuePair), built from those files with this machine's rosidl generators, hash alike on the Kilted and
# the Jazzy wheels (2026-12-06). 3.4.3 added ImageAnnotations.timestamp and every annotation's metadata to
# the fields of ros-v2.2.0..ros-v3.1.0, so a 3.1.0-shaped copy would not match a robot's bridge. Equal hashes
# mean Foxglove bridges and robots with the real foxglove_msgs match the node's publisher.
UPSTREAM_IMAGE_ANNOTATIONS = "RIHS01_bc4e578b1ef80953415d6f966a4cab305c8a44c8b64fc405312b6f06a08fc45e"


def test_the_built_type_hashes_as_upstream_foxglove_msgs() -> None:
    import json
    from pathlib import Path

    from ament_index_python.packages import get_package_share_directory

    desc = json.loads((Path(get_package_share_directory("foxglove_msgs")) / "msg" / "ImageAnnotations.json")
                      .read_text())
    (own,) = [h["hash_string"] for h in desc["type_hashes"]
              if h["type_name"] == "foxglove_msgs/msg/ImageAnnotations"]
    assert own == UPSTREAM_IMAGE_ANNOTATIONS
