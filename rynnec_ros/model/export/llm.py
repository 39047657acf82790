"""Qwen2 language model as two export-friendly graphs with an explicit KV cache tensor.

transformers' ``Cache`` objects do not trace into ONNX with dynamic lengths, so these wrappers run the
same weights (they hold references to the torch model's modules, no copies) with the past keys and
values passed in and returned as one stacked tensor ``[layers, 2, kv_heads, length, head_dim]``
(batch 1). ``prefill`` starts from an empty cache, ``decode`` extends one by S ≥ 1 tokens (S > 1 scores
answer options in one call). Both return final-norm hidden states, not logits: the engine applies the
LM head (its own graph) only where it needs logits, so a 16K-token prefill never makes 16K × vocab floats.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def _rms(norm: nn.Module, x: torch.Tensor) -> torch.Tensor:
    dtype = x.dtype
    xf = x.to(torch.float32)
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + norm.variance_epsilon)
    return norm.weight * xf.to(dtype)


class ExplicitKVQwen2(nn.Module):
    """The decoder stack of a transformers ``Qwen2Model`` with the cache as plain tensors."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        cfg = model.config
        self.layers = model.layers
        self.norm = model.norm
        self.num_heads = int(cfg.num_attention_heads)
        self.num_kv = int(cfg.num_key_value_heads)
        self.head_dim = int(getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads)
        scaling = getattr(cfg, "rope_scaling", None)
        if isinstance(scaling, dict) and scaling.get("rope_type", scaling.get("type")) != "default":
            raise ValueError(f"export supports default RoPE only, checkpoint has rope_scaling={scaling}")
        self.register_buffer("inv_freq", model.rotary_emb.inv_freq.detach().clone().float(), persistent=False)

    def _rope(self, position_ids: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        freqs = position_ids[0].to(torch.float32)[:, None] * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(dtype)[None, None], emb.sin().to(dtype)[None, None]

    def run(
        self, embeds: torch.Tensor, position_ids: torch.Tensor, past: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Returns (final-norm hidden [1,S,H], present [L,2,kv,P+S,hd])."""
        s = embeds.shape[1]
        cos, sin = self._rope(position_ids, embeds.dtype)
        if past is None:
            mask = torch.ones(s, s, dtype=torch.bool, device=embeds.device).tril()
        else:
            p = past.shape[3]
            rows = torch.arange(s, device=embeds.device)[:, None] + p
            cols = torch.arange(p + s, device=embeds.device)[None, :]
            mask = cols <= rows
        x = embeds
        presents = []
        groups = self.num_heads // self.num_kv
        for i, layer in enumerate(self.layers):
            attn = layer.self_attn
            h = _rms(layer.input_layernorm, x)
            q = attn.q_proj(h).view(1, s, self.num_heads, self.head_dim).transpose(1, 2)
            k = attn.k_proj(h).view(1, s, self.num_kv, self.head_dim).transpose(1, 2)
            v = attn.v_proj(h).view(1, s, self.num_kv, self.head_dim).transpose(1, 2)
            q = q * cos + _rotate_half(q) * sin
            k = k * cos + _rotate_half(k) * sin
            if past is not None:
                k = torch.cat((past[i, 0][None], k), dim=2)
                v = torch.cat((past[i, 1][None], v), dim=2)
            presents.append(torch.stack((k[0], v[0]), dim=0))
            if groups > 1:
                k = k.repeat_interleave(groups, dim=1)
                v = v.repeat_interleave(groups, dim=1)
            o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=attn.scaling)
            x = x + attn.o_proj(o.transpose(1, 2).reshape(1, s, -1))
            h = _rms(layer.post_attention_layernorm, x)
            x = x + layer.mlp(h)
        return _rms(self.norm, x), torch.stack(presents, dim=0)


class Prefill(nn.Module):
    """inputs_embeds [1,S,H], position_ids [1,S] → final-norm hidden [1,S,H] and present (empty past)."""

    def __init__(self, core: ExplicitKVQwen2) -> None:
        super().__init__()
        self.core = core

    def forward(
        self, inputs_embeds: torch.Tensor, position_ids: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        return self.core.run(inputs_embeds, position_ids, None)


class Decode(nn.Module):
    """inputs_embeds [1,S,H], position_ids [1,S], past [L,2,kv,P,hd] → hidden [1,S,H], present [..,P+S,..]."""

    def __init__(self, core: ExplicitKVQwen2) -> None:
        super().__init__()
        self.core = core

    def forward(
        self, inputs_embeds: torch.Tensor, position_ids: torch.Tensor, past: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        return self.core.run(inputs_embeds, position_ids, past)
