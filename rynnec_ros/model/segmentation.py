"""Segmentation glue for ``engine.RynnEC``: [SEG] hidden states to SAM 2 prompts and per-frame masks (SAM 2
image features cached per frame), point and box prompts resolved into masks, and objects followed
through frames by SAM 2's video propagation."""

from __future__ import annotations

import copy
import dataclasses
import importlib.util
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import torch

from rynnec_ros.core.types import Followed, Frame, Region, Request, RequestError, StopFn

from .decoding import check_stop
from .engine_state import EngineState, locked
from .engine_types import Generation, Prepared
from .processing import check_frame
from .requests import check_prompt, frame_keys
from .tracking import Sam2Tracker, Track


class Segmenting(EngineState):
    """Masks from [SEG] prompts and from point/box prompts, and SAM 2 tracking of the objects."""

    def tracker(self) -> Sam2Tracker:
        """SAM 2 video propagation on this checkpoint, built on first use: the ``sam2`` package's video
        predictor around this engine's SAM 2 modules (themselves in float32, float32 copies otherwise)
        and the memory tensors, read from the checkpoint now (per-frame decoding never loads them)."""
        if self._tracker is None:
            if importlib.util.find_spec("sam2") is None:
                raise ValueError("following objects through frames needs Meta's sam2 package "
                                 "(docs/install.md, requirements-sam2.txt)")
            from .loader import SAM2_PREFIX, read_state_dict
            from .sam2 import is_ignored_key
            from .tracking import build_predictor

            sam2 = self.model.sam2
            if sam2 is None or self.checkpoint is None or self.info.backend != "torch":
                raise ValueError("tracking needs backend torch on a checkpoint with SAM 2 weights")
            shared = sam2 if sam2.no_mem_embed.dtype == torch.float32 else copy.deepcopy(sam2).float()
            def memory_part(key: str) -> bool:
                return key.startswith(SAM2_PREFIX) and is_ignored_key(key[len(SAM2_PREFIX):])

            memory, _ = read_state_dict(self.checkpoint, torch.float32, self.device, memory_part)
            self._tracker = Sam2Tracker(
                build_predictor(shared, {k[len(SAM2_PREFIX):]: v for k, v in memory.items()}), sam2.preprocess
            )
        return self._tracker

    @property
    def can_follow(self) -> bool:
        """Whether ``tracker`` can be built here: backend torch, SAM 2 weights, the sam2 package."""
        return (self.model.sam2 is not None and self.checkpoint is not None and self.info.backend == "torch"
                and importlib.util.find_spec("sam2") is not None)

    @locked
    def follow(self, followed: Followed, frame: Frame) -> np.ndarray:
        """The followed object's mask on ``frame``, the frame after the last it was followed over (all
        false where SAM 2 lost it); its memory moves on to this frame."""
        if not isinstance(followed.state, Track):
            raise RequestError("this object was not followed by this engine's SAM 2 tracker")
        check_frame(frame.rgb, 0)
        mask = self.tracker().extend(followed.state, frame.rgb)
        followed.held_bytes = followed.state.held_bytes
        return mask


    def seg_embeddings(self, prep: Prepared, gen: Generation) -> torch.Tensor | None:
        """[n_seg, out_dim] SAM2 prompts: hidden state that *predicted* each [SEG] → text_hidden_fcs."""
        if not self.compute.has_seg_head or not gen.seg_hidden:
            return None
        with torch.inference_mode():
            return self.compute.seg_head(torch.stack(gen.seg_hidden)).float()

    def masks_for(
        self, frames: Sequence[Frame], seg: torch.Tensor, should_stop: StopFn | None = None
    ) -> tuple[list[np.ndarray | None], list[float]]:
        """Per-frame SAM2 masks (bool, at each frame's own size) and IoU predictions for one [SEG] prompt."""
        keys = frame_keys(frames)
        masks: list[np.ndarray | None] = []
        scores: list[float] = []
        for frame, key in zip(frames, keys, strict=True):
            check_stop(should_stop)
            dec = self.sam2_decode(frame.rgb, key, seg)
            masks.append(self._mask_to_frame(dec.mask_1024, frame.rgb.shape[0], frame.rgb.shape[1]))
            scores.append(float(dec.iou[dec.best_index]))
        return masks, scores

    def _sam2_features(self, frame: np.ndarray, key: Hashable) -> Any:
        """SAM 2 image features of one frame, from the cache when the frame was decoded before."""
        sam2: Any = self.model.sam2
        if sam2 is None:
            raise RequestError("this checkpoint has no SAM2 mask decoder")
        feats = self._sam2_cache.get_touch(key)
        self.stats["sam2_hits" if feats is not None else "sam2_misses"] += 1
        if feats is None:
            feats = self.compute.sam2_image_features(sam2.preprocess(frame))
            self._sam2_cache.put(key, feats)
        return feats

    def sam2_decode(self, frame: np.ndarray, key: Hashable, seg: torch.Tensor) -> Any:
        feats = self._sam2_features(frame, key)
        return self.model.sam2.decode(feats, seg, self.compute.sam2_mask_logits)  # type: ignore[union-attr]

    def resolve_prompts(self, request: Request, *, should_stop: StopFn | None = None) -> Request:
        """``request`` with every prompted region's masks made by SAM 2.

        Each prompt's frame gets the most confident of the decoder's three candidates (SAM 2's image
        predictor with ``multimask_output``), from the SAM 2 features [SEG] decoding caches too. The object
        is then followed by SAM 2's video propagation (``tracker``) from those prompted frames through
        ``request.window`` when the request has one (``Region.followed``), else through its frames when
        there are more than one (of one size) and the sam2 package is here; the region holds a mask on
        every frame it was found on. Regions that already hold masks pass unchanged.
        """
        if not any(r.unresolved for r in request.regions):
            return request
        frames = request.frames
        for i, f in enumerate(frames):
            check_frame(f.rgb, i)
        keys = frame_keys(frames)
        out: list[Region] = []
        for r, region in enumerate(request.regions):
            if not region.unresolved:
                out.append(region)
                continue
            if self.info.backend != "torch":
                raise RequestError(f"region {r}: point and box prompts need backend torch (the exported "
                                   "SAM 2 decoder takes the [SEG] prompt's three tokens only)")
            clicks: dict[int, tuple[np.ndarray, np.ndarray]] = {}
            masks: dict[int, np.ndarray] = {}
            for prompt in region.prompts:
                points, labels = check_prompt(prompt, frames, f"region {r} prompt")
                fi = int(prompt.frame)
                if fi in clicks:
                    raise RequestError(f"region {r}: two prompts on frame {fi}; give one per frame")
                clicks[fi] = (points, labels)
                rgb = frames[fi].rgb
                decoded = self.model.sam2.decode_points(  # type: ignore[union-attr]
                    self._sam2_features(rgb, keys[fi]), torch.from_numpy(points), torch.from_numpy(labels),
                    rgb.shape[0], rgb.shape[1],
                )
                masks[fi] = decoded.mask
                if not masks[fi].any():
                    raise RequestError(f"region {r}: SAM 2 found no object at the prompt on frame {fi}")
            followed = None
            if request.window:
                followed = self._follow_window(request.window, should_stop=should_stop,
                                               clicks={request.window_index(i): c for i, c in clicks.items()})
                at = {f.stamp_ns: i for i, f in enumerate(frames)}
                masks = {**{at[request.window[w].stamp_ns]: m for w, m in followed.masks.items()
                            if request.window[w].stamp_ns in at}, **masks}
            elif len(frames) > 1 and len({f.rgb.shape[:2] for f in frames}) == 1 and self.can_follow:
                masks = {**self._follow_window(frames, clicks=clicks, should_stop=should_stop).masks, **masks}
            out.append(dataclasses.replace(region, masks=dict(sorted(masks.items())), followed=followed))
        return dataclasses.replace(request, regions=out)

    def _follow_window(self, frames: Sequence[Frame], *,
                       clicks: dict[int, tuple[np.ndarray, np.ndarray]] | None = None,
                       seeds: dict[int, np.ndarray] | None = None,
                       should_stop: StopFn | None = None) -> Followed:
        """The object SAM 2 is given on some of ``frames`` (clicks, or masks) followed through all."""
        sizes = {f.rgb.shape[:2] for f in frames}
        if len(sizes) != 1:
            raise RequestError(f"following an object needs frames of one size, the window has "
                               f"{sorted(sizes)}")
        for i, f in enumerate(frames):
            check_frame(f.rgb, i)
        (h, w), = sizes
        track = self.tracker().track([f.rgb for f in frames], h, w, clicks=clicks, masks=seeds,
                                     should_stop=should_stop)
        return Followed(track.masks, track.held_bytes, track)

    @staticmethod
    def _mask_to_frame(mask_1024: torch.Tensor, height: int, width: int) -> np.ndarray:
        from .sam2 import resize_mask_to_frame

        return resize_mask_to_frame(mask_1024, int(height), int(width))
