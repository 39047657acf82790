"""Weight-only int8 / int4 LLM graphs (``export/quantize.py``): the format, ONNX Runtime's fused kernel, the
engine option, and the refusals.

References not taken from the code under test: a block quantised by hand (the ONNX DequantizeLinear
formula), ONNX's own reference evaluator running the Q/DQ graphs, and the float32 graphs."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx.reference import ReferenceEvaluator

from rynnec_ros.bench.graph_decode_bench import onnx_initializer_bytes
from rynnec_ros.model.backends import load_engine
from rynnec_ros.model.export.manifest import Manifest
from rynnec_ros.model.export.onnx_export import add_weights
from rynnec_ros.model.export.quantize import block_size, dequantize_blocks, quantize_blocks
from rynnec_ros.model.spec import EngineSpec

from ..model.conftest import request
from .conftest import CHECKPOINT, load_case


@pytest.fixture(scope="module")
def qdir(onnx_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("onnx-tiny-quantized")
    shutil.copytree(onnx_dir, out, dirs_exist_ok=True)
    add_weights(out, "int8")
    add_weights(out, "int4")
    return out


def test_block_quantisation_by_hand() -> None:
    """One block of 16 [K] × 1 [N]: max |w| = 0.7 → int4 scale 0.1, q = round(w / 0.1) clipped to ±7;
    int8 scale 0.7 / 127. Dequantised: q · scale (DequantizeLinear with zero point 0)."""
    w = np.array([0.7, -0.35, 0.12, 0.0, -0.7, 0.05, 0.26, -0.14] * 2, np.float32)[:, None]
    q, s = quantize_blocks(w, 4, 16)
    np.testing.assert_allclose(s, [[0.1]], rtol=1e-6)
    assert q[:8, 0].tolist() == [7, -4, 1, 0, -7, 0, 3, -1]  # -3.5 → -4, 0.5 → 0 (half to even)
    np.testing.assert_allclose(dequantize_blocks(q, s, 16)[:8, 0], [0.7, -0.4, 0.1, 0, -0.7, 0, 0.3, -0.1],
                               atol=1e-6)
    q8, s8 = quantize_blocks(w, 8, 16)
    np.testing.assert_allclose(s8, [[0.7 / 127]], rtol=1e-6)
    assert q8[:3, 0].tolist() == [127, -64, 22]  # 0.35·127/0.7 = 63.5 → 64; 0.12·127/0.7 = 21.8
    assert block_size(1536) == 128 and block_size(64) == 64 and block_size(80) == 16
    with pytest.raises(ValueError, match="divides K=24"):
        block_size(24)


@pytest.mark.parametrize("weights", ["int8", "int4"])
def test_onnxruntime_fuses_every_quantised_matrix_into_matmulnbits(
    qdir: Path, weights: str, tmp_path: Path
) -> None:
    """Every weight matrix of the LLM graphs is a blocked DequantizeLinear → MatMul (the form TensorRT
    takes), and ONNX Runtime turns each into its MatMulNBits kernel at load (no DequantizeLinear left,
    so no float32 copy of the weights is made)."""
    manifest = Manifest.load(qdir)
    for name in ("llm_decode", "lm_head"):
        spec = manifest.graph(name, weights)
        graph = onnx.load(str(qdir / spec.file)).graph
        dq = [n for n in graph.node if n.op_type == "DequantizeLinear"]
        matrices = manifest.info["weights"][weights][name]["matrices"]
        assert len(dq) == matrices == (7 * 2 if name == "llm_decode" else 1)
        assert not [n for n in graph.node if n.op_type == "Gemm"]
        opts = ort.SessionOptions()
        opts.optimized_model_filepath = str(tmp_path / f"{name}.onnx")
        opts.log_severity_level = 3
        ort.InferenceSession(str(qdir / spec.file), opts, providers=["CPUExecutionProvider"])
        ops = [n.op_type for n in onnx.load(opts.optimized_model_filepath).graph.node]
        assert ops.count("MatMulNBits") == matrices and "DequantizeLinear" not in ops


def test_an_onnxruntime_that_would_not_fuse_the_quantised_weights_is_refused(
    qdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The test above fails with the 1.24.1 wheel (int8: 0, int4: 8 of 14 matrices fused; 1.25.1 fuses all,
    measured with each wheel): there the weights would be held as float32, so the engine refuses with the
    version it needs instead of running without the memory saving the option promises. Only the version
    string is faked."""
    monkeypatch.setattr(ort, "__version__", "1.24.1")
    with pytest.raises(ValueError, match=r"weights 'int4' need onnxruntime >= 1\.25 \(this is 1\.24\.1\)"):
        load_engine(CHECKPOINT, backend="onnxruntime", onnx_dir=qdir, weights="int4")


