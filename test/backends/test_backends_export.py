"""ONNX export: every graph against its torch module on ONNX Runtime CPU (float32).

Tolerance: relative error norm ‖ort − torch‖ / ‖torch‖ ≤ 1e-4 per output (float32 graphs differ
from torch only by the order of float32 sums; measured ~1e-6 on the tiny checkpoint).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from rynnec_ros.model.backends.ort import OrtGraph
from rynnec_ros.model.export.llm import kv_names
from rynnec_ros.model.export.manifest import Manifest
from rynnec_ros.model.export.onnx_export import GRAPHS, VisionGraph
from rynnec_ros.model.export.parity import TOLERANCE, check_graphs


def test_export_writes_every_graph_and_a_manifest(onnx_dir: Path) -> None:
    manifest = Manifest.load(onnx_dir)
    assert set(manifest.graphs) == set(GRAPHS)
    for spec in manifest.graphs.values():
        assert (onnx_dir / spec.file).is_file()
        for name, (lo, opt, hi) in spec.profile().items():
            assert len(lo) == len(opt) == len(hi) == len(spec.inputs[name].shape)
            assert all(a <= b <= c for a, b, c in zip(lo, opt, hi, strict=True)), name
    assert manifest.graphs["llm_decode"].inputs["past_k.0.0"].shape == ["past", 16]  # tiny: head_dim 16
    assert manifest.graphs["llm_decode"].outputs[1:] == kv_names("new", 2, 2)
    assert manifest.graphs["vision"].inputs["pixel_values"].shape[0] == "patches"


def test_every_graph_matches_torch_on_onnxruntime_cpu(onnx_dir: Path, torch_model) -> None:
    manifest = Manifest.load(onnx_dir)
    runners = {n: OrtGraph(onnx_dir / g.file, threads=2) for n, g in manifest.graphs.items()}
    rows = check_graphs(torch_model, runners, precision="fp32")
    assert {r.graph for r in rows} == set(GRAPHS)
    bad = [r.to_dict() for r in rows if not r.ok]
    assert not bad, bad
    assert all(r.rel <= TOLERANCE["fp32"] for r in rows)


@pytest.mark.parametrize(("grid_h", "grid_w"), [(4, 4), (12, 16), (6, 22)])
def test_vision_graph_takes_any_frame_size(onnx_dir: Path, torch_model, grid_h: int, grid_w: int) -> None:
    tower = torch_model.vision_tower
    cos, sin = tower.encoder.rope(grid_h, grid_w, 2)
    gen = torch.Generator().manual_seed(grid_h * 100 + grid_w)
    pix = torch.rand(grid_h * grid_w, 3 * 14 * 14, generator=gen) * 2 - 1
    with torch.no_grad():
        ref = VisionGraph(tower)(pix, cos, sin).numpy()
    got = OrtGraph(onnx_dir / "vision.onnx").run_numpy(
        {"pixel_values": pix.numpy(), "cos": cos.numpy(), "sin": sin.numpy()}
    )["features"]
    assert got.shape == ref.shape
    assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < 1e-4


def test_decode_graph_extends_the_cache_step_by_step(onnx_dir: Path, torch_model) -> None:
    """Prefill 6 tokens then decode 1 + 1 + 3, each step reading the past K/V rows and returning only the
    new ones: hidden states equal transformers' own Qwen2Model over all 11 tokens (the upstream module
    the checkpoint runs in, not the exported wrapper), and the K/V rows a single 11-token prefill's."""
    prefill = OrtGraph(onnx_dir / "llm_prefill.onnx")
    decode = OrtGraph(onnx_dir / "llm_decode.onnx")
    past_names, new_names = kv_names("past", 2, 2), kv_names("new", 2, 2)
    ids = torch.randint(0, 600, (1, 11), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        emb = torch_model.model.embed_tokens(ids)
        upstream = torch_model.model(inputs_embeds=emb).last_hidden_state.numpy()
    emb = emb.numpy()
    full = prefill.run_numpy({"inputs_embeds": emb, "position_ids": np.arange(11)[None]})
    out = prefill.run_numpy({"inputs_embeds": emb[:, :6], "position_ids": np.arange(6)[None]})
    past = {p: out[n] for p, n in zip(past_names, new_names, strict=True)}
    pos, hidden = 6, [out["hidden"]]
    for n in (1, 1, 3):
        feeds = {"inputs_embeds": emb[:, pos : pos + n], "position_ids": np.arange(pos, pos + n)[None]}
        step = decode.run_numpy({**feeds, **past})
        assert all(step[name].shape == (n, 16) for name in new_names)
        past = {p: np.concatenate([past[p], step[q]]) for p, q in zip(past_names, new_names, strict=True)}
        pos += n
        hidden.append(step["hidden"])
    np.testing.assert_allclose(np.concatenate(hidden, axis=1), upstream, rtol=1e-4, atol=1e-4)
    for p, q in zip(past_names, new_names, strict=True):
        np.testing.assert_allclose(past[p], full[q], rtol=1e-4, atol=1e-4)


def test_decode_graph_reads_each_kv_head_once(onnx_dir: Path) -> None:
    """GQA without repetition: no op in the decode graph takes a past K/V input and makes more rows of
    it (Expand, Tile, Concat, repeat-style Gather); the past inputs feed MatMuls only (the scores
    and the weighted sum; the past keys are the left operand of theirs), optionally through a Transpose
    that ONNX Runtime folds into the MatMul, and Shape (which reads no data)."""
    import onnx

    graph = onnx.load(str(onnx_dir / "llm_decode.onnx")).graph
    past = {i.name for i in graph.input if i.name.startswith("past_")}
    assert len(past) == 2 * 2 * 2
    consumers = [n for n in graph.node if past & set(n.input)]
    assert {n.op_type for n in consumers} <= {"MatMul", "Transpose", "Shape"}
    transposed = {o for n in consumers if n.op_type == "Transpose" for o in n.output}
    assert {n.op_type for n in graph.node if transposed & set(n.input)} <= {"MatMul"}


def test_fused_decode_graph_extends_the_bound_cache_in_place(onnx_dir: Path, torch_model) -> None:
    """``llm_decode_gqa`` (ONNX Runtime's ``GroupQueryAttention``) with each layer's whole buffer bound
    as its cache input and present output: a 6-token prefill from an empty cache, then 1 + 1 + 3 steps.
    The hidden states equal transformers' own Qwen2Model over all 11 tokens (the upstream module, not
    the exported wrapper); the buffers' rows equal the plain prefill graph's K/V of the 11 tokens;
    the rows past them stay as they were (zeros) and the buffers are never replaced."""
    import torch

    from rynnec_ros.model.export.llm import cache_names

    fused, prefill = OrtGraph(onnx_dir / "llm_decode_gqa.onnx"), OrtGraph(onnx_dir / "llm_prefill.onnx")
    ids = torch.randint(0, 600, (1, 11), generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        emb = torch_model.model.embed_tokens(ids)
        upstream = torch_model.model(inputs_embeds=emb).last_hidden_state
    full = prefill.run_numpy({"inputs_embeds": emb.numpy(), "position_ids": np.arange(11)[None]})
    k, v = torch.zeros(2, 2, 16, 16), torch.zeros(2, 2, 16, 16)  # [layers, kv heads, capacity, head_dim]
    layers = [buf[i][None] for i in range(2) for buf in (k, v)]
    pointers = [t.data_ptr() for t in layers]
    hidden, pos = [], 0
    for n in (6, 1, 1, 3):
        out = torch.empty(1, n, emb.shape[2])
        positions = torch.arange(pos, pos + n)[None]
        feeds = {"inputs_embeds": emb[:, pos : pos + n].contiguous(), "position_ids": positions}
        fused.run_bound(
            {**feeds, **dict(zip(cache_names("cache", 2), layers, strict=True))},
            {"hidden": out, **dict(zip(cache_names("present", 2), layers, strict=True))},
        )
        hidden.append(out)
        pos += n
    assert [t.data_ptr() for t in layers] == pointers
    torch.testing.assert_close(torch.cat(hidden, dim=1), upstream, rtol=1e-4, atol=1e-4)
    for i in range(2):
        for j in range(2):
            for buf, kind in ((k, "k"), (v, "v")):
                ref = full[f"new_{kind}.{i}.{j}"]
                np.testing.assert_allclose(buf[i, j, :11].numpy(), ref, rtol=1e-4, atol=1e-4)
    assert not k[:, :, 11:].any() and not v[:, :, 11:].any()


def test_fused_decode_graph_reads_each_layer_cache_in_one_attention_node(onnx_dir: Path) -> None:
    """Each layer's cache input feeds exactly one node, the contrib ``GroupQueryAttention`` (so no op
    copies, repeats or concatenates the K/V in the graph), whose present outputs are the graph's own;
    everything else is plain ONNX."""
    import onnx

    graph = onnx.load(str(onnx_dir / "llm_decode_gqa.onnx")).graph
    caches = [i.name for i in graph.input if i.name.startswith("cache_")]
    assert len(caches) == 2 * 2
    gqa = [n for n in graph.node if n.op_type == "GroupQueryAttention"]
    assert len(gqa) == 2 and all(n.domain == "com.microsoft" for n in gqa)
    for name in caches:
        consumers = [n for n in graph.node if name in n.input]
        assert len(consumers) == 1 and consumers[0].op_type == "GroupQueryAttention"
    assert {o for n in gqa for o in n.output[1:]} == {o.name for o in graph.output} - {"hidden"}
    assert {n.domain for n in graph.node if n.op_type != "GroupQueryAttention"} <= {"", "ai.onnx"}


def test_fused_decode_graph_counts_the_kv_bytes_it_touches(onnx_dir: Path) -> None:
    """``bench graph-decode``'s bytes per token for the fused graph: the valid rows read and the new one
    written, as for the plain graph, not the bound buffers' capacity. By hand for the tiny checkpoint
    (2 layers × K and V × 2 kv heads × head_dim 16 × float32): 8 × (P + 1) × 64 bytes."""
    from rynnec_ros.bench.graph_decode_bench import onnx_kv_io_bytes

    for p in (0, 100):
        fused = onnx_kv_io_bytes(onnx_dir / "llm_decode_gqa.onnx", p)
        assert fused == onnx_kv_io_bytes(onnx_dir / "llm_decode.onnx", p) == 8 * (p + 1) * 64


def test_export_rejects_unknown_graph_names(tmp_path: Path) -> None:
    from rynnec_ros.model.export.onnx_export import export_onnx

    from .conftest import CHECKPOINT

    with pytest.raises(ValueError, match="unknown graphs"):
        export_onnx(CHECKPOINT, tmp_path, graphs=["vision", "nope"])
