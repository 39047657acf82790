"""The Qwen2 decoder stack over a static KV cache: chunked prefill and a graph-capturable decode step.

transformers' ``DynamicCache`` concatenates every layer's keys and values on each decode step (an
O(context) copy per token) and its shapes change every step, so a decode step can never be captured
as a CUDA graph. ``StaticQwen2`` runs the same modules (it holds the ``Qwen2Model``'s own layers, no
copies) over preallocated K/V buffers:

* ``forward`` appends a chunk of S positions (prefill, option scoring) at ``cache.length``;
* ``decode_step`` appends one token with every shape fixed (the position comes in as a device tensor
  and masks the unused tail of an attention ``span``), so on CUDA ``CudaGraphDecoder`` captures
  embed → layers → LM head once per span bucket and replays it; the greedy pick stays on device and
  the only host sync per token is reading the chosen id. On CPU the same ``decode_step`` runs
  eagerly with the exact span.

Every call checks ``should_stop`` between layers, so a cancelled request stops inside a long prefill.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, cast

import torch
import torch.nn.functional as F
from torch import nn

from rynnec_ros.core.types import Cancelled, StopFn

if TYPE_CHECKING:
    from transformers.models.qwen2.modeling_qwen2 import Qwen2DecoderLayer, Qwen2Model


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def check_stop(should_stop: StopFn | None) -> None:
    """Raise ``Cancelled`` when the caller asked to stop."""
    if should_stop is not None and should_stop():
        raise Cancelled("cancelled by should_stop()")


@dataclass
class KVCache:
    """Keys and values of ``length`` positions in buffers of ``capacity`` (batch 1).

    ``k``/``v``: [layers, kv_heads, capacity + scratch, head_dim]. Positions at and after ``length`` hold
    stale data that the next write overwrites, so forking a cache for another continuation (option
    scoring, a new question on a cached prefix) is just resetting ``length``. ``scratch`` rows past
    the capacity are for a decoder that writes more rows than it keeps (the int8-cache graph's stacked
    query rows, ``export/kvcache.py``), never positions.
    """

    k: torch.Tensor
    v: torch.Tensor
    length: int = 0
    scratch: int = 0

    @property
    def capacity(self) -> int:
        return int(self.k.shape[2]) - self.scratch

    def snapshot(self, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Copies of the first ``n`` positions (what the prefix cache stores)."""
        return self.k[:, :, :n].clone(), self.v[:, :, :n].clone()

    def load(self, k: torch.Tensor, v: torch.Tensor) -> None:
        """Start from stored positions (``snapshot`` output)."""
        n = int(k.shape[2])
        if n > self.capacity:
            raise ValueError(f"stored prefix of {n} positions exceeds the cache capacity {self.capacity}")
        self.k[:, :, :n].copy_(k)
        self.v[:, :, :n].copy_(v)
        self.length = n


class Decoder(Protocol):
    """What the engine needs from an LLM stack: ``StaticQwen2``, or the graph backends' ``GraphDecoderStack``
    (``Compute.decoder``)."""

    def new_cache(self, capacity: int) -> KVCache: ...

    def forward(
        self, embeds: torch.Tensor, cache: KVCache, should_stop: StopFn | None = None
    ) -> torch.Tensor: ...

    def decode_step(
        self, embeds: torch.Tensor, pos: torch.Tensor, cache: KVCache, span: int, masked: bool
    ) -> torch.Tensor: ...