@pytest.mark.parametrize(("weights", "tol"), [("int8", 1e-2), ("int4", 2e-2)])
def test_fused_kernel_computes_what_the_qdq_graph_says(qdir: Path, weights: str, tol: float) -> None:
    """ONNX Runtime's MatMulNBits (int8 activations: its default accuracy level 4) against ONNX's
    reference evaluator running the Q/DQ graph as written (relative error norm; 1e-7 at accuracy
    level 1 for int4, which ONNX Runtime also has)."""
    path = str(qdir / Manifest.load(qdir).graph("lm_head", weights).file)
    x = np.random.default_rng(1).standard_normal((3, 64)).astype(np.float32)
    ref = ReferenceEvaluator(path).run(None, {"x": x})[0]
    got = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < tol


def test_quantised_graphs_hold_six_times_fewer_weight_bytes(qdir: Path) -> None:
    """int4 with a float32 scale per 64 or 128 inputs: ≥ 6× fewer bytes than float32 (norms included);
    int8 ≥ 3.5×."""
    manifest = Manifest.load(qdir)
    for name in ("llm_decode", "lm_head"):
        fp32 = onnx_initializer_bytes(qdir / manifest.graph(name).file)
        assert fp32 / onnx_initializer_bytes(qdir / manifest.graph(name, "int4").file) >= 6
        assert fp32 / onnx_initializer_bytes(qdir / manifest.graph(name, "int8").file) >= 3.5


def _first_logits(engine, req) -> np.ndarray:
    prep = engine.prepare(req)
    prep.keep_steps = True
    return engine.generate(prep, 1).step_logits[0].numpy()


def test_engine_runs_quantised_weights_and_refuses_what_it_cannot(qdir: Path, onnx_dir: Path) -> None:
    """The weights option picks the graphs: the first answer token's logits (prefill through every LLM
    graph, then the LM head) move away from float32's, by a relative error norm of 0.12 (int8) and
    0.54 (int4) on the fixture case. Round-to-nearest itself moves each weight matrix by 0.6 % / 11 %
    (Gaussian random weights, by hand: step = max/qmax, error ≈ step/√12); the random model amplifies
    that ~10×, which is why these are not quality figures (docs/acceleration.md). Bounds 0.3 / 0.9.
    A precision the export lacks, or torch with weights, is refused with the reason."""
    meta, frames, _ = load_case("a1_video_qa_224x168")
    req = request(frames, meta["question"], max_new_tokens=meta["max_new_tokens"])
    ref = _first_logits(load_engine(CHECKPOINT, backend="onnxruntime", onnx_dir=qdir, threads=2), req)
    for weights, bound in (("int8", 0.3), ("int4", 0.9)):
        engine = load_engine(CHECKPOINT, backend="onnxruntime", onnx_dir=qdir, threads=2, weights=weights)
        assert engine.info.graph_providers["llm_decode"] == "CPUExecutionProvider"
        assert engine.decoder.fused and engine.decoder.decode.path.name == f"llm_decode_gqa.{weights}.onnx"
        got = _first_logits(engine, req)
        assert 0 < np.linalg.norm(got - ref) / np.linalg.norm(ref) < bound
    with pytest.raises(ValueError, match=r"no int4 weights.*--weights int4"):
        load_engine(CHECKPOINT, backend="onnxruntime", onnx_dir=onnx_dir, weights="int4")
    with pytest.raises(ValueError, match="torchao"):
        EngineSpec(str(CHECKPOINT), backend="torch", weights="int8")
    with pytest.raises(ValueError, match="must be one of"):
        EngineSpec(str(CHECKPOINT), backend="onnxruntime", onnx_dir="/o", weights="int3")


