"""Qwen2 language model as two export-friendly graphs that read a static KV cache in place.

transformers' ``Cache`` objects do not trace into ONNX with dynamic lengths, so these wrappers run the
same weights (they hold references to the torch model's modules, no copies) with the cache as plain
tensors, laid out so that a decode step moves each cached byte once:

* the cached positions come in as one ``[P, head_dim]`` tensor per (layer, K or V, kv head), named
  ``past_k.{layer}.{head}`` / ``past_v.{layer}.{head}``: in the engine's static buffer
  ``[layers, kv_heads, capacity, head_dim]`` each of them is a contiguous slice, so a backend binds
  the buffer itself (ONNX Runtime IO binding, TensorRT tensor addresses), with no copy and without
  reading the unused capacity;
* the S new positions go out as ``new_k.{layer}.{head}`` / ``new_v.{layer}.{head}`` ``[S, head_dim]``,
  which a backend binds to the buffer at the current position, so the graph writes them in place;
* attention runs per kv head over the past and the new keys as two blocks (one softmax over both), with
  the query heads that share the kv head as rows: each K/V is read once, never repeated per query head
  nor concatenated with the new positions.

``prefill`` has no past inputs; ``decode`` takes P ≥ 0 past positions and S ≥ 1 new ones (S > 1 scores
answer options or prefills a chunk). Both return final-norm hidden states, not logits: the engine
applies the LM head (its own graph) only where it needs logits, so a 16K-token prefill never makes
16K × vocab floats.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn


def _rotate_half(x: torch.Tensor, half: int) -> torch.Tensor:
    """``half`` is a Python int (head_dim // 2), so the graph slices at constants, not at a computed shape."""
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def _rms(norm: nn.Module, x: torch.Tensor) -> torch.Tensor:
    dtype = x.dtype
    xf = x.to(torch.float32)
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + norm.variance_epsilon)
    return norm.weight * xf.to(dtype)


def kv_names(prefix: str, layers: int, kv_heads: int) -> list[str]:
    """``{prefix}_k.{layer}.{head}`` and ``{prefix}_v...`` in graph order (layer, then K/V, then head)."""
    return [f"{prefix}_{kind}.{i}.{j}" for i in range(layers) for kind in "kv" for j in range(kv_heads)]


