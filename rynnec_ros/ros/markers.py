"""What a geometric answer measured, as a ``visualization_msgs/MarkerArray`` for RViz (``~/markers``).

One array per answer: a DELETEALL first, so each answer replaces the last one's drawing (an answer that
measured nothing clears it), then per measured object a CUBE (its oriented box: centre, yaw about the
world z, length × width × height) and a TEXT_VIEW_FACING above it with the region's label and, on the
objects the answer is about, the answer. Every marker is in the namespace ``rynnec``, stamped with the
request's newest frame, in the world frame (the frame of the camera poses; without poses the box's own
frame, the last camera's).
"""

from __future__ import annotations

import colorsys

import numpy as np
from geometry_msgs.msg import Point, Pose, Quaternion, Vector3
from std_msgs.msg import ColorRGBA, Header
from visualization_msgs.msg import Marker, MarkerArray

from rynnec_ros.core.transforms import quat_to_matrix
from rynnec_ros.core.types import Answer, ObjectBox, Request
from rynnec_ros.ros import convert

NAMESPACE = "rynnec"
TEXT_HEIGHT_M = 0.12  # RViz scales TEXT_VIEW_FACING by scale.z: the height of a capital letter
TEXT_GAP_M = 0.08  # between the box's top and the text's centre line
MAX_TEXT_CHARS = 80


def object_color(object_id: int, alpha: float = 0.5) -> ColorRGBA:
    """A colour per object id, the same in every answer (golden-ratio hues: neighbours differ)."""
    r, g, b = colorsys.hsv_to_rgb((int(object_id) * 0.618034) % 1.0, 0.75, 0.95)
    return ColorRGBA(r=float(r), g=float(g), b=float(b), a=float(alpha))


def answer_words(ans: Answer) -> str:
    """The answer as it is drawn: the value and unit of a quantity, else its text (shortened)."""
    if ans.value is not None:
        return f"{ans.value:.2f} {ans.unit or ''}".strip()
    text = ans.text.strip()
    return text if len(text) <= MAX_TEXT_CHARS else text[: MAX_TEXT_CHARS - 1] + "…"


def _label(box: ObjectBox) -> str:
    return box.label or f"object {box.object_id}"


def answer_markers(ans: Answer, request: Request, world_frame: str) -> MarkerArray:
    """DELETEALL, then a CUBE and a TEXT_VIEW_FACING per box of ``ans`` (see the module's docstring).

    ``world_frame`` names the frame of boxes in the request's world frame (``ObjectBox.frame_id`` "").
    """
    stamp = convert.ns_to_stamp(max((f.stamp_ns for f in request.frames), default=0))
    boxes = list(ans.boxes)
    frame_of = [box.frame_id or world_frame for box in boxes]
    header = Header(stamp=stamp, frame_id=frame_of[0] if boxes else world_frame)
    markers = [Marker(header=header, ns=NAMESPACE, id=0, action=Marker.DELETEALL)]
    about = set(ans.object_ids) or ({boxes[0].object_id} if boxes else set())
    words = answer_words(ans)
    for i, (box, frame_id) in enumerate(zip(boxes, frame_of, strict=True)):
        head = Header(stamp=stamp, frame_id=frame_id)
        qx, qy, qz, qw = box.orientation
        length, width, height = box.size
        center = np.asarray(box.center, dtype=np.float64)
        markers.append(Marker(
            header=head, ns=NAMESPACE, id=2 * i + 1, type=Marker.CUBE, action=Marker.ADD,
            pose=Pose(position=Point(x=float(center[0]), y=float(center[1]), z=float(center[2])),
                      orientation=Quaternion(x=float(qx), y=float(qy), z=float(qz), w=float(qw))),
            scale=Vector3(x=max(float(length), 1e-3), y=max(float(width), 1e-3), z=max(float(height), 1e-3)),
            color=object_color(box.object_id),
        ))
        up = quat_to_matrix(qx, qy, qz, qw)[:, 2]  # the box's height axis: gravity's up
        above = center + up * (height / 2 + TEXT_GAP_M + TEXT_HEIGHT_M)
        text = _label(box) + (f": {words}" if box.object_id in about and words else "")
        markers.append(Marker(
            header=head, ns=NAMESPACE, id=2 * i + 2, type=Marker.TEXT_VIEW_FACING, action=Marker.ADD,
            pose=Pose(position=Point(x=float(above[0]), y=float(above[1]), z=float(above[2])),
                      orientation=Quaternion(w=1.0)),
            scale=Vector3(z=TEXT_HEIGHT_M), color=ColorRGBA(r=1.0, g=1.0, b=1.0, a=1.0), text=text,
        ))
    return MarkerArray(markers=markers)
