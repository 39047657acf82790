"""Backends behind one engine API: ``torch``, ``onnxruntime``, ``tensorrt`` and ``remote``.

``remote`` is a client of a site server (``rynnec-ros serve``, see ``remote.py``); the others run here.

``load_engine`` builds the shared ``RynnEC`` host (preprocessing, prompt building, caches, the
decoding loop and answer parsing) and hands it the ``Compute`` (``model/compute.py``) that runs the
networks: vision tower, projector, region MLP, LLM decoder stack, LM head, [SEG] head, SAM2 image
encoder and mask decoder. Backend torch computes with the checkpoint's modules; the graph backends
with a ``graphs.GraphCompute`` over the exported graphs, given to the engine when it is built. For
those the torch versions of the components are never loaded: only the host tensors (token embedding,
SAM2 prompt encoder) are read from the checkpoint into a meta-device skeleton, and ``GraphCompute``
checks that every tensor left on meta is one its graphs compute, then drops those modules from it.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rynnec_ros.model.spec import BACKENDS, EngineInfo, EngineSpec

if TYPE_CHECKING:
    from rynnec_ros.model.backends.remote import RemoteEngine
    from rynnec_ros.model.engine import RynnEC

log = logging.getLogger(__name__)

FUSED_DECODE_MIN_ORT = (1, 20)
"""The oldest ONNX Runtime whose CPU ``GroupQueryAttention`` computes the fused decode graph right over
the bound cache: 1.20.1 passes the fused-graph parity tests (test_backends_export.py), 1.19.2 runs the
graph and returns hidden states that differ from transformers' Qwen2Model (measured 2026-12-06). Older
runtimes decode through the plain graph, which needs only standard ops."""

QUANTISED_WEIGHTS_MIN_ORT = (1, 25)
"""The oldest ONNX Runtime that turns every blocked DequantizeLinear → MatMul of the int8/int4 graphs into
``MatMulNBits`` at load (test_onnxruntime_fuses_every_quantised_matrix_into_matmulnbits, wheels measured
2026-12-06: 1.25.1, 1.26.0, 1.28.0, 1.30.0, 1.32.0 fuse 14 of 14; 1.24.1 and 1.23.2 leave int8 unfused and
fuse 8 of 14 int4 matrices, 1.20.1–1.22.1 none). Unfused, the weights are dequantised to float32: none of
the memory the option exists for is saved, so older runtimes are refused rather than run."""

INT8_KV_MIN_ORT = (1, 27)
"""The oldest ONNX Runtime whose CPU ``GroupQueryAttention`` takes int8 caches with static scales
(``kv_cache`` int8, ``export/kvcache.py``). Each wheel measured with one such node (2026-12-07):
1.27.0–1.32.0 write round-to-nearest int8 rows and attend over them to 5e-7 of the dequantised
reference; 1.25.1 and 1.26.0 accept the graph and fail at run time (the kernel reads the cache as
float); 1.20.1–1.24.1 refuse the int8 cache type at load."""


def _ort_at_least(version: str, minimum: tuple[int, int]) -> bool:
    """Whether ONNX Runtime ``version`` ('1.20.1', '1.21.0.dev…') is at least ``minimum``."""
    parts = version.split(".")
    try:
        return (int(parts[0]), int(parts[1])) >= minimum
    except (IndexError, ValueError):
        return False


def load_engine(spec: EngineSpec | str | Path, **options: Any) -> RynnEC | RemoteEngine:
    """The engine ``spec`` describes; ``load_engine(path, backend=..., ...)`` builds the spec from keywords.

    onnxruntime: graphs from ``onnx_dir`` (``rynnec-ros export onnx``) on ``ort_provider`` (default: cpu
    for device cpu, cuda otherwise; 'tensorrt' selects ONNX Runtime's TensorRT provider). tensorrt:
    engines listed in ``engine_dir/engines.json`` (``rynnec-ros export tensorrt``). remote: the site
    server at ``server_url`` answers. ``engine.info`` says what was built and what every graph runs on.
    """
    if not isinstance(spec, EngineSpec):
        spec = EngineSpec(checkpoint=str(spec), **options)
    elif options:
        spec = spec.replace(**options)
    if spec.threads:
        import torch

        torch.set_num_threads(spec.threads)
    return LOADERS[spec.backend](spec)


def _remote(spec: EngineSpec) -> RemoteEngine:
    from rynnec_ros.model.backends.remote import RemoteEngine

    return RemoteEngine(spec.server_url, spec.server_token, spec.server_connect_timeout_s,
                        spec.server_request_timeout_s)


def _host(spec: EngineSpec, graphs: dict[str, Any] | None = None) -> RynnEC:
    """The shared host, computing with the checkpoint's modules or, given ``graphs``, with those."""
    from rynnec_ros.model.engine import RynnEC

    compute = None
    providers: dict[str, str] = {}
    if graphs is not None:
        import torch

        from rynnec_ros.model.backends.graphs import GraphCompute
        from rynnec_ros.model.loader import parse_dtype

        compute = functools.partial(
            GraphCompute, graphs=graphs, dtype=parse_dtype(spec.dtype), device=torch.device(spec.device)
        )
        providers = {
            name: getattr(g if g is not None else graphs["llm_decode"], "active_provider", "?")
            for name, g in graphs.items()
        }
    engine = RynnEC.from_pretrained(
        spec.checkpoint, device=spec.device, dtype=spec.dtype, max_visual_tokens=spec.max_visual_tokens,
        reuse=spec.reuse, cache_mb=spec.cache_mb, compute=compute,
        vision_cache_frames=spec.cache_frames, prefix_cache_windows=spec.cache_windows,
    )
    engine.info = EngineInfo(spec.backend, providers)
    return engine


def _onnxruntime(spec: EngineSpec) -> RynnEC:
    provider = spec.ort_provider or ("cpu" if spec.device == "cpu" else "cuda")
    graphs = _ort_graphs(Path(spec.onnx_dir), provider, spec.threads or None, spec.weights, spec.kv_cache)
    return _host(spec, graphs)


def _tensorrt(spec: EngineSpec) -> RynnEC:
    return _host(spec, _trt_graphs(Path(spec.engine_dir), spec.device, spec.weights))


# One loader per backend name (the names are model/spec.py's BACKENDS).
LOADERS: dict[str, Callable[[EngineSpec], RynnEC | RemoteEngine]] = {
    "torch": _host, "onnxruntime": _onnxruntime, "tensorrt": _tensorrt, "remote": _remote,
}


def _ort_graphs(
    onnx_dir: Path, provider: str, threads: int | None, weights: str = "", kv_cache: str = ""
) -> dict[str, Any]:
    """One session per graph, except that the decode graph also prefills (from an empty past); the LLM
    graphs with ``weights`` where asked (ONNX Runtime fuses their Q/DQ weights into ``MatMulNBits``).

    TensorRT needs the two LLM graphs for their own optimisation profiles; ONNX Runtime's shapes are
    dynamic, and two sessions would hold the LLM's weights twice. On the CPU provider the export's
    ``llm_decode_gqa`` (fused ``GroupQueryAttention``, ``export/llm.py``) stands in for ``llm_decode``
    where the export has it; the CUDA kernel of that op takes no float32, so GPU providers keep the
    plain graph. ``kv_cache`` int8 loads the fused graph with an int8 cache (``export/kvcache.py``),
    CPU provider and ONNX Runtime >= ``INT8_KV_MIN_ORT`` only.
    """
    import onnxruntime

    from rynnec_ros.model.backends.ort import PROVIDERS, OrtGraph, provider_name
    from rynnec_ros.model.export.manifest import ORT_ONLY, Manifest

    manifest = Manifest.load(onnx_dir)
    specs = manifest.with_weights(weights)
    if weights and not _ort_at_least(onnxruntime.__version__, QUANTISED_WEIGHTS_MIN_ORT):
        raise ValueError(
            f"weights {weights!r} need onnxruntime >= {'.'.join(map(str, QUANTISED_WEIGHTS_MIN_ORT))} "
            f"(this is {onnxruntime.__version__}): older runtimes do not fuse the quantised matrices into "
            "MatMulNBits and hold them as float32; upgrade onnxruntime or leave weights empty"
        )
    if kv_cache:
        if provider_name(provider) != PROVIDERS["cpu"]:
            raise ValueError(
                f"kv_cache {kv_cache} runs in the CPU GroupQueryAttention kernel of the fused graph; "
                f"provider {provider} decodes through the plain graph, whose cache is float"
            )
        if not _ort_at_least(onnxruntime.__version__, INT8_KV_MIN_ORT):
            raise ValueError(
                f"kv_cache {kv_cache} needs onnxruntime >= {'.'.join(map(str, INT8_KV_MIN_ORT))} (this is "
                f"{onnxruntime.__version__}): older CPU GroupQueryAttention kernels take no int8 cache"
            )
        specs["llm_decode"] = manifest.kv_graph(kv_cache, weights)
        specs.pop("llm_decode_gqa", None)
    fused_ok = _ort_at_least(onnxruntime.__version__, FUSED_DECODE_MIN_ORT)
    for fused, plain in ORT_ONLY.items():
        if fused in specs and provider_name(provider) == PROVIDERS["cpu"]:
            if fused_ok:
                specs[plain] = specs[fused]
            else:
                log.warning("onnxruntime %s is older than %s: decoding through the plain %s graph, not %s",
                            onnxruntime.__version__, ".".join(map(str, FUSED_DECODE_MIN_ORT)), plain, fused)
        specs.pop(fused, None)
    graphs: dict[str, Any] = {
        name: OrtGraph(
            onnx_dir / spec.file, provider=provider, threads=threads, trt_cache_dir=onnx_dir / "ort_trt_cache"
        )
        for name, spec in specs.items()
        if name != "llm_prefill"
    }
    if "llm_decode" in graphs:
        graphs["llm_prefill"] = None  # GraphDecoderStack prefills through llm_decode
    return graphs


def _trt_graphs(engine_dir: Path, device: str, weights: str = "") -> dict[str, Any]:
    from rynnec_ros.model.backends.trt import TrtGraph
    from rynnec_ros.model.export.quantize import QUANTIZED_GRAPHS

    index = engine_dir / "engines.json"
    if not index.is_file():
        raise FileNotFoundError(f"{index} not found: build engines with `rynnec-ros export tensorrt`")
    entries = json.loads(index.read_text(encoding="utf-8"))
    built = {e.get("weights", "") for n, e in entries.items() if n in QUANTIZED_GRAPHS}
    if built and built != {weights}:
        have = ", ".join(sorted(w or "float32" for w in built))
        raise ValueError(
            f"{engine_dir}: the LLM engines were built with {have} weights, not {weights or 'float32'}; "
            "rebuild with `rynnec-ros export tensorrt" + (f" --weights {weights}`" if weights else "`")
        )
    return {name: TrtGraph(engine_dir / e["engine"], device=device) for name, e in entries.items()}


__all__ = ["BACKENDS", "LOADERS", "load_engine"]
