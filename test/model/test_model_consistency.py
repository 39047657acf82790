"""Parity beyond the fixture checkpoint: other seeds, untied heads, other sizes and frame shapes.

Each test recomputes a stage by an independent route (batched block-diagonal ViT, one-shot LLM forward
without KV cache, the README's closed-form region scramble, a raster re-implementation of the resize rule)
and compares with the engine.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from rynnec_ros.core.types import Region
from rynnec_ros.model import RynnEC
from rynnec_ros.model.config import ProcessorConfig
from rynnec_ros.model.heads import scrambled_grid
from rynnec_ros.model.processing import target_size
from rynnec_ros.model.resize import resize_bicubic
from rynnec_ros.model.vision import apply_rotary

from .conftest import request
from .pillow10_resize import resize_bicubic as pillow10_resize

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="module")
def untied(untied_ckpt: Path) -> RynnEC:
    return RynnEC.from_pretrained(untied_ckpt, reuse=False)


@pytest.fixture(scope="module")
def synthetic_frames(make_frames):
    return make_frames


def test_resize_matches_pillow10_reference() -> None:
    with np.load(DATA / "resize_pillow10.npz", allow_pickle=False) as z:
        n = len([k for k in z.files if k.startswith("in")])
        for i in range(n):
            src, ref = z[f"in{i}"], z[f"out{i}"]
            np.testing.assert_array_equal(resize_bicubic(src, ref.shape[1], ref.shape[0]), ref)
            np.testing.assert_array_equal(pillow10_resize(src, ref.shape[1], ref.shape[0]), ref)


def test_pillow_resize_equals_the_pillow10_reimplementation_on_random_shapes() -> None:
    rng = np.random.default_rng(0)
    for _ in range(60):
        h, w, oh, ow = (int(x) for x in rng.integers(1, 400, 4))
        src = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        np.testing.assert_array_equal(
            resize_bicubic(src, ow, oh), pillow10_resize(src, ow, oh), err_msg=f"{(h, w)}->{(oh, ow)}"
        )


@pytest.mark.parametrize("max_tokens", [16384, 640, 100])
def test_target_size_rule(max_tokens: int) -> None:
    cfg = ProcessorConfig(max_tokens=max_tokens, min_tokens=16)
    rng = np.random.default_rng(max_tokens)
    for _ in range(300):
        h, w, n = int(rng.integers(20, 2200)), int(rng.integers(20, 2200)), int(rng.integers(1, 40))
        th, tw = target_size(h, w, n, cfg, 2)
        assert th % 28 == 0 and tw % 28 == 0 and th > 0 and tw > 0
        rh, rw = round(h / 28) * 28, round(w / 28) * 28
        max_pixels = max_tokens * 784 // n
        if rh * rw > max_pixels:  # shrunk: within budget unless a side hit the 28-px floor
            assert th * tw <= max_pixels or min(th, tw) == 28
            assert th <= rh and tw <= rw
        if 16 * 784 <= rh * rw <= max_tokens * 784 // n:
            assert (th, tw) == (rh, rw)
    # Python's round is half-to-even: 42/28 = 1.5 -> 2, 70/28 = 2.5 -> 2
    assert target_size(42, 70 * 8, 1, ProcessorConfig(), 2) == (56, 560)
    assert target_size(70, 28 * 20, 1, ProcessorConfig(), 2) == (56, 560)


@pytest.mark.parametrize(("gh", "gw"), [(12, 16), (4, 6), (10, 2), (2, 30)])
def test_region_grid_scramble_formula(gh: int, gw: int) -> None:
    tokens = torch.arange(gh * gw, dtype=torch.float32)[:, None]
    grid = scrambled_grid(tokens, gh, gw)[..., 0]
    for i in range(gh):
        for j in range(gw):
            n = i * gw + j
            assert int(grid[i, j]) == n  # view position (i, j) holds token n ...
    # ... and token n is image patch (2·(n // 2w) + (n % 4) // 2, 2·((n % 2w) // 4) + n % 2)
    order = torch.arange(gh * gw).view(gh // 2, 2, gw // 2, 2).permute(0, 2, 1, 3).flatten()
    raster_of_token = {int(t): (int(t) // gw, int(t) % gw) for t in order}
    for n in range(gh * gw):
        r, c = raster_of_token[int(order[n])]
        assert (r, c) == (2 * (n // (2 * gw)) + (n % 4) // 2, 2 * ((n % (2 * gw)) // 4) + n % 2)


def _vit_blockdiag(
    engine: RynnEC, pixel_values: list[np.ndarray], grids: list[tuple[int, int]]
) -> torch.Tensor:
    """All frames through the ViT at once with a block-diagonal mask, as upstream's varlen attention."""
    vt = engine.model.vision_tower
    x = vt.embeddings(torch.from_numpy(np.concatenate(pixel_values)))
    cos, sin = zip(*(vt.encoder.rope(h, w, 2) for h, w in grids), strict=True)
    cos_t, sin_t = torch.cat(cos), torch.cat(sin)
    sizes = [h * w for h, w in grids]
    mask = torch.block_diag(*[torch.ones(s, s, dtype=torch.bool) for s in sizes])
    for layer in vt.encoder.layers:
        a = layer.self_attn
        h = layer.layer_norm1(x)
        n = h.shape[0]
        q = apply_rotary(a.q_proj(h).view(n, a.num_heads, -1), cos_t, sin_t).transpose(0, 1)
        k = apply_rotary(a.k_proj(h).view(n, a.num_heads, -1), cos_t, sin_t).transpose(0, 1)
        v = a.v_proj(h).view(n, a.num_heads, -1).transpose(0, 1)
        att = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + a.out_proj(att.transpose(0, 1).reshape(n, -1))
        x = x + layer.mlp(layer.layer_norm2(x))
    return vt.post_layernorm(x)


