"""The masks ``~/overlay`` draws, as 2D image annotations for viewers (``~/annotations``).

Wire type ``foxglove_msgs/msg/ImageAnnotations``: Foxglove's schema for its Image panel, which draws it over
the image topic the panel shows. Of the other annotation types the panel takes, ``visualization_msgs/msg/
ImageMarker`` holds one shape per message and has no text field, and ``foxglove_msgs/msg/ImageMarkerArray``
left foxglove_msgs in 3.2.0 (the release in Humble, Kilted and Rolling), so robots no longer have it. RViz
has no display for either; it shows ``~/overlay``, the same drawing burnt into the pixels.

Per drawn object, in the overlay's order and colour (``convert.OVERLAY_COLOURS``):

* one ``LINE_LOOP`` per outer contour of its mask (``cv2.findContours``, external, ``CHAIN_APPROX_SIMPLE``):
  the vertices are the centres of the mask's boundary pixels, filled with the colour at alpha
  ``FILL_ALPHA``, outlined ``OUTLINE_PX`` wide as the overlay outlines it;
* one unfilled ``LINE_LOOP`` of its box: the pixel edges around the mask, the box ``~/detections_2d`` and
  ``ObjectMask.bbox`` give (left = ``x_offset``, right = ``x_offset + width``);
* one text: its label (the referring expression; for a region question the region's label and, on the
  objects the answer is about, the answer), white on the object's colour, its bottom-left corner on the
  box's top-left corner (inside the box when that is too near the image's top to fit above it).

Coordinates are Foxglove's image coordinates: pixels, origin at the top-left *corner* of the top-left
pixel, so pixel (column c, row r) has its centre at (c + 0.5, r + 0.5). ImageAnnotations has no header:
every annotation's ``timestamp`` is the stamp of the image the overlay draws on, so the panel pairs them
with ``~/overlay`` when it synchronises annotations with images.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np
from builtin_interfaces.msg import Time
from foxglove_msgs.msg import Color, ImageAnnotations, Point2, PointsAnnotation, TextAnnotation

from rynnec_ros.ros import convert

OUTLINE_PX = 2.0  # the overlay's contour thickness
BOX_PX = 1.0
FILL_ALPHA = 0.35
FONT_PX = 12.0  # Foxglove's default TextAnnotation size
LABEL_ALPHA = 0.8
WHITE = Color(r=1.0, g=1.0, b=1.0, a=1.0)
NONE = Color(r=0.0, g=0.0, b=0.0, a=0.0)


def _colour(i: int, alpha: float = 1.0) -> Color:
    r, g, b = (float(c) / 255.0 for c in convert.OVERLAY_COLOURS[i % len(convert.OVERLAY_COLOURS)])
    return Color(r=r, g=g, b=b, a=float(alpha))


def mask_contours(mask: np.ndarray) -> list[np.ndarray]:
    """The outer contours of a boolean mask as K×2 float arrays of (x, y) in image coordinates (corner
    origin: a boundary pixel's centre), one per connected part; none for an empty mask."""
    found, _ = cv2.findContours(np.ascontiguousarray(mask, dtype=np.uint8), cv2.RETR_EXTERNAL,
                                cv2.CHAIN_APPROX_SIMPLE)
    return [c.reshape(-1, 2).astype(np.float64) + 0.5 for c in found]


def _loop(stamp: Time, xy: Sequence[tuple[float, float]], outline: Color, fill: Color,
          thickness: float) -> PointsAnnotation:
    return PointsAnnotation(timestamp=stamp, type=PointsAnnotation.LINE_LOOP,
                            points=[Point2(x=float(x), y=float(y)) for x, y in xy],
                            outline_color=outline, fill_color=fill, thickness=thickness)


def image_annotations(masks: Sequence[np.ndarray], labels: Sequence[str], stamp: Time) -> ImageAnnotations:
    """Contours, boxes and labels of ``masks`` (one label each) on the image stamped ``stamp``; empty
    masks are skipped, as the overlay skips them."""
    out = ImageAnnotations(timestamp=stamp)
    for i, (mask, label) in enumerate(zip(masks, labels, strict=True)):
        mask = np.asarray(mask, dtype=bool)
        if not mask.any():
            continue
        for contour in mask_contours(mask):
            out.points.append(_loop(stamp, contour.tolist(), _colour(i), _colour(i, FILL_ALPHA), OUTLINE_PX))
        roi = convert.mask_bbox(mask)
        x0, y0 = float(roi.x_offset), float(roi.y_offset)
        x1, y1 = x0 + roi.width, y0 + roi.height
        out.points.append(_loop(stamp, [(x0, y0), (x1, y0), (x1, y1), (x0, y1)], _colour(i), NONE, BOX_PX))
        baseline = y0 if y0 >= FONT_PX else y0 + FONT_PX
        out.texts.append(TextAnnotation(timestamp=stamp, position=Point2(x=x0, y=baseline), text=label,
                                        font_size=FONT_PX, text_color=WHITE,
                                        background_color=_colour(i, LABEL_ALPHA)))
    return out
