"""~/annotations content (rynnec_ros/ros/annotations.py) and its wire type.

Expected values are worked by hand from hand-picked masks and the conventions the sources state:
visualization_msgs/ImageMarker (POLYGON = 3, ADD = 0; ``scale`` the line width, ``filled`` 0/1),
Foxglove's image coordinates ("the top-left corner of the top-left pixel of the image as the origin",
foxglove schemas' PointsAnnotation), so a pixel (c, r) is centred at (c + 0.5, r + 0.5) and a box's edges
lie on integers, and OpenCV's ``CHAIN_APPROX_SIMPLE`` (a straight run of a contour keeps its end points
only: an axis-aligned rectangle is its four corner pixels).
"""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.ros


def _stamp(sec: int = 3, nanosec: int = 250_000_000):
    from builtin_interfaces.msg import Time

    return Time(sec=sec, nanosec=nanosec)


def test_a_rectangle_is_its_corner_pixels_centres_and_its_pixel_edge_box() -> None:
    from visualization_msgs.msg import ImageMarker

    from rynnec_ros.ros.annotations import image_annotations

    mask = np.zeros((40, 60), bool)
    mask[10:20, 30:36] = True  # rows 10..19, columns 30..35
    arr = image_annotations([mask], ["the red mug"], _stamp(), "cam")
    contour, box = arr.markers
    for m in (contour, box):
        assert (m.header.stamp.sec, m.header.stamp.nanosec, m.header.frame_id) == (3, 250_000_000, "cam")
        assert (m.type, m.action, m.ns) == (ImageMarker.POLYGON, ImageMarker.ADD, "the red mug")
        assert m.lifetime.sec == 0 and m.lifetime.nanosec == 0  # kept until the next answer's
    assert (contour.id, box.id) == (0, 1)
    # the corner pixels (30, 10), (30, 19), (35, 19), (35, 10) at their centres
    assert {(p.x, p.y) for p in contour.points} == {(30.5, 10.5), (30.5, 19.5), (35.5, 19.5), (35.5, 10.5)}
    assert contour.filled == 1 and contour.scale == 2.0
    # the box around columns 30..35 and rows 10..19: pixel edges 30..36 and 10..20
    assert [(p.x, p.y) for p in box.points] == [(30.0, 10.0), (36.0, 10.0), (36.0, 20.0), (30.0, 20.0)]
    assert box.filled == 0


def test_each_part_of_a_mask_is_a_polygon_and_empty_masks_are_skipped() -> None:
    from rynnec_ros.ros.annotations import image_annotations

    two = np.zeros((20, 20), bool)
    two[2:5, 2:5] = True  # 3x3 at columns/rows 2..4
    two[12:14, 10:18] = True  # 8 wide, 2 tall
    empty = np.zeros((20, 20), bool)
    single = np.zeros((20, 20), bool)
    single[7, 7] = True
    arr = image_annotations([two, empty, single], ["a", "b", "c"], _stamp(), "cam")
    assert [m.ns for m in arr.markers] == ["a", "a", "a", "c", "c"]  # 2 contours + box, nothing, 1 + box
    assert [m.id for m in arr.markers] == [0, 1, 2, 3, 4]
    parts = sorted(sorted((p.x, p.y) for p in m.points) for m in arr.markers[:2])
    assert parts == [[(2.5, 2.5), (2.5, 4.5), (4.5, 2.5), (4.5, 4.5)],
                     [(10.5, 12.5), (10.5, 13.5), (17.5, 12.5), (17.5, 13.5)]]
    # the box spans both parts: columns 2..17, rows 2..13
    assert [(p.x, p.y) for p in arr.markers[2].points] == [(2.0, 2.0), (18.0, 2.0), (18.0, 14.0), (2.0, 14.0)]
    # a one-pixel mask: one vertex at the pixel's centre, a 1x1 box around it
    assert [(p.x, p.y) for p in arr.markers[3].points] == [(7.5, 7.5)]
    assert [(p.x, p.y) for p in arr.markers[4].points] == [(7.0, 7.0), (8.0, 7.0), (8.0, 8.0), (7.0, 8.0)]
    assert image_annotations([empty], ["b"], _stamp(), "cam").markers == []


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
    arr = image_annotations([a, b], ["a", "b"], _stamp(), "cam")
    for mask, ns in ((a, "a"), (b, "b")):
        rows, cols = np.nonzero(mask)
        on_edge = drawn[rows.min(), cols.min()]  # a corner pixel lies on the contour line
        outline = next(m.outline_color for m in arr.markers if m.ns == ns)
        assert [round(outline.r * 255), round(outline.g * 255), round(outline.b * 255)] == on_edge.tolist()
        assert outline.a == 1.0


# RIHS01 type hash of the upstream package: foxglove/schemas' ros_foxglove_msgs/ImageMarkerArray.msg
# (``visualization_msgs/ImageMarker[] markers``, commit 74d916c) built from that source with this
# machine's rosidl generators, on the Kilted and on the Jazzy wheels alike (2026-12-06). Equal hashes mean
# Foxglove bridges and robots with the real foxglove_msgs match the node's publisher.
UPSTREAM_IMAGE_MARKER_ARRAY = "RIHS01_4a5b15c294890d653224dd6d31ea50f8f4f3d6cc4fbb61669c06ebff35217d5d"


def test_the_built_type_hashes_as_upstream_foxglove_msgs() -> None:
    import json
    from pathlib import Path

    from ament_index_python.packages import get_package_share_directory

    desc = json.loads((Path(get_package_share_directory("foxglove_msgs")) / "msg" / "ImageMarkerArray.json")
                      .read_text())
    (own,) = [h["hash_string"] for h in desc["type_hashes"]
              if h["type_name"] == "foxglove_msgs/msg/ImageMarkerArray"]
    assert own == UPSTREAM_IMAGE_MARKER_ARRAY