class StaticQwen2(nn.Module):
    """A transformers ``Qwen2Model``'s layers run over a ``KVCache`` (numerically the HF SDPA path)."""

    def __init__(self, model: Qwen2Model) -> None:
        super().__init__()
        cfg = model.config
        if getattr(cfg, "use_sliding_window", False):
            raise ValueError("sliding-window attention is not supported by the static-cache decoder")
        self.embed_tokens: nn.Embedding = model.embed_tokens
        self.layers: nn.ModuleList = model.layers
        self.norm: nn.Module = model.norm
        self.rotary_emb: nn.Module = model.rotary_emb
        self.num_heads = int(cfg.num_attention_heads)
        self.num_kv = int(cfg.num_key_value_heads)
        self.head_dim = int(getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads)
        self._rope: tuple[torch.Tensor, torch.Tensor] | None = None

    @property
    def decoder_layers(self) -> list[Qwen2DecoderLayer]:
        return cast("list[Qwen2DecoderLayer]", list(self.layers))

    @property
    def dtype(self) -> torch.dtype:
        return self.embed_tokens.weight.dtype

    @property
    def device(self) -> torch.device:
        return self.embed_tokens.weight.device

    def new_cache(self, capacity: int) -> KVCache:
        shape = (len(self.decoder_layers), self.num_kv, int(capacity), self.head_dim)
        k = torch.zeros(shape, dtype=self.dtype, device=self.device)
        return KVCache(k, torch.zeros_like(k))

    def rope_table(self, capacity: int) -> tuple[torch.Tensor, torch.Tensor]:
        """cos/sin [capacity, head_dim] from the model's own rotary module (HF's exact numbers)."""
        if self._rope is None or self._rope[0].shape[0] < capacity:
            pos = torch.arange(capacity, device=self.device)[None]
            probe = torch.empty(0, dtype=self.dtype, device=self.device)
            cos, sin = self.rotary_emb(probe, pos)
            self._rope = (cos[0].contiguous(), sin[0].contiguous())
        return self._rope

    def _layer(
        self,
        layer: Qwen2DecoderLayer,
        i: int,
        x: torch.Tensor,
        cos: torch.Tensor,
        sin: torch.Tensor,
        cache: KVCache,
        write: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], None],
        span: int,
        mask: torch.Tensor | None,
        causal: bool,
    ) -> torch.Tensor:
        attn = layer.self_attn
        s = x.shape[1]
        h = layer.input_layernorm(x)
        q = attn.q_proj(h).view(1, s, self.num_heads, self.head_dim).transpose(1, 2)
        k = attn.k_proj(h).view(1, s, self.num_kv, self.head_dim).transpose(1, 2)
        v = attn.v_proj(h).view(1, s, self.num_kv, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        write(cache.k[i], cache.v[i], torch.stack((k[0], v[0])))
        keys = cache.k[i][None, :, :span]
        values = cache.v[i][None, :, :span]
        scale = getattr(attn, "scaling", self.head_dim**-0.5)
        if s == 1:
            # one position: the query heads sharing a kv head become that kv head's "rows", so grouped
            # attention reads each cached K/V once with any SDPA kernel (no repeat, no enable_gqa)
            groups = self.num_heads // self.num_kv
            o = F.scaled_dot_product_attention(
                q.reshape(1, self.num_kv, groups, self.head_dim), keys, values, attn_mask=mask, scale=scale
            ).reshape(1, self.num_heads, 1, self.head_dim)
        else:
            o = F.scaled_dot_product_attention(
                q,
                keys,
                values,
                attn_mask=mask,
                is_causal=causal,
                scale=scale,
                enable_gqa=self.num_kv != self.num_heads,
            )
        x = x + attn.o_proj(o.transpose(1, 2).reshape(1, s, -1))
        return x + layer.mlp(layer.post_attention_layernorm(x))

    def forward(
        self, embeds: torch.Tensor, cache: KVCache, should_stop: StopFn | None = None
    ) -> torch.Tensor:
        """Append ``embeds`` [1, S, H] at ``cache.length``; final-norm hidden states [1, S, H]."""
        s = embeds.shape[1]
        start = cache.length
        end = start + s
        if end > cache.capacity:
            raise ValueError(f"{end} positions exceed the KV cache capacity {cache.capacity}")
        cos_t, sin_t = self.rope_table(end)
        cos = cos_t[start:end].to(embeds.dtype)[None, None]
        sin = sin_t[start:end].to(embeds.dtype)[None, None]
        mask = None
        if start > 0 and s > 1:
            rows = torch.arange(start, end, device=embeds.device)[:, None]
            mask = torch.arange(end, device=embeds.device)[None, :] <= rows

        def write(kbuf: torch.Tensor, vbuf: torch.Tensor, kv: torch.Tensor) -> None:
            kbuf[:, start:end] = kv[0]
            vbuf[:, start:end] = kv[1]

        x = embeds
        for i, layer in enumerate(self.decoder_layers):
            check_stop(should_stop)
            x = self._layer(layer, i, x, cos, sin, cache, write, end, mask, causal=start == 0 and s > 1)
        cache.length = end
        return self.norm(x)

    def decode_step(
        self, embeds: torch.Tensor, pos: torch.Tensor, cache: KVCache, span: int, masked: bool
    ) -> torch.Tensor:
        """One token's embedding [1, 1, H] at ``pos`` (int64 [1] device tensor) → final-norm hidden [H].

        Shapes depend only on ``span`` (how many cache positions attention reads), never on the
        position, so the call can be captured. ``masked`` hides positions after ``pos`` inside the
        span (a bucketed span on CUDA); with ``span == pos + 1`` no mask is needed (CPU). The
        caller advances ``cache.length``.
        """
        cos_t, sin_t = self.rope_table(cache.capacity)
        cos = cos_t.index_select(0, pos)[None, None]
        sin = sin_t.index_select(0, pos)[None, None]
        mask = None
        if masked:
            mask = (torch.arange(span, device=pos.device) <= pos)[None, None, None, :]

        def write(kbuf: torch.Tensor, vbuf: torch.Tensor, kv: torch.Tensor) -> None:
            kbuf.index_copy_(1, pos, kv[0])
            vbuf.index_copy_(1, pos, kv[1])

        x = embeds
        for i, layer in enumerate(self.decoder_layers):
            x = self._layer(layer, i, x, cos, sin, cache, write, span, mask, causal=False)
        return self.norm(x)[0, -1]


def greedy_pick(logits: torch.Tensor, seen: torch.Tensor, penalty: float) -> torch.Tensor:
    """Argmax after upstream's repetition penalty on the ids in ``seen`` (a bool [V] mask), on device."""
    if penalty != 1.0:
        logits = torch.where(seen, torch.where(logits < 0, logits * penalty, logits / penalty), logits)
    return torch.argmax(logits).reshape(1)


class CudaGraphDecoder:
    """Replays one captured decode step (embed → layers → LM head) per attention-span bucket (CUDA only).

    Static inputs: ``token``/``pos`` (int64 [1]) and the ``seen`` mask; outputs ``hidden`` and
    ``logits`` (float32 [V]). A replay also marks the input token as seen, so between steps the host
    only sets ``token`` and ``pos`` (device-side copies) and reads the chosen id. Graphs are bound to
    one ``KVCache``: a new cache needs a new instance.
    """

    MIN_SPAN = 256

    def __init__(
        self,
        decoder: StaticQwen2,
        lm_head: Callable[[torch.Tensor], torch.Tensor],
        cache: KVCache,
        vocab_size: int,
        penalty: float,
    ) -> None:
        dev = decoder.device
        self.decoder = decoder
        self.lm_head = lm_head
        self.cache = cache
        self.penalty = penalty
        self.token = torch.zeros(1, dtype=torch.int64, device=dev)
        self.pos = torch.zeros(1, dtype=torch.int64, device=dev)
        self.seen = torch.zeros(vocab_size, dtype=torch.bool, device=dev)
        self.hidden = torch.zeros(decoder.embed_tokens.weight.shape[1], dtype=decoder.dtype, device=dev)
        self.logits = torch.zeros(vocab_size, dtype=torch.float32, device=dev)
        self.graphs: dict[int, torch.cuda.CUDAGraph] = {}
        decoder.rope_table(cache.capacity)

    def _body(self, span: int) -> None:
        embeds = self.decoder.embed_tokens(self.token)[None]
        hidden = self.decoder.decode_step(embeds, self.pos, self.cache, span, masked=True)
        logits = self.lm_head(hidden).float()
        self.seen.index_fill_(0, self.token, True)
        self.hidden.copy_(hidden)
        self.logits.copy_(logits)

    def span_for(self, position: int) -> int:
        span = self.MIN_SPAN
        while span <= position:
            span *= 2
        return min(span, self.cache.capacity)

    def _capture(self, span: int) -> torch.cuda.CUDAGraph:
        # the warm-up runs the body for real: keep the ``seen`` mask it touches and restore it (the
        # K/V row it writes at ``pos`` is rewritten by the real replay that follows)
        saved = self.seen.clone()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):
                self._body(span)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):  # a private pool each: buckets replay in any order
            self._body(span)
        self.seen.copy_(saved)
        return graph

    def step(self, position: int) -> None:
        """Run one captured step for the token in ``self.token`` written at ``position``."""
        span = self.span_for(position)
        graph = self.graphs.get(span)
        if graph is None:
            graph = self.graphs[span] = self._capture(span)
        graph.replay()
