"""The int8 K/V cache of the fused ONNX Runtime decode graph (``export/kvcache.py``, engine ``kv_cache``).

References not taken from the code under test: one ``GroupQueryAttention`` node built by hand with
ONNX's helpers (the kernel's rounding and saturation), transformers' Qwen2 decoder modules attending
over the graph's own int8 cache dequantised by hand (``q · scale``), the plain float32 prefill graph
(the calibration maxima), and bytes counted by hand from the tiny checkpoint's config.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
import torch

from rynnec_ros.model.backends import load_engine
from rynnec_ros.model.backends.graphs import GraphDecoderStack
from rynnec_ros.model.backends.ort import OrtGraph
from rynnec_ros.model.export.kvcache import calibration_embeds
from rynnec_ros.model.export.manifest import Manifest
from rynnec_ros.model.export.onnx_export import add_kv_cache, add_weights
from rynnec_ros.model.spec import EngineSpec

from ..model.conftest import request
from .conftest import CHECKPOINT, load_case

LAYERS, KV, HD = 2, 2, 16  # the tiny checkpoint


@pytest.fixture(scope="module")
def kvdir(onnx_dir: Path, torch_model, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("onnx-tiny-kv8")
    shutil.copytree(onnx_dir, out, dirs_exist_ok=True)
    add_weights(out, "int4")
    add_kv_cache(out, torch_model, "int8")
    return out


def test_the_cpu_kernel_rounds_and_saturates_as_the_docs_say() -> None:
    """One hand-built node, int8 caches with per-tensor scales: the rows it writes are round-half-to-even
    of x / scale, clipped to [-128, 127] (a value 20× the range saturates, it does not wrap), and its
    output equals softmax attention over those rows times the scale (numpy, by hand) to float32 rounding."""
    from onnx import TensorProto as T
    from onnx import helper as h

    heads, kv, d, cap, s = 4, 2, 16, 8, 3
    ins = [h.make_tensor_value_info(n, T.FLOAT, [1, s, w]) for n, w in (("q", heads * d), ("k", kv * d),
                                                                          ("v", kv * d))]
    ins += [h.make_tensor_value_info(n, T.INT8, [1, kv, cap, d]) for n in ("ck", "cv")]
    ins += [h.make_tensor_value_info("seqlens", T.INT32, [1]), h.make_tensor_value_info("total", T.INT32, [])]
    outs = [h.make_tensor_value_info("o", T.FLOAT, [1, s, heads * d])]
    outs += [h.make_tensor_value_info(n, T.INT8, [1, kv, cap, d]) for n in ("pk", "pv")]
    # a K scale of 0.5 makes x / scale exact, so the ties below are ties
    scales = [h.make_tensor("ks", T.FLOAT, [1], [0.5]), h.make_tensor("vs", T.FLOAT, [1], [0.02])]
    node = h.make_node(
        "GroupQueryAttention",
        ["q", "k", "v", "ck", "cv", "seqlens", "total", "", "", "", "", "", "ks", "vs"], ["o", "pk", "pv"],
        domain="com.microsoft", num_heads=heads, kv_num_heads=kv,
        k_quant_type="PER_TENSOR", v_quant_type="PER_TENSOR", kv_cache_bit_width=8,
    )
    model = h.make_model(h.make_graph([node], "g", ins, outs, scales), ir_version=8, opset_imports=[
        h.make_opsetid("", 17), h.make_opsetid("com.microsoft", 1)])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    q = rng.standard_normal((1, s, heads * d)).astype(np.float32)
    k = (3 * rng.standard_normal((1, s, kv * d))).astype(np.float32)
    v = rng.standard_normal((1, s, kv * d)).astype(np.float32)
    k[0, 0, :4] = [100.0, -100.0, 1.25, 1.75]  # saturate high and low; 2.5 and 3.5 steps: ties to even
    zeros = np.zeros((1, kv, cap, d), np.int8)
    o, pk, pv = sess.run(None, {"q": q, "k": k, "v": v, "ck": zeros, "cv": zeros,
                                "seqlens": np.array([s - 1], np.int32), "total": np.array(s, np.int32)})
    kk = k[0].reshape(s, kv, d).transpose(1, 0, 2)
    assert (pk[0, :, :s] == np.clip(np.rint(kk / np.float32(0.5)), -128, 127)).all()
    assert pk[0, 0, 0, :4].tolist() == [127, -128, 2, 4] and not pk[0, :, s:].any()
    keys, values = pk[0, :, :s] * np.float32(0.5), pv[0, :, :s] * np.float32(0.02)
    qh = q[0].reshape(s, heads, d).transpose(1, 0, 2)
    for head in range(heads):
        scores = qh[head] @ keys[head // 2].T / np.sqrt(d)
        scores = np.where(np.tril(np.ones((s, s))) > 0, scores, -np.inf)
        p = np.exp(scores - scores.max(-1, keepdims=True))
        want = (p / p.sum(-1, keepdims=True)) @ values[head // 2]
        np.testing.assert_allclose(o[0, :, head * d : (head + 1) * d], want, rtol=1e-5, atol=1e-5)


def _reference_chunk(model, emb: torch.Tensor, pos: int, k8: torch.Tensor, v8: torch.Tensor,
                     k_scale: list[float], v_scale: list[float]) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """transformers' Qwen2 layers over ``emb`` [1, n, H] at positions pos…, attending over the int8
    cache rows 0…pos+n−1 dequantised by hand; also each layer's float new K (rotated) and V rows."""
    from transformers.models.qwen2.modeling_qwen2 import apply_rotary_pos_emb

    n = emb.shape[1]
    positions = torch.arange(pos, pos + n)[None]
    cos, sin = model.rotary_emb(emb, positions)
    x, new = emb, []
    visible = torch.arange(pos + n)[None, :] <= (pos + torch.arange(n))[:, None]  # [n, T]
    for i, layer in enumerate(model.layers):
        attn = layer.self_attn
        h = layer.input_layernorm(x)
        q = attn.q_proj(h).view(1, n, -1, HD).transpose(1, 2)
        k = attn.k_proj(h).view(1, n, KV, HD).transpose(1, 2)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        new += [k[0], attn.v_proj(h).view(n, KV, HD).transpose(0, 1)]
        keys = k8[i, :, : pos + n].float() * k_scale[i]
        values = v8[i, :, : pos + n].float() * v_scale[i]
        group = q.shape[1] // KV
        scores = q[0] @ keys.repeat_interleave(group, 0).transpose(-1, -2) * attn.scaling
        probs = torch.softmax(scores.masked_fill(~visible, float("-inf")), dim=-1)
        o = (probs @ values.repeat_interleave(group, 0)).transpose(0, 1).reshape(1, n, -1)
        x = x + attn.o_proj(o)
        x = x + layer.mlp(layer.post_attention_layernorm(x))
    return model.norm(x), new


