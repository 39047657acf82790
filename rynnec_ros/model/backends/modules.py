"""``nn.Module`` stand-ins that run an exported graph where the torch engine calls a component.

Each adapter keeps the call signature of the module it replaces, so the engine's preprocessing, prompt
building, decoding loop and parsing run unchanged on every backend. Graphs are float32 (ONNX Runtime)
or whatever TensorRT built; adapters cast inputs to the graph and outputs back to the caller's dtype.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

import torch
from torch import nn

from rynnec_ros.core.types import StopFn
from rynnec_ros.model.decoding import KVCache, check_stop
from rynnec_ros.model.export.llm import kv_names
from rynnec_ros.model.heads import MaskExtractor
from rynnec_ros.model.vision import Videollama3VisionEncoderModel

Graph = Callable[..., dict[str, torch.Tensor]]


def _run(graph: Graph, feeds: Mapping[str, torch.Tensor], like: torch.Tensor) -> dict[str, torch.Tensor]:
    """Run ``graph`` in float32 and hand results back on ``like``'s device and (floating) dtype."""
    prepared = {k: (v.float() if v.is_floating_point() else v) for k, v in feeds.items()}
    outs = graph(prepared, device=like.device)
    return {
        k: (v.to(like.dtype) if v.is_floating_point() and like.is_floating_point() else v)
        for k, v in outs.items()
    }


class GraphMLP(nn.Module):
    """Replaces a plain ``[..., in] → [..., out]`` module (projector, LM head, [SEG] head)."""

    def __init__(self, graph: Graph, ref: nn.Module) -> None:
        super().__init__()
        self.graph = graph
        self._dtype = next(ref.parameters()).dtype

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(-1, x.shape[-1])
        like = torch.empty(0, dtype=self._dtype, device=x.device)
        y = _run(self.graph, {"x": flat}, like)["y"]
        return y.reshape(*x.shape[:-1], y.shape[-1])


class GraphRegionEncoder(nn.Module):
    """Replaces ``MaskExtractor``: pooling stays the torch code, ``feat_linear`` runs as a graph."""

    def __init__(self, graph: Graph, ref: MaskExtractor) -> None:
        super().__init__()
        self.pool = ref.pool
        self.mlp = GraphMLP(graph, ref.feat_linear)

    def forward(self, pooled: torch.Tensor) -> torch.Tensor:
        return self.mlp(pooled)


class BoundGraph(Protocol):
    """A graph that runs with its inputs and outputs bound to torch tensors (``OrtGraph``, ``TrtGraph``)."""

    def run_bound(self, inputs: Mapping[str, torch.Tensor], outputs: Mapping[str, torch.Tensor]) -> None: ...


class GraphDecoderStack:
    """The engine's ``Decoder`` (``model.decoding``) over the prefill/decode graphs, KV cache in place.

    ``swap_components`` installs it as ``Qwen2Model.forward``, where the engine looks for it. The
    cache is the engine's ``KVCache`` (``[layers, kv_heads, capacity, head_dim]`` buffers, in the
    graphs' ``kv_dtype`` on ``device``); a call binds ``k[i, j, :P]`` and ``v[i, j, :P]`` as the graph's
    past inputs and ``k[i, j, P:P+S]`` / ``v[...]`` as its new outputs (``export/llm.py``), so the
    graph reads the valid positions where they lie and writes the new ones at the current position:
    no byte of the cache is copied, and the unused capacity is never read. A graph runs the whole
    stack in one call, so ``should_stop`` is checked per chunk, not per layer.

    ``prefill=None`` runs the first chunk through the decode graph with P = 0 (zero-size past
    bindings): the same results to the bit in ONNX Runtime (``test_backends_engine``), and the LLM's
    weights are loaded once instead of once per graph. TensorRT keeps a prefill graph (its
    optimisation profiles take no zero-size dimension).
    """

    def __init__(
        self,
        prefill: BoundGraph | None,
        decode: BoundGraph,
        dtype: torch.dtype,
        layout: tuple[int, int, int],
        kv_dtype: torch.dtype = torch.float32,
        device: torch.device | str = "cpu",
    ) -> None:
        self.prefill = prefill
        self.decode = decode
        self.dtype = dtype
        self.layers, self.kv_heads, self.head_dim = layout
        self.kv_dtype = kv_dtype
        self.device = torch.device(device)
        self._past = kv_names("past", self.layers, self.kv_heads)
        self._new = kv_names("new", self.layers, self.kv_heads)

    def new_cache(self, capacity: int) -> KVCache:
        shape = (self.layers, self.kv_heads, int(capacity), self.head_dim)
        k = torch.zeros(shape, dtype=self.kv_dtype, device=self.device)
        return KVCache(k, torch.zeros_like(k))

    def _views(self, cache: KVCache, start: int, end: int) -> list[torch.Tensor]:
        """Slices ``[start:end]`` of every (layer, K/V, head) row of the cache, in ``kv_names`` order."""
        return [
            buf[i, j, start:end]
            for i in range(self.layers)
            for buf in (cache.k, cache.v)
            for j in range(self.kv_heads)
        ]

    def forward(
        self, embeds: torch.Tensor, cache: KVCache, should_stop: StopFn | None = None
    ) -> torch.Tensor:
        check_stop(should_stop)
        start, s = cache.length, embeds.shape[1]
        if start + s > cache.capacity:
            raise ValueError(f"{start + s} positions exceed the KV cache capacity {cache.capacity}")
        dev = cache.k.device
        inputs = {
            "inputs_embeds": embeds.to(dev, self.kv_dtype).contiguous(),
            "position_ids": torch.arange(start, start + s, device=dev, dtype=torch.int64)[None],
        }
        graph = self.decode
        if start == 0 and self.prefill is not None:
            graph = self.prefill
        else:
            inputs.update(zip(self._past, self._views(cache, 0, start), strict=True))
        hidden = torch.empty((1, s, embeds.shape[2]), dtype=self.kv_dtype, device=dev)
        outputs = {"hidden": hidden}
        outputs.update(zip(self._new, self._views(cache, start, start + s), strict=True))
        graph.run_bound(inputs, outputs)
        cache.length = start + s
        return hidden.to(embeds.device, self.dtype)

    def decode_step(
        self, embeds: torch.Tensor, pos: torch.Tensor, cache: KVCache, span: int, masked: bool
    ) -> torch.Tensor:
        """One position through the decode graph (graphs have dynamic shapes: ``span`` is not needed)."""
        if int(pos) != cache.length:
            raise ValueError(f"decode_step at position {int(pos)} but the cache holds {cache.length}")
        hidden = self.forward(embeds, cache)[0, -1]
        cache.length -= 1  # the caller advances the length, as with StaticQwen2.decode_step
        return hidden

