"""VL3-SigLIP-NaViT vision encoder with 2D RoPE (the VideoLLaMA3 / RynnEC image tower).

Written here rather than taken from transformers because 4.57 has no VideoLLaMA3 classes and RynnEC needs
the pre-merge features in token order for its region encoder. Every frame is encoded on its own: upstream
attention is block-diagonal per frame (flash-attn varlen), so encoding frames separately is the same
computation and makes per-frame caching exact.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from transformers.activations import ACT2FN

from .config import VisionConfig


class VisionRotaryEmbedding(nn.Module):
    """Angles ``pos * theta^(-2i/dim)`` for one image axis."""

    inv_freq: torch.Tensor

    def __init__(self, dim: int, theta: float = 10000.0) -> None:
        super().__init__()
        inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float) / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, seqlen: int) -> torch.Tensor:
        seq = torch.arange(seqlen, device=self.inv_freq.device, dtype=self.inv_freq.dtype)
        return torch.outer(seq, self.inv_freq)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """RoPE in float32 (as upstream) on ``x`` [..., N, heads, head_dim] with cos/sin [N, head_dim]."""
    dtype = x.dtype
    xf = x.float()
    out = xf * cos[:, None, :] + rotate_half(xf) * sin[:, None, :]
    return out.to(dtype)


class VisionEmbeddings(nn.Module):
    """Patch embedding of pre-flattened [..., N, C·p·p] patches (a leading batch of same-size frames)."""

    def __init__(self, config: VisionConfig) -> None:
        super().__init__()
        self.config = config
        self.patch_embedding = nn.Conv2d(
            config.num_channels, config.hidden_size, kernel_size=config.patch_size, stride=config.patch_size
        )

    def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:
        p = self.config.patch_size
        x = pixel_values.reshape(-1, self.config.num_channels, p, p).to(self.patch_embedding.weight.dtype)
        return self.patch_embedding(x).view(*pixel_values.shape[:-1], self.config.hidden_size)


class VisionAttention(nn.Module):
    def __init__(self, config: VisionConfig) -> None:
        super().__init__()
        self.num_heads = config.num_attention_heads
        self.head_dim = config.head_dim
        d = config.hidden_size
        self.q_proj = nn.Linear(d, d)
        self.k_proj = nn.Linear(d, d)
        self.v_proj = nn.Linear(d, d)
        self.out_proj = nn.Linear(d, d)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        """``x`` [N, C] (one frame) or [B, N, C] (B frames of one size, attending within each frame)."""
        single = x.ndim == 2
        xb = x[None] if single else x
        b, n = xb.shape[0], xb.shape[1]
        q = self.q_proj(xb).view(b, n, self.num_heads, self.head_dim)
        k = self.k_proj(xb).view(b, n, self.num_heads, self.head_dim)
        v = self.v_proj(xb).view(b, n, self.num_heads, self.head_dim)
        q = apply_rotary(q, cos, sin).transpose(1, 2)
        k = apply_rotary(k, cos, sin).transpose(1, 2)
        out = F.scaled_dot_product_attention(q, k, v.transpose(1, 2))
        out = self.out_proj(out.transpose(1, 2).reshape(b, n, -1))
        return out[0] if single else out


class VisionMLP(nn.Module):
    def __init__(self, config: VisionConfig) -> None:
        super().__init__()
        self.act = ACT2FN[config.hidden_act]
        self.fc1 = nn.Linear(config.hidden_size, config.intermediate_size)
        self.fc2 = nn.Linear(config.intermediate_size, config.hidden_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


class VisionEncoderLayer(nn.Module):
    def __init__(self, config: VisionConfig) -> None:
        super().__init__()
        self.layer_norm1 = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.self_attn = VisionAttention(config)
        self.layer_norm2 = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.mlp = VisionMLP(config)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.self_attn(self.layer_norm1(x), cos, sin)
        return x + self.mlp(self.layer_norm2(x))


class VisionEncoder(nn.Module):
    def __init__(self, config: VisionConfig) -> None:
        super().__init__()
        self.rotary_pos_emb = VisionRotaryEmbedding(config.head_dim // 2, config.rope_theta)
        self.layers = nn.ModuleList(VisionEncoderLayer(config) for _ in range(config.num_hidden_layers))

    def rope(self, grid_h: int, grid_w: int, merge: int) -> tuple[torch.Tensor, torch.Tensor]:
        """cos/sin per patch for a frame whose patches are in ``merge``×``merge`` block order."""
        dev = self.rotary_pos_emb.inv_freq.device
        hpos = torch.arange(grid_h, device=dev)[:, None].expand(grid_h, grid_w)
        wpos = torch.arange(grid_w, device=dev)[None, :].expand(grid_h, grid_w)

        def block_order(p: torch.Tensor) -> torch.Tensor:
            return p.reshape(grid_h // merge, merge, grid_w // merge, merge).permute(0, 2, 1, 3).flatten()

        pos = torch.stack([block_order(hpos), block_order(wpos)], dim=-1)
        freqs = self.rotary_pos_emb(max(grid_h, grid_w))
        emb = freqs[pos].flatten(1)
        emb = torch.cat([emb, emb], dim=-1)
        return emb.cos(), emb.sin()

    def forward(self, x: torch.Tensor, grid_h: int, grid_w: int, merge: int) -> torch.Tensor:
        cos, sin = self.rope(grid_h, grid_w, merge)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return x


class Videollama3VisionEncoderModel(nn.Module):
    """Keys ``embeddings.*``, ``encoder.layers.N.*``, ``post_layernorm.*`` as in the checkpoint."""

    def __init__(self, config: VisionConfig) -> None:
        super().__init__()
        self.config = config
        self.embeddings = VisionEmbeddings(config)
        self.encoder = VisionEncoder(config)
        self.post_layernorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, pixel_values: torch.Tensor, grid_h: int, grid_w: int, merge: int) -> torch.Tensor:
        """Post-LN features of one frame, [grid_h·grid_w, C] in block (token) order, or of a batch of
        same-size frames ([B, N, 3·p·p] → [B, N, C]): one pass over the weights for all of them."""
        x = self.embeddings(pixel_values)
        x = self.encoder(x, grid_h, grid_w, merge)
        return self.post_layernorm(x)


class Videollama3VisionEncoder(nn.Module):
    """Upstream wrapper module; exists so the keys read ``vision_encoder.vision_encoder.*``."""

    def __init__(self, config: VisionConfig) -> None:
        super().__init__()
        self.vision_encoder = Videollama3VisionEncoderModel(config)

    def forward(self, pixel_values: torch.Tensor, grid_h: int, grid_w: int, merge: int) -> torch.Tensor:
        return self.vision_encoder(pixel_values, grid_h, grid_w, merge)


def merge_tokens(raw: torch.Tensor, grid_h: int, grid_w: int, merge: int) -> torch.Tensor:
    """Token-order raw features → raster grid → bilinear downsample by ``merge`` → raster tokens."""
    c = raw.shape[-1]
    grid = raw.view(grid_h // merge, grid_w // merge, merge, merge, c).permute(0, 2, 1, 3, 4)
    grid = grid.reshape(grid_h, grid_w, c).permute(2, 0, 1).unsqueeze(0)
    merged = F.interpolate(
        grid, size=(grid_h // merge, grid_w // merge), mode="bilinear", align_corners=False
    )
    return merged.squeeze(0).flatten(1).transpose(0, 1)
