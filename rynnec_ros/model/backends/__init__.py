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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rynnec_ros.model.backends.remote import RemoteEngine
    from rynnec_ros.model.engine import RynnEC

BACKENDS = ("torch", "onnxruntime", "tensorrt", "remote")


def load_engine(
    path: str | Path,
    backend: str = "torch",
    device: str = "cpu",
    dtype: str = "float32",
    onnx_dir: str | Path | None = None,
    engine_dir: str | Path | None = None,
    provider: str | None = None,
    threads: int | None = None,
    max_visual_tokens: int = 16384,
    reuse: bool = True,
    server_url: str = "",
    server_token: str = "",
    connect_timeout_s: float = 5.0,
    request_timeout_s: float = 120.0,
    cache_mb: float | None = None,
) -> RynnEC | RemoteEngine:
    """A ``RynnEC`` whose heavy compute runs on ``backend``.

    onnxruntime: graphs from ``onnx_dir`` (``rynnec-ros export onnx``) on ``provider`` (default: cpu
    for device cpu, cuda otherwise; 'tensorrt' selects ONNX Runtime's TensorRT provider). tensorrt:
    engines listed in ``engine_dir/engines.json`` (``rynnec-ros export tensorrt``).
    remote: the site server at ``server_url`` answers (``path`` and the compute options are the
    server's business). ``engine.graph_providers`` records what every graph really runs on.
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {BACKENDS}")
    if backend == "remote":
        from rynnec_ros.model.backends.remote import RemoteEngine

        return RemoteEngine(server_url, server_token, connect_timeout_s, request_timeout_s)
    from rynnec_ros.model.engine import DEFAULT_CACHE_MB, RynnEC

    if backend == "onnxruntime" and onnx_dir is None:
        raise ValueError("backend onnxruntime needs onnx_dir (make one with `rynnec-ros export onnx`)")
    if backend == "tensorrt" and engine_dir is None:
        raise ValueError("backend tensorrt needs engine_dir (make one with `rynnec-ros export tensorrt`)")
    engine = RynnEC.from_pretrained(
        path, device=device, dtype=dtype, max_visual_tokens=max_visual_tokens, reuse=reuse,
        cache_mb=DEFAULT_CACHE_MB if cache_mb is None else cache_mb, graph_backed=backend != "torch",
    )
    engine.backend = backend
    if backend == "torch":
        engine.graph_providers = {}
        return engine
    if backend == "onnxruntime":
        assert onnx_dir is not None  # checked above
        graphs = _ort_graphs(Path(onnx_dir), provider or ("cpu" if device == "cpu" else "cuda"), threads)
    else:
        assert engine_dir is not None  # checked above
        graphs = _trt_graphs(Path(engine_dir), device)
    swap_components(engine, graphs)
    engine.graph_providers = {
        name: getattr(g if g is not None else graphs["llm_decode"], "active_provider", "?")
        for name, g in graphs.items()
    }
    return engine


def _ort_graphs(onnx_dir: Path, provider: str, threads: int | None) -> dict[str, Any]:
    """One session per graph, except that the decode graph also prefills (from an empty past).

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
        for name, spec in manifest.graphs.items()
        if name != "llm_prefill"
    }
    if "llm_decode" in graphs:
        graphs["llm_prefill"] = None  # GraphDecoderStack prefills through llm_decode
    return graphs


def _trt_graphs(engine_dir: Path, device: str) -> dict[str, Any]:
    from rynnec_ros.model.backends.trt import TrtGraph

    index = engine_dir / "engines.json"
    if not index.is_file():
        raise FileNotFoundError(f"{index} not found: build engines with `rynnec-ros export tensorrt`")
    entries = json.loads(index.read_text(encoding="utf-8"))
    return {name: TrtGraph(engine_dir / e["engine"], device=device) for name, e in entries.items()}


REQUIRED = ("vision", "projector", "region", "llm_prefill", "llm_decode", "lm_head")


def swap_components(engine: RynnEC, graphs: dict[str, Callable[..., Any] | None]) -> None:
    """Replace the engine model's compute modules by graph-backed ones (see module docstring).

    ``graphs["llm_prefill"]`` may be None: the decode graph then prefills from an empty past.
    """
    from torch import nn

    from rynnec_ros.model.backends.modules import (
        GraphDecoderStack,
        GraphMLP,
        GraphRegionEncoder,
        GraphSam2Decoder,
        GraphVisionTower,
        sam2_image_features,
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
    empty_past = (cfg.num_hidden_layers, 2, cfg.num_key_value_heads, 0, head_dim)  # the export's layout
    llm.forward = GraphDecoderStack(graphs["llm_prefill"], need("llm_decode"), engine.dtype, empty_past)
    llm.layers = nn.ModuleList()
    llm.norm = nn.Identity()  # the final norm is inside the LLM graphs
    model.lm_head = GraphMLP(need("lm_head"), model.lm_head)
    if model.seg_head is not None:
        llm.text_hidden_fcs[0] = GraphMLP(need("seg_head"), model.seg_head)
    sam2: Any = model.sam2  # its modules are swapped for duck-typed stand-ins
    if sam2 is not None:
        sam2.image_features = sam2_image_features(need("sam2_image"), sam2)
        sam2.sam_mask_decoder = GraphSam2Decoder(need("sam2_decoder"))
        sam2.image_encoder = nn.Identity()
    left = [n for n, t in [*model.named_parameters(), *model.named_buffers()] if t.is_meta]
    if left:
        raise ValueError(f"graph backend: tensors the graphs do not cover were never loaded: {left}")
    engine.clear_cache()


__all__ = ["BACKENDS", "load_engine", "swap_components"]
