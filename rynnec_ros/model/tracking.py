"""SAM 2 video propagation: Meta's ``sam2`` package (1.1.0) on the checkpoint's own SAM 2 weights.

RynnEC decodes every frame alone; following an object through a window needs SAM 2's memory (memory
encoder, memory attention, object pointers), whose weights the checkpoints carry but per-frame decoding
never reads. Rather than re-implement the video predictor, the package's ``SAM2VideoPredictor`` is built
from the checkpoint's SAM 2 yaml (its ``third_parts.sam2`` targets are RynnEC's vendored copy of the same
modules) and given the checkpoint's tensors: the image encoder, prompt encoder and mask decoder share
storage with the engine's own ``Sam2Model`` (the package's image encoder is bit-identical to it on the
fixture checkpoint, test/model/test_tracking.py), so only the memory parts are loaded in addition.

Frames go in preprocessed the engine's way (``Sam2Model.preprocess``), not through the package's JPEG
loader: a robot's frames are arrays, never files.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .caches import held_bytes

# The package's propagation loop draws a tqdm bar on stderr per call: noise in a node's log.
os.environ.setdefault("TQDM_DISABLE", "1")

PACKAGE_CONFIG = "configs/sam2/sam2_hiera_l.yaml"
"""The SAM 2.0 Hiera-L config in the package, which RynnEC hard-codes when a checkpoint ships no yaml."""
_VENDORED = "third_parts.sam2."
OBJECT_ID = 1  # the predictor's id of the one object a call follows


@dataclass
class Track:
    """An object followed through a window: its mask on every frame it was found on (frame index → bool
    H×W), and the predictor's state (memory bank), whose bytes are what following it holds."""

    masks: dict[int, np.ndarray]
    held_bytes: int


def _retarget(node: Any) -> Any:
    """The yaml's hydra targets, RynnEC's vendored ``third_parts.sam2.*`` → the package's ``sam2.*``."""
    if isinstance(node, dict):
        return {k: v.replace(_VENDORED, "sam2.", 1) if k == "_target_" and isinstance(v, str)
                else _retarget(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_retarget(v) for v in node]
    return node


def build_predictor(yaml_path: Path | None, state: Mapping[str, torch.Tensor], device: torch.device) -> Any:
    """``SAM2VideoPredictor`` from ``yaml_path`` (None: the package's Hiera-L) holding ``state``
    (checkpoint names without the ``grounding_encoder.sam2_model.`` prefix), every key used.

    ``assign=True``: the tensors become the predictor's parameters as they are, so those shared with
    the engine's ``Sam2Model`` are not copied.
    """
    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    if yaml_path is not None:
        cfg = OmegaConf.load(str(yaml_path))
    else:
        import sam2  # noqa: F401  (initialises hydra's search path on the package's configs)
        from hydra import compose

        cfg = compose(config_name=PACKAGE_CONFIG)
    model = _retarget(OmegaConf.to_container(cfg.model, resolve=True))
    model["_target_"] = "sam2.sam2_video_predictor.SAM2VideoPredictor"
    predictor = instantiate(OmegaConf.create(model), _recursive_=True)
    missing, unexpected = predictor.load_state_dict(dict(state), strict=False, assign=True)
    if missing or unexpected:
        raise ValueError(f"SAM 2 video predictor: checkpoint lacks {sorted(missing)[:5]} / has unknown "
                         f"{sorted(unexpected)[:5]}")
    return predictor.to(device).eval()


class Sam2Tracker:
    """Follows one object through a window of frames from clicks (or boxes) on some of them."""

    def __init__(self, predictor: Any) -> None:
        self.predictor = predictor

    @torch.inference_mode()
    def track(self, pixels: torch.Tensor, height: int, width: int,
              clicks: Mapping[int, tuple[np.ndarray, np.ndarray]]) -> Track:
        """Masks of the object on every frame of ``pixels`` ([N, 3, S, S], ``Sam2Model.preprocess``).

        ``clicks`` maps a frame index to (points [K, 2] frame pixels, labels [K]: 1/0 clicks, 2/3 a box's
        corners first), as ``SAM2VideoPredictor.add_new_points_or_box`` takes them; those frames are
        the conditioning frames. Propagation runs forward from the first of them and then backward
        from it (the package's order), and a frame's mask is its logits > 0 at frame size.
        """
        if not clicks:
            raise ValueError("tracking needs a prompt on at least one frame")
        state = self._state(pixels, height, width)
        p = self.predictor
        for fi, (points, labels) in sorted(clicks.items()):
            p.add_new_points_or_box(state, frame_idx=int(fi), obj_id=OBJECT_ID,
                                    points=torch.as_tensor(points, dtype=torch.float32),
                                    labels=torch.as_tensor(labels, dtype=torch.int32))
        logits: dict[int, torch.Tensor] = {}
        start = min(clicks)
        for reverse in (False, True):
            if reverse and start == 0:
                break
            for fi, _, masks in p.propagate_in_video(state, start_frame_idx=start, reverse=reverse):
                logits[int(fi)] = masks[0, 0]
        out = {fi: (v > 0).cpu().numpy() for fi, v in sorted(logits.items())}
        kept = {k: v for k, v in state.items() if k not in ("images", "cached_features")}
        return Track({fi: m for fi, m in out.items() if m.any()}, held_bytes(kept))

    def _state(self, pixels: torch.Tensor, height: int, width: int) -> dict[str, Any]:
        """``SAM2VideoPredictor.init_state``'s inference state for frames already in memory (its loader
        reads JPEG folders or MP4 files only); the same keys, no frame offloading."""
        device = self.predictor.device
        return {
            "images": pixels.to(device), "num_frames": len(pixels), "offload_video_to_cpu": False,
            "offload_state_to_cpu": False, "video_height": int(height), "video_width": int(width),
            "device": device, "storage_device": device, "point_inputs_per_obj": {}, "mask_inputs_per_obj": {},
            "cached_features": {}, "constants": {}, "obj_id_to_idx": OrderedDict(),
            "obj_idx_to_id": OrderedDict(), "obj_ids": [], "output_dict_per_obj": {},
            "temp_output_dict_per_obj": {}, "frames_tracked_per_obj": {},
        }
