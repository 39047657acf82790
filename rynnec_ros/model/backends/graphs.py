"""``GraphCompute``: the engine's ``Compute`` (``model/compute.py``) over exported graphs.

Each component keeps the signature and results of the torch module it stands for, so the engine's
preprocessing, prompt building, decoding loop and parsing run unchanged on every backend. Graphs are
float32 (ONNX Runtime) or whatever TensorRT built; inputs are cast to the graph and outputs back to
the dtype the torch module would have produced.

The engine's model is the host part only: built on the meta device, it is given only the host tensors
(``loader.HOST_PREFIXES``); ``GraphCompute`` checks that every tensor left on meta belongs to a module
one of its graphs computes, and releases those modules from the skeleton before the engine exists, so
the model holds no graph weight (not even on the meta device) and nothing is installed in their place.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import torch
from torch import nn

from rynnec_ros.core.types import StopFn
from rynnec_ros.model.decoding import KVCache, check_stop
from rynnec_ros.model.export.kvcache import QUERY_ROWS_KEY
from rynnec_ros.model.export.llm import cache_names, kv_names
from rynnec_ros.model.sam2 import Sam2ImageFeatures
from rynnec_ros.model.spec import INT8_KV_CALL_TOKENS, int8_kv_scratch_rows

if TYPE_CHECKING:
    from rynnec_ros.model.modeling import RynnecQwen2ForCausalLM

Graph = Callable[..., dict[str, torch.Tensor]]

REQUIRED = ("vision", "projector", "region", "llm_prefill", "llm_decode", "lm_head")
"""Graphs every export has; ``seg_head``, ``sam2_image`` and ``sam2_decoder`` where the checkpoint
segments."""

_SAM2 = "grounding_encoder.sam2_model."
COMPUTED_BY = {
    "vision": ("model.vision_encoder",),
    "projector": ("model.mm_projector",),
    "region": ("model.region_encoder",),
    "llm_decode": ("model.layers", "model.norm"),  # the final norm is inside the LLM graphs
    "lm_head": ("lm_head",),
    "seg_head": ("model.text_hidden_fcs",),
    "sam2_image": (_SAM2 + "image_encoder",),
    "sam2_decoder": (_SAM2 + "sam_mask_decoder",),
}
"""The skeleton modules (state-dict prefixes) whose work each graph does."""

NEVER_READ = (_SAM2 + "sam_prompt_encoder.mask_downscaling",)
"""Modules nothing per-frame runs (mask prompts): never loaded, released with the graphs' modules."""


def _run(graph: Graph, feeds: Mapping[str, torch.Tensor], like: torch.Tensor) -> dict[str, torch.Tensor]:
    """Run ``graph`` in float32 and hand results back on ``like``'s device and (floating) dtype."""
    prepared = {k: (v.float() if v.is_floating_point() else v) for k, v in feeds.items()}
    outs = graph(prepared, device=like.device)
    return {
        k: (v.to(like.dtype) if v.is_floating_point() and like.is_floating_point() else v)
        for k, v in outs.items()
    }


