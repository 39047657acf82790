"""ONNX Runtime sessions that fail loudly when they did not get the execution provider that was asked for.

ONNX Runtime silently falls back to the CPU provider when CUDA or TensorRT cannot be loaded (a
missing cuDNN, a mismatched CUDA); benchmark numbers taken that way would be labelled wrongly. So
each session checks ``get_providers()`` after creation and records which provider it really got.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

PROVIDERS = {
    "cpu": "CPUExecutionProvider",
    "cuda": "CUDAExecutionProvider",
    "tensorrt": "TensorrtExecutionProvider",
}


# torch dtype name → the numpy type IO binding describes the element type with
_NUMPY = {
    "torch.float32": np.float32,
    "torch.float16": np.float16,
    "torch.int64": np.int64,
    "torch.int32": np.int32,
    "torch.int8": np.int8,
    "torch.bool": np.bool_,
}


def _torch_dtype(onnx_type: str) -> Any:
    """The torch dtype of an ONNX Runtime type string such as ``tensor(float)``; None for others."""
    import torch

    names = {"float": torch.float32, "float16": torch.float16, "int64": torch.int64, "int32": torch.int32,
             "int8": torch.int8, "bool": torch.bool}
    return names.get(onnx_type.removeprefix("tensor(").removesuffix(")"))


class ProviderError(RuntimeError):
    """The requested execution provider is not available or was silently dropped by ONNX Runtime."""


def provider_name(provider: str) -> str:
    """Accept 'cpu' | 'cuda' | 'tensorrt' or a full ``...ExecutionProvider`` name."""
    if provider in PROVIDERS.values():
        return provider
    try:
        return PROVIDERS[provider.lower()]
    except KeyError:
        raise ValueError(
            f"unknown ONNX Runtime provider {provider!r}; use one of {sorted(PROVIDERS)}"
        ) from None


def _provider_chain(name: str, device_id: int, trt_cache_dir: Path | None, fp16: bool) -> list[Any]:
    """The requested provider first; CPU last so that nodes a GPU provider rejects still run."""
    chain: list[Any] = []
    if name == PROVIDERS["tensorrt"]:
        opts: dict[str, Any] = {"device_id": device_id, "trt_fp16_enable": fp16}
        if trt_cache_dir is not None:
            trt_cache_dir.mkdir(parents=True, exist_ok=True)
            opts.update(trt_engine_cache_enable=True, trt_engine_cache_path=str(trt_cache_dir))
        chain.append((name, opts))
        chain.append((PROVIDERS["cuda"], {"device_id": device_id}))
    elif name == PROVIDERS["cuda"]:
        chain.append((name, {"device_id": device_id}))
    if name != PROVIDERS["cpu"]:
        chain.append(PROVIDERS["cpu"])
    else:
        chain.append(name)
    return chain


class OrtGraph:
    """One exported graph in an ONNX Runtime session; called with torch tensors, returns torch tensors.

    ``active_provider`` is the provider ONNX Runtime really put first, which benchmarks record.
    """

    def __init__(
        self,
        path: str | Path,
        provider: str = "cpu",
        threads: int | None = None,
        device_id: int = 0,
        trt_cache_dir: str | Path | None = None,
        fp16: bool = False,
    ) -> None:
        import onnxruntime as ort

        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"ONNX graph not found: {self.path}")
        wanted = provider_name(provider)
        available = ort.get_available_providers()
        if wanted not in available:
            raise ProviderError(
                f"{wanted} is not available in this onnxruntime build "
                f"({ort.__version__}; available: {available}). For CUDA/TensorRT install "
                "onnxruntime-gpu instead of onnxruntime."
            )
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        n_threads = threads if threads is not None else int(os.environ.get("OMP_NUM_THREADS", "0") or 0)
        if n_threads > 0:
            opts.intra_op_num_threads = n_threads
            opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        # Idle pool threads sleep instead of spinning: on a robot the cores are shared with the other
        # nodes (and with torch's own pool in this process), which spinning would starve.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.add_session_config_entry("session.inter_op.allow_spinning", "0")
        chain = _provider_chain(wanted, device_id, Path(trt_cache_dir) if trt_cache_dir else None, fp16)
        self.session = ort.InferenceSession(str(self.path), sess_options=opts, providers=chain)
        got = self.session.get_providers()
        if not got or got[0] != wanted:
            raise ProviderError(
                f"asked ONNX Runtime for {wanted} but the session got {got} "
                f"(graph {self.path.name}); refusing a silent CPU fallback"
            )
        self.active_provider = got[0]
        self.device_id = device_id
        self.input_names = [i.name for i in self.session.get_inputs()]
        self.output_names = [o.name for o in self.session.get_outputs()]
        # the element type of every input ("tensor(int8)" → torch.int8): the int8 K/V cache graph's
        # caches are int8 (export/kvcache.py), and the engine sizes its buffers from that
        self.dtypes = {i.name: _torch_dtype(i.type) for i in self.session.get_inputs()}
        # the graph's model properties (export/kvcache.py records how its attention lays out query rows)
        self.metadata = dict(self.session.get_modelmeta().custom_metadata_map)
        self._binding: Any = None
        self._bound: dict[str, tuple[str, int, int, tuple[int, ...], Any]] = {}

    def run_numpy(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        missing = [n for n in self.input_names if n not in feeds]
        if missing:
            raise ValueError(f"{self.path.name}: missing inputs {missing}")
        outs = self.session.run(self.output_names, {n: feeds[n] for n in self.input_names})
        return dict(zip(self.output_names, outs, strict=True))

    def run_bound(self, inputs: Mapping[str, Any], outputs: Mapping[str, Any]) -> None:
        """Run with every input and output bound to the memory of a torch tensor (IO binding).

        The session reads the inputs where they lie and writes the outputs into the given tensors,
        which may be views into larger buffers (contiguous ones): this is how the decode graph reads
        the KV cache and writes the new positions in place. Zero-size inputs are bound too.

        One binding is kept and only the names whose memory, shape or type changed since the last call
        are bound again: a fused decode step binds 2 × layers cache buffers that stay where they are
        from token to token, and binding them anew took ~10 % of a small model's step.
        """
        missing = [n for n in self.input_names if n not in inputs]
        missing += [n for n in self.output_names if n not in outputs]
        if missing:
            raise ValueError(f"{self.path.name}: missing bindings {missing}")
        if self._binding is None:
            self._binding = self.session.io_binding()
        binding = self._binding
        for names, tensors, bind in (
            (self.input_names, inputs, binding.bind_input),
            (self.output_names, outputs, binding.bind_output),
        ):
            for name in names:
                t = tensors[name]
                if not t.is_contiguous():
                    raise ValueError(f"{self.path.name}: {name} must be a contiguous tensor to bind")
                key = (t.device.type, t.device.index or 0, t.data_ptr(), tuple(t.shape), t.dtype)
                if self._bound.get(name) != key:
                    bind(name, key[0], key[1], _NUMPY[str(t.dtype)], list(key[3]), key[2])
                    self._bound[name] = key
        self.session.run_with_iobinding(binding)

    def __call__(self, feeds: Mapping[str, Any], device: Any = None) -> dict[str, Any]:
        """Run with torch tensors (moved to CPU for the session) and return torch tensors on ``device``."""
        import torch

        arrays = {
            k: (v.detach().cpu().contiguous().numpy() if isinstance(v, torch.Tensor) else np.asarray(v))
            for k, v in feeds.items()
        }
        outs = self.run_numpy(arrays)
        return {k: torch.from_numpy(np.ascontiguousarray(v)).to(device or "cpu") for k, v in outs.items()}


def session_report(graphs: Sequence[OrtGraph]) -> dict[str, str]:
    """Which provider each graph really got, for benchmark JSON."""
    return {g.path.stem: g.active_provider for g in graphs}