def test_vision_per_frame_equals_block_diagonal(untied: RynnEC, synthetic_frames) -> None:
    frames = synthetic_frames(2, 150, 200, seed=1) + synthetic_frames(1, 97, 61, seed=2)
    prep = untied.prepare(request(frames, "What moves?"))
    fis = [fi for fi in prep.frame_inputs if fi is not None]
    with torch.inference_mode():
        ref = _vit_blockdiag(untied, [fi.pixel_values for fi in fis], [(fi.grid_h, fi.grid_w) for fi in fis])
    ours = torch.cat([f.raw for f in prep.frames])
    torch.testing.assert_close(ours, ref, atol=2e-5, rtol=1e-5)
    assert sum(f.grid_h * f.grid_w // 4 for f in prep.frames) == prep.input_ids.count(
        untied.config.image_token_id
    )


def _one_shot_logits(engine: RynnEC, prep, ids: list[int]) -> torch.Tensor:
    """Logits of prompt + generated tokens in one forward pass without a KV cache."""
    with torch.inference_mode():
        gen_emb = engine.model.embed(torch.tensor(ids[:-1]))
        emb = torch.cat([prep.inputs_embeds[0], gen_emb])[None]
        out = engine.model(inputs_embeds=emb, use_cache=False)
    L = len(prep.input_ids)
    return out.logits[0, L - 1 :].float()


@pytest.mark.parametrize(("shape", "n"), [((90, 120), 2), ((333, 111), 3), ((480, 640), 1)])
def test_llm_cached_decoding_equals_full_forward(
    untied: RynnEC, shape: tuple[int, int], n: int, synthetic_frames
) -> None:
    frames = synthetic_frames(n, *shape, seed=n)
    mask = np.zeros(shape, bool) | (np.arange(shape[1]) < 40)
    prep = untied.prepare(request(frames, "Describe <object0>.", [Region(0, {0: mask})]))
    gen = untied.generate(prep, 6)
    ref = _one_shot_logits(untied, prep, gen.ids)
    torch.testing.assert_close(torch.stack(gen.step_logits), ref, atol=1e-4, rtol=1e-4)
    assert ref.argmax(-1).tolist() == gen.ids