def _mlp(graph: Graph, x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A plain ``[..., in] → [..., out]`` graph (projector, region MLP, LM head, [SEG] head)."""
    flat = x.reshape(-1, x.shape[-1])
    y = _run(graph, {"x": flat}, torch.empty(0, dtype=dtype, device=x.device))["y"]
    return y.reshape(*x.shape[:-1], y.shape[-1])


def _release(model: nn.Module, path: str) -> None:
    """Drop the never-loaded module at ``path`` from the skeleton; a module list stays, empty."""
    parent_path, _, name = path.rpartition(".")
    parent = model.get_submodule(parent_path)
    if isinstance(getattr(parent, name), nn.ModuleList):
        setattr(parent, name, nn.ModuleList())
    else:
        delattr(parent, name)


class BoundGraph(Protocol):
    """A graph that runs with its inputs and outputs bound to torch tensors (``OrtGraph``, ``TrtGraph``)."""

    def run_bound(self, inputs: Mapping[str, torch.Tensor], outputs: Mapping[str, torch.Tensor]) -> None: ...


class GraphDecoderStack:
    """The engine's ``Decoder`` (``model.decoding``) over the prefill/decode graphs, KV cache in place.

    It is ``GraphCompute.decoder``. The cache is the engine's ``KVCache`` (``[layers, kv_heads,
    capacity, head_dim]`` buffers, in the graphs' ``kv_dtype`` on ``device``); a call binds
    ``k[i, j, :P]`` and ``v[i, j, :P]`` as the graph's past inputs and ``k[i, j, P:P+S]`` / ``v[...]``
    as its new outputs (``export/llm.py``), so the graph reads the valid positions where they lie and
    writes the new ones at the current position: no byte of the cache is copied, and the unused
    capacity is never read. A graph runs the whole stack in one call, so ``should_stop`` is checked per
    chunk, not per layer.

    ``prefill=None`` runs the first chunk through the decode graph with P = 0 (zero-size past
    bindings): the same results to the bit in ONNX Runtime (``test_backends_engine``), and the LLM's
    weights are loaded once instead of once per graph. TensorRT keeps a prefill graph (its
    optimisation profiles take no zero-size dimension).

    A fused decode graph (``fused``: the export's ``llm_decode_gqa``, ONNX Runtime CPU) takes each
    layer's whole ``[1, kv_heads, capacity, head_dim]`` buffer, bound as both its cache input and its
    present output; its ``GroupQueryAttention`` writes the new rows at the current position and reads
    the valid ones where they lie, so the cache is still never copied. Its int8-cache form
    (``export/kvcache.py``) takes ``kv_dtype`` int8 buffers, which the op quantises as it writes them;
    the embeddings and hidden states stay float32. That graph stacks each kv head's G query heads as
    rows (``kvcache.query_rows``, recorded in its model properties): a call of S tokens writes (G − 1)·S
    scratch rows after its last position and builds a [G·S, positions] mask, so the stack keeps
    (G − 1)·``INT8_KV_CALL_TOKENS`` scratch rows past the cache's capacity and calls the graph with at most
    ``INT8_KV_CALL_TOKENS`` tokens at a time.
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
        # what the graphs take and return besides the cache (a TensorRT fp16 graph: fp16 throughout)
        self.io_dtype = kv_dtype if kv_dtype.is_floating_point else torch.float32
        self.device = torch.device(device)
        self._past = kv_names("past", self.layers, self.kv_heads)
        self._new = kv_names("new", self.layers, self.kv_heads)
        # the fused ONNX Runtime decode graph (export ``llm_decode_gqa``) takes each layer's whole buffer
        self.fused = "cache_k.0" in getattr(decode, "input_names", ())
        self.query_rows = int(getattr(decode, "metadata", {}).get(QUERY_ROWS_KEY, 1))
        self.call_tokens = INT8_KV_CALL_TOKENS if self.query_rows > 1 else None
        self.scratch = int8_kv_scratch_rows(self.query_rows)

    def new_cache(self, capacity: int) -> KVCache:
        shape = (self.layers, self.kv_heads, int(capacity) + self.scratch, self.head_dim)
        k = torch.zeros(shape, dtype=self.kv_dtype, device=self.device)
        return KVCache(k, torch.zeros_like(k), scratch=self.scratch)

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
        if cache.scratch < self.scratch:
            raise ValueError(f"the cache has {cache.scratch} scratch rows; this graph needs {self.scratch}")
        if self.call_tokens is None:
            return self._call(embeds, cache)
        # From an empty cache the op takes its first-prompt path, which rotates the rows at 0, 1, … instead
        # of their positions; one token alone is exact there (every row sees only that token's K/V, so
        # its rotation cannot matter), and every later call has a past.
        cuts = [0, 1] if start == 0 else [0]
        while cuts[-1] < s:
            cuts.append(min(cuts[-1] + self.call_tokens, s))
        parts = [self._call(embeds[:, a:b], cache) for a, b in itertools.pairwise(cuts)]
        return parts[0] if len(parts) == 1 else torch.cat(parts, dim=1)

    def _call(self, embeds: torch.Tensor, cache: KVCache) -> torch.Tensor:
        """One run of the graph over ``embeds`` at the cache's length; advances the length."""
        start, s = cache.length, embeds.shape[1]
        dev = cache.k.device
        inputs = {
            "inputs_embeds": embeds.to(dev, self.io_dtype).contiguous(),
            "position_ids": torch.arange(start, start + s, device=dev, dtype=torch.int64)[None],
        }
        graph = self.decode
        hidden = torch.empty((1, s, embeds.shape[2]), dtype=self.io_dtype, device=dev)
        outputs = {"hidden": hidden}
        if self.fused:
            # each layer's [1, kv_heads, capacity, hd] buffer as its cache input and its present output:
            # the graph's attention writes the new rows at `start` and reads the valid ones in place
            layers = [buf[i][None] for i in range(self.layers) for buf in (cache.k, cache.v)]
            inputs.update(zip(cache_names("cache", self.layers), layers, strict=True))
            outputs.update(zip(cache_names("present", self.layers), layers, strict=True))
        else:
            if start == 0 and self.prefill is not None:
                graph = self.prefill
            else:
                inputs.update(zip(self._past, self._views(cache, 0, start), strict=True))
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


class GraphCompute:
    """``Compute`` over the exported graphs, built from the host model before the engine is.

    ``graphs["llm_prefill"]`` may be None: the decode graph then prefills from an empty past.
    ``model`` must come from ``loader.load_model(graph_backed=True)``; its graph-computed modules are
    released (module docstring). The output dtypes are those of the modules the graphs stand for.
    """

    def __init__(
        self,
        model: RynnecQwen2ForCausalLM,
        graphs: Mapping[str, Any],
        dtype: torch.dtype,
        device: torch.device,
    ) -> None:
        wanted = list(REQUIRED)
        if model.seg_head is not None:
            wanted.append("seg_head")
        if model.sam2 is not None:
            wanted += ["sam2_image", "sam2_decoder"]
        missing = [g for g in wanted if g not in graphs]
        if missing:
            raise ValueError(f"the export lacks graphs {missing}; re-run the export for this checkpoint")

        def need(name: str) -> Any:
            graph = graphs[name]
            if graph is None:
                raise ValueError(f"graph {name} is required")
            return graph

        self._vision, self._projector, self._region, self._lm_head = (
            need(g) for g in ("vision", "projector", "region", "lm_head")
        )
        self._seg_head: Graph | None = need("seg_head") if "seg_head" in wanted else None
        self._sam2_image: Graph | None = need("sam2_image") if model.sam2 is not None else None
        self._sam2_decoder: Graph | None = need("sam2_decoder") if model.sam2 is not None else None

        covered = [p for g in wanted for p in COMPUTED_BY.get(g, ())] + list(NEVER_READ)
        named = [*model.named_parameters(), *model.named_buffers()]
        left = [n for n, t in named if t.is_meta and not n.startswith(tuple(p + "." for p in covered))]
        if left:
            raise ValueError(f"graph backend: tensors the graphs do not cover were never loaded: {left}")

        def dtype_of(module: nn.Module) -> torch.dtype:
            return next(module.parameters()).dtype

        tower = model.vision_tower
        # RoPE tables from the torch tower's own helper (its buffers are real; the encoder's meta layers
        # stay referenced through it, holding no memory)
        self._rope = tower.encoder.rope
        self._dtypes = {
            "vision": tower.post_layernorm.weight.dtype,
            "projector": dtype_of(model.model.mm_projector),
            "region": dtype_of(model.model.region_encoder.feat_linear),
            "lm_head": dtype_of(model.lm_head),
        }
        if model.seg_head is not None:
            self._dtypes["seg_head"] = dtype_of(model.seg_head)
        self._sam2_param = None if model.sam2 is None else model.sam2.no_mem_embed
        self._sam2_size = 0 if model.sam2 is None else model.sam2.config.image_size

        cfg = model.config
        head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        decode = need("llm_decode")
        if not {"past_k.0.0", "cache_k.0"} & set(getattr(decode, "input_names", ["past_k.0.0"])):
            raise ValueError(
                "the llm_decode graph predates the in-place KV cache (one stacked `past` input); "
                "re-run `rynnec-ros export onnx` (and `export tensorrt`) for this checkpoint"
            )
        # TensorRT declares its own; ONNX Runtime's fused graph with an int8 cache takes int8 buffers
        declared = getattr(decode, "dtypes", {})
        kv_dtype = declared.get("cache_k.0", declared.get("past_k.0.0")) or torch.float32
        layout = (cfg.num_hidden_layers, cfg.num_key_value_heads, head_dim)
        self._decoder = GraphDecoderStack(graphs["llm_prefill"], decode, dtype, layout, kv_dtype, device)
        present = dict(model.named_modules())
        for path in covered:
            if path in present:
                _release(model, path)

    @property
    def decoder(self) -> GraphDecoderStack:
        return self._decoder

    @property
    def has_seg_head(self) -> bool:
        return self._seg_head is not None

    def vision_tower(self, pixel_values: torch.Tensor, grid_h: int, grid_w: int, merge: int) -> torch.Tensor:
        """One frame [N, 3·p·p] → [N, C]; a batch [B, N, 3·p·p] runs frame by frame (the exported graph
        takes one frame, which keeps one graph for every frame size)."""
        if pixel_values.ndim == 3:
            return torch.stack([self.vision_tower(pv, grid_h, grid_w, merge) for pv in pixel_values])
        cos, sin = self._rope(grid_h, grid_w, merge)
        like = torch.empty(0, dtype=self._dtypes["vision"], device=pixel_values.device)
        feeds = {"pixel_values": pixel_values, "cos": cos, "sin": sin}
        return _run(self._vision, feeds, like)["features"]

    def projector(self, merged: torch.Tensor) -> torch.Tensor:
        return _mlp(self._projector, merged, self._dtypes["projector"])

    def region_encoder(self, pooled: torch.Tensor) -> torch.Tensor:
        """``MaskExtractor.feat_linear`` (the pooling before it is host code, ``MaskExtractor.pool``)."""
        return _mlp(self._region, pooled, self._dtypes["region"])

    def lm_head(self, hidden: torch.Tensor) -> torch.Tensor:
        return _mlp(self._lm_head, hidden, self._dtypes["lm_head"])

    def seg_head(self, hidden: torch.Tensor) -> torch.Tensor:
        if self._seg_head is None:
            raise ValueError("this checkpoint has no [SEG] head")
        return _mlp(self._seg_head, hidden, self._dtypes["seg_head"])

    def sam2_image_features(self, pixels: torch.Tensor) -> Sam2ImageFeatures:
        if self._sam2_image is None or self._sam2_param is None:
            raise ValueError("this checkpoint has no SAM2 mask decoder")
        size = self._sam2_size
        if pixels.ndim != 4 or tuple(pixels.shape[1:]) != (3, size, size):
            raise ValueError(f"SAM2 pixels must be [B, 3, {size}, {size}], got {tuple(pixels.shape)}")
        like = torch.empty(0, dtype=self._sam2_param.dtype, device=self._sam2_param.device)
        outs = _run(self._sam2_image, {"pixels": pixels}, like)
        return Sam2ImageFeatures(outs["image_embed"], (outs["feat_s0"], outs["feat_s1"]))

    def sam2_mask_logits(
        self,
        image_embed: torch.Tensor,
        image_pe: torch.Tensor,
        sparse: torch.Tensor,
        dense: torch.Tensor,
        high_res: tuple[torch.Tensor, torch.Tensor],
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        if self._sam2_decoder is None:
            raise ValueError("this checkpoint has no SAM2 mask decoder")
        feeds = {
            "image_embed": image_embed,
            "image_pe": image_pe,
            "sparse": sparse,
            "dense": dense.contiguous(),
            "feat_s0": high_res[0],
            "feat_s1": high_res[1],
        }
        outs = _run(self._sam2_decoder, feeds, image_embed)
        return outs["masks"], outs["iou"], outs["object_score"]
