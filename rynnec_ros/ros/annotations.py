"""The masks ``~/overlay`` draws, as 2D image annotations for viewers (``~/annotations``).

Wire type ``foxglove_msgs/msg/ImageMarkerArray`` (``visualization_msgs/ImageMarker[] markers``): Foxglove's
Image panel draws it over an image topic (its annotation schemas: ``visualization_msgs/msg/ImageMarker``
one marker per message, so one object per message, and the arrays ``foxglove_msgs/msg/ImageMarkerArray``
and ``visualization_msgs/msg/ImageMarkerArray``; the last has no ROS 2 package). RViz has no ImageMarker
display; it shows ``~/overlay``, the same drawing burnt into the pixels.

Per drawn object, in the overlay's order and colour (``convert.OVERLAY_COLOURS``):

* one ``POLYGON`` per outer contour of its mask (``cv2.findContours``, external, ``CHAIN_APPROX_SIMPLE``):
  the vertices are the centres of the mask's boundary pixels, filled with the colour at alpha
  ``FILL_ALPHA``, outlined ``OUTLINE_PX`` wide as the overlay outlines it;
* one unfilled ``POLYGON`` of its box: the pixel edges around the mask, the box ``~/detections_2d`` and
  ``ObjectMask.bbox`` give (left = ``x_offset``, right = ``x_offset + width``).

Coordinates are Foxglove's image coordinates: pixels, origin at the top-left *corner* of the top-left
pixel, so pixel (column c, row r) has its centre at (c + 0.5, r + 0.5). ``visualization_msgs/ImageMarker``
has no text field (Foxglove's TEXT type reads a ``text`` field only webviz' own message had), so a label
cannot be drawn from this type: every marker of an object carries its label (the referring expression;
for a region question the region's label and, on the objects the answer is about, the answer) in ``ns``,
shown when the marker is picked in Foxglove; the overlay draws it. Each marker is stamped and framed as
the image the overlay draws on, so Foxglove's "sync annotations" pairs them with ``~/overlay``.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np
from builtin_interfaces.msg import Time
from foxglove_msgs.msg import ImageMarkerArray
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA, Header
from visualization_msgs.msg import ImageMarker

from rynnec_ros.ros import convert

OUTLINE_PX = 2.0  # the overlay's contour thickness
BOX_PX = 1.0
FILL_ALPHA = 0.35


def _colour(i: int, alpha: float = 1.0) -> ColorRGBA:
    r, g, b = (float(c) / 255.0 for c in convert.OVERLAY_COLOURS[i % len(convert.OVERLAY_COLOURS)])
    return ColorRGBA(r=r, g=g, b=b, a=float(alpha))


def mask_contours(mask: np.ndarray) -> list[np.ndarray]:
    """The outer contours of a boolean mask as K×2 float arrays of (x, y) in image coordinates (corner
    origin: a boundary pixel's centre), one per connected part; none for an empty mask."""
    found, _ = cv2.findContours(np.ascontiguousarray(mask, dtype=np.uint8), cv2.RETR_EXTERNAL,
                                cv2.CHAIN_APPROX_SIMPLE)
    return [c.reshape(-1, 2).astype(np.float64) + 0.5 for c in found]


def image_annotations(masks: Sequence[np.ndarray], labels: Sequence[str], stamp: Time,
                      frame_id: str) -> ImageMarkerArray:
    """Contour polygons and boxes of ``masks`` (one label each) on the image stamped ``stamp`` in
    ``frame_id``; empty masks are skipped, as the overlay skips them."""
    header = Header(stamp=stamp, frame_id=frame_id)
    markers: list[ImageMarker] = []
    for i, (mask, label) in enumerate(zip(masks, labels, strict=True)):
        mask = np.asarray(mask, dtype=bool)
        if not mask.any():
            continue
        for contour in mask_contours(mask):
            markers.append(ImageMarker(
                header=header, ns=label, id=len(markers), type=ImageMarker.POLYGON, action=ImageMarker.ADD,
                scale=OUTLINE_PX, outline_color=_colour(i), filled=1, fill_color=_colour(i, FILL_ALPHA),
                points=[Point(x=float(x), y=float(y)) for x, y in contour],
            ))
        roi = convert.mask_bbox(mask)
        x0, y0 = float(roi.x_offset), float(roi.y_offset)
        x1, y1 = x0 + roi.width, y0 + roi.height
        markers.append(ImageMarker(
            header=header, ns=label, id=len(markers), type=ImageMarker.POLYGON, action=ImageMarker.ADD,
            scale=BOX_PX, outline_color=_colour(i), filled=0,
            points=[Point(x=x0, y=y0), Point(x=x1, y=y0), Point(x=x1, y=y1), Point(x=x0, y=y1)],
        ))
    return ImageMarkerArray(markers=markers)
