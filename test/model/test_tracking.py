"""SAM 2 video propagation (``model/tracking.py``) against Meta's ``sam2`` package driven its own way.

The reference is ``SAM2VideoPredictor`` as its README uses it: ``init_state`` on a folder of JPEG frames,
``add_new_points_or_box`` on one frame, ``propagate_in_video`` forward and then in reverse, built from
the fixture checkpoint's SAM 2 yaml and loaded strictly with its weights. The tracker under test gets the
same weights (shared with the engine's own SAM 2, memory parts read from the checkpoint), the same
preprocessed frames (the reference's ``inference_state["images"]``) and the same clicks; its masks must
equal the reference's on every frame.
"""

from __future__ import annotations

import dataclasses
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
    return _folder(tmp_path_factory.mktemp("video"), N)


def _package_predictor():
    """``SAM2VideoPredictor`` built from the fixture's yaml and loaded strictly with its weights."""
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
    return predictor.eval()


def _reference(video: Path, frame: int, points=None, labels=None, mask=None):
    """The package's masks over the JPEG folder ``video``: a click/box (``add_new_points_or_box``) or a
    mask (``add_new_mask``) on ``frame``, then ``propagate_in_video`` forward and in reverse."""
    predictor = _package_predictor()
    inference = predictor.init_state(str(video))
    if mask is None:
        predictor.add_new_points_or_box(inference, frame_idx=frame, obj_id=1, points=points, labels=labels)
    else:
        predictor.add_new_mask(inference, frame_idx=frame, obj_id=1, mask=mask)
    masks = {}
    for reverse in (False, True):
        for fi, _, m in predictor.propagate_in_video(inference, start_frame_idx=frame, reverse=reverse):
            masks[fi] = (m[0, 0] > 0).numpy()
    return inference["images"], masks


def _folder(out: Path, n: int) -> Path:
    for i, f in enumerate(synthetic_window(n, 224, 168)):
        Image.fromarray(f).save(out / f"{i:05d}.jpg", quality=95)
    return out


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


def test_a_mask_seed_equals_the_packages_add_new_mask(engine: RynnEC, video: Path) -> None:
    """A segmentation's mask on one frame (``masks=``) is followed as the package's ``add_new_mask``."""
    seed = np.zeros((168, 224), bool)
    seed[50:120, 60:140] = True
    images, want = _reference(video, 1, mask=torch.from_numpy(seed))
    track = engine.tracker().track(images, 168, 224, masks={1: seed})
    assert sum(m.any() for m in want.values()) >= 2
    for fi in range(N):
        got = track.masks.get(fi, np.zeros((168, 224), bool))
        assert np.array_equal(got, want[fi]), (fi, int((got != want[fi]).sum()))


def test_a_live_track_equals_the_package_over_the_whole_stream(engine: RynnEC, tmp_path: Path) -> None:
    """Frames arriving after the window (``extend``, one at a time, the older memory dropped) get the
    masks the package gives those frames when it propagates over the whole stream at once.

    The reference is offline: all 19 frames, the click on frame 0 (so its forward pass is the live
    order; a later click's reverse pass would run after every forward frame). The window is 16 frames,
    SAM 2's object-pointer reach (``max_obj_ptrs_in_encoder``), so the live track's capped
    ``num_frames`` is what the reference's 19 frames give too.
    """
    total, window = 19, 16
    pts, labs = np.array([[70.0, 84.0]], np.float32), np.array([1], np.int32)
    images, want = _reference(_folder(tmp_path, total), 0, pts, labs)
    tracker = engine.tracker()
    track = tracker.track(images[:window], 168, 224, {0: (pts, labs)})
    sizes = [track.held_bytes]
    live = {}
    for fi in range(window, total):
        live[fi] = tracker.extend(track, images[fi])
        sizes.append(track.held_bytes)
    assert track.frames == total
    for fi in range(window):
        got = track.masks.get(fi, np.zeros((168, 224), bool))
        assert np.array_equal(got, want[fi]), (fi, int((got != want[fi]).sum()))
    for fi, got in live.items():
        assert np.array_equal(got, want[fi]), (fi, int((got != want[fi]).sum()))
    assert sum(want[fi].any() for fi in live) >= 1
    # the memory bank stops growing: what frame t can still read is the last `reach` frames' outputs
    state = track.state["output_dict_per_obj"][0]
    assert sorted(state["non_cond_frame_outputs"]) == list(range(total - tracker.reach, total))
    assert sizes[-1] == sizes[-2], sizes


