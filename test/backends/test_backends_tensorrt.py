"""TensorRT: cache keys and errors here; engine builds, parity and the backend only where TensorRT and a
CUDA GPU exist (they skip with the reason otherwise; scripts/gpu_check.sh runs them on a GPU machine)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rynnec_ros.model.export.cli import _dims
from rynnec_ros.model.export.manifest import Manifest
from rynnec_ros.model.export.tensorrt_build import build_engine, cache_key, onnx_digest, tensorrt_available

from .conftest import CHECKPOINT

TRT_OK, TRT_WHY = tensorrt_available()
needs_trt = pytest.mark.skipif(not TRT_OK, reason=f"TensorRT path not runnable here: {TRT_WHY}")


def test_cache_key_changes_with_every_component() -> None:
    profile = {"x": ((1, 4), (8, 4), (64, 4))}
    base = cache_key("abc", "10.3.0", "NVIDIA H200 sm_90", "fp16", profile)
    assert base == cache_key("abc", "10.3.0", "NVIDIA H200 sm_90", "fp16", dict(profile))
    variants = [
        cache_key("abd", "10.3.0", "NVIDIA H200 sm_90", "fp16", profile),
        cache_key("abc", "10.4.0", "NVIDIA H200 sm_90", "fp16", profile),
        cache_key("abc", "10.3.0", "Orin sm_87", "fp16", profile),
        cache_key("abc", "10.3.0", "NVIDIA H200 sm_90", "int8", profile),
        cache_key("abc", "10.3.0", "NVIDIA H200 sm_90", "fp16", {"x": ((1, 4), (8, 4), (128, 4))}),
    ]
    assert len({base, *variants}) == 6


def test_onnx_digest_covers_external_weights(tmp_path: Path) -> None:
    graph = tmp_path / "g.onnx"
    graph.write_bytes(b"graph")
    first = onnx_digest(graph)
    (tmp_path / "g.onnx.data").write_bytes(b"weights-1")
    second = onnx_digest(graph)
    (tmp_path / "g.onnx.data").write_bytes(b"weights-2")
    assert len({first, second, onnx_digest(graph)}) == 3


def test_profile_overrides_parse_and_validate() -> None:
    assert _dims("seq=1:2048:8192,past=1:2048:8192") == {"seq": (1, 2048, 8192), "past": (1, 2048, 8192)}
    with pytest.raises(ValueError, match="min <= opt <= max"):
        _dims("seq=10:5:100")
    with pytest.raises(ValueError, match="name=min:opt:max"):
        _dims("seq=1-2-3")


@pytest.mark.skipif(TRT_OK, reason="TensorRT is available: the missing-TensorRT error cannot be shown")
def test_build_without_tensorrt_says_why(onnx_dir: Path, tmp_path: Path) -> None:
    spec = Manifest.load(onnx_dir).graphs["projector"]
    with pytest.raises(RuntimeError, match="tensorrt"):
        build_engine(onnx_dir / spec.file, tmp_path, "fp16", spec.profile())


def test_export_cli_reports_errors_instead_of_crashing(onnx_dir: Path, tmp_path: Path, capsys) -> None:
    from rynnec_ros.cli import main

    rc = main(["export", "tensorrt", "--onnx", str(tmp_path), "--out", str(tmp_path / "e")])
    assert rc == 2
    assert "manifest.json" in capsys.readouterr().err
    args = ["export", "tensorrt", "--onnx", str(onnx_dir), "--out", str(tmp_path / "e"), "--graphs", "nope"]
    assert main(args) == 2


def test_tensorrt_build_skips_the_onnxruntime_only_graphs(
    onnx_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``llm_decode_gqa`` holds a ``com.microsoft`` contrib op that TensorRT cannot parse: a build of the
    whole export builds the plain ``llm_decode`` and leaves the fused graph out (the builder itself is
    replaced by a recorder: this checks the selection, not TensorRT)."""
    from rynnec_ros.model.export import tensorrt_build

    built: list[str] = []

    def record(onnx_path: Path, out_dir: Path, precision: str, profile: object, label: str = "", **_: object):
        built.append(label)
        return tensorrt_build.BuildResult(label, out_dir / f"{label}.plan", False, 0.0, precision)

    monkeypatch.setattr(tensorrt_build, "build_engine", record)
    tensorrt_build.build_all(onnx_dir, tmp_path)
    assert "llm_decode" in built and "llm_decode_gqa" not in built
    assert set(built) == set(Manifest.load(onnx_dir).graphs) - {"llm_decode_gqa"}


@pytest.fixture(scope="module")
def engines_dir(onnx_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from rynnec_ros.model.export.tensorrt_build import build_all

    out = tmp_path_factory.mktemp("trt")
    build_all(
        onnx_dir,
        out,
        precision="fp32",
        dim_overrides={
            "seq": (1, 256, 1024),
            "past": (1, 256, 1024),
            "patches": (4, 192, 4096),
            "tokens": (1, 48, 1024),
        },
    )
    return out


@needs_trt
@pytest.mark.parametrize("precision", ["fp32", "fp16"])
def test_trt_engines_match_torch(onnx_dir: Path, tmp_path: Path, precision: str) -> None:
    from rynnec_ros.model.backends.trt import TrtGraph
    from rynnec_ros.model.export.parity import check_graphs
    from rynnec_ros.model.export.tensorrt_build import build_all
    from rynnec_ros.model.loader import load_model

    results = build_all(onnx_dir, tmp_path, precision=precision)
    again = build_all(onnx_dir, tmp_path, precision=precision)
    assert all(r.cached for r in again)
    graphs = {r.graph: TrtGraph(r.engine) for r in results}
    rows = check_graphs(load_model(CHECKPOINT).cuda(), graphs, precision=precision)
    assert all(r.ok for r in rows), [r.to_dict() for r in rows if not r.ok]


@needs_trt
def test_tensorrt_backend_answers_like_torch(engines_dir: Path) -> None:
    from rynnec_ros.model.backends import load_engine

    from ..model.conftest import request
    from .conftest import load_case

    meta, frames, _ = load_case("a1_video_qa_224x168")
    t = load_engine(CHECKPOINT, backend="torch", device="cuda")
    r = load_engine(CHECKPOINT, backend="tensorrt", device="cuda", engine_dir=engines_dir)
    a, b = (e.answer(request(frames, meta["question"], max_new_tokens=12)) for e in (t, r))
    assert b.token_ids == a.token_ids
    assert set(r.info.graph_providers.values()) == {"TensorRT"}
