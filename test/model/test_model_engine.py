"""Engine API: work reuse, input validation, dtypes, streaming, loader errors, prompt idioms."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from rynnec_ros.core.types import Frame, Region, Request
from rynnec_ros.model import RynnEC
from rynnec_ros.model.processing import build_prompt, region_question

from .conftest import regions_of, request

FIXTURE_CKPT = Path(__file__).resolve().parents[1] / "data" / "rynnec-tiny" / "checkpoint"


@pytest.fixture(scope="module")
def frames(make_frames) -> list[np.ndarray]:
    return make_frames(4, 120, 160, seed=4)


def _mask(h: int, w: int, y0: int, x0: int) -> np.ndarray:
    m = np.zeros((h, w), bool)
    m[y0 : y0 + 30, x0 : x0 + 40] = True
    return m


def test_reuse_on_off_identical(untied_ckpt: Path, frames: list[np.ndarray]) -> None:
    on = RynnEC.from_pretrained(untied_ckpt, reuse=True)
    off = RynnEC.from_pretrained(untied_ckpt, reuse=False)
    masks = [_mask(120, 160, 10, 20), _mask(120, 160, 50, 60)]
    questions = [
        dict(question="What is happening?"),
        dict(question="What is <object0> next to <object1>?", regions=regions_of(masks, [0, 2])),
        dict(question="How far is <object0> from the camera?", regions=regions_of(masks[:1], [3])),
        dict(question="What is happening?"),
    ]
    for q in questions:
        a_on = on.answer(request(frames, max_new_tokens=6, **q))
        a_off = off.answer(request(frames, max_new_tokens=6, **q))
        assert a_on.token_ids == a_off.token_ids and a_on.text == a_off.text
        p_on, p_off = on.prepare(request(frames, **q)), off.prepare(request(frames, **q))
        g_on, g_off = on.generate(p_on, 4), off.generate(p_off, 4)
        torch.testing.assert_close(
            torch.stack(g_on.step_logits), torch.stack(g_off.step_logits), atol=0, rtol=0
        )
        torch.testing.assert_close(p_on.inputs_embeds, p_off.inputs_embeds, atol=0, rtol=0)
    assert on.stats["vision_misses"] == len(frames)  # every frame encoded once
    assert on.stats["prefix_hits"] >= 2 * len(questions) - 1
    assert off.stats["vision_hits"] == 0 and off.stats["prefix_hits"] == 0
    # score_options also goes through the cached prefix
    s_on = on.score_options(request(frames, "Left or right?", options=["left", "right"]))
    s_off = off.score_options(request(frames, "Left or right?", options=["left", "right"]))
    assert s_on == s_off
    # SAM2 features: cached vs recomputed decode of the same prompt vector
    seg = torch.randn(on.model.sam2.config.d_model, generator=torch.Generator().manual_seed(0))
    one = [Frame(frames[0])]
    m1, sc1 = on.masks_for(one, seg)
    m2, sc2 = on.masks_for(one, seg)
    m3, sc3 = off.masks_for(one, seg)
    assert on.stats["sam2_hits"] == 1
    for a, b, c, f in zip(m1, m2, m3, frames, strict=False):
        assert a is not None and a.shape == f.shape[:2] and a.dtype == bool
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    assert sc1 == sc2 == sc3
    on.clear_cache()
    assert on.stats["vision_hits"] == 0 and not on._vision_cache and not on._prefix_cache


def test_frame_keys_drive_the_cache(untied_ckpt: Path, frames: list[np.ndarray]) -> None:
    eng = RynnEC.from_pretrained(untied_ckpt)
    eng.answer(request(frames[:2], "Hi?", keys=[10, 11], max_new_tokens=2))
    eng.answer(request(frames[:2], "Hi?", keys=[10, 11], max_new_tokens=2))
    assert eng.stats["vision_hits"] == 2 and eng.stats["vision_misses"] == 2
    # a sliding window: the old frame keeps its features (same grid: same frame count)
    eng.answer(request([frames[1], frames[2]], "Hi?", keys=[11, 12], max_new_tokens=2))
    assert eng.stats["vision_hits"] == 3


def test_answer_fields_and_streaming(untied_ckpt: Path, frames: list[np.ndarray]) -> None:
    eng = RynnEC.from_pretrained(untied_ckpt)
    pieces: list[str] = []
    ans = eng.answer(
        request(frames, "What is it?", max_new_tokens=8, options=["a", "b"]), on_token=pieces.append
    )
    assert 1 <= len(ans.token_ids) <= 8
    assert set(ans.timings) == {"preprocess", "vision", "prefill", "first_token", "decode", "sam2", "total"}
    assert all(v >= 0 for v in ans.timings.values())
    assert ans.timings["first_token"] <= ans.timings["total"]
    raw = eng.tokenizer.decode(ans.token_ids)
    assert raw.startswith("".join(pieces)) and eng.clean_text(raw) == ans.text
    assert ans.source == "model"


def test_quantity_and_option_parsing_of_answers(untied_ckpt: Path) -> None:
    from rynnec_ros.core.types import Answer

    a = Answer(text="It is about 2.5 meters away.")
    RynnEC._fill_parsed(a, ["1 meter", "2.5 meters"])
    assert (a.value, a.unit) == (2.5, "m") or (a.value == 2.5 and a.unit is not None)
    assert a.option_index == 1


def test_bad_inputs_raise_clear_errors(untied_ckpt: Path, frames: list[np.ndarray]) -> None:
    eng = RynnEC.from_pretrained(untied_ckpt)
    box = np.ones((120, 160), bool)
    with pytest.raises(ValueError, match="at least one frame"):
        eng.answer(request([], "q"))
    with pytest.raises(ValueError, match="uint8"):
        eng.answer(request([frames[0].astype(np.float32)], "q"))
    with pytest.raises(ValueError, match="H×W×3"):
        eng.answer(request([frames[0][..., 0]], "q"))
    with pytest.raises(ValueError, match=r"must be a rynnec_ros\.core\.types\.Frame"):
        eng.answer(Request("q", list(frames)))  # type: ignore[arg-type]  # raw arrays, not Frames
    with pytest.raises(ValueError, match="mask is 10×10 but the frame is 160×120"):
        eng.answer(request(frames, "q <object0>", [Region(0, {0: np.ones((10, 10), bool)})]))
    with pytest.raises(ValueError, match="out of range"):
        eng.answer(request(frames, "q <object0>", [Region(0, {9: box})]))
    with pytest.raises(ValueError, match="3 per-frame masks for 4 frames"):
        eng.answer(request(frames, "q <object0>", [Region(0, [box, None, None])]))
    with pytest.raises(ValueError, match="has no mask on any frame"):
        eng.answer(request(frames, "q <object0>", [Region(0, np.zeros((4, 120, 160), bool))]))
    with pytest.raises(ValueError, match="<REGION> tokens but 2 masks"):
        eng.answer(request(frames, "What is [<REGION>]?", regions_of([box] * 2, [0, 1])))
    with pytest.raises(ValueError, match="max_new_tokens"):
        eng.answer(request(frames, "q", max_new_tokens=0))
    with pytest.raises(ValueError, match="at least one option"):
        eng.score_options(request(frames, "q", options=[]))
    with pytest.raises(ValueError, match="takes no regions"):
        eng.segment(request(frames, "q", [Region(0, {0: box})]))
    with pytest.raises(ValueError, match="does not exist"):
        RynnEC.from_pretrained("/nonexistent/ckpt")
    with pytest.raises(ValueError, match="dtype"):
        RynnEC.from_pretrained(untied_ckpt, dtype="int8")


def test_region_idioms() -> None:
    assert region_question("What is <object0>?", [2], "<REGION>") == "What is [<REGION><REGION>]?"
    two = region_question("Distance between <object0> and <object1>?", [1, 1], "<REGION>")
    assert two == (
        "There are 2 objects in the video: <object0>[<REGION>], <object1>[<REGION>]. "
        "Distance between <object0> and <object1>?"
    )
    assert region_question("What is [<REGION>]?", [1], "<REGION>") == "What is [<REGION>]?"
    assert region_question("Is <region> left of <region>?", [1, 3], "<REGION>") == (
        "Is [<REGION>] left of [<REGION><REGION><REGION>]?"
    )
    prefix, prompt = build_prompt(2, "<video>\nWhat?")
    assert prefix == "<|im_start|>user\n<image>,<image>\n" and prompt == prefix + "What?<|im_end|>\n"


def test_region_mask_forms_are_equivalent(untied_ckpt: Path, frames: list[np.ndarray]) -> None:
    """{frame: mask}, a per-frame sequence with None gaps and an N×H×W array give the same prompt."""
    eng = RynnEC.from_pretrained(untied_ckpt, reuse=False)
    m0, m2 = _mask(120, 160, 0, 0), _mask(120, 160, 60, 90)
    dense = np.zeros((4, 120, 160), bool)
    dense[0], dense[2] = m0, m2
    forms = [{0: m0, 2: m2}, [m0, None, m2, None], dense, list(dense)]
    preps = [eng.prepare(request(frames, "What is <object0>?", [Region(7, f)])) for f in forms]
    for p in preps[1:]:
        assert p.input_ids == preps[0].input_ids and p.mask_frames == [0, 2] and p.object_ids == [7]
        torch.testing.assert_close(p.region_embeddings, preps[0].region_embeddings, atol=0, rtol=0)
    ans = eng.answer(request(frames, "What is <object0>?", [Region(7, dense)], max_new_tokens=2))
    assert ans.object_ids == [7] and ans.frame_indices == [0, 2]


def test_regions_follow_region_order(untied_ckpt: Path, frames: list[np.ndarray]) -> None:
    eng = RynnEC.from_pretrained(untied_ckpt, reuse=False)
    m = [_mask(120, 160, 0, 0), _mask(120, 160, 60, 90), _mask(120, 160, 30, 30)]
    # masks interleaved across objects: object 5 (first seen) gets two masks, object 2 one
    prep = eng.prepare(
        request(frames, "Compare <object0> and <object1>.", regions_of(m, [0, 1, 2], [5, 2, 5]))
    )
    ref = eng.prepare(
        request(
            frames, "Compare <object0> and <object1>.", regions_of([m[0], m[2], m[1]], [0, 2, 1], [0, 0, 1])
        )
    )
    assert prep.input_ids == ref.input_ids and prep.object_ids == [5, 2]
    torch.testing.assert_close(prep.region_embeddings, ref.region_embeddings, atol=0, rtol=0)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_low_precision_smoke(untied_ckpt: Path, frames: list[np.ndarray], dtype: str) -> None:
    eng = RynnEC.from_pretrained(untied_ckpt, dtype=dtype)
    assert eng.model.model.embed_tokens.weight.dtype == getattr(torch, dtype)
    ans = eng.answer(
        request(frames[:2], "What is <object0>?", [Region(0, {1: _mask(120, 160, 5, 5)})], max_new_tokens=4)
    )
    assert 1 <= len(ans.token_ids) <= 4
    prep = eng.prepare(request(frames[:2], "What?"))
    gen = eng.generate(prep, 2)
    assert all(torch.isfinite(x).all() for x in gen.step_logits)
    masks, scores = eng.masks_for([Frame(frames[0])], torch.ones(eng.model.sam2.config.d_model))
    assert masks[0] is not None and masks[0].shape == (120, 160) and np.isfinite(scores[0])


# ------------------------------------------------------------------------------------------- loader


def _copy(tmp_path: Path, src: Path = FIXTURE_CKPT) -> Path:
    dst = tmp_path / "ck"
    shutil.copytree(src, dst)
    for p in dst.rglob("*"):
        p.chmod(0o644 if p.is_file() else 0o755)
    return dst


def _edit_weights(path: Path, fn) -> None:
    from safetensors.torch import load_file, save_file

    sd = load_file(str(path / "model.safetensors"))
    fn(sd)
    save_file(sd, str(path / "model.safetensors"))


def test_loader_missing_key(tmp_path: Path) -> None:
    ck = _copy(tmp_path)
    _edit_weights(ck, lambda sd: sd.pop("model.layers.1.mlp.up_proj.weight"))
    with pytest.raises(ValueError, match=r"missing keys.*model\.layers\.1\.mlp\.up_proj\.weight"):
        RynnEC.from_pretrained(ck)


def test_loader_missing_sam2_key(tmp_path: Path) -> None:
    ck = _copy(tmp_path)
    _edit_weights(ck, lambda sd: sd.pop("grounding_encoder.sam2_model.no_mem_embed"))
    with pytest.raises(ValueError, match="no_mem_embed"):
        RynnEC.from_pretrained(ck)


def test_loader_unexpected_key(tmp_path: Path) -> None:
    ck = _copy(tmp_path)
    _edit_weights(ck, lambda sd: sd.update({"model.extra_head.weight": torch.zeros(2, 2)}))
    with pytest.raises(ValueError, match=r"unexpected keys.*model\.extra_head\.weight"):
        RynnEC.from_pretrained(ck)


def test_loader_wrong_shape(tmp_path: Path) -> None:
    ck = _copy(tmp_path)
    _edit_weights(ck, lambda sd: sd.update({"model.mm_projector.readout.0.weight": torch.zeros(64, 50)}))
    with pytest.raises(ValueError, match=r"shape mismatches.*mm_projector\.readout\.0\.weight.*\(64, 50\)"):
        RynnEC.from_pretrained(ck)


def test_loader_rejects_pickle_weights(tmp_path: Path) -> None:
    ck = _copy(tmp_path)
    (ck / "model.safetensors").unlink()
    (ck / "pytorch_model.bin").write_bytes(b"\x80\x04not really a pickle")
    with pytest.raises(ValueError, match="only safetensors"):
        RynnEC.from_pretrained(ck)


def test_loader_corrupt_safetensors(tmp_path: Path) -> None:
    ck = _copy(tmp_path)
    (ck / "model.safetensors").write_bytes(b"garbage")
    with pytest.raises(ValueError, match="safetensors"):
        RynnEC.from_pretrained(ck)


def test_loader_wrong_model_type(tmp_path: Path) -> None:
    ck = _copy(tmp_path)
    cfg = json.loads((ck / "config.json").read_text())
    cfg["model_type"] = "qwen2"
    (ck / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="model_type is 'qwen2', expected 'rynnec_qwen2'"):
        RynnEC.from_pretrained(ck)


def test_loader_token_id_disagreement(tmp_path: Path) -> None:
    ck = _copy(tmp_path)
    cfg = json.loads((ck / "config.json").read_text())
    cfg["seg_token_index"] = 605
    (ck / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match=r"\[SEG\] is id 605 but the tokenizer maps it to 607"):
        RynnEC.from_pretrained(ck)


def test_loader_missing_shard(tmp_path: Path) -> None:
    ck = _copy(tmp_path)
    (ck / "model.safetensors.index.json").write_text(
        json.dumps({"weight_map": {"a": "model-00001-of-00002.safetensors"}})
    )
    with pytest.raises(ValueError, match="shards"):
        RynnEC.from_pretrained(ck)


def test_loader_sam2_yaml_shape_mismatch(tmp_path: Path) -> None:
    ck = _copy(tmp_path)
    (ck / "sam2_hiera_tiny.yaml").unlink()  # falls back to Hiera-L, which this checkpoint is not
    with pytest.raises(ValueError, match="SAM2"):
        RynnEC.from_pretrained(ck)


def test_loader_seg_head_without_config_flag(tmp_path: Path) -> None:
    ck = _copy(tmp_path)
    cfg = json.loads((ck / "config.json").read_text())
    del cfg["mm_mask_decoder"]
    (ck / "config.json").write_text(json.dumps(cfg))
    eng = RynnEC.from_pretrained(ck)  # the checkpoint's text_hidden_fcs weights are used, not rejected
    assert eng.model.seg_head is not None and eng.config.has_seg_head
