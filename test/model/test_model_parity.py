"""Field-by-field parity with the upstream reference outputs (test/data/rynnec-tiny, README tolerances)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from rynnec_ros.model.engine import RynnEC
from rynnec_ros.model.engine_types import Generation, Prepared

from .conftest import request

CASES = sorted(
    p.name
    for p in (Path(__file__).resolve().parents[1] / "data" / "rynnec-tiny" / "cases").iterdir()
    if p.is_dir()
)
Case = Any

FEAT = {"atol": 1e-4, "rtol": 1e-4}
LOGITS = {"atol": 2e-4, "rtol": 1e-4}
SAM = {"atol": 5e-4, "rtol": 1e-3}
LOWRES = {"atol": 1e-3, "rtol": 1e-3}


def run_case(engine: RynnEC, case: Case) -> tuple[Prepared, Generation]:
    m = case.meta
    prep = engine.prepare(case.request())
    n_steps = len(case.arrays["generated_ids"])
    gen = engine.generate(prep, n_steps, force_ids=m.get("forced_ids"))
    return prep, gen


@pytest.fixture(scope="module")
def results(engine_noreuse: RynnEC, cases: dict[str, Case]) -> dict[str, tuple[Prepared, Generation]]:
    engine_noreuse.processor.max_tokens = 16384
    out = {}
    for name, case in cases.items():
        engine_noreuse.processor.max_tokens = int(case.meta["image_processor"]["max_tokens"])
        out[name] = run_case(engine_noreuse, case)
    engine_noreuse.processor.max_tokens = 16384
    return out


def close(actual: torch.Tensor | np.ndarray, expected: np.ndarray, tol: dict[str, float], what: str) -> None:
    a = actual.detach().float().cpu().numpy() if isinstance(actual, torch.Tensor) else np.asarray(actual)
    assert a.shape == expected.shape, f"{what}: shape {a.shape} vs {expected.shape}"
    np.testing.assert_allclose(a, expected, err_msg=what, **tol)


@pytest.mark.parametrize("name", CASES)
def test_prompt_and_preprocessing(name: str, cases: dict[str, Case], results) -> None:
    case, (prep, _) = cases[name], results[name]
    a = case.arrays
    assert prep.input_ids == a["input_ids"].tolist()
    grids = [[1, f.grid_h, f.grid_w] for f in prep.frames]
    assert grids == a["grid_sizes"].tolist()
    for i, fi in enumerate(prep.frame_inputs):
        assert fi is not None
        np.testing.assert_array_equal(fi.resized, a[f"resized_uint8_frame{i}"])
    pv = np.concatenate([fi.pixel_values for fi in prep.frame_inputs if fi is not None])
    assert list(pv.shape) == a["pixel_values_shape"].tolist()
    if "pixel_values" in a:
        np.testing.assert_allclose(pv, a["pixel_values"], atol=1e-6, rtol=0)
    assert float(pv.astype(np.float64).sum()) == pytest.approx(float(a["pixel_values_sum"]), abs=1e-3)
    assert float(np.abs(pv.astype(np.float64)).sum()) == pytest.approx(
        float(a["pixel_values_abs_sum"]), rel=1e-9
    )


@pytest.mark.parametrize("name", CASES)
def test_vision_and_embeddings(name: str, cases: dict[str, Case], results) -> None:
    case, (prep, _) = cases[name], results[name]
    a = case.arrays
    close(torch.cat([f.raw for f in prep.frames]), a["vision_raw_features"], FEAT, "vision_raw_features")
    close(
        torch.cat([f.merged for f in prep.frames]),
        a["vision_merged_features"],
        FEAT,
        "vision_merged_features",
    )
    close(torch.cat([f.projected for f in prep.frames]), a["projected_features"], FEAT, "projected_features")
    close(prep.inputs_embeds[0], a["inputs_embeds"], FEAT, "inputs_embeds")


def test_region_encoder(cases: dict[str, Case], results) -> None:
    case, (prep, _) = cases["b1_region_qa_224x168"], results["b1_region_qa_224x168"]
    a = case.arrays
    for k, gm in enumerate(prep.region_grid_masks):
        np.testing.assert_array_equal(gm.cpu().numpy(), a[f"region_mask_on_grid_{k}"])
    assert prep.region_pooled is not None and prep.region_embeddings is not None
    close(prep.region_pooled, a["region_pooled_features"], FEAT, "region_pooled_features")
    close(prep.region_embeddings, a["region_embeddings"], FEAT, "region_embeddings")
    ids = np.asarray(prep.input_ids)
    np.testing.assert_array_equal(np.flatnonzero(ids == 606), a["region_token_positions"])


@pytest.mark.parametrize("name", CASES)
def test_logits_and_greedy_decoding(
    name: str, cases: dict[str, Case], results, engine_noreuse: RynnEC
) -> None:
    case, (_, gen) = cases[name], results[name]
    a = case.arrays
    assert gen.ids == a["generated_ids"].tolist()
    steps = torch.stack(gen.step_logits)
    close(steps[0], a["logits_last_prompt_position"], LOGITS, "logits_last_prompt_position")
    close(steps, a["step_logits"], LOGITS, "step_logits")
    if case.meta.get("forced_ids") is None:  # greedy: argmax of the recorded logits is the emitted token
        assert steps.argmax(-1).tolist() == gen.ids
    assert engine_noreuse.tokenizer.decode(gen.ids) == case.meta["decoded_text_skip_special"]


SEG_CASES = [c for c in CASES if c.startswith("c")]


@pytest.mark.parametrize("name", SEG_CASES)
def test_seg_hidden_state_and_embedding(
    name: str, cases: dict[str, Case], results, engine_noreuse: RynnEC
) -> None:
    case, (prep, gen) = cases[name], results[name]
    a = case.arrays
    k = gen.ids.index(engine_noreuse.config.seg_token_id)
    assert [len(prep.input_ids) + k - 1] == a["seg_hidden_position"].tolist()
    close(gen.step_hidden[k][None], a["seg_hidden_state"], LOGITS, "seg_hidden_state")
    L = len(prep.input_ids)
    close(torch.stack(gen.step_hidden), a["final_hidden_states"][L - 1 :], LOGITS, "final_hidden_states")
    seg = engine_noreuse.seg_embeddings(prep, gen)
    assert seg is not None
    close(seg, a["seg_embedding"], LOGITS, "seg_embedding")


@pytest.mark.parametrize("name", SEG_CASES)
def test_sam2_masks(name: str, cases: dict[str, Case], results, engine_noreuse: RynnEC) -> None:
    case, (prep, gen) = cases[name], results[name]
    a = case.arrays
    seg = engine_noreuse.seg_embeddings(prep, gen)
    assert seg is not None
    best, ious = [], []
    h0, w0 = case.frames[0].shape[:2]
    for t, frame in enumerate(case.frames):
        dec = engine_noreuse.sam2_decode(frame, ("t", name, t), seg[0])
        best.append(dec.best_index)
        ious.append(dec.iou)
        if "sam_lowres_multimask_logits" in a:
            close(
                dec.lowres_logits, a["sam_lowres_multimask_logits"][t], LOWRES, "sam_lowres_multimask_logits"
            )
        else:
            close(dec.best_lowres, a["sam_lowres_best_logits"][t], LOWRES, "sam_lowres_best_logits")
        ref = a["pred_masks_1024"][t, 0]
        mism = int((dec.mask_1024.cpu().numpy() != ref).sum())
        assert mism <= 0.0005 * ref.size, f"frame {t}: {mism} of {ref.size} pixels differ at 1024²"
        small = engine_noreuse._mask_to_frame(dec.mask_1024, h0, w0)
        ref_small = a["pred_masks_orig_v2resize"][t, 0]
        assert int((small != ref_small).sum()) <= 0.002 * ref_small.size
    assert best == a["sam_best_mask_index"].tolist()
    close(torch.stack(ious), a["sam_iou_predictions"], SAM, "sam_iou_predictions")


@pytest.mark.parametrize("name", SEG_CASES)
def test_segment_api_end_to_end(name: str, cases: dict[str, Case], monkeypatch: pytest.MonkeyPatch) -> None:
    """``segment()`` with the reference's teacher-forced tokens: text, masks at frame size, IoU scores."""
    case = cases[name]
    engine = RynnEC.from_pretrained(
        Path(__file__).resolve().parents[1] / "data" / "rynnec-tiny" / "checkpoint"
    )
    real_generate = engine.generate
    monkeypatch.setattr(
        engine,
        "generate",
        lambda prep, n, on_token=None, should_stop=None: real_generate(
            prep, n, on_token, case.meta["forced_ids"], should_stop
        ),
    )
    ans = engine.segment(case.request(max_new_tokens=64))
    assert ans.text == case.meta["returned_text"].removeprefix("assistant\n")
    assert ans.masks is not None and ans.mask_scores is not None
    a = case.arrays
    for t, m in enumerate(ans.masks):
        assert m is not None and m.shape == case.frames[t].shape[:2] and m.dtype == bool
        ref = a["pred_masks_orig_v2resize"][t, 0]
        assert int((m != ref).sum()) <= 0.002 * ref.size
    best = a["sam_best_mask_index"]
    np.testing.assert_allclose(ans.mask_scores, a["sam_iou_predictions"][np.arange(len(best)), best], **SAM)
    assert ans.timings["sam2"] > 0 and ans.frame_indices == list(range(len(case.frames)))