def test_graph_decode_bench_puts_every_variant_side_by_side(qdir: Path, tmp_path: Path) -> None:
    """``bench graph-decode`` on the tiny checkpoint: torch, ONNX Runtime fp32 and int4 at two contexts,
    plus the int4 quality rows. Bytes per token by hand from the config (L=2 layers, 2 kv heads of 16,
    float32): the decode graph reads 2·L·2·16·4 = 512 bytes per cached position and writes one new
    position's 512; torch reads the valid KV only."""
    import json

    from rynnec_ros.cli import main

    out = tmp_path / "g.json"
    rc = main(["bench", "graph-decode", "--checkpoint", str(CHECKPOINT), "--onnx-dir", str(qdir),
               "--variants", "torch,onnxruntime,onnxruntime:int4", "--contexts", "32,64", "--new-tokens", "2",
               "--repeat", "1", "--frames", "1", "--size", "56x56", "--quality-tokens", "4",
               "--bandwidth-gbs", "10", "--out", str(out)])
    assert rc == 0
    sec = json.loads(out.read_text())["sections"]["graph-decode"]
    rows = sec["variants"]
    assert set(rows) == {"torch", "onnxruntime", "onnxruntime:int4"}
    assert rows["torch"]["contexts"]["32"]["bytes_per_token"]["kv"] == 512 * 32
    assert rows["onnxruntime"]["contexts"]["64"]["bytes_per_token"]["kv"] == 512 * 64 + 512
    fp32 = rows["onnxruntime"]["contexts"]["32"]["bytes_per_token"]["weights"]
    assert fp32 / rows["onnxruntime:int4"]["contexts"]["32"]["bytes_per_token"]["weights"] >= 6
    for r in rows.values():
        for c in r["contexts"].values():
            assert c["tok_s"] > 0 and c["bound_tok_s"] == pytest.approx(10e9 / c["bytes_per_token"]["total"])
    q = sec["quality"]["window"]["onnxruntime:int4"]
    assert q["steps"] == 4 and 0 <= q["top1_agreement"] <= 1 and q["logit_abs_err_max"] > 0
    assert "not answer quality" in sec["quality_note"]


def test_export_cli_writes_the_weights_asked_for(tmp_path: Path) -> None:
    from rynnec_ros.cli import main

    out = tmp_path / "x"
    assert main(["export", "onnx", "--checkpoint", str(CHECKPOINT), "--out", str(out), "--graphs", "lm_head",
                 "--weights", "int4"]) == 0
    manifest = Manifest.load(out)
    assert set(manifest.weights) == {"int4"} and manifest.graph("lm_head", "int4").file == "lm_head.int4.onnx"
    assert manifest.info["weights"]["int4"]["lm_head"]["blocks"] == {"64": 1}  # K = hidden 64
    assert main(["export", "onnx", "--checkpoint", str(CHECKPOINT), "--out", str(out), "--graphs", "lm_head",
                 "--weights", "int3"]) == 2


def test_tensorrt_backend_refuses_engines_built_with_other_weights(tmp_path: Path) -> None:
    """engines.json records each LLM engine's weights; asking for others is refused before any engine
    is read (so this runs without TensorRT)."""
    import json

    from rynnec_ros.model.backends import _trt_graphs

    (tmp_path / "engines.json").write_text(json.dumps({
        "llm_decode": {"engine": "d.engine", "precision": "fp16", "weights": "int4"},
        "vision": {"engine": "v.engine", "precision": "fp16", "weights": ""},
    }))
    with pytest.raises(ValueError, match=r"built with int4 weights, not float32.*export tensorrt`"):
        _trt_graphs(tmp_path, "cuda", "")
    with pytest.raises(ValueError, match=r"not int8.*--weights int8"):
        _trt_graphs(tmp_path, "cuda", "int8")


@pytest.mark.parametrize("weights", ["int8", "int4"])
def test_budget_counts_what_the_quantised_export_stores(qdir: Path, weights: str) -> None:
    """The configure check's weight bytes (model/budget.py) against the quantised graphs on disk: the
    packed weights and scales of llm_decode and lm_head (read by the onnx library), plus every other
    checkpoint tensor at float32."""
    import onnx
    from onnx import TensorProto

    from rynnec_ros.model import budget

    manifest = Manifest.load(qdir)
    quantised = 0.0
    for name in ("llm_decode", "lm_head"):
        model = onnx.load(str(qdir / manifest.graph(name, weights).file), load_external_data=False)
        for t in model.graph.initializer:
            if t.name.endswith((f".q{weights[-1]}", ".scale")):
                elements = int(np.prod(t.dims))
                size = {TensorProto.INT4: 0.5, TensorProto.INT8: 1, TensorProto.FLOAT: 4}[t.data_type]
                quantised += size * elements
    tensors = budget.header_tensors(CHECKPOINT / "model.safetensors")
    others = sum(n for key, (_d, n) in budget.header_params(CHECKPOINT / "model.safetensors").items()
                 if not (key.startswith("model.layers.") and key.endswith("proj.weight")))
    assert budget.weight_bytes(tensors, 4.0, weights, tied=True) == pytest.approx(quantised + 4.0 * others)
