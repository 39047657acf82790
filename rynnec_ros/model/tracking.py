"""SAM 2 video propagation: Meta's ``sam2`` package (1.1.0) on the checkpoint's own SAM 2 weights.

RynnEC decodes every frame alone; following an object through a window needs SAM 2's memory (memory
encoder, memory attention, object pointers), whose weights the checkpoints carry but per-frame decoding
never reads. Rather than re-implement the video predictor, the package's ``SAM2VideoPredictor`` is built
from the checkpoint's SAM 2 yaml (``build_sam2`` in model/sam2.py: the same checks and targets as the
engine's ``Sam2Model``) around the engine's own image encoder, prompt encoder and mask decoder (the very
same modules, or float32 copies of them for a half-precision engine), so only the memory parts are loaded
in addition.

Frames go in preprocessed the engine's way (``Sam2Model.preprocess``), not through the package's JPEG
loader: a robot's frames are arrays, never files.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from rynnec_ros.core.types import Cancelled, RequestError

from .caches import held_bytes
from .sam2 import Sam2Model, build_sam2

VIDEO_PREDICTOR = "sam2.sam2_video_predictor.SAM2VideoPredictor"
OBJECT_ID = 1  # the predictor's id of the one object a call follows


Preprocess = Callable[[np.ndarray], torch.Tensor]
"""An RGB frame → [1, 3, S, S] SAM 2 input (``Sam2Model.preprocess``)."""


@dataclass
class Track:
    """An object followed through a window: its mask on every frame it was found on (frame index → bool
    H×W), the bytes its memory bank holds, and the predictor's state (``extend`` goes on from it as new
    frames arrive)."""

    masks: dict[int, np.ndarray]
    held_bytes: int
    state: dict[str, Any] = field(repr=False, default_factory=dict)

    @property
    def frames(self) -> int:
        """How many frames the track has seen (the index the next frame gets)."""
        return len(self.state["images"]) if "images" in self.state else 0


class FrameStore:
    """The frames a track reads by index (``inference_state["images"]`` is only ever indexed), each
    preprocessed when the predictor reads it: a window's frames are referenced, never copied to
    1024×1024 float tensors at once (12 MB each), and a live track keeps only the frames it may still
    read. Tensor entries are taken as already preprocessed ([3, S, S])."""

    def __init__(self, preprocess: Preprocess, frames: Sequence[np.ndarray | torch.Tensor] = ()) -> None:
        self._preprocess = preprocess
        self._frames: dict[int, np.ndarray | torch.Tensor] = dict(enumerate(frames))
        self._count = len(self._frames)

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: int) -> torch.Tensor:
        frame = self._frames[int(index)]
        return frame if isinstance(frame, torch.Tensor) else self._preprocess(frame)[0]

    def append(self, frame: np.ndarray | torch.Tensor) -> int:
        self._frames[self._count] = frame
        self._count += 1
        return self._count - 1

    def forget_before(self, index: int) -> None:
        for k in [k for k in self._frames if k < index]:
            del self._frames[k]


def build_predictor(sam2: Sam2Model, memory: Mapping[str, torch.Tensor]) -> Any:
    """``SAM2VideoPredictor`` from ``sam2``'s yaml whose image encoder, prompt encoder, mask decoder and
    ``no_mem_embed`` are ``sam2``'s own, and whose memory parts hold ``memory`` (checkpoint names without
    the ``grounding_encoder.sam2_model.`` prefix; every one used, none missing). ``sam2`` must be float32:
    the package runs SAM 2's memory in float32 (autocast is upstream's way to lower it).
    """
    from sam2 import sam2_video_predictor
    from tqdm import tqdm

    # Its propagation loop draws a tqdm bar on stderr per call (tqdm's TQDM_DISABLE is read when tqdm is
    # first imported, long before this): noise in a node's log, one line per frame tracked.
    sam2_video_predictor.tqdm = functools.partial(tqdm, disable=True)

    device = sam2.no_mem_embed.device
    with device:
        predictor = build_sam2(sam2.config.yaml, VIDEO_PREDICTOR, image_encoder=sam2.image_encoder)
    # SAM2Base builds its prompt encoder and mask decoder itself; the engine's take their place.
    predictor.sam_prompt_encoder = sam2.sam_prompt_encoder
    predictor.sam_mask_decoder = sam2.sam_mask_decoder
    predictor.no_mem_embed = sam2.no_mem_embed
    shared = set(sam2.state_dict())
    missing, unexpected = predictor.load_state_dict(dict(memory), strict=False)
    missing = [k for k in missing if k not in shared]
    if missing or unexpected:
        raise ValueError(f"SAM 2 video predictor: checkpoint lacks {sorted(missing)[:5]} / has unknown "
                         f"{sorted(unexpected)[:5]}")
    return predictor.eval()


class Sam2Tracker:
    """Follows one object through a window of frames from clicks, boxes or masks on some of them, and
    on through frames that arrive later."""

    def __init__(self, predictor: Any, preprocess: Preprocess) -> None:
        self.predictor = predictor
        self.preprocess = preprocess
        # How far back a frame's memory reaches (SAM2Base._prepare_memory_conditioned_features): its
        # num_maskmem - 1 previous masks, every r-th frame for r = memory_temporal_stride_for_eval, and the
        # object pointers of up to max_obj_ptrs_in_encoder - 1 previous frames. Older non-conditioning
        # outputs are never read again, so a live track drops them.
        stride = int(predictor.memory_temporal_stride_for_eval)
        self.reach = max(int(predictor.max_obj_ptrs_in_encoder), int(predictor.num_maskmem) * stride + 2)

    @torch.inference_mode()
    def track(self, frames: Sequence[np.ndarray | torch.Tensor], height: int, width: int,
              clicks: Mapping[int, tuple[np.ndarray, np.ndarray]] | None = None,
              masks: Mapping[int, np.ndarray] | None = None,
              should_stop: Callable[[], bool] | None = None) -> Track:
        """Masks of the object on every frame of ``frames`` (RGB H×W×3 of one size, or preprocessed
        [3, S, S] tensors).

        ``clicks`` maps a frame index to (points [K, 2] frame pixels, labels [K]: 1/0 clicks, 2/3 a box's
        corners first), as ``SAM2VideoPredictor.add_new_points_or_box`` takes them; ``masks`` maps a frame
        index to a boolean H×W mask (``add_new_mask``; a frame with both takes the mask). Those frames are
        the conditioning frames. Propagation runs forward from the first of them and then backward
        from it (the package's order), and a frame's mask is its logits > 0 at frame size.
        ``should_stop`` is polled after every propagated frame (a request cancelled or past its deadline
        stops within one SAM 2 frame): ``Cancelled``.
        """
        clicks, masks = dict(clicks or {}), {k: v for k, v in (masks or {}).items() if np.asarray(v).any()}
        if not clicks and not masks:
            raise RequestError("tracking needs a prompt or a mask on at least one frame")
        state = self._state(FrameStore(self.preprocess, frames), height, width)
        p = self.predictor
        for fi, (points, labels) in sorted(clicks.items()):
            if fi not in masks:
                p.add_new_points_or_box(state, frame_idx=int(fi), obj_id=OBJECT_ID,
                                        points=torch.as_tensor(points, dtype=torch.float32),
                                        labels=torch.as_tensor(labels, dtype=torch.int32))
        for fi, mask in sorted(masks.items()):
            p.add_new_mask(state, frame_idx=int(fi), obj_id=OBJECT_ID,
                           mask=torch.as_tensor(np.asarray(mask, bool)))
        logits: dict[int, torch.Tensor] = {}
        start = min([*clicks, *masks])
        for reverse in (False, True):
            if reverse and start == 0:
                break
            for fi, _, out in p.propagate_in_video(state, start_frame_idx=start, reverse=reverse):
                logits[int(fi)] = out[0, 0]
                if should_stop is not None and should_stop():
                    raise Cancelled("cancelled by should_stop() while following the object")
        binary = {fi: (v > 0).cpu().numpy() for fi, v in sorted(logits.items())}
        found = {fi: m for fi, m in binary.items() if m.any()}
        track = Track(found, 0, state)
        self._settle(track)
        return track

    @torch.inference_mode()
    def extend(self, track: Track, frame: np.ndarray | torch.Tensor) -> np.ndarray:
        """The object's mask on ``frame`` (RGB, or preprocessed as in ``track``), the frame after the last
        one ``track`` has seen: a boolean mask at the track's frame size, all false where SAM 2 lost the
        object. The track's memory moves on: this frame joins it and what no later frame can read is
        dropped."""
        state = track.state
        if isinstance(frame, np.ndarray) and frame.shape[:2] != (state["video_height"], state["video_width"]):
            raise RequestError(f"a {frame.shape[:2]} frame cannot continue a track of "
                               f"{(state['video_height'], state['video_width'])} frames")
        fi = state["images"].append(frame)
        # A live stream is a video of unknown length: SAM2Base reads ``num_frames`` only to cap the
        # object pointers at min(num_frames, max_obj_ptrs_in_encoder) and to scale their temporal
        # encoding by that cap, so the full cap is what an offline run over the whole stream would use.
        state["num_frames"] = max(len(state["images"]), int(self.predictor.max_obj_ptrs_in_encoder))
        (out,) = [m for _, _, m in self.predictor.propagate_in_video(state, start_frame_idx=fi,
                                                                      max_frame_num_to_track=0)]
        mask = (out[0, 0] > 0).cpu().numpy()
        self._settle(track)
        return mask

    def _settle(self, track: Track) -> None:
        """Drop what no later frame reads (frames, non-conditioning outputs beyond ``reach``) and count
        the bytes the rest holds."""
        state = track.state
        count = len(state["images"])
        oldest = count - self.reach
        state["images"].forget_before(count - 1)
        for out in state["output_dict_per_obj"].values():
            for k in [k for k in out["non_cond_frame_outputs"] if k < oldest]:
                del out["non_cond_frame_outputs"][k]
        for tracked in state["frames_tracked_per_obj"].values():
            for k in [k for k in tracked if k < oldest]:
                del tracked[k]
        track.held_bytes = held_bytes({k: v for k, v in state.items()
                                       if k not in ("images", "cached_features")})

    def _state(self, frames: FrameStore, height: int, width: int) -> dict[str, Any]:
        """``SAM2VideoPredictor.init_state``'s inference state for frames already in memory (its loader
        reads JPEG folders or MP4 files only); the same keys, no frame offloading."""
        device = self.predictor.device
        return {
            "images": frames, "num_frames": len(frames), "offload_video_to_cpu": False,
            "offload_state_to_cpu": False, "video_height": int(height), "video_width": int(width),
            "device": device, "storage_device": device, "point_inputs_per_obj": {}, "mask_inputs_per_obj": {},
            "cached_features": {}, "constants": {}, "obj_id_to_idx": OrderedDict(),
            "obj_idx_to_id": OrderedDict(), "obj_ids": [], "output_dict_per_obj": {},
            "temp_output_dict_per_obj": {}, "frames_tracked_per_obj": {},
        }
