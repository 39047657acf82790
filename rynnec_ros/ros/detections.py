"""Answers as ``vision_msgs`` detections, for planners and world models (``~/detections_3d``,
``~/detections_2d``).

``vision_msgs`` (4.1.1 on Humble, Jazzy and Kilted) is what ROS detectors publish and world models,
trackers and RViz's vision_msgs plugins read; a planner that already consumes a detector's arrays can
consume the node's without a new message type.

* 3D: one ``Detection3D`` per object a geometric answer measured (``Answer.boxes``): ``bbox`` is the
  oriented box (centre pose; size = length, width, height along the box's own x, y, z, as on
  ``~/markers``), ``id`` the region's object id, and one hypothesis whose ``class_id`` is the region's
  label (``object N`` without one) and whose pose is the box centre. The label was given by the asker,
  not classified, so its score is 1; the pose covariance is left zero (not estimated).
* 2D: one ``Detection2D`` per mask of a segmentation on its newest masked frame (the frame ``~/overlay``
  draws): ``bbox`` centre and size in pixels, centre = ``x_offset + width / 2`` (pixel edges at
  integers, so ``centre - size / 2`` is the ``RegionOfInterest``'s offset), hypothesis ``class_id`` the
  referring expression (the mask's label), score the mask decoder's predicted IoU (``ObjectMask.score``).
"""

from __future__ import annotations

from collections.abc import Sequence

from geometry_msgs.msg import Point, Pose, PoseWithCovariance, Quaternion, Vector3
from std_msgs.msg import Header
from vision_msgs.msg import (
    BoundingBox2D,
    BoundingBox3D,
    Detection2D,
    Detection2DArray,
    Detection3D,
    Detection3DArray,
    ObjectHypothesis,
    ObjectHypothesisWithPose,
)

from rynnec_ros.core.types import Answer, Request
from rynnec_ros.msg import ObjectMask
from rynnec_ros.ros import convert


def answer_detections_3d(ans: Answer, request: Request, world_frame: str) -> Detection3DArray:
    """The boxes of ``ans`` (possibly none: an empty array replaces the last answer's) as a
    Detection3DArray stamped with the request's newest frame. ``world_frame`` names the frame of boxes in
    the request's world frame (``ObjectBox.frame_id`` "")."""
    stamp = convert.ns_to_stamp(max((f.stamp_ns for f in request.frames), default=0))
    detections = []
    for box in ans.boxes:
        head = Header(stamp=stamp, frame_id=box.frame_id or world_frame)
        qx, qy, qz, qw = box.orientation
        cx, cy, cz = box.center
        pose = Pose(position=Point(x=float(cx), y=float(cy), z=float(cz)),
                    orientation=Quaternion(x=float(qx), y=float(qy), z=float(qz), w=float(qw)))
        length, width, height = box.size
        detections.append(Detection3D(
            header=head, id=str(box.object_id),
            results=[ObjectHypothesisWithPose(
                hypothesis=ObjectHypothesis(class_id=box.label or f"object {box.object_id}", score=1.0),
                pose=PoseWithCovariance(pose=pose))],
            bbox=BoundingBox3D(center=pose, size=Vector3(x=float(length), y=float(width), z=float(height))),
        ))
    frame_id = detections[0].header.frame_id if detections else world_frame
    return Detection3DArray(header=Header(stamp=stamp, frame_id=frame_id), detections=detections)


def mask_detections_2d(masks: Sequence[ObjectMask]) -> Detection2DArray | None:
    """The non-empty masks on the newest frame among ``masks`` (ObjectMask messages in frame order, as
    ``~/object_masks`` carries them) as a Detection2DArray in that frame's header; None without any."""
    if not masks:
        return None
    header = masks[-1].header
    newest = convert.stamp_to_ns(header.stamp)
    detections = []
    for m in masks:
        roi = m.bbox
        if convert.stamp_to_ns(m.header.stamp) != newest or roi.width == 0:
            continue
        box = BoundingBox2D(size_x=float(roi.width), size_y=float(roi.height))
        box.center.position.x = roi.x_offset + roi.width / 2.0
        box.center.position.y = roi.y_offset + roi.height / 2.0
        detections.append(Detection2D(
            header=m.header, id=str(m.object_id), bbox=box,
            results=[ObjectHypothesisWithPose(
                hypothesis=ObjectHypothesis(class_id=m.label, score=float(m.score)))],
        ))
    return Detection2DArray(header=header, detections=detections)