def test_int8_cache_graph_attends_over_the_dequantised_cache_in_place(kvdir: Path, torch_model) -> None:
    """The engine's decoder over ``llm_decode_gqa.kv8.onnx``: a 6-token prefill from an empty int8
    cache, then 1 + 1 + 3 steps. Each chunk's hidden states equal transformers' Qwen2 layers attending
    over the graph's own int8 rows dequantised by hand (rtol/atol 1e-4: float32 sum order, as the
    float graph's parity); the rows it wrote are round(x / scale) of the reference's float K/V, up to
    one step where float32 rounding puts a value on the other side of a half step (≤ 1 % of values);
    the buffers are never replaced. The graph stacks each kv head's 2 query heads as rows (one attention
    node per layer with num_heads = kv heads = 2, the tiny config's 4 / 2): each call writes one scratch
    row per token after its last position, and no row beyond the last call's scratch. Calls of at most
    4 tokens here (the engine's limit is 128), so the 6-token prefill runs as 1 + 4 + 1: the first token
    alone, as from every empty cache."""
    import onnx

    g = onnx.load(str(kvdir / Manifest.load(kvdir).kv_graph("int8").file), load_external_data=False)
    attention = [n for n in g.graph.node if n.op_type == "GroupQueryAttention"]
    assert len(attention) == LAYERS
    assert {a.i for n in attention for a in n.attribute if a.name in ("num_heads", "kv_num_heads")} == {KV}
    manifest = Manifest.load(kvdir)
    info = manifest.info["kv_cache"]["int8"]
    k_scale = [m / 127 for m in info["k_absmax"]]
    v_scale = [m / 127 for m in info["v_absmax"]]
    graph = OrtGraph(kvdir / manifest.kv_graph("int8").file, threads=2)
    assert graph.dtypes["cache_k.0"] == torch.int8
    stack = GraphDecoderStack(None, graph, torch.float32, (LAYERS, KV, HD), torch.int8)
    assert stack.query_rows == 2
    stack.call_tokens = 4
    cache = stack.new_cache(16)
    assert cache.capacity == 16 and cache.k.shape[2] == 16 + stack.scratch
    pointers = (cache.k.data_ptr(), cache.v.data_ptr())
    ids = torch.randint(0, 600, (1, 11), generator=torch.Generator().manual_seed(4))
    model = torch_model.model
    with torch.no_grad():
        emb = model.embed_tokens(ids).float()
        pos, flips, values = 0, 0, 0
        for n in (6, 1, 1, 3):
            got = stack.forward(emb[:, pos : pos + n].contiguous(), cache)
            chunk = emb[:, pos : pos + n]
            want, new = _reference_chunk(model, chunk, pos, cache.k, cache.v, k_scale, v_scale)
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
            for i in range(LAYERS):
                rows = ((cache.k, new[2 * i], k_scale[i]), (cache.v, new[2 * i + 1], v_scale[i]))
                for buf, ref, scale in rows:
                    expected = torch.clamp(torch.round(ref / scale), -128, 127)
                    diff = (buf[i, :, pos : pos + n].float() - expected).abs()
                    assert diff.max() <= 1
                    flips, values = flips + int((diff > 0).sum()), values + diff.numel()
            pos += n
    assert flips <= 0.01 * values
    assert (cache.k.data_ptr(), cache.v.data_ptr()) == pointers and cache.length == 11
    assert not cache.k[:, :, 11 + 3 :].any() and not cache.v[:, :, 11 + 3 :].any()


