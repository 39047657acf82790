"""SAM2 parity with the upstream RynnEC reference outputs (rynnec-tiny fixture, cases c1/c2).

The reference [SEG] embedding from arrays.npz is fed directly, so these tests isolate the SAM2 part.
Tolerances are the ones the fixture README recommends for float32.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image
from safetensors.torch import load_file

from rynnec_ros.model.sam2 import (
    CHECKPOINT_PREFIX,
    Sam2Config,
    Sam2Decoded,
    Sam2ImageFeatures,
    Sam2Model,
    resize_mask_to_frame,
)

_CANDIDATES = (
    Path(__file__).resolve().parents[1] / "data" / "rynnec-tiny",
    Path("/work/shared/fixtures/rynnec-tiny"),
)
FIXTURE = next((p for p in _CANDIDATES if (p / "checkpoint" / "model.safetensors").is_file()), None)
pytestmark = pytest.mark.skipif(FIXTURE is None, reason="rynnec-tiny fixture not found")

CaseRun = tuple[list[torch.Tensor], list[Sam2ImageFeatures], list[Sam2Decoded]]
SEG_CASES = ("c1_seg_224x168", "c2_seg_224x168_assistant_header")
FEATURE_TOL = {"atol": 5e-4, "rtol": 1e-3}
LOGIT_TOL = {"atol": 1e-3, "rtol": 1e-3}
MAX_MISMATCH_1024 = 0.0005
MAX_MISMATCH_FRAME = 0.002


def _close(actual: torch.Tensor, expected: np.ndarray, tol: dict[str, float]) -> float:
    """Assert closeness and return the max abs difference (shown in the failure message)."""
    exp = torch.from_numpy(np.array(expected, dtype=np.float32))
    act = actual.detach().float().cpu().reshape(exp.shape)
    diff = float((act - exp).abs().max())
    torch.testing.assert_close(act, exp, **tol, msg=lambda m: f"{m}\nmax abs diff {diff:.3g}")
    return diff


@pytest.fixture(scope="module")
def sam2_state() -> dict[str, torch.Tensor]:
    assert FIXTURE is not None
    tensors = load_file(str(FIXTURE / "checkpoint" / "model.safetensors"))
    return {k[len(CHECKPOINT_PREFIX):]: v for k, v in tensors.items() if k.startswith(CHECKPOINT_PREFIX)}


@pytest.fixture(scope="module")
def model(sam2_state: dict[str, torch.Tensor]) -> Sam2Model:
    assert FIXTURE is not None
    torch.set_num_threads(min(2, torch.get_num_threads()))
    sam = Sam2Model.from_config(Sam2Config.from_yaml(FIXTURE / "checkpoint" / "sam2_hiera_tiny.yaml"))
    sam.load_inference_state_dict(sam2_state)
    return sam


def _frames(case: str) -> list[np.ndarray]:
    assert FIXTURE is not None
    files = sorted((FIXTURE / "cases" / case / "frames").glob("frame_*.png"))
    return [np.asarray(Image.open(f).convert("RGB")) for f in files]


def _arrays(case: str) -> dict[str, np.ndarray]:
    assert FIXTURE is not None
    with np.load(FIXTURE / "cases" / case / "arrays.npz", allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


@pytest.fixture(scope="module")
def decoded(model: Sam2Model) -> dict[str, CaseRun]:
    """Per case: SAM2 inputs, image features and decoded outputs of every frame (computed once)."""
    out = {}
    for case in SEG_CASES:
        seg = torch.from_numpy(_arrays(case)["seg_embedding"][0])
        pixels = [model.preprocess(frame) for frame in _frames(case)]
        feats = [model.image_features(p) for p in pixels]
        out[case] = (pixels, feats, [model.decode(f, seg) for f in feats])
    return out


@pytest.mark.parametrize("case", SEG_CASES)
def test_sam_input_matches(case: str, decoded) -> None:
    ref = _arrays(case)
    pixels, _, _ = decoded[case]
    sums = np.array([float(p.double().sum()) for p in pixels])
    np.testing.assert_allclose(sums, ref["sam_input_sum_per_frame"], rtol=1e-9, atol=1e-3)
    if "sam_input_frame0_chw" in ref:
        _close(pixels[0][0], ref["sam_input_frame0_chw"], {"atol": 1e-6, "rtol": 0.0})


def test_frame0_features_match(model: Sam2Model, decoded) -> None:
    ref = _arrays("c1_seg_224x168")
    pixels, feats, _ = decoded["c1_seg_224x168"]
    levels = model.backbone(pixels[0])
    assert [tuple(x.shape) for x in levels] == [(1, 32, 256, 256), (1, 32, 128, 128), (1, 32, 64, 64)]
    _close(levels[2], ref["sam_frame0_backbone_fpn2_before_no_mem"], FEATURE_TOL)
    _close(feats[0].image_embed, ref["sam_frame0_image_embeddings"], FEATURE_TOL)
    _close(feats[0].high_res_feats[0], ref["sam_frame0_high_res_feat0"], FEATURE_TOL)
    _close(feats[0].high_res_feats[1], ref["sam_frame0_high_res_feat1"], FEATURE_TOL)
    _close(model.dense_pe(), ref["sam_frame0_image_pe"], FEATURE_TOL)


@pytest.mark.parametrize("case", SEG_CASES)
def test_prompt_embeddings_match(case: str, model: Sam2Model) -> None:
    ref = _arrays(case)
    sparse, dense = model.seg_prompt(torch.from_numpy(ref["seg_embedding"][0]))
    for t in range(ref["sam_sparse_prompt_embeddings"].shape[0]):
        _close(sparse[0], ref["sam_sparse_prompt_embeddings"][t], FEATURE_TOL)
    assert tuple(dense.shape) == (1, 32, 64, 64)
    vector = ref["sam_dense_prompt_embedding_vector"]
    expected_dense = np.broadcast_to(vector[None, :, None, None], dense.shape)
    _close(dense, expected_dense, FEATURE_TOL)


@pytest.mark.parametrize("case", SEG_CASES)
def test_decoder_outputs_match(case: str, decoded) -> None:
    ref = _arrays(case)
    _, _, outs = decoded[case]
    assert len(outs) == ref["sam_iou_predictions"].shape[0]
    for t, out in enumerate(outs):
        assert tuple(out.lowres_logits.shape) == (3, 256, 256)
        if "sam_lowres_multimask_logits" in ref:
            _close(out.lowres_logits, ref["sam_lowres_multimask_logits"][t], LOGIT_TOL)
            best_ref = ref["sam_lowres_multimask_logits"][t][ref["sam_best_mask_index"][t]]
        else:
            best_ref = ref["sam_lowres_best_logits"][t]
        _close(out.best_lowres, best_ref, LOGIT_TOL)
        _close(out.iou, ref["sam_iou_predictions"][t], FEATURE_TOL)
        _close(torch.tensor([out.object_score]), ref["sam_object_score_logits"][t], FEATURE_TOL)
        assert out.best_index == int(ref["sam_best_mask_index"][t])


@pytest.mark.parametrize("case", SEG_CASES)
def test_masks_match(case: str, decoded) -> None:
    ref = _arrays(case)
    _, _, outs = decoded[case]
    height, width = ref["pred_masks_orig_v2resize"].shape[-2:]
    for t, out in enumerate(outs):
        assert out.mask_1024.dtype == torch.bool and tuple(out.mask_1024.shape) == (1024, 1024)
        mismatch = float((out.mask_1024.numpy() != ref["pred_masks_1024"][t, 0]).mean())
        assert mismatch <= MAX_MISMATCH_1024, f"frame {t}: {mismatch:.4%} of 1024² pixels differ"
        small = resize_mask_to_frame(out.mask_1024, int(height), int(width))
        assert small.dtype == np.bool_ and small.shape == (height, width)
        mismatch = float((small != ref["pred_masks_orig_v2resize"][t, 0]).mean())
        assert mismatch <= MAX_MISMATCH_FRAME, f"frame {t}: {mismatch:.4%} of frame pixels differ"


def test_resize_mask_semantics_on_reference_masks() -> None:
    """resize_mask_to_frame reproduces v2.Resize on the reference 1024² masks themselves."""
    ref = _arrays("c1_seg_224x168")
    height, width = ref["pred_masks_orig_v2resize"].shape[-2:]
    for t in range(ref["pred_masks_1024"].shape[0]):
        small = resize_mask_to_frame(ref["pred_masks_1024"][t, 0], int(height), int(width))
        mismatch = float((small != ref["pred_masks_orig_v2resize"][t, 0]).mean())
        assert mismatch <= MAX_MISMATCH_FRAME


def test_batched_features_equal_single_frame(model: Sam2Model, decoded) -> None:
    pixels, feats, outs = decoded["c1_seg_224x168"]
    batch = model.image_features(torch.cat(pixels[:2]))
    assert batch.batch_size == 2
    seg = torch.from_numpy(_arrays("c1_seg_224x168")["seg_embedding"])
    for t in range(2):
        one = batch.frame(t)
        torch.testing.assert_close(one.image_embed, feats[t].image_embed, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(one.high_res_feats[0], feats[t].high_res_feats[0], atol=1e-5, rtol=1e-5)
        again = model.decode(one, seg)
        torch.testing.assert_close(again.lowres_logits, outs[t].lowres_logits, atol=1e-4, rtol=1e-4)
    with pytest.raises(ValueError, match="out of range"):
        batch.frame(2)


def test_bfloat16_smoke(sam2_state: dict[str, torch.Tensor], decoded) -> None:
    """A bfloat16 model runs end to end and stays close to float32 (float32 outputs).

    bfloat16 keeps 8 mantissa bits, and CPU generations accumulate bf16 products differently (AMX,
    AVX512-BF16 or emulation), so neither a fixed pixel-mismatch rate nor the exact logits hold across
    machines: a random tiny model puts ~3 % of its pixels within 0.1 of the decision boundary. What holds
    everywhere: (1) the logit error stays a small fraction of the logits' spread (measured 0.20·std on a
    Xeon; 0.5·std leaves room for other kernels), and (2) since bilinear upsampling is a convex
    combination, |Δ upsampled logit| <= max |Δ low-res logit|, so every pixel whose float32 logit is
    farther from 0 than that error must get the same mask value — a consequence, not a tolerance.
    """
    assert FIXTURE is not None
    sam = Sam2Model.from_config(Sam2Config.from_yaml(FIXTURE / "checkpoint" / "sam2_hiera_tiny.yaml"))
    sam.load_inference_state_dict(sam2_state)
    sam = sam.to(torch.bfloat16)
    pixels, _, outs = decoded["c1_seg_224x168"]
    seg = torch.from_numpy(_arrays("c1_seg_224x168")["seg_embedding"])
    out = sam.decode(sam.image_features(pixels[0]), seg)
    assert out.lowres_logits.dtype == torch.float32 and out.iou.dtype == torch.float32
    assert out.best_index == outs[0].best_index
    ref = outs[0].best_lowres
    err = float((out.best_lowres - ref).abs().max())
    assert err <= 0.5 * float(ref.std()), (err, float(ref.std()))
    ref_up = torch.nn.functional.interpolate(ref[None, None], size=(1024, 1024), mode="bilinear",
                                             align_corners=False)[0, 0]
    decided = ref_up.abs() > err
    assert bool(decided.any())
    assert int(((out.mask_1024 != outs[0].mask_1024) & decided).sum()) == 0
