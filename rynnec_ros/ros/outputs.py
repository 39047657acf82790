"""The node's answer topics: ~/object_masks, ~/spatial_answers, ~/overlay (raw, and JPEG on
~/overlay/compressed as image_transport names it) and ~/markers (lifecycle publishers).

Created on configure and enabled on activate, so nothing is published while the node is inactive.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from sensor_msgs.msg import CompressedImage, Image
from std_msgs.msg import Header
from visualization_msgs.msg import MarkerArray

from rynnec_ros.core.types import Answer, Frame, Request
from rynnec_ros.msg import ObjectMask, ObjectMasks, SpatialAnswer
from rynnec_ros.ros import convert
from rynnec_ros.ros.markers import answer_markers


class Outputs:
    def __init__(self, node: Any, jpeg_quality: Callable[[], int]) -> None:
        self._node = node
        self._jpeg_quality = jpeg_quality
        """The live ``overlay_jpeg_quality`` parameter."""
        self.masks = node.create_lifecycle_publisher(ObjectMasks, "~/object_masks", 10)
        self.spatial = node.create_lifecycle_publisher(SpatialAnswer, "~/spatial_answers", 10)
        self.overlay = node.create_lifecycle_publisher(Image, "~/overlay", 2)
        self.overlay_compressed = node.create_lifecycle_publisher(CompressedImage, "~/overlay/compressed", 2)
        self.markers = node.create_lifecycle_publisher(MarkerArray, "~/markers", 2)

    def destroy(self) -> None:
        for pub in (self.masks, self.spatial, self.overlay, self.overlay_compressed, self.markers):
            self._node.destroy_lifecycle_publisher(pub)

    def segmentation(self, ans: Answer, request: Request, masks: list[ObjectMask], overlay: bool) -> None:
        if masks:
            self.masks.publish(ObjectMasks(header=masks[-1].header, expression=request.question, masks=masks))
        shown = [(i, m) for i, m in enumerate(ans.masks or []) if m is not None]
        if overlay and shown:
            last, mask = shown[-1]
            self._overlay(request.frames[last], [mask], [request.question])

    def answer(self, ans: Answer, request: Request, overlay: bool, markers: bool, world_frame: str) -> None:
        """~/spatial_answers always; ~/overlay (the regions' masks on their newest frame) and ~/markers
        (the boxes the answer measured, or a DELETEALL when it measured none) when asked for."""
        newest = request.frames[-1]
        self.spatial.publish(SpatialAnswer(
            header=Header(stamp=convert.ns_to_stamp(newest.stamp_ns), frame_id=newest.frame_id),
            question=request.question, answer=ans.text, task=ans.task or "",
            value=float(ans.value) if ans.value is not None else math.nan, unit=ans.unit or "",
            object_ids=[int(r.object_id) for r in request.regions], source=ans.source, reason=ans.reason,
        ))
        n = len(request.frames)
        per_region = [(r, r.frame_masks(n)) for r in request.regions]
        with_masks = [i for i in range(n) if any(i in m for _, m in per_region)]
        if overlay and with_masks:
            fi = with_masks[-1]
            drawn = [(m[fi], r.label or f"object {r.object_id}") for r, m in per_region if fi in m]
            self._overlay(request.frames[fi], [m for m, _ in drawn], [lab for _, lab in drawn])
        if markers:
            self.markers.publish(answer_markers(ans, request, world_frame))

    def _overlay(self, frame: Frame, masks: list[np.ndarray], labels: list[str]) -> None:
        img = convert.draw_overlay(frame.rgb, masks, labels)
        self.overlay.publish(convert.rgb_to_image(img, frame.stamp_ns, frame.frame_id))
        # JPEG encoding costs ~7 ms per 720p overlay (2-core x86): done only while someone subscribes.
        if self.overlay_compressed.get_subscription_count() > 0:
            self.overlay_compressed.publish(
                convert.rgb_to_compressed(img, frame.stamp_ns, frame.frame_id, self._jpeg_quality()))
