"""Backends behind one engine API: ``torch``, ``onnxruntime``, ``tensorrt`` and ``remote``.

``remote`` is a client of a site server (``rynnec-ros serve``, see ``remote.py``); the others run here.

``load_engine`` builds the shared ``RynnEC`` host (preprocessing, prompt building, caches, the
decoding loop and answer parsing) with graph-backed modules of the same call signatures for the compute
components: vision tower, projector, region MLP, LLM decoder stack, LM head, [SEG] head, SAM2 image
encoder and mask decoder. For the graph backends the torch versions of those components are never
built: they stay on the meta device (no memory), only the host tensors (token embedding, SAM2 prompt
encoder) are read from the checkpoint, and ``swap_components`` checks that no meta tensor is left.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from rynnec_ros.model.spec import BACKENDS, EngineInfo, EngineSpec

if TYPE_CHECKING:
    from rynnec_ros.model.backends.remote import RemoteEngine
    from rynnec_ros.model.engine import RynnEC


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


def _host(spec: EngineSpec) -> RynnEC:
    """The shared host; for a graph backend without the torch compute modules (see module docstring)."""
    from rynnec_ros.model.engine import RynnEC

    engine = RynnEC.from_pretrained(
        spec.checkpoint, device=spec.device, dtype=spec.dtype, max_visual_tokens=spec.max_visual_tokens,
        reuse=spec.reuse, cache_mb=spec.cache_mb, graph_backed=spec.backend != "torch",
        vision_cache_frames=spec.cache_frames, prefix_cache_windows=spec.cache_windows,
    )
    engine.info = EngineInfo(spec.backend)
    return engine


def _onnxruntime(spec: EngineSpec) -> RynnEC:
    engine = _host(spec)
    provider = spec.ort_provider or ("cpu" if spec.device == "cpu" else "cuda")
    _attach(engine, _ort_graphs(Path(spec.onnx_dir), provider, spec.threads or None, spec.weights))
    return engine


def _tensorrt(spec: EngineSpec) -> RynnEC:
    engine = _host(spec)
    _attach(engine, _trt_graphs(Path(spec.engine_dir), spec.device, spec.weights))
    return engine


# One loader per backend name (the names are model/spec.py's BACKENDS).
LOADERS: dict[str, Callable[[EngineSpec], RynnEC | RemoteEngine]] = {
    "torch": _host, "onnxruntime": _onnxruntime, "tensorrt": _tensorrt, "remote": _remote,
}


def _attach(engine: RynnEC, graphs: dict[str, Any]) -> None:
    swap_components(engine, graphs)
    engine.info = EngineInfo(engine.info.backend, {
        name: getattr(g if g is not None else graphs["llm_decode"], "active_provider", "?")
        for name, g in graphs.items()
    })


def _ort_graphs(onnx_dir: Path, provider: str, threads: int | None, weights: str = "") -> dict[str, Any]:
    """One session per graph, except that the decode graph also prefills (from an empty past); the LLM
    graphs with ``weights`` where asked (ONNX Runtime fuses their Q/DQ weights into ``MatMulNBits``).

    TensorRT needs the two LLM graphs for their own optimisation profiles; ONNX Runtime's shapes are
    dynamic, and two sessions would hold the LLM's weights twice.
    """
    from rynnec_ros.model.backends.ort import OrtGraph
    from rynnec_ros.model.export.manifest import Manifest

    manifest = Manifest.load(onnx_dir)
    graphs: dict[str, Any] = {
        name: OrtGraph(
            onnx_dir / spec.file, provider=provider, threads=threads, trt_cache_dir=onnx_dir / "ort_trt_cache"
        )
        for name, spec in manifest.with_weights(weights).items()
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


REQUIRED = ("vision", "projector", "region", "llm_prefill", "llm_decode", "lm_head")


def swap_components(engine: RynnEC, graphs: dict[str, Callable[..., Any] | None]) -> None:
    """Replace the engine model's compute modules by graph-backed ones (see module docstring).

    ``graphs["llm_prefill"]`` may be None: the decode graph then prefills from an empty past.
    """
    import torch
    from torch import nn

    from rynnec_ros.model.backends.modules import (
        BoundGraph,
        GraphDecoderStack,
        GraphMLP,
        GraphRegionEncoder,
        GraphVisionTower,
        sam2_image_features,
        sam2_mask_logits,
    )

    missing = [g for g in REQUIRED if g not in graphs]
    model = engine.model
    if model.seg_head is not None and model.sam2 is not None:
        missing += [g for g in ("seg_head", "sam2_image", "sam2_decoder") if g not in graphs]
    if missing:
        raise ValueError(f"the export lacks graphs {missing}; re-run the export for this checkpoint")


    def need(name: str) -> Callable[..., Any]:
        graph = graphs[name]
        if graph is None:
            raise ValueError(f"graph {name} is required")
        return graph

    llm = model.model
    tower = model.vision_tower
    llm.vision_encoder.vision_encoder = GraphVisionTower(need("vision"), tower)
    tower.encoder.layers = nn.ModuleList()  # RoPE helper stays; the weights go
    llm.mm_projector = GraphMLP(need("projector"), llm.mm_projector)
    llm.region_encoder = GraphRegionEncoder(need("region"), llm.region_encoder)
    cfg = model.config
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    decode = need("llm_decode")
    if "past_k.0.0" not in getattr(decode, "input_names", ["past_k.0.0"]):
        raise ValueError(
            "the llm_decode graph predates the in-place KV cache (one stacked `past` input); "
            "re-run `rynnec-ros export onnx` (and `export tensorrt`) for this checkpoint"
        )
    kv_dtype = getattr(decode, "dtypes", {}).get("past_k.0.0", torch.float32)  # TensorRT declares its own
    layout = (cfg.num_hidden_layers, cfg.num_key_value_heads, head_dim)
    prefill = cast("BoundGraph | None", graphs["llm_prefill"])
    llm.forward = GraphDecoderStack(
        prefill, cast("BoundGraph", decode), engine.dtype, layout, kv_dtype, engine.device
    )
    llm.layers = nn.ModuleList()
    llm.norm = nn.Identity()  # the final norm is inside the LLM graphs
    model.lm_head = GraphMLP(need("lm_head"), model.lm_head)
    if model.seg_head is not None:
        llm.text_hidden_fcs[0] = GraphMLP(need("seg_head"), model.seg_head)
    sam2: Any = model.sam2  # its modules are swapped for duck-typed stand-ins
    if sam2 is not None:
        sam2.image_features = sam2_image_features(need("sam2_image"), sam2)
        sam2.mask_logits = sam2_mask_logits(need("sam2_decoder"))
        sam2.sam_mask_decoder = nn.Identity()
        sam2.image_encoder = nn.Identity()
        sam2.sam_prompt_encoder.mask_downscaling = nn.Identity()  # mask prompts: never read, never loaded
    left = [n for n, t in [*model.named_parameters(), *model.named_buffers()] if t.is_meta]
    if left:
        raise ValueError(f"graph backend: tensors the graphs do not cover were never loaded: {left}")
    engine.clear_cache()


__all__ = ["BACKENDS", "LOADERS", "load_engine", "swap_components"]