class GraphVisionTower(nn.Module):
    """Replaces ``Videollama3VisionEncoderModel``: RoPE tables from the torch tower's own helper."""

    def __init__(self, graph: Graph, tower: Videollama3VisionEncoderModel) -> None:
        super().__init__()
        self.graph = graph
        self.rope = tower.encoder.rope
        self.config = tower.config
        self._dtype = tower.post_layernorm.weight.dtype

    def forward(self, pixel_values: torch.Tensor, grid_h: int, grid_w: int, merge: int) -> torch.Tensor:
        """One frame [N, 3·p·p] → [N, C]; a batch [B, N, 3·p·p] runs frame by frame (the exported graph
        takes one frame, which keeps one graph for every frame size)."""
        if pixel_values.ndim == 3:
            return torch.stack([self.forward(pv, grid_h, grid_w, merge) for pv in pixel_values])
        cos, sin = self.rope(grid_h, grid_w, merge)
        like = torch.empty(0, dtype=self._dtype, device=pixel_values.device)
        return _run(self.graph, {"pixel_values": pixel_values, "cos": cos, "sin": sin}, like)["features"]


def sam2_mask_logits(graph: Graph) -> Callable[..., tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """A replacement for ``Sam2Model.mask_logits`` (same arguments and outputs): the decoder graph."""

    def mask_logits(
        image_embed: torch.Tensor,
        image_pe: torch.Tensor,
        sparse: torch.Tensor,
        dense: torch.Tensor,
        high_res: tuple[torch.Tensor, torch.Tensor],
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        feeds = {
            "image_embed": image_embed,
            "image_pe": image_pe,
            "sparse": sparse,
            "dense": dense.contiguous(),
            "feat_s0": high_res[0],
            "feat_s1": high_res[1],
        }
        outs = _run(graph, feeds, image_embed)
        return outs["masks"], outs["iou"], outs["object_score"]

    return mask_logits


def sam2_image_features(graph: Graph, sam2: Any) -> Callable[[torch.Tensor], Any]:
    """A replacement for ``Sam2Model.image_features`` (bound to one model instance)."""
    from rynnec_ros.model.sam2 import Sam2ImageFeatures

    param = sam2.no_mem_embed

    def image_features(pixels: torch.Tensor) -> Any:
        size = sam2.config.image_size
        if pixels.ndim != 4 or tuple(pixels.shape[1:]) != (3, size, size):
            raise ValueError(f"SAM2 pixels must be [B, 3, {size}, {size}], got {tuple(pixels.shape)}")
        like = torch.empty(0, dtype=param.dtype, device=param.device)
        outs = _run(graph, {"pixels": pixels}, like)
        return Sam2ImageFeatures(outs["image_embed"], (outs["feat_s0"], outs["feat_s1"]))

    return image_features