def test_scales_are_the_calibration_maxima_of_the_float_graph(kvdir: Path, torch_model) -> None:
    """The manifest's per-layer maxima are those of the plain float32 prefill graph's K/V over the
    calibration embeddings (seeded token ids), and each kv8 graph carries max / 127 per layer."""
    import onnx
    from onnx import numpy_helper

    manifest = Manifest.load(kvdir)
    info = manifest.info["kv_cache"]["int8"]
    emb = calibration_embeds(torch_model)
    prefill = OrtGraph(kvdir / "llm_prefill.onnx")
    outs = prefill.run_numpy({"inputs_embeds": emb.numpy(), "position_ids": np.arange(emb.shape[1])[None]})
    for i in range(LAYERS):
        for kind in "kv":
            biggest = max(float(np.abs(outs[f"new_{kind}.{i}.{j}"]).max()) for j in range(KV))
            assert info[f"{kind}_absmax"][i] == pytest.approx(biggest, rel=1e-5)
    assert set(manifest.kv_cache["int8"]) == {"", "int4"}
    graph = onnx.load(str(kvdir / manifest.kv_graph("int8", "int4").file))
    inits = {t.name: numpy_helper.to_array(t) for t in graph.graph.initializer}
    for i in range(LAYERS):
        assert inits[f"kv8.k_scale.{i}"][0] == pytest.approx(info["k_absmax"][i] / 127, rel=1e-6)
        assert inits[f"kv8.v_scale.{i}"][0] == pytest.approx(info["v_absmax"][i] / 127, rel=1e-6)


