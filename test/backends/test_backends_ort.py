"""ONNX Runtime sessions: providers are verified, not assumed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from rynnec_ros.model.backends.ort import OrtGraph, ProviderError, provider_name, session_report


def test_provider_names() -> None:
    assert provider_name("cpu") == "CPUExecutionProvider"
    assert provider_name("CUDA") == "CUDAExecutionProvider"
    assert provider_name("tensorrt") == "TensorrtExecutionProvider"
    assert provider_name("CPUExecutionProvider") == "CPUExecutionProvider"
    with pytest.raises(ValueError, match="unknown ONNX Runtime provider"):
        provider_name("vulkan")


def test_cpu_session_reports_the_provider_it_got(onnx_dir: Path) -> None:
    g = OrtGraph(onnx_dir / "projector.onnx", provider="cpu", threads=1)
    assert g.active_provider == "CPUExecutionProvider"
    assert session_report([g]) == {"projector": "CPUExecutionProvider"}
    y = g.run_numpy({"x": np.ones((3, 48), np.float32)})["y"]
    assert y.shape == (3, 64) and np.isfinite(y).all()


@pytest.mark.parametrize("provider", ["cuda", "tensorrt"])
def test_gpu_provider_absent_is_an_error_not_a_silent_cpu_fallback(onnx_dir: Path, provider: str) -> None:
    if provider_name(provider) in ort.get_available_providers():
        pytest.skip(f"{provider} provider is available in this onnxruntime build")
    with pytest.raises(ProviderError, match="not available"):
        OrtGraph(onnx_dir / "projector.onnx", provider=provider)


def test_missing_inputs_and_files_are_clear_errors(onnx_dir: Path, tmp_path: Path) -> None:
    g = OrtGraph(onnx_dir / "llm_decode.onnx")
    with pytest.raises(ValueError, match="missing inputs"):
        g.run_numpy({"inputs_embeds": np.zeros((1, 1, 64), np.float32)})
    with pytest.raises(FileNotFoundError):
        OrtGraph(tmp_path / "nothing.onnx")