def test_region_pooling_on_raster_grid_via_formula(untied: RynnEC, synthetic_frames) -> None:
    frames = synthetic_frames(2, 130, 170, seed=5)
    mask = np.zeros((130, 170), bool)
    mask[20:90, 30:100] = True
    prep = untied.prepare(request(frames, "What is <object0>?", [Region(0, {1: mask})]))
    f = prep.frames[1]
    gm = prep.region_grid_masks[0]
    raw = f.raw.float()
    total = torch.zeros(raw.shape[1])
    count = float(gm.sum())
    for n in range(f.grid_h * f.grid_w):
        i, j = divmod(n, f.grid_w)
        if gm[i, j]:
            total += raw[n]
    torch.testing.assert_close(prep.region_pooled[0], total / (count + 1e-8), atol=1e-5, rtol=1e-5)
    assert prep.input_ids.count(untied.config.region_token_id) == 1


def _rewrite(src: Path, dst: Path, state_fn, config_fn=None) -> Path:
    from safetensors.torch import load_file, save_file

    shutil.copytree(src, dst)
    state = state_fn(load_file(str(src / "model.safetensors")))
    (dst / "model.safetensors").unlink()
    if isinstance(state, list):  # shards
        index = {"metadata": {}, "weight_map": {}}
        for i, part in enumerate(state):
            name = f"model-{i + 1:05d}-of-{len(state):05d}.safetensors"
            save_file(part, str(dst / name))
            index["weight_map"].update(dict.fromkeys(part, name))
        (dst / "model.safetensors.index.json").write_text(json.dumps(index))
    else:
        save_file(state, str(dst / "model.safetensors"))
    if config_fn is not None:
        cfg = json.loads((dst / "config.json").read_text())
        config_fn(cfg)
        (dst / "config.json").write_text(json.dumps(cfg))
    return dst


def test_tied_untied_and_sharded_loads_agree(tied_ckpt: Path, tmp_path: Path, synthetic_frames) -> None:
    def untie(sd):
        sd["lm_head.weight"] = sd["model.embed_tokens.weight"].clone()
        return sd

    def shard(sd):
        keys = sorted(sd)
        return [{k: sd[k] for k in keys[: len(keys) // 2]}, {k: sd[k] for k in keys[len(keys) // 2 :]}]

    untied_copy = _rewrite(
        tied_ckpt, tmp_path / "untied", untie, lambda c: c.update(tie_word_embeddings=False)
    )
    sharded = _rewrite(tied_ckpt, tmp_path / "sharded", shard)
    frames = synthetic_frames(2, 100, 140, seed=9)
    results = []
    for path in (tied_ckpt, untied_copy, sharded):
        eng = RynnEC.from_pretrained(path, reuse=False)
        prep = eng.prepare(request(frames, "Where is it?"))
        gen = eng.generate(prep, 5)
        results.append((gen.ids, torch.stack(gen.step_logits)))
        tied = eng.model.lm_head.weight is eng.model.model.embed_tokens.weight
        assert tied == (path != untied_copy)
    for ids, logits in results[1:]:
        assert ids == results[0][0]
        torch.testing.assert_close(logits, results[0][1], atol=1e-5, rtol=1e-5)


def test_other_architecture_and_score_options(
    tmp_path: Path, synthetic_frames, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rynnec_ros.fixtures import checkpoints as tiny

    # sizes unlike the fixture's (odd head counts, 3 layers, vision head_dim 20): nothing is hard-coded
    monkeypatch.setitem(
        tiny.SIZES, "odd", {"llm": (96, 3, 6, 3, 160), "vision": (40, 3, 2, 72), "out_dim": 32}
    )
    path = tiny.make_checkpoint(tmp_path / "ck", size="odd", seed=21, tie_word_embeddings=False)
    eng = RynnEC.from_pretrained(path)
    frames = synthetic_frames(3, 64, 90, seed=3)
    prep = eng.prepare(request(frames, "Which side?"))
    gen = eng.generate(prep, 5)
    ref = _one_shot_logits(eng, prep, gen.ids)
    torch.testing.assert_close(torch.stack(gen.step_logits), ref, atol=1e-4, rtol=1e-4)

    options = ["left", "right of it", "3 meters"]
    scores = eng.score_options(request(frames, "Which side?", options=options))
    for opt, score in zip(options, scores, strict=True):
        ids = eng.tokenizer.encode(opt)
        logits = _one_shot_logits(eng, prep, [*ids, 0])[: len(ids)]
        expected = torch.log_softmax(logits, -1)[torch.arange(len(ids)), torch.tensor(ids)].sum()
        assert score == pytest.approx(float(expected), abs=1e-4)
