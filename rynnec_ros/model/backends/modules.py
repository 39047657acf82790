"""``nn.Module`` stand-ins that run an exported graph where the torch engine calls a component.

Each adapter keeps the call signature of the module it replaces, so the engine's preprocessing, prompt
building, decoding loop and parsing run unchanged on every backend. Graphs are float32 (ONNX Runtime)
or whatever TensorRT built; adapters cast inputs to the graph and outputs back to the caller's dtype.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import nn

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

    def __init__(self, graph: Graph, ref: nn.Module) -> None:
        super().__init__()
        self.pool = ref.pool
        self.mlp = GraphMLP(graph, ref.feat_linear)

    def forward(self, pooled: torch.Tensor) -> torch.Tensor:
        return self.mlp(pooled)


class GraphDecoderStack:
    """A replacement for ``Qwen2Model.forward`` that runs the prefill/decode graphs.

    The engine keeps passing its transformers ``DynamicCache``; the stacked explicit cache travels as
    an attribute of that object, so the engine's cache copies (prefix reuse, option scoring) copy it
    too and the engine code stays backend-agnostic.
    """

    ATTR = "explicit_kv"

    def __init__(self, prefill: Graph, decode: Graph, dtype: torch.dtype) -> None:
        self.prefill = prefill
        self.decode = decode
        self.dtype = dtype

    def __call__(
        self,
        inputs_embeds: torch.Tensor | None = None,
        past_key_values: Any = None,
        use_cache: bool = True,
        **unused: Any,
    ) -> Any:
        from transformers.modeling_outputs import BaseModelOutputWithPast

        if inputs_embeds is None:
            raise ValueError("the graph backends take inputs_embeds (the engine embeds tokens itself)")
        if unused.get("attention_mask") is not None:
            raise ValueError(
                "the graph backends run batch 1 without padding; attention_mask is not supported"
            )
        past = getattr(past_key_values, self.ATTR, None) if past_key_values is not None else None
        start = 0 if past is None else int(past.shape[3])
        s = inputs_embeds.shape[1]
        positions = torch.arange(start, start + s, device=inputs_embeds.device, dtype=torch.int64)[None]
        like = torch.empty(0, dtype=self.dtype, device=inputs_embeds.device)
        if past is None:
            outs = _run(self.prefill, {"inputs_embeds": inputs_embeds, "position_ids": positions}, like)
        else:
            outs = _run(
                self.decode, {"inputs_embeds": inputs_embeds, "position_ids": positions, "past": past}, like
            )
        if past_key_values is not None:
            setattr(past_key_values, self.ATTR, outs["present"])
        return BaseModelOutputWithPast(last_hidden_state=outs["hidden"], past_key_values=past_key_values)


class GraphVisionTower(nn.Module):
    """Replaces ``Videollama3VisionEncoderModel``: RoPE tables from the torch tower's own helper."""

    def __init__(self, graph: Graph, tower: nn.Module) -> None:
        super().__init__()
        self.graph = graph
        self.rope = tower.encoder.rope
        self.config = tower.config
        self._dtype = tower.post_layernorm.weight.dtype

    def forward(self, pixel_values: torch.Tensor, grid_h: int, grid_w: int, merge: int) -> torch.Tensor:
        cos, sin = self.rope(grid_h, grid_w, merge)
        like = torch.empty(0, dtype=self._dtype, device=pixel_values.device)
        return _run(self.graph, {"pixel_values": pixel_values, "cos": cos, "sin": sin}, like)["features"]


class GraphSam2Decoder(nn.Module):
    """Replaces SAM2's ``MaskDecoder`` (same forward signature and outputs)."""

    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph

    def forward(
        self,
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
        outs = _run(self.graph, feeds, image_embed)
        return outs["masks"], outs["iou"], outs["object_score"]


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
