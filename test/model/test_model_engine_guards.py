"""Engine guards: region/frame-key validation, bounded per-request memory, incremental streaming."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch

from rynnec_ros.core.types import Frame, Region
from rynnec_ros.model import RynnEC
from rynnec_ros.model.engine_types import Generation
from rynnec_ros.model.generation import _TextStream
from rynnec_ros.model.heads import mask_to_grid

from .conftest import request

H, W = 120, 160
MULTIBYTE = "héllo 中文 🙂 ok"  # 2-, 3- and 4-byte characters, split over byte tokens by the tiny vocab


@pytest.fixture(scope="module")
def eng(untied_ckpt: Path) -> RynnEC:
    return RynnEC.from_pretrained(untied_ckpt)


@pytest.fixture(scope="module")
def frames(make_frames) -> list[np.ndarray]:
    return make_frames(2, H, W, seed=12)


def _box() -> np.ndarray:
    m = np.zeros((H, W), bool)
    m[20:70, 30:90] = True
    return m


class DecodeSpy:
    """Wraps the real tokenizer decode and counts how many ids it was asked to decode."""

    def __init__(self, decode: Callable[..., str]) -> None:
        self.decode = decode
        self.ids_decoded = 0

    def __call__(self, ids, *args, **kwargs) -> str:
        self.ids_decoded += len(ids)
        return self.decode(ids, *args, **kwargs)


def _capture_generations(eng: RynnEC, monkeypatch: pytest.MonkeyPatch, force: list[int] | None = None):
    """Record the Generation objects answer()/segment() produce (the real generate still runs)."""
    seen: list[Generation] = []
    real = eng.generate

    def spy(prep, n, on_token=None, should_stop=None):
        gen = real(prep, n, on_token, force, should_stop)
        seen.append(gen)
        return gen

    monkeypatch.setattr(eng, "generate", spy)
    return seen


# ------------------------------------------------------------------------------------ region input


def test_empty_mask_is_rejected(eng: RynnEC, frames: list[np.ndarray]) -> None:
    empty = np.zeros((H, W), bool)
    with pytest.raises(ValueError, match=r"region 0 \(object 0\), frame 0: mask is empty"):
        eng.answer(request(frames[:1], "What is <object0>?", [Region(0, {0: empty})], max_new_tokens=2))
    with pytest.raises(ValueError, match=r"region 1 \(object 4\), frame 1: mask is empty"):
        regions = [Region(3, {0: _box()}), Region(4, {1: empty})]
        eng.score_options(request(frames, "Which?", regions, options=["a", "b"]))


@pytest.mark.parametrize(
    ("mask", "match"),
    [
        (np.full((H, W), 0.4), "values other than 0 and 1 \\(e.g. 0.4\\)"),
        (_box().astype(np.uint8) * 255, "values other than 0 and 1 \\(e.g. 255\\)"),
        (np.where(_box(), np.nan, 0.0), "values other than 0 and 1"),
        (np.full((H, W), "x", dtype=object), "boolean or numeric 0/1"),
    ],
)
def test_non_binary_masks_are_rejected(
    eng: RynnEC, frames: list[np.ndarray], mask: np.ndarray, match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        eng.answer(request(frames[:1], "What is <object0>?", [Region(0, {0: mask})], max_new_tokens=2))


def test_numeric_zero_one_masks_equal_boolean_masks(eng: RynnEC, frames: list[np.ndarray]) -> None:
    ref = eng.prepare(request(frames, "What is <object0>?", [Region(0, {1: _box()})]))
    for m in (_box().astype(np.uint8), _box().astype(np.float32), _box().astype(np.int64)):
        prep = eng.prepare(request(frames, "What is <object0>?", [Region(0, {1: m})]))
        assert prep.input_ids == ref.input_ids
        torch.testing.assert_close(prep.region_embeddings, ref.region_embeddings, atol=0, rtol=0)


@pytest.mark.parametrize("index", [True, np.bool_(False), 1.0, "1", None])
def test_non_integer_frame_index_is_rejected(eng: RynnEC, frames: list[np.ndarray], index) -> None:
    with pytest.raises(ValueError, match="frame index must be an integer"):
        eng.answer(request(frames, "What is <object0>?", [Region(0, {index: _box()})], max_new_tokens=2))


def test_numpy_integer_frame_index_is_accepted(eng: RynnEC, frames: list[np.ndarray]) -> None:
    a = eng.prepare(request(frames, "What is <object0>?", [Region(0, {np.int64(1): _box()})]))  # type: ignore[dict-item]
    b = eng.prepare(request(frames, "What is <object0>?", [Region(0, {1: _box()})]))
    torch.testing.assert_close(a.region_embeddings, b.region_embeddings, atol=0, rtol=0)


def test_duplicate_frame_keys_are_rejected(eng: RynnEC, frames: list[np.ndarray]) -> None:
    other = frames[0][::-1].copy()
    with pytest.raises(ValueError, match="frames 0 and 1 share the key 7"):
        eng.answer(request([frames[0], other], "q", keys=[7, 7], max_new_tokens=2))
    with pytest.raises(ValueError, match="unique"):
        eng.score_options(request([frames[0], other], "q", keys=["k", "k"], options=["a"]))
    with pytest.raises(ValueError, match=r"frame 1: key must be hashable"):
        eng.answer(request([frames[0], other], "q", keys=[1, [2]], max_new_tokens=2))
    with pytest.raises(ValueError, match="unique"):
        eng.masks_for(
            [Frame(frames[0], key=3), Frame(other, key=3)], torch.ones(eng.model.sam2.config.d_model)
        )
    # without keys, identical content hashes alike and legitimately shares features
    before = eng.stats["vision_misses"]
    eng.prepare(request([frames[1], frames[1].copy()], "q"))
    assert eng.stats["vision_misses"] - before <= 1


def test_mask_vanishing_on_the_patch_grid_keeps_upstream_pooling(
    eng: RynnEC, frames: list[np.ndarray]
) -> None:
    """A one-pixel object can fall between the bilinear sample points: accepted, pooled as zeros."""
    probe = eng.prepare(request(frames, "q"))
    gh, gw = probe.frames[0].grid_h, probe.frames[0].grid_w
    vanishing = None
    for y in range(H):
        for x in range(W):
            m = np.zeros((H, W), bool)
            m[y, x] = True
            if not mask_to_grid(torch.from_numpy(m), gh, gw).any():
                vanishing = m
                break
        if vanishing is not None:
            break
    assert vanishing is not None, "the fixture grid should be coarse enough for a pixel to vanish"
    prep = eng.prepare(request(frames, "What is <object0>?", [Region(0, {0: vanishing})]))
    assert not prep.region_grid_masks[0].any()
    assert prep.region_pooled is not None and torch.count_nonzero(prep.region_pooled) == 0
    with torch.inference_mode():
        expected = eng.model.model.region_encoder(torch.zeros_like(prep.region_pooled))
    torch.testing.assert_close(prep.region_embeddings, expected, atol=0, rtol=0)
    ans = eng.answer(request(frames, "What is <object0>?", [Region(0, {0: vanishing})], max_new_tokens=2))
    assert 1 <= len(ans.token_ids) <= 2


# ------------------------------------------------------------------------------------------ memory


def test_answer_and_segment_keep_no_per_step_tensors(
    eng: RynnEC, frames: list[np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> None:
    seg_id = eng.config.seg_token_id
    force = [*eng.tokenizer.encode("It is"), seg_id, *eng.tokenizer.encode(" here"), seg_id]
    one = frames[:1]  # SAM2 runs per frame: one keeps the test quick
    # the recording run: every step's logits and hidden state, as parity checks use them
    prep = eng.prepare(request(one, "Please segment the red square."))
    full = eng.generate(prep, len(force), force_ids=force)
    assert len(full.step_logits) == len(full.step_hidden) == len(force)
    assert full.step_logits[0].shape == (eng.model.lm_head.out_features,)
    seg_steps = [k for k, t in enumerate(force) if t == seg_id]
    for k, row in zip(seg_steps, full.seg_hidden, strict=True):
        torch.testing.assert_close(row, full.step_hidden[k], atol=0, rtol=0)

    seen = _capture_generations(eng, monkeypatch, force)
    ans = eng.segment(request(one, "Please segment the red square.", max_new_tokens=64))
    (gen,) = seen
    assert gen.step_logits == [] and gen.step_hidden == []
    assert gen.ids == full.ids == ans.token_ids
    assert len(gen.seg_hidden) == 2
    torch.testing.assert_close(eng.seg_embeddings(prep, gen), eng.seg_embeddings(prep, full), atol=0, rtol=0)
    masks, scores = eng.masks_for([Frame(one[0])], eng.seg_embeddings(prep, full)[0])
    assert ans.masks is not None
    for a, b in zip(ans.masks, masks, strict=True):
        np.testing.assert_array_equal(a, b)
    assert ans.mask_scores == scores

    monkeypatch.undo()
    seen = _capture_generations(eng, monkeypatch)
    greedy = eng.answer(request(frames, "What is it?", max_new_tokens=6))
    (gen,) = seen
    assert gen.step_logits == [] and gen.step_hidden == []
    reference = eng.generate(eng.prepare(request(frames, "What is it?")), 6)
    assert greedy.token_ids == reference.ids


# --------------------------------------------------------------------------------------- streaming


def test_stream_pieces_are_whole_characters_and_concatenate_to_the_decode(eng: RynnEC) -> None:
    ids = eng.tokenizer.encode(MULTIBYTE)
    assert len(ids) > len(MULTIBYTE.encode("utf-8")) // 2  # really split into byte tokens
    pieces: list[str] = []
    stream = _TextStream(eng.tokenizer, pieces.append)
    for i in ids:
        stream.push(i)
    stream.end()
    assert "".join(pieces) == MULTIBYTE
    assert all("\ufffd" not in p for p in pieces)
    assert {"é", "中", "🙂"} <= set(pieces)  # 2-, 3- and 4-byte characters each arrive whole


def test_stream_flushes_a_cut_character_at_the_end(eng: RynnEC) -> None:
    ids = eng.tokenizer.encode("ok 中")[:-1]  # the last byte of 中 is missing
    pieces: list[str] = []
    stream = _TextStream(eng.tokenizer, pieces.append)
    for i in ids:
        stream.push(i)
    assert "".join(pieces) == "ok "  # held back while the character is incomplete
    stream.end()
    assert "".join(pieces) == eng.tokenizer.decode(ids) and pieces[-1].endswith("\ufffd")


def test_streaming_decodes_each_token_once(
    eng: RynnEC, frames: list[np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Long ASCII answers: linear detokenisation (the old loop re-decoded all ids every step)."""
    text = "the cup is left of the plate and the box is on the table " * 4
    force = eng.tokenizer.encode(text)
    spy = DecodeSpy(eng.tokenizer.decode)
    monkeypatch.setattr(eng.tokenizer, "decode", spy)
    pieces: list[str] = []
    prep = eng.prepare(request(frames, "Describe."))
    prep.keep_steps = False
    gen = eng.generate(prep, len(force), on_token=pieces.append, force_ids=force)
    assert spy.ids_decoded == len(force)
    assert "".join(pieces) == text == eng.tokenizer.decode(gen.ids)


def test_streamed_answer_matches_its_text(eng: RynnEC, frames: list[np.ndarray]) -> None:
    pieces: list[str] = []
    ans = eng.answer(request(frames, "What do you see?", max_new_tokens=12), on_token=pieces.append)
    assert "".join(pieces) == eng.tokenizer.decode(ans.token_ids)
    assert eng.clean_text("".join(pieces)) == ans.text


def test_question_naming_an_object_without_masks_is_rejected() -> None:
    from rynnec_ros.model.processing import region_question

    assert region_question("What is <object0>?", [2], "<REGION>") == "What is [<REGION><REGION>]?"
    with pytest.raises(ValueError, match=r"<object1> but masks were given for 1 object\(s\)"):
        region_question("Is <object0> left of <object1>?", [1], "<REGION>")
    with pytest.raises(ValueError, match=r"<object0> but masks were given for 0 object\(s\)"):
        region_question("What colour is <object0>?", [], "<REGION>")
    # a question that already holds the region tokens is the caller's own prompt
    assert region_question("<object1>[<REGION>]", [1], "<REGION>") == "<object1>[<REGION>]"