def test_segment_with_a_naturally_generated_seg_token(engine_noreuse: RynnEC, cases: dict[str, Case]) -> None:
    case = cases["a1_video_qa_224x168"]  # greedy decoding of this case emits [SEG] at step 9
    ans = engine_noreuse.segment(case.request(max_new_tokens=12))
    assert ans.token_ids == case.arrays["generated_ids"].tolist()
    prep = engine_noreuse.prepare(case.request())
    gen = engine_noreuse.generate(prep, 12)
    seg = engine_noreuse.seg_embeddings(prep, gen)
    assert seg is not None and seg.shape[0] == 3  # three [SEG] tokens; the first one drives the masks
    masks, scores = engine_noreuse.masks_for(case.request().frames, seg[0])
    assert ans.masks is not None
    for m, ref in zip(ans.masks, masks, strict=True):
        np.testing.assert_array_equal(m, ref)
    assert ans.mask_scores == scores

    none = engine_noreuse.segment(request(case.frames, "Please segment the red ellipse.", max_new_tokens=1))
    assert engine_noreuse.config.seg_token_id not in none.token_ids
    assert none.masks is None and "no [SEG]" in none.reason


QA_CASES = [c for c in CASES if not c.startswith("c")]


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    z = logits.astype(np.float64)
    z = z - z.max()
    return z - np.log(np.exp(z).sum())