def test_engine_decodes_with_an_int8_cache_and_refuses_what_cannot(
    kvdir: Path, onnx_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``kv_cache`` int8 (with float32 and int4 weights) loads the kv8 graphs and sizes the engine's
    cache in int8; the fixture case's first answer logits move from the float cache's by a relative error
    norm of 0.105 (no value of the prompt's K/V beyond the calibrated maxima: the per-tensor step, max /
    127, moves them; int8 weights move them by 0.12, test_backends_quantize), bound 0.2. Default float
    engines keep float32 buffers. Refused with the reason: an export without the graph, backends torch /
    tensorrt, a GPU provider, an ONNX Runtime older than 1.27 (measured per wheel; only the version string
    is faked)."""
    meta, frames, _ = load_case("a1_video_qa_224x168")
    req = request(frames, meta["question"], max_new_tokens=meta["max_new_tokens"])
    ref = load_engine(CHECKPOINT, backend="onnxruntime", onnx_dir=kvdir, threads=2)
    assert ref.decoder.kv_dtype == torch.float32
    want = _first_logits(ref, req)
    for weights, file in (("", "llm_decode_gqa.kv8.onnx"), ("int4", "llm_decode_gqa.int4.kv8.onnx")):
        engine = load_engine(CHECKPOINT, backend="onnxruntime", onnx_dir=kvdir, threads=2, weights=weights,
                             kv_cache="int8")
        assert engine.decoder.decode.path.name == file and engine.decoder.kv_dtype == torch.int8
        if not weights:
            got = _first_logits(engine, req)
            assert 0 < np.linalg.norm(got - want) / np.linalg.norm(want) < 0.2
            assert engine._kv is not None and engine._kv.k.dtype == torch.int8
    with pytest.raises(ValueError, match=r"no fused decode graph with a int8 K/V cache.*--kv-cache int8"):
        load_engine(CHECKPOINT, backend="onnxruntime", onnx_dir=onnx_dir, kv_cache="int8")
    for backend, extra in (("torch", {}), ("tensorrt", {"engine_dir": "/e", "device": "cuda"}),
                           ("onnxruntime", {"onnx_dir": "/o", "ort_provider": "cuda"})):
        with pytest.raises(ValueError, match="applies to backend onnxruntime on its cpu provider only"):
            EngineSpec(str(CHECKPOINT), backend=backend, kv_cache="int8", **extra)
    with pytest.raises(ValueError, match="must be one of"):
        EngineSpec(str(CHECKPOINT), backend="onnxruntime", onnx_dir="/o", kv_cache="int4")
    monkeypatch.setattr(ort, "__version__", "1.26.0")
    with pytest.raises(ValueError, match=r"kv_cache int8 needs onnxruntime >= 1\.27 \(this is 1\.26\.0\)"):
        load_engine(CHECKPOINT, backend="onnxruntime", onnx_dir=kvdir, kv_cache="int8")


def _first_logits(engine, req) -> np.ndarray:
    prep = engine.prepare(req)
    prep.keep_steps = True
    with torch.inference_mode():
        result = engine.generate(prep, 1)
    return result.step_logits[0].float().numpy()


def test_int8_cache_quarters_the_kv_bytes_per_token(kvdir: Path) -> None:
    """``bench graph-decode``'s KV bytes for the kv8 graph, by hand: 2 layers × K and V × 2 kv heads ×
    head_dim 16 × 1 byte per position, read for P and written for the new one and its scratch row (2
    query rows per kv head): 8 × (P + 2) × 16."""
    from rynnec_ros.bench.graph_decode_bench import onnx_kv_io_bytes

    path = kvdir / Manifest.load(kvdir).kv_graph("int8").file
    for p in (0, 100):
        assert onnx_kv_io_bytes(path, p) == 8 * (p + 2) * 16


def test_graph_decode_bench_runs_the_int8_cache_variants(kvdir: Path, tmp_path: Path) -> None:
    """``bench graph-decode`` with ``+kv8`` variants: each runs its kv8 graph, whose KV bytes per token are
    a quarter of float32's by hand (2 layers × K, V × 2 kv heads × 16 × 1 byte per position: 128 per
    cached position, 128 for the new one and 128 for its scratch row: the graph stacks the tiny config's
    4 / 2 query heads as 2 rows per kv head), its initializers the float graph's plus the scales and the
    row layout's shape constants (``rows.*``, summed from the graph file here), and the quality rows
    compare them with float32."""
    import json

    import onnx
    from onnx import numpy_helper

    from rynnec_ros.cli import main

    out = tmp_path / "g.json"
    rc = main(["bench", "graph-decode", "--checkpoint", str(CHECKPOINT), "--onnx-dir", str(kvdir),
               "--variants", "onnxruntime,onnxruntime:kv8,onnxruntime:int4+kv8", "--contexts", "32",
               "--new-tokens", "2", "--repeat", "1", "--frames", "1", "--size", "56x56",
               "--quality-tokens", "3", "--bandwidth-gbs", "10", "--out", str(out)])
    assert rc == 0
    sec = json.loads(out.read_text())["sections"]["graph-decode"]
    rows = {v: r["contexts"]["32"]["bytes_per_token"] for v, r in sec["variants"].items()}
    assert rows["onnxruntime"]["kv"] == 512 * 32 + 512
    assert rows["onnxruntime:kv8"]["kv"] == rows["onnxruntime:int4+kv8"]["kv"] == 128 * 32 + 2 * 128
    # the same weights plus the scales (2 layers × K, V × one float32) and the layout's constants
    graph = onnx.load(str(kvdir / Manifest.load(kvdir).kv_graph("int8").file), load_external_data=False)
    layout = sum(numpy_helper.to_array(t).nbytes for t in graph.graph.initializer
                 if t.name.startswith("rows."))
    assert 0 < layout < 1024
    assert rows["onnxruntime:kv8"]["weights"] == rows["onnxruntime"]["weights"] + 2 * 2 * 4 + layout
    assert rows["onnxruntime"]["weights"] / rows["onnxruntime:int4+kv8"]["weights"] >= 6
    assert {"onnxruntime:kv8", "onnxruntime:int4+kv8"} <= set(sec["quality"]["window"])


def test_export_cli_writes_the_int8_cache_graph_or_refuses(tmp_path: Path) -> None:
    """``export onnx --kv-cache int8`` with only the fused graph: the kv8 graph is listed; without the
    fused graph among ``--graphs`` the export is refused (exit 2) before writing anything."""
    from rynnec_ros.cli import main

    out = tmp_path / "x"
    base = ["export", "onnx", "--checkpoint", str(CHECKPOINT), "--out", str(out), "--kv-cache", "int8"]
    assert main([*base, "--graphs", "llm_decode_gqa"]) == 0
    assert Manifest.load(out).kv_graph("int8").file == "llm_decode_gqa.kv8.onnx"
    assert main([*base, "--graphs", "lm_head"]) == 2
