"""The node's answer topics: ~/object_masks, ~/spatial_answers, ~/overlay (raw, and JPEG on
~/overlay/compressed as image_transport names it), ~/annotations (the overlay's contours, boxes and
labels for Foxglove), ~/markers and ~/detections_3d / ~/detections_2d (lifecycle publishers).

Created on configure and enabled on activate, so nothing is published while the node is inactive. Which
optional topics are published is read from the node's live parameters at each answer.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from foxglove_msgs.msg import ImageAnnotations
from sensor_msgs.msg import CompressedImage, Image
from std_msgs.msg import Header
from vision_msgs.msg import Detection2DArray, Detection3DArray
from visualization_msgs.msg import MarkerArray

from rynnec_ros.core.types import Answer, Frame, Request
from rynnec_ros.msg import ObjectMask, ObjectMasks, SpatialAnswer
from rynnec_ros.ros import convert
from rynnec_ros.ros.annotations import image_annotations
from rynnec_ros.ros.detections import answer_detections_3d, mask_detections_2d
from rynnec_ros.ros.markers import answer_markers, answer_words
from rynnec_ros.ros.params import NodeParams


class Outputs:
    def __init__(self, node: Any, params: Callable[[], NodeParams]) -> None:
        self._node = node
        self._params = params
        """The node's parameters as they are now: the outputs group is live, read per answer."""
        self.masks = node.create_lifecycle_publisher(ObjectMasks, "~/object_masks", 10)
        self.spatial = node.create_lifecycle_publisher(SpatialAnswer, "~/spatial_answers", 10)
        self.overlay = node.create_lifecycle_publisher(Image, "~/overlay", 2)
        self.overlay_compressed = node.create_lifecycle_publisher(CompressedImage, "~/overlay/compressed", 2)
        self.annotations = node.create_lifecycle_publisher(ImageAnnotations, "~/annotations", 2)
        self.markers = node.create_lifecycle_publisher(MarkerArray, "~/markers", 2)
        self.detections_3d = node.create_lifecycle_publisher(Detection3DArray, "~/detections_3d", 10)
        self.detections_2d = node.create_lifecycle_publisher(Detection2DArray, "~/detections_2d", 10)

    def destroy(self) -> None:
        for pub in (self.masks, self.spatial, self.overlay, self.overlay_compressed, self.annotations,
                    self.markers, self.detections_3d, self.detections_2d):
            self._node.destroy_lifecycle_publisher(pub)

    def segmentation(self, ans: Answer, request: Request, masks: list[ObjectMask]) -> None:
        """~/object_masks; ~/overlay and ~/annotations (the newest mask on its frame, labelled with the
        expression) and ~/detections_2d (its box) when enabled."""
        if masks:
            self.masks.publish(ObjectMasks(header=masks[-1].header, expression=request.question, masks=masks))
        shown = [(i, m) for i, m in enumerate(ans.masks or []) if m is not None]
        if shown:
            last, mask = shown[-1]
            self._draw(request.frames[last], [mask], [request.question], [request.question])
        if self._params().outputs.publish_detections:
            detections = mask_detections_2d(masks)
            if detections is not None:
                self.detections_2d.publish(detections)

    def answer(self, ans: Answer, request: Request, region_masks: list[ObjectMask]) -> None:
        """~/spatial_answers always; ~/object_masks with the masks made of prompted regions; when
        enabled, ~/overlay and ~/annotations (the regions' masks on their newest frame; the annotations
        labelled with the answer on the objects it is about), ~/markers and ~/detections_3d (the boxes the
        answer measured; a DELETEALL / an empty array when it measured none)."""
        newest = request.frames[-1]
        self.spatial.publish(SpatialAnswer(
            header=Header(stamp=convert.ns_to_stamp(newest.stamp_ns), frame_id=newest.frame_id),
            question=request.question, answer=ans.text, task=ans.task or "",
            value=float(ans.value) if ans.value is not None else math.nan, unit=ans.unit or "",
            object_ids=[int(r.object_id) for r in request.regions], source=ans.source, reason=ans.reason,
        ))
        if region_masks:
            self.masks.publish(ObjectMasks(header=region_masks[-1].header, expression=request.question,
                                           masks=region_masks))
        n = len(request.frames)
        made = iter(ans.prompted)  # the prompted regions in order, with their masks
        regions = [next(made, r) if r.prompts else r for r in request.regions]
        per_region = [(r, r.frame_masks(n)) for r in regions]
        with_masks = [i for i in range(n) if any(i in m for _, m in per_region)]
        if with_masks:
            fi = with_masks[-1]
            drawn = [(m[fi], r) for r, m in per_region if fi in m]
            labels = [r.label or f"object {r.object_id}" for _, r in drawn]
            words, about = answer_words(ans), set(ans.object_ids)
            captions = [f"{label}: {words}" if r.object_id in about and words else label
                        for label, (_, r) in zip(labels, drawn, strict=True)]
            self._draw(request.frames[fi], [m for m, _ in drawn], labels, captions)
        world_frame = self._params().inputs.world_frame
        if self._params().outputs.publish_markers:
            self.markers.publish(answer_markers(ans, request, world_frame))
        if self._params().outputs.publish_detections:
            self.detections_3d.publish(answer_detections_3d(ans, request, world_frame))

    def tracked(self, frame: Frame, masks: list[ObjectMask]) -> None:
        """~/object_masks with the masks of the objects ``track_objects`` followed onto ``frame``."""
        header = Header(stamp=convert.ns_to_stamp(frame.stamp_ns), frame_id=frame.frame_id)
        self.masks.publish(ObjectMasks(header=header, expression="tracking", masks=masks))

    def _draw(self, frame: Frame, masks: list[np.ndarray], labels: list[str], captions: list[str]) -> None:
        """``masks`` on ``frame``: ~/overlay with ``labels`` and ~/annotations with ``captions`` (the labels
        with the answer), each when enabled."""
        if self._params().outputs.publish_overlay:
            self._overlay(frame, masks, labels)
        if self._params().outputs.publish_annotations:
            stamp = convert.ns_to_stamp(frame.stamp_ns)
            self.annotations.publish(image_annotations(masks, captions, stamp))

    def _overlay(self, frame: Frame, masks: list[np.ndarray], labels: list[str]) -> None:
        img = convert.draw_overlay(frame.rgb, masks, labels)
        self.overlay.publish(convert.rgb_to_image(img, frame.stamp_ns, frame.frame_id))
        # JPEG encoding costs ~7 ms per 720p overlay (2-core x86): done only while someone subscribes.
        if self.overlay_compressed.get_subscription_count() > 0:
            quality = self._params().outputs.overlay_jpeg_quality
            jpeg = convert.rgb_to_compressed(img, frame.stamp_ns, frame.frame_id, quality)
            self.overlay_compressed.publish(jpeg)