class ExplicitKVQwen2(nn.Module):
    """The decoder stack of a transformers ``Qwen2Model`` with the cache as plain tensors."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        cfg = model.config
        self.layers = model.layers
        self.num_layers = len(model.layers)
        self.norm = model.norm
        self.num_heads = int(cfg.num_attention_heads)
        self.num_kv = int(cfg.num_key_value_heads)
        self.head_dim = int(getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads)
        scaling = getattr(cfg, "rope_scaling", None)
        if isinstance(scaling, dict) and scaling.get("rope_type", scaling.get("type")) != "default":
            raise ValueError(f"export supports default RoPE only, checkpoint has rope_scaling={scaling}")
        self.register_buffer("inv_freq", model.rotary_emb.inv_freq.detach().clone().float(), persistent=False)
        self.max_positions = int(cfg.max_position_embeddings)

    def _rope(self, position_ids: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """cos/sin [S, 1, head_dim] (broadcast over heads)."""
        freqs = position_ids[0].to(torch.float32)[:, None] * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(dtype)[:, None], emb.sin().to(dtype)[:, None]

    def run(
        self, embeds: torch.Tensor, position_ids: torch.Tensor, past: tuple[torch.Tensor, ...]
    ) -> tuple[torch.Tensor, ...]:
        """(final-norm hidden [1,S,H], *new [S,hd] in ``kv_names`` order); ``past`` empty or in that order."""
        s = embeds.shape[1]
        kv, groups, hd = self.num_kv, self.num_heads // self.num_kv, self.head_dim
        cos, sin = self._rope(position_ids, embeds.dtype)
        # row (s, g) of a kv head's query block may see new position t when t <= s
        causal = torch.ones(s, s, dtype=torch.bool, device=embeds.device).tril()
        causal = causal[:, None, :].expand(s, groups, s).reshape(s * groups, s)
        hidden = causal.logical_not()
        p = past[0].shape[0] if past else 0  # one past length for every layer and head
        x = embeds
        new: list[torch.Tensor] = []
        # shapes as -1 where the length goes, so the graph computes no shapes per layer (a decode step
        # is a few hundred small kernels: every node counts)
        for i, layer in enumerate(self.layers):
            q, k, v = self._qkv(layer, x, cos, sin)
            q = q.view(-1, kv, groups, hd)
            heads, keys, values = [], [], []
            for j in range(kv):
                qj = q[:, j].reshape(-1, hd)
                kj, vj = k[:, j], v[:, j]
                new_scores = (qj @ kj.transpose(0, 1)).masked_fill(hidden, float("-inf"))
                if past:
                    pk, pv = past[(2 * i) * kv + j], past[(2 * i + 1) * kv + j]
                    # the past keys as the left operand ([P, hd] @ [hd, rows], then a transpose of the
                    # small result): ONNX Runtime's GEMM packs its right operand on every call, and
                    # packing [hd, rows] instead of [hd, P] took ~30 % off the decode attention
                    past_scores = (pk @ qj.transpose(0, 1)).transpose(0, 1)
                    probs = torch.softmax(torch.cat((past_scores, new_scores), dim=-1), dim=-1)
                    o = probs[:, :p] @ pv + probs[:, p:] @ vj
                else:
                    o = torch.softmax(new_scores, dim=-1) @ vj
                heads.append(o.view(-1, groups, hd))
                keys.append(kj)
                values.append(vj)
            new += keys + values
            x = self._finish(layer, x, torch.cat(heads, dim=1).view(1, -1, self.num_heads * hd))
        return (_rms(self.norm, x), *new)

    def _qkv(
        self, layer: nn.Module, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Rotated, scaled queries [S, heads, hd] and rotated keys / values [S, kv_heads, hd] of a layer."""
        attn, hd = layer.self_attn, self.head_dim
        h = _rms(layer.input_layernorm, x)[0]
        q = attn.q_proj(h).view(-1, self.num_heads, hd)
        k = attn.k_proj(h).view(-1, self.num_kv, hd)
        v = attn.v_proj(h).view(-1, self.num_kv, hd)
        q = (q * cos + _rotate_half(q, hd // 2) * sin) * attn.scaling
        k = k * cos + _rotate_half(k, hd // 2) * sin
        return q, k, v

    def _finish(self, layer: nn.Module, x: torch.Tensor, heads: torch.Tensor) -> torch.Tensor:
        """Output projection of the attention ``heads`` [1, S, heads·hd], residuals and the MLP."""
        x = x + layer.self_attn.o_proj(heads)
        return x + layer.mlp(_rms(layer.post_attention_layernorm, x))

    def run_fused(
        self, embeds: torch.Tensor, position_ids: torch.Tensor, caches: tuple[torch.Tensor, ...]
    ) -> tuple[torch.Tensor, ...]:
        """(final-norm hidden, *caches with the S new positions written); ``caches`` per layer K then V,
        each ``[1, kv_heads, capacity, hd]``. The attention, RoPE included, is ``GroupQueryAttention``
        (below): in ONNX one ONNX Runtime contrib node per layer that reads and writes the bound cache
        in place. ``position_ids`` must be contiguous (the node places the chunk after the past)."""
        # RoPE tables [positions, hd/2] of every position the model takes (constants in the graph)
        freqs = torch.arange(self.max_positions, dtype=torch.float32)[:, None] * self.inv_freq[None, :]
        cos, sin = freqs.cos().to(embeds.dtype), freqs.sin().to(embeds.dtype)
        total = (position_ids[0, -1:] + 1).to(torch.int32)  # the end of the chunk
        x = embeds
        present: list[torch.Tensor] = []
        for i, layer in enumerate(self.layers):
            attn = layer.self_attn
            h = _rms(layer.input_layernorm, x)
            o, ck, cv = GroupQueryAttention.apply(
                attn.q_proj(h), attn.k_proj(h), attn.v_proj(h), caches[2 * i], caches[2 * i + 1],
                total - 1, total[0], cos, sin, self.num_heads, self.num_kv, float(attn.scaling),
            )
            present += [ck, cv]
            x = self._finish(layer, x, o)
        return (_rms(self.norm, x), *present)


def _rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Qwen2's RoPE (``rotate_half``, not interleaved) of ``x`` [..., S, hd] with tables [S, hd/2]."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


class GroupQueryAttention(torch.autograd.Function):
    """Causal GQA of S new positions over a static cache, exported as ONNX Runtime's contrib op.

    ``com.microsoft::GroupQueryAttention`` (CPU kernel) with ``past_key`` and ``present_key`` bound to
    the same buffer (``past_present_share_buffer``): it rotates the new queries and keys (``do_rotary``,
    tables ``cos``/``sin`` [positions, hd/2], positions ``total - S`` … ``total - 1``), writes the new
    K/V at ``total - S`` and reads the ``total`` valid positions of each kv head, with the scaling,
    the softmax, the masking and both products in one node per layer instead of ~40 small kernels.
    This forward is the same computation in torch (what the graph is traced from; the tests compare
    the graph with the plain ``Decode`` and transformers instead); it returns new caches instead of
    writing in place, as the ONNX node's outputs are.
    """

    @staticmethod
    def forward(  # type: ignore[override]
        ctx: Any, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cache_k: torch.Tensor,
        cache_v: torch.Tensor, seqlens_k: torch.Tensor, total: torch.Tensor, cos: torch.Tensor,
        sin: torch.Tensor, num_heads: int, kv_heads: int, scale: float,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        s, end = q.shape[1], int(total)
        hd = cache_k.shape[-1]
        c, si = cos[end - s : end], sin[end - s : end]
        present_k, present_v = cache_k.clone(), cache_v.clone()
        present_k[0, :, end - s : end] = _rotary(k[0].view(s, kv_heads, hd).transpose(0, 1), c, si)
        present_v[0, :, end - s : end] = v[0].view(s, kv_heads, hd).transpose(0, 1)
        keys, values = present_k[0, :, None, :end], present_v[0, :, None, :end]  # [kv, 1, T, hd]
        qh = _rotary(q[0].view(s, num_heads, hd).transpose(0, 1), c, si)  # [heads, S, hd]
        qh = qh.view(kv_heads, num_heads // kv_heads, s, hd)
        rows = torch.arange(end - s, end, device=q.device)[:, None]
        hidden = torch.arange(end, device=q.device)[None, :] > rows  # [S, T]: the future
        scores = (qh @ keys.transpose(-1, -2) * scale).masked_fill(hidden, float("-inf"))
        o = torch.softmax(scores, dim=-1) @ values  # [kv, g, S, hd]
        return o.permute(2, 0, 1, 3).reshape(1, s, num_heads * hd), present_k, present_v

    @staticmethod
    def symbolic(
        g: Any, q: Any, k: Any, v: Any, cache_k: Any, cache_v: Any, seqlens_k: Any, total: Any, cos: Any,
        sin: Any, num_heads: int, kv_heads: int, scale: float,
    ) -> Any:
        outs = g.op(
            "com.microsoft::GroupQueryAttention", q, k, v, cache_k, cache_v, seqlens_k, total, cos, sin,
            num_heads_i=num_heads, kv_num_heads_i=kv_heads, scale_f=scale, do_rotary_i=1,
            rotary_interleaved_i=0, outputs=3,
        )
        for out, like in zip(outs, (q, cache_k, cache_v), strict=True):
            out.setType(like.type())  # the exporter has no shape inference for contrib ops
        return outs


class Prefill(nn.Module):
    """inputs_embeds [1,S,H], position_ids [1,S] → final-norm hidden [1,S,H], new K/V [S,hd] each."""

    def __init__(self, core: ExplicitKVQwen2) -> None:
        super().__init__()
        self.core = core

    def forward(self, inputs_embeds: torch.Tensor, position_ids: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return self.core.run(inputs_embeds, position_ids, ())


class Decode(nn.Module):
    """inputs_embeds [1,S,H], position_ids [1,S], past K/V [P,hd] each → hidden [1,S,H], new K/V [S,hd]."""

    def __init__(self, core: ExplicitKVQwen2) -> None:
        super().__init__()
        self.core = core

    def forward(
        self, inputs_embeds: torch.Tensor, position_ids: torch.Tensor, *past: torch.Tensor
    ) -> tuple[torch.Tensor, ...]:
        return self.core.run(inputs_embeds, position_ids, past)


class FusedDecode(nn.Module):
    """The ONNX Runtime decode graph: inputs_embeds [1,S,H], position_ids [1,S] (contiguous), per layer
    ``cache_k.{l}`` / ``cache_v.{l}`` [1, kv_heads, capacity, hd] → hidden [1,S,H], ``present_k.{l}`` /
    ``present_v.{l}`` (the same buffers, bound in place)."""

    def __init__(self, core: ExplicitKVQwen2) -> None:
        super().__init__()
        self.core = core

    def forward(
        self, inputs_embeds: torch.Tensor, position_ids: torch.Tensor, *caches: torch.Tensor
    ) -> tuple[torch.Tensor, ...]:
        return self.core.run_fused(inputs_embeds, position_ids, caches)


def cache_names(prefix: str, layers: int) -> list[str]:
    """``{prefix}_k.{layer}`` and ``{prefix}_v.{layer}`` in graph order: the fused graph's layer caches."""
    return [f"{prefix}_{kind}.{i}" for i in range(layers) for kind in "kv"]
