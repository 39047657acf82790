"""SAM 2 video propagation (``model/tracking.py``) against Meta's ``sam2`` package driven its own way.

The reference is ``SAM2VideoPredictor`` as its README uses it: ``init_state`` on a folder of JPEG frames,
``add_new_points_or_box`` on one frame, ``propagate_in_video`` forward and then in reverse, built from
the fixture checkpoint's SAM 2 yaml and loaded strictly with its weights. The tracker under test gets the
same weights (shared with the engine's own SAM 2, memory parts read from the checkpoint), the same
preprocessed frames (the reference's ``inference_state["images"]``) and the same clicks; its masks must
equal the reference's on every frame.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from rynnec_ros.bench.workload import synthetic_window
from rynnec_ros.model.engine import RynnEC

from .conftest import CHECKPOINT

N = 4


@pytest.fixture(scope="module")
def engine() -> RynnEC:
    return RynnEC.from_pretrained(CHECKPOINT)


@pytest.fixture(scope="module")
def video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("video")
    for i, f in enumerate(synthetic_window(N, 224, 168)):
        Image.fromarray(f).save(out / f"{i:05d}.jpg", quality=95)
    return out


def _reference(video: Path, frame: int, points: np.ndarray, labels: np.ndarray):
    from hydra.utils import instantiate
    from omegaconf import OmegaConf
    from safetensors.torch import load_file

    def package_targets(node):  # RynnEC vendors the package's modules as third_parts.sam2.*
        if isinstance(node, dict):
            return {k: v.replace("third_parts.sam2.", "sam2.") if k == "_target_" else package_targets(v)
                    for k, v in node.items()}
        return [package_targets(v) for v in node] if isinstance(node, list) else node

    yaml = OmegaConf.load(str(CHECKPOINT / "sam2_hiera_tiny.yaml"))
    cfg = package_targets(OmegaConf.to_container(yaml.model))
    cfg["_target_"] = "sam2.sam2_video_predictor.SAM2VideoPredictor"
    predictor = instantiate(OmegaConf.create(cfg), _recursive_=True)
    prefix = "grounding_encoder.sam2_model."
    state = {k[len(prefix):]: v for k, v in load_file(str(CHECKPOINT / "model.safetensors")).items()
             if k.startswith(prefix)}
    predictor.load_state_dict(state, strict=True)
    predictor.eval()
    inference = predictor.init_state(str(video))
    predictor.add_new_points_or_box(inference, frame_idx=frame, obj_id=1, points=points, labels=labels)
    masks = {}
    for reverse in (False, True):
        for fi, _, m in predictor.propagate_in_video(inference, start_frame_idx=frame, reverse=reverse):
            masks[fi] = (m[0, 0] > 0).numpy()
    return inference["images"], masks


@pytest.mark.parametrize(("frame", "points", "labels"), [
    (0, [[112.0, 84.0], [150.0, 120.0]], [1, 0]),  # forward only
    (2, [[30.0, 20.0], [180.0, 150.0], [100.0, 90.0]], [2, 3, 1]),  # a box and a click: both ways
])
def test_propagation_equals_the_packages_video_predictor(engine: RynnEC, video: Path, frame: int,
                                                         points, labels) -> None:
    pts, labs = np.asarray(points, np.float32), np.asarray(labels, np.int32)
    images, want = _reference(video, frame, pts, labs)
    track = engine.tracker().track(images, 168, 224, {frame: (pts, labs)})
    assert sorted(want) == list(range(N))
    assert sum(m.any() for m in want.values()) >= 2, {k: int(m.sum()) for k, m in want.items()}
    for fi in range(N):
        got = track.masks.get(fi, np.zeros((168, 224), bool))
        assert np.array_equal(got, want[fi]), (fi, int((got != want[fi]).sum()))
    assert track.held_bytes > 0


def test_the_tracker_shares_the_engines_sam2_weights(engine: RynnEC) -> None:
    """Only the memory parts are extra: the image encoder's tensors are the engine's own storage."""
    predictor = engine.tracker().predictor
    ours = engine.model.sam2.image_encoder.trunk.patch_embed.proj.weight
    theirs = predictor.image_encoder.trunk.patch_embed.proj.weight
    assert theirs.data_ptr() == ours.data_ptr()
    assert engine.tracker() is engine.tracker()  # built once


def test_image_encoder_of_the_package_is_the_engines(engine: RynnEC) -> None:
    """The package's ``forward_image`` + ``_prepare_backbone_features`` (+ no_mem_embed, as its image
    predictor adds) equal ``Sam2Model.image_features`` bit for bit on the same pixels."""
    sam2 = engine.model.sam2
    pixels = sam2.preprocess(synthetic_window(1, 224, 168)[0])
    ours = sam2.image_features(pixels)
    predictor = engine.tracker().predictor
    with torch.inference_mode():
        _, feats, _, sizes = predictor._prepare_backbone_features(predictor.forward_image(pixels))
    embed = (feats[-1] + predictor.no_mem_embed).permute(1, 2, 0).reshape(1, -1, *sizes[-1])
    assert torch.equal(embed, ours.image_embed)
    for f, s, o in zip(feats[:-1], sizes[:-1], ours.high_res_feats, strict=True):
        assert torch.equal(f.permute(1, 2, 0).reshape(1, -1, *s), o)