def test_the_tracker_shares_the_engines_sam2_weights(engine: RynnEC) -> None:
    """Only the memory parts are extra: the package's modules are the engine's own, tensors and all."""
    predictor = engine.tracker().predictor
    sam2 = engine.model.sam2
    assert predictor.image_encoder is sam2.image_encoder and predictor.no_mem_embed is sam2.no_mem_embed
    assert predictor.sam_prompt_encoder is sam2.sam_prompt_encoder
    assert predictor.sam_mask_decoder is sam2.sam_mask_decoder
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


def test_a_prompted_region_is_followed_over_the_whole_window(engine: RynnEC) -> None:
    """``Request.window`` (every buffered frame) with the model reading every other one: the click on a
    read frame is followed over all window frames (``Region.followed``, window indices) as the tracker
    follows it from that window frame, and the region the model reads is those masks on its frames
    (the clicked frame keeps the image predictor's mask, as without a window)."""
    from rynnec_ros.core.types import Frame, Prompt, Region, Request

    window = [Frame(rgb, stamp_ns=(i + 1) * 100) for i, rgb in enumerate(synthetic_window(5, 224, 168))]
    frames = window[::2]  # stamps 100, 300, 500
    pts, labs = np.array([[70.0, 84.0]], np.float32), np.array([1], np.int32)
    region = Region(2, {}, "blob", prompts=(Prompt(1, [(70.0, 84.0)], [1]),))
    req = Request("What is <object0>?", frames, [region], window=window)
    (got,) = engine.resolve_prompts(req).regions
    want = engine.tracker().track([f.rgb for f in window], 168, 224, {2: (pts, labs)}).masks
    assert got.followed is not None and sorted(got.followed.masks) == sorted(want)
    for w, m in want.items():
        assert np.array_equal(got.followed.masks[w], m), w
    assert got.followed.held_bytes > 0
    for i, w in enumerate((0, 2, 4)):
        if i != 1 and w in want:
            assert np.array_equal(got.masks[i], want[w]), i
    assert got.masks[1].any() and set(got.masks) <= {0, 1, 2}


def test_a_segmentation_is_followed_over_the_window_and_on_as_frames_arrive(engine: RynnEC) -> None:
    """``segment`` with a window: the masks it decoded on the frames it read seed the tracker
    (``add_new_mask``) over every window frame, including one it did not read; ``follow`` then gives
    the next frame's mask as the tracker's ``extend`` does from the same seeds. (Fixture case a1: greedy
    decoding on the tiny checkpoint emits [SEG] at step 9, test_model_parity.py.)"""
    from rynnec_ros.core.types import Frame

    from .conftest import Case

    case = Case("a1_video_qa_224x168")
    base = case.request(max_new_tokens=12)
    frames = [Frame(f.rgb, stamp_ns=200 * (i + 1)) for i, f in enumerate(base.frames)]
    extra = synthetic_window(2, 224, 168)
    window = [frames[0], Frame(extra[0], stamp_ns=300), *frames[1:]]
    ans = engine.segment(dataclasses.replace(base, frames=frames, window=window))
    assert ans.masks is not None
    seeds = {0 if i == 0 else i + 1: m for i, m in enumerate(ans.masks) if m is not None and m.any()}
    assert seeds, "case a1's [SEG] segments something on the tiny checkpoint"
    track = engine.tracker().track([f.rgb for f in window], 168, 224, masks=seeds)
    assert ans.followed is not None and sorted(ans.followed.masks) == sorted(track.masks)
    for w, m in track.masks.items():
        assert np.array_equal(ans.followed.masks[w], m), w
    nxt = engine.follow(ans.followed, Frame(extra[1], stamp_ns=10_000))
    assert np.array_equal(nxt, engine.tracker().extend(track, extra[1]))
    with pytest.raises(ValueError, match="cannot continue a track"):
        engine.follow(ans.followed, Frame(np.zeros((100, 100, 3), np.uint8), stamp_ns=20_000))


def test_following_stops_within_one_frame_of_a_cancel(engine: RynnEC) -> None:
    """``should_stop`` is polled after every propagated frame: asked to stop after the second frame,
    the tracker raises ``Cancelled`` having run exactly two (of four)."""
    from rynnec_ros.core.types import Cancelled

    polls: list[int] = []

    def stop() -> bool:
        polls.append(1)
        return len(polls) >= 2

    pts, labs = np.array([[70.0, 84.0]], np.float32), np.array([1], np.int32)
    with pytest.raises(Cancelled, match="following the object"):
        engine.tracker().track(synthetic_window(N, 224, 168), 168, 224, {0: (pts, labs)}, should_stop=stop)
    assert len(polls) == 2