@pytest.mark.parametrize("name", QA_CASES)
def test_option_choice_follows_the_upstream_logits(
    name: str, cases: dict[str, Case], engine_noreuse: RynnEC
) -> None:
    """A question with options is decided by the options' likelihoods (Router -> score_options). Expected
    values come from the upstream run's recorded logits, not from our engine: an option that is the greedy
    continuation's first n tokens has log-likelihood sum_k log_softmax(step_logits[k])[ids[k]] (teacher
    forcing on the emitted tokens is what greedy decoding fed back), and a one-token option t has
    log_softmax(logits_last_prompt_position)[t]. The probabilities are the softmax of those."""
    from rynnec_ros.router import Router

    case = cases[name]
    a = case.arrays
    tok = engine_noreuse.tokenizer
    ids = a["generated_ids"].tolist()
    n = max(k for k in range(1, len(ids) + 1) if tok.encode(tok.decode(ids[:k])) == ids[:k])
    first = _log_softmax(a["logits_last_prompt_position"])
    # Two one-token options that are not the greedy first token: the 2nd and 3rd most likely that
    # survive a decode/encode round trip.
    ranked = np.argsort(-first).tolist()
    singles = [t for t in ranked if t != ids[0] and tok.encode(tok.decode([t])) == [t]][:2]
    options = [tok.decode(ids[:n]), *(tok.decode([t]) for t in singles)]
    expected = [sum(float(_log_softmax(a["step_logits"][k])[ids[k]]) for k in range(n)),
                *(float(first[t]) for t in singles)]
    engine_noreuse.processor.max_tokens = int(case.meta["image_processor"]["max_tokens"])
    try:
        ans = Router(engine_noreuse, None, "model").answer(case.request(options=options))
        # The log-likelihoods themselves (a 12-token option's probability beside one-token ones is ~0):
        # logits agree within 2e-4 per step (LOGITS), so a sum over 12 steps within 5e-3.
        scores = engine_noreuse.score_options(case.request(options=options))
    finally:
        engine_noreuse.processor.max_tokens = 16384
    np.testing.assert_allclose(scores, expected, atol=5e-3, rtol=0)
    want = np.exp(np.asarray(expected) - max(expected))
    np.testing.assert_allclose(ans.option_probabilities, want / want.sum(), atol=2e-3, rtol=0)
    assert ans.option_index == int(np.argmax(expected)) and ans.text == options[ans.option_index]


@pytest.mark.parametrize("name", QA_CASES)
def test_answer_token_logprobs_follow_the_upstream_logits(
    name: str, cases: dict[str, Case], engine_noreuse: RynnEC
) -> None:
    """An answer's token_logprobs are log_softmax(step_logits[k])[generated_ids[k]] of the upstream run's
    recorded raw logits (the model's own distribution at each emitted token). Logits agree within 2e-4
    (LOGITS), and log_softmax moves by at most twice a uniform logit error, so 5e-4."""
    case = cases[name]
    a = case.arrays
    ids = a["generated_ids"].tolist()
    expected = [float(_log_softmax(a["step_logits"][k])[ids[k]]) for k in range(len(ids))]
    engine_noreuse.processor.max_tokens = int(case.meta["image_processor"]["max_tokens"])
    try:
        ans = engine_noreuse.answer(case.request(max_new_tokens=len(ids)))
    finally:
        engine_noreuse.processor.max_tokens = 16384
    assert ans.token_ids == ids
    np.testing.assert_allclose(ans.token_logprobs, expected, atol=5e-4, rtol=0)
    assert all(v <= 0.0 for v in ans.token_logprobs)
