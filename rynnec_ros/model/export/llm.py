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
            attn = layer.self_attn
            h = _rms(layer.input_layernorm, x)[0]
            q = attn.q_proj(h).view(-1, self.num_heads, hd)
            k = attn.k_proj(h).view(-1, kv, hd)
            v = attn.v_proj(h).view(-1, kv, hd)
            q = ((q * cos + _rotate_half(q, hd // 2) * sin) * attn.scaling).view(-1, kv, groups, hd)
            k = k * cos + _rotate_half(k, hd // 2) * sin
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
            x = x + attn.o_proj(torch.cat(heads, dim=1).view(1, -1, self.num_heads * hd))
            h = _rms(layer.post_attention_layernorm, x)
            x = x + layer.mlp(h)
        return (_rms(self.norm, x), *new)


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
