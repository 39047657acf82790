"""The SAM 2.0 parts that RynnEC inference runs: Hiera + FPN image encoder, prompt encoder, mask decoder.

RynnEC decodes every frame independently: each one is an "initial conditioning frame", so the image
embedding is the lowest FPN level plus ``no_mem_embed`` and memory attention, the memory encoder and the
object pointers never influence a returned mask. Only the modules on that path are built here; their
state-dict keys are the checkpoint keys under ``grounding_encoder.sam2_model.`` with that prefix removed,
so an official checkpoint loads without renaming. The checkpoint tensors inference does not need are
described by :data:`IGNORED_KEYS` / :data:`IGNORED_KEY_PREFIXES` (see :func:`is_ignored_key`).

Numerics follow the upstream SAM 2.0 code (``third_parts/sam2`` in RynnEC) operation by operation,
including its quirks: the q-pooling block's shortcut is projected from the *normalised* input, the window
size of the first block of a stage is the previous stage's, the FPN fuses top-down only into the levels
listed in ``fpn_top_down_levels``, and the final mask is ``sigmoid(logits) > 0.5`` in float32.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from rynnec_ros.model.resize import resize_bicubic

CHECKPOINT_PREFIX = "grounding_encoder.sam2_model."

# Tensors (names without CHECKPOINT_PREFIX) that the checkpoint holds but per-frame decoding never reads:
# memory bank / object-pointer machinery, and the prompt encoder's mask-prompt downscaling (the [SEG] path
# prompts with "not a point" padding and the [SEG] embedding; point and box prompts use point_embeddings).
IGNORED_KEYS: frozenset[str] = frozenset({"maskmem_tpos_enc", "no_mem_pos_enc", "no_obj_ptr"})
IGNORED_KEY_PREFIXES: tuple[str, ...] = (
    "memory_attention.",
    "memory_encoder.",
    "obj_ptr_proj.",
    "obj_ptr_tpos_proj.",
    "mask_downsample.",
    "sam_prompt_encoder.mask_downscaling.",
)

PIXEL_MEAN = (123.675, 116.28, 103.53)
PIXEL_STD = (58.395, 57.12, 57.375)
# Fixed in the upstream SAM2Base / MaskDecoder constructors, not part of the yaml.
BACKBONE_STRIDE = 16
DECODER_DEPTH = 2
DECODER_MLP_DIM = 2048
DECODER_HEADS = 8
IOU_HEAD_DEPTH = 3
IOU_HEAD_HIDDEN = 256
NUM_MULTIMASK_OUTPUTS = 3


def is_ignored_key(key: str) -> bool:
    """True for a checkpoint tensor (prefix already stripped) that inference deliberately skips."""
    return key in IGNORED_KEYS or key.startswith(IGNORED_KEY_PREFIXES)


# --------------------------------------------------------------------------------------------- config


# Defaults of the upstream constructors (Hiera, FpnNeck, ImageEncoder, SAM2Base) for keys a yaml omits.
_UPSTREAM_DEFAULTS: dict[str, Any] = {
    "image_size": 512,
    "embed_dim": 96,
    "num_heads": 1,
    "stages": (2, 3, 16, 3),
    "global_att_blocks": (12, 16, 20),
    "window_pos_embed_bkg_spatial_size": (14, 14),
    "window_spec": (8, 4, 14, 7),
    "q_pool": 3,
    "q_stride": (2, 2),
    "dim_mul": 2.0,
    "head_mul": 2.0,
    "fpn_interp_model": "bilinear",
    "fuse_type": "sum",
    "scalp": 0,
    "iou_prediction_use_sigmoid": False,
    "pred_obj_scores": False,
    "pred_obj_scores_mlp": False,
    "use_high_res_features_in_sam": False,
    "directly_add_no_mem_embed": False,
}



def read_yaml_model(path: str | Path) -> dict[str, Any]:
    """The ``model`` mapping of a SAM 2.0 hydra config file (plain YAML; hydra is not needed)."""
    import yaml

    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"cannot read SAM2 config {path}: {exc}") from exc
    model = doc.get("model") if isinstance(doc, dict) else None
    if not isinstance(model, dict):
        raise ValueError(f"SAM2 config {path} has no 'model' mapping")
    return model

@dataclass(frozen=True)
class Sam2Config:
    """Sizes and flags of a SAM 2.0 model. The defaults are the official Hiera-L values."""

    image_size: int = 1024
    # Hiera trunk
    embed_dim: int = 144
    num_heads: int = 2
    stages: tuple[int, ...] = (2, 6, 36, 4)
    global_att_blocks: tuple[int, ...] = (23, 33, 43)
    window_pos_embed_bkg_spatial_size: tuple[int, int] = (7, 7)
    window_spec: tuple[int, ...] = (8, 4, 16, 8)
    q_pool: int = 3
    q_stride: tuple[int, int] = (2, 2)
    dim_mul: float = 2.0
    head_mul: float = 2.0
    # FPN neck (d_model is also the prompt encoder / mask decoder width)
    d_model: int = 256
    backbone_channel_list: tuple[int, ...] = (1152, 576, 288, 144)
    fpn_top_down_levels: tuple[int, ...] = (2, 3)
    fpn_interp_model: str = "nearest"
    fuse_type: str = "sum"
    scalp: int = 1
    # heads
    iou_prediction_use_sigmoid: bool = True
    pred_obj_scores: bool = True
    pred_obj_scores_mlp: bool = True
    # flags that must hold for the per-frame RynnEC path implemented here
    use_high_res_features_in_sam: bool = True
    directly_add_no_mem_embed: bool = True

    def __post_init__(self) -> None:
        problems: list[str] = []
        if not self.use_high_res_features_in_sam:
            problems.append("use_high_res_features_in_sam must be true")
        if not self.directly_add_no_mem_embed:
            problems.append("directly_add_no_mem_embed must be true")
        if not self.pred_obj_scores:
            problems.append("pred_obj_scores must be true")
        if self.fuse_type not in ("sum", "avg"):
            problems.append(f"fuse_type must be 'sum' or 'avg', got {self.fuse_type!r}")
        if self.fpn_interp_model not in ("nearest", "bilinear", "bicubic"):
            problems.append(f"unsupported fpn_interp_model {self.fpn_interp_model!r}")
        if len(self.window_spec) != len(self.stages):
            problems.append(f"window_spec {self.window_spec} needs one entry per stage {self.stages}")
        widths = tuple(int(self.embed_dim * self.dim_mul**i) for i in range(len(self.stages)))[::-1]
        if tuple(self.backbone_channel_list) != widths:
            problems.append(
                f"backbone_channel_list {self.backbone_channel_list} does not match the trunk's stage "
                f"widths {widths}"
            )
        if len(self.backbone_channel_list) - self.scalp != 3:
            problems.append("the decoder needs exactly 3 FPN levels after scalp")
        if self.d_model % 8:
            problems.append(f"d_model {self.d_model} must be divisible by 8")
        if self.image_size % BACKBONE_STRIDE:
            problems.append(f"image_size {self.image_size} must be a multiple of {BACKBONE_STRIDE}")
        if problems:
            raise ValueError("unsupported SAM2 config: " + "; ".join(problems))

    @property
    def embedding_size(self) -> int:
        """Side of the decoder's image embedding grid (64 for 1024-pixel inputs)."""
        return self.image_size // BACKBONE_STRIDE

    @classmethod
    def hiera_l(cls) -> Sam2Config:
        """The official SAM 2.0 ``sam2_hiera_l.yaml`` that RynnEC hard-codes for its released checkpoints."""
        return cls()

    @classmethod
    def from_yaml(cls, path: str | Path) -> Sam2Config:
        """Read a SAM 2.0 hydra config (``_target_`` entries are ignored; only sizes and flags are used)."""
        path = Path(path)
        model = read_yaml_model(path)
        try:
            encoder = model["image_encoder"]
            trunk, neck = encoder["trunk"], encoder["neck"]
            sources = {
                **{k: trunk[k] for k in trunk}, **{k: neck[k] for k in neck}, "scalp": encoder.get("scalp"),
                **{k: model[k] for k in model},
            }
        except (KeyError, TypeError) as exc:
            raise ValueError(f"SAM2 config {path} lacks model.image_encoder.trunk/neck mappings") from exc
        if "d_model" not in neck or "backbone_channel_list" not in neck:
            raise ValueError(f"SAM2 config {path}: neck needs d_model and backbone_channel_list")
        values: dict[str, Any] = {}
        for name, spec in cls.__dataclass_fields__.items():
            raw: Any = sources.get(name)
            if raw is None:
                raw = _UPSTREAM_DEFAULTS.get(name)
            if raw is None and name == "fpn_top_down_levels":  # FpnNeck default: every level
                raw = range(len(sources["backbone_channel_list"]))
            default: Any = spec.default
            try:
                if isinstance(default, tuple):
                    values[name] = tuple(int(x) for x in raw)
                elif isinstance(default, bool):
                    values[name] = bool(raw)
                else:
                    values[name] = type(default)(raw)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"SAM2 config {path}: bad value {raw!r} for {name}") from exc
        return cls(**values)


# ------------------------------------------------------------------------------------------- layers


class Mlp(nn.Module):
    """SAM2's MLP: ``layers`` list of Linear, activation between them, optional sigmoid at the end."""

    def __init__(self, input_dim: int, hidden_dim: int, output_dim: int, num_layers: int,
                 activation: type[nn.Module] = nn.ReLU, sigmoid_output: bool = False) -> None:
        super().__init__()
        dims = [input_dim] + [hidden_dim] * (num_layers - 1) + [output_dim]
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in itertools.pairwise(dims))
        self.act = activation()
        self.sigmoid_output = sigmoid_output

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        last = len(self.layers) - 1
        for i, layer in enumerate(self.layers):
            x = layer(x) if i == last else self.act(layer(x))
        return torch.sigmoid(x) if self.sigmoid_output else x


class LayerNorm2d(nn.Module):
    """Channel LayerNorm on NCHW maps, written out as upstream does (its eps and reduction order)."""

    def __init__(self, channels: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        x = (x - u) / torch.sqrt(s + self.eps)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


def _pool_nhwc(x: torch.Tensor, pool: nn.Module | None) -> torch.Tensor:
    if pool is None:
        return x
    return pool(x.permute(0, 3, 1, 2)).permute(0, 2, 3, 1)


def _window_partition(x: torch.Tensor, size: int) -> tuple[torch.Tensor, tuple[int, int]]:
    b, h, w, c = x.shape
    pad_h, pad_w = (size - h % size) % size, (size - w % size) % size
    if pad_h or pad_w:
        x = F.pad(x, (0, 0, 0, pad_w, 0, pad_h))
    hp, wp = h + pad_h, w + pad_w
    x = x.view(b, hp // size, size, wp // size, size, c).permute(0, 1, 3, 2, 4, 5)
    return x.contiguous().view(-1, size, size, c), (hp, wp)


def _window_unpartition(windows: torch.Tensor, size: int, padded: tuple[int, int],
                        hw: tuple[int, int]) -> torch.Tensor:
    hp, wp = padded
    h, w = hw
    b = windows.shape[0] // (hp * wp // size // size)
    x = windows.view(b, hp // size, wp // size, size, size, -1).permute(0, 1, 3, 2, 4, 5)
    x = x.contiguous().view(b, hp, wp, -1)
    return x[:, :h, :w, :].contiguous() if (hp, wp) != (h, w) else x


class PatchEmbed(nn.Module):
    def __init__(self, embed_dim: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(3, embed_dim, kernel_size=7, stride=4, padding=3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x).permute(0, 2, 3, 1)


class MultiScaleAttention(nn.Module):
    def __init__(self, dim: int, dim_out: int, num_heads: int, q_pool: nn.Module | None) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.q_pool = q_pool
        self.qkv = nn.Linear(dim, dim_out * 3)
        self.proj = nn.Linear(dim_out, dim_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, h, w, _ = x.shape
        q, k, v = torch.unbind(self.qkv(x).reshape(b, h * w, 3, self.num_heads, -1), 2)
        if self.q_pool is not None:
            q = _pool_nhwc(q.reshape(b, h, w, -1), self.q_pool)
            h, w = q.shape[1:3]
            q = q.reshape(b, h * w, self.num_heads, -1)
        out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        return self.proj(out.transpose(1, 2).reshape(b, h, w, -1))


class MultiScaleBlock(nn.Module):
    """Hiera block: (windowed or global) attention, optional q-pooling at a stage change, GELU MLP."""

    def __init__(self, dim: int, dim_out: int, num_heads: int, q_stride: tuple[int, int] | None,
                 window_size: int) -> None:
        super().__init__()
        self.dim, self.dim_out = dim, dim_out
        self.window_size = window_size
        self.q_stride = q_stride
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        pool = nn.MaxPool2d(kernel_size=q_stride, stride=q_stride) if q_stride else None
        self.pool = pool
        self.attn = MultiScaleAttention(dim, dim_out, num_heads, pool)
        self.norm2 = nn.LayerNorm(dim_out, eps=1e-6)
        self.mlp = Mlp(dim_out, int(dim_out * 4.0), dim_out, 2, activation=nn.GELU)
        if dim != dim_out:
            self.proj = nn.Linear(dim, dim_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shortcut = x
        x = self.norm1(x)
        if self.dim != self.dim_out:
            shortcut = _pool_nhwc(self.proj(x), self.pool)
        window = self.window_size
        if window > 0:
            hw = (x.shape[1], x.shape[2])
            x, padded = _window_partition(x, window)
        x = self.attn(x)
        if window > 0:
            if self.q_stride:  # q-pooling shrank every window
                window = window // self.q_stride[0]
                hw = (shortcut.shape[1], shortcut.shape[2])
                padded = (hw[0] + -hw[0] % window, hw[1] + -hw[1] % window)
            x = _window_unpartition(x, window, padded, hw)
        x = shortcut + x
        return x + self.mlp(self.norm2(x))


class Hiera(nn.Module):
    """Hiera trunk; returns the output of every stage, highest resolution first (NCHW)."""

    def __init__(self, cfg: Sam2Config) -> None:
        super().__init__()
        depth = sum(cfg.stages)
        self.stage_ends = [sum(cfg.stages[:i]) - 1 for i in range(1, len(cfg.stages) + 1)]
        q_pool_blocks = [end + 1 for end in self.stage_ends[:-1]][: cfg.q_pool]
        self.patch_embed = PatchEmbed(cfg.embed_dim)
        self.pos_embed = nn.Parameter(torch.zeros(1, cfg.embed_dim, *cfg.window_pos_embed_bkg_spatial_size))
        window0 = cfg.window_spec[0]
        self.pos_embed_window = nn.Parameter(torch.zeros(1, cfg.embed_dim, window0, window0))
        embed_dim, num_heads, stage = cfg.embed_dim, cfg.num_heads, 1
        blocks = []
        for i in range(depth):
            dim_out = embed_dim
            # The window size lags one block behind the stage change (upstream behaviour).
            window = 0 if i in cfg.global_att_blocks else cfg.window_spec[stage - 1]
            if i - 1 in self.stage_ends:
                dim_out = int(embed_dim * cfg.dim_mul)
                num_heads = int(num_heads * cfg.head_mul)
                stage += 1
            q_stride = (int(cfg.q_stride[0]), int(cfg.q_stride[1])) if i in q_pool_blocks else None
            blocks.append(MultiScaleBlock(embed_dim, dim_out, num_heads, q_stride, window))
            embed_dim = dim_out
        self.blocks = nn.ModuleList(blocks)

    def _pos_embed(self, h: int, w: int) -> torch.Tensor:
        pos = F.interpolate(self.pos_embed, size=(h, w), mode="bicubic")
        window = self.pos_embed_window
        pos = pos + window.tile([a // b for a, b in zip(pos.shape, window.shape, strict=True)])
        return pos.permute(0, 2, 3, 1)

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        x = self.patch_embed(x)
        x = x + self._pos_embed(x.shape[1], x.shape[2])
        outputs = []
        for i, block in enumerate(self.blocks):
            x = block(x)
            if i in self.stage_ends:
                outputs.append(x.permute(0, 3, 1, 2))
        return outputs


class FpnNeck(nn.Module):
    """1×1 lateral convs plus top-down fusion into the configured levels (no position encoding: unused)."""

    def __init__(self, cfg: Sam2Config) -> None:
        super().__init__()
        self.convs = nn.ModuleList()
        for channels in cfg.backbone_channel_list:
            lateral = nn.Sequential()
            lateral.add_module("conv", nn.Conv2d(channels, cfg.d_model, kernel_size=1))
            self.convs.append(lateral)
        self.top_down_levels = set(cfg.fpn_top_down_levels)
        self.interp = cfg.fpn_interp_model
        self.fuse_avg = cfg.fuse_type == "avg"

    def forward(self, xs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        n = len(self.convs) - 1
        out: list[torch.Tensor] = [xs[0]] * (n + 1)
        prev: torch.Tensor | None = None
        for i in range(n, -1, -1):
            lateral = self.convs[n - i](xs[i])
            if i in self.top_down_levels and prev is not None:
                top_down = F.interpolate(prev.to(torch.float32), scale_factor=2.0, mode=self.interp,
                                         align_corners=None if self.interp == "nearest" else False,
                                         antialias=False)
                # Upstream upsamples in float32; cast back so a half-precision model stays in its dtype.
                prev = lateral + top_down
                if self.fuse_avg:
                    prev = prev / 2
                prev = prev.to(lateral.dtype)
            else:
                prev = lateral
            out[i] = prev
        return out


class ImageEncoder(nn.Module):
    def __init__(self, cfg: Sam2Config) -> None:
        super().__init__()
        self.trunk = Hiera(cfg)
        self.neck = FpnNeck(cfg)
        self.scalp = cfg.scalp

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        """FPN levels, highest resolution first, the coarsest ``scalp`` levels dropped."""
        levels = self.neck(self.trunk(x))
        return levels[: len(levels) - self.scalp]


class PositionEmbeddingRandom(nn.Module):
    def __init__(self, num_pos_feats: int) -> None:
        super().__init__()
        self.positional_encoding_gaussian_matrix: torch.Tensor
        self.register_buffer("positional_encoding_gaussian_matrix", torch.randn(2, num_pos_feats))

    def forward(self, h: int, w: int) -> torch.Tensor:
        matrix = self.positional_encoding_gaussian_matrix
        grid = torch.ones((h, w), device=matrix.device, dtype=torch.float32)
        y = (grid.cumsum(dim=0) - 0.5) / h
        x = (grid.cumsum(dim=1) - 0.5) / w
        return self._encode(torch.stack([x, y], dim=-1)).permute(2, 0, 1)

    def _encode(self, unit: torch.Tensor) -> torch.Tensor:
        """Random Fourier features of coordinates in [0, 1]² (x first): [..., 2] → [..., 2·F]."""
        matrix = self.positional_encoding_gaussian_matrix
        coords = 2 * np.pi * ((2 * unit - 1).to(matrix.dtype) @ matrix)
        return torch.cat([torch.sin(coords), torch.cos(coords)], dim=-1)

    def encode_points(self, xy: torch.Tensor, size: int) -> torch.Tensor:
        """``forward_with_coords``: points [N, 2] in pixels of the S×S model input → [N, 2·F]."""
        return self._encode(xy.float() / size)


class PromptEncoder(nn.Module):
    """SAM 2's prompt encoder without mask prompts: the [SEG] prompt, point and box prompts, PE."""

    def __init__(self, cfg: Sam2Config) -> None:
        super().__init__()
        self.embedding_size = cfg.embedding_size
        self.input_size = cfg.image_size
        self.pe_layer = PositionEmbeddingRandom(cfg.d_model // 2)
        # labels 0 negative point, 1 positive point, 2 box top-left, 3 box bottom-right
        self.point_embeddings = nn.ModuleList(nn.Embedding(1, cfg.d_model) for _ in range(4))
        self.not_a_point_embed = nn.Embedding(1, cfg.d_model)
        self.no_mask_embed = nn.Embedding(1, cfg.d_model)

    def no_mask(self) -> torch.Tensor:
        size = self.embedding_size
        return self.no_mask_embed.weight.reshape(1, -1, 1, 1).expand(1, -1, size, size)

    def embed_points(self, xy: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Sparse [1, N + 1, D] and dense [1, D, 64, 64] for N points (S×S input pixels) with labels 0–3.

        ``_embed_points(pad=True)``: SAM 2's image predictor sends a box as two points labelled 2 and 3
        ahead of the clicks, shifts every point to its pixel centre (+0.5) and pads one "not a point".
        """
        pad = self.not_a_point_embed.weight
        pe = self.pe_layer.encode_points(xy.reshape(-1, 2) + 0.5, self.input_size).to(pad.dtype)
        rows = [e.weight for e in self.point_embeddings.children() if isinstance(e, nn.Embedding)]
        table = torch.cat(rows)  # [4, D], row = label
        sparse = torch.cat([pe + table[labels.reshape(-1).long()], pad], dim=0).unsqueeze(0)
        return sparse, self.no_mask()

    def dense_pe(self) -> torch.Tensor:
        """``get_dense_pe()``: [1, D, 64, 64] positional encoding of the image embedding grid."""
        return self.pe_layer(self.embedding_size, self.embedding_size).unsqueeze(0)

    def embed(self, seg_embedding: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Sparse [1, 3, D] = [not_a_point, not_a_point, seg] and dense [1, D, 64, 64] = no_mask_embed.

        Upstream passes one dummy point labelled -1 and the prompt encoder appends a padding point (also
        -1); label -1 points embed to exactly ``not_a_point_embed``. RynnEC then appends the [SEG] vector.
        """
        pad = self.not_a_point_embed.weight
        sparse = torch.cat([pad, pad, seg_embedding.reshape(1, -1).to(pad.dtype)], dim=0).unsqueeze(0)
        return sparse, self.no_mask()


class Attention(nn.Module):
    """SAM decoder attention with an optional internal downsampling of the embedding width."""

    def __init__(self, dim: int, num_heads: int, downsample_rate: int = 1) -> None:
        super().__init__()
        internal = dim // downsample_rate
        if internal % num_heads:
            raise ValueError(f"attention width {internal} is not divisible by {num_heads} heads")
        self.num_heads = num_heads
        self.q_proj = nn.Linear(dim, internal)
        self.k_proj = nn.Linear(dim, internal)
        self.v_proj = nn.Linear(dim, internal)
        self.out_proj = nn.Linear(internal, dim)

    def _heads(self, x: torch.Tensor) -> torch.Tensor:
        b, n, c = x.shape
        return x.reshape(b, n, self.num_heads, c // self.num_heads).transpose(1, 2)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        out = F.scaled_dot_product_attention(self._heads(self.q_proj(q)), self._heads(self.k_proj(k)),
                                             self._heads(self.v_proj(v)))
        b, h, n, c = out.shape
        return self.out_proj(out.transpose(1, 2).reshape(b, n, h * c))


class TwoWayAttentionBlock(nn.Module):
    def __init__(self, dim: int, num_heads: int, mlp_dim: int, skip_first_layer_pe: bool) -> None:
        super().__init__()
        self.self_attn = Attention(dim, num_heads)
        self.norm1 = nn.LayerNorm(dim)
        self.cross_attn_token_to_image = Attention(dim, num_heads, downsample_rate=2)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, mlp_dim, dim, 2, activation=nn.ReLU)
        self.norm3 = nn.LayerNorm(dim)
        self.norm4 = nn.LayerNorm(dim)
        self.cross_attn_image_to_token = Attention(dim, num_heads, downsample_rate=2)
        self.skip_first_layer_pe = skip_first_layer_pe

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, query_pe: torch.Tensor,
                key_pe: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.skip_first_layer_pe:
            queries = self.self_attn(queries, queries, queries)
        else:
            q = queries + query_pe
            queries = queries + self.self_attn(q, q, queries)
        queries = self.norm1(queries)
        q, k = queries + query_pe, keys + key_pe
        queries = self.norm2(queries + self.cross_attn_token_to_image(q, k, keys))
        queries = self.norm3(queries + self.mlp(queries))
        q, k = queries + query_pe, keys + key_pe
        keys = self.norm4(keys + self.cross_attn_image_to_token(k, q, queries))
        return queries, keys


class TwoWayTransformer(nn.Module):
    def __init__(self, dim: int, depth: int, num_heads: int, mlp_dim: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            TwoWayAttentionBlock(dim, num_heads, mlp_dim, skip_first_layer_pe=i == 0) for i in range(depth)
        )
        self.final_attn_token_to_image = Attention(dim, num_heads, downsample_rate=2)
        self.norm_final_attn = nn.LayerNorm(dim)

    def forward(self, image: torch.Tensor, image_pe: torch.Tensor,
                tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        keys = image.flatten(2).permute(0, 2, 1)
        key_pe = image_pe.flatten(2).permute(0, 2, 1)
        queries = tokens
        for layer in self.layers:
            queries, keys = layer(queries, keys, tokens, key_pe)
        attn = self.final_attn_token_to_image(queries + tokens, keys + key_pe, keys)
        return self.norm_final_attn(queries + attn), keys


class MaskDecoder(nn.Module):
    """SAM 2 mask decoder with object-score token and high-resolution skip features (conv_s0/conv_s1)."""

    def __init__(self, cfg: Sam2Config) -> None:
        super().__init__()
        dim = cfg.d_model
        self.num_mask_tokens = NUM_MULTIMASK_OUTPUTS + 1
        self.transformer = TwoWayTransformer(dim, DECODER_DEPTH, DECODER_HEADS, DECODER_MLP_DIM)
        self.iou_token = nn.Embedding(1, dim)
        self.mask_tokens = nn.Embedding(self.num_mask_tokens, dim)
        self.obj_score_token = nn.Embedding(1, dim)
        self.output_upscaling = nn.Sequential(
            nn.ConvTranspose2d(dim, dim // 4, kernel_size=2, stride=2),
            LayerNorm2d(dim // 4),
            nn.GELU(),
            nn.ConvTranspose2d(dim // 4, dim // 8, kernel_size=2, stride=2),
            nn.GELU(),
        )
        self.conv_s0 = nn.Conv2d(dim, dim // 8, kernel_size=1)
        self.conv_s1 = nn.Conv2d(dim, dim // 4, kernel_size=1)
        self.output_hypernetworks_mlps = nn.ModuleList(
            Mlp(dim, dim, dim // 8, 3) for _ in range(self.num_mask_tokens)
        )
        self.iou_prediction_head = Mlp(dim, IOU_HEAD_HIDDEN, self.num_mask_tokens, IOU_HEAD_DEPTH,
                                       sigmoid_output=cfg.iou_prediction_use_sigmoid)
        self.pred_obj_score_head: nn.Module = (
            Mlp(dim, dim, 1, 3) if cfg.pred_obj_scores_mlp else nn.Linear(dim, 1)
        )

    def forward(self, image_embed: torch.Tensor, image_pe: torch.Tensor, sparse: torch.Tensor,
                dense: torch.Tensor, high_res: tuple[torch.Tensor, torch.Tensor],
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """All 1 + 3 mask logits [B, 4, 4h, 4w], IoU [B, 4] and object-score logits [B, 1]."""
        output_tokens = torch.cat(
            [self.obj_score_token.weight, self.iou_token.weight, self.mask_tokens.weight]
        )
        tokens = torch.cat([output_tokens.unsqueeze(0).expand(sparse.shape[0], -1, -1), sparse], dim=1)
        src = image_embed + dense
        pos = torch.repeat_interleave(image_pe, tokens.shape[0], dim=0)
        b, c, h, w = src.shape
        hs, src = self.transformer(src, pos, tokens)
        iou_token_out = hs[:, 1, :]
        mask_tokens_out = hs[:, 2 : 2 + self.num_mask_tokens, :]
        src = src.transpose(1, 2).reshape(b, c, h, w)
        deconv1, norm1, act1, deconv2, act2 = self.output_upscaling
        feat_s0, feat_s1 = high_res
        upscaled = act1(norm1(deconv1(src) + feat_s1))
        upscaled = act2(deconv2(upscaled) + feat_s0)
        hyper_in = torch.stack(
            [mlp(mask_tokens_out[:, i, :]) for i, mlp in enumerate(self.output_hypernetworks_mlps)], dim=1
        )
        b, c, h, w = upscaled.shape
        masks = (hyper_in @ upscaled.view(b, c, h * w)).view(b, -1, h, w)
        return masks, self.iou_prediction_head(iou_token_out), self.pred_obj_score_head(hs[:, 0, :])


# -------------------------------------------------------------------------------------------- model


@dataclass
class Sam2ImageFeatures:
    """Per-frame decoder inputs; computed once per frame and reusable for any number of [SEG] prompts."""

    image_embed: torch.Tensor  # [B, D, 64, 64]: FPN level 2 + no_mem_embed
    high_res_feats: tuple[torch.Tensor, torch.Tensor]  # conv_s0(level 0) [B, D/8, 256²], conv_s1(level 1)

    @property
    def batch_size(self) -> int:
        return self.image_embed.shape[0]

    def frame(self, index: int) -> Sam2ImageFeatures:
        """Features of one frame of a batch (keeps the batch dimension of size 1)."""
        if not -self.batch_size <= index < self.batch_size:
            raise ValueError(f"frame index {index} out of range for {self.batch_size} frames")
        index %= self.batch_size
        sl = slice(index, index + 1)
        feat0, feat1 = self.high_res_feats
        return Sam2ImageFeatures(self.image_embed[sl], (feat0[sl], feat1[sl]))


@dataclass
class Sam2Decoded:
    """One frame decoded for one [SEG] prompt (float32 tensors on the model's device)."""

    lowres_logits: torch.Tensor  # [3, 256, 256] multimask logits
    iou: torch.Tensor  # [3] predicted IoU
    object_score: float  # object-score logit (not used for gating, as upstream)
    best_index: int  # argmax of iou
    best_lowres: torch.Tensor  # [256, 256]
    mask_1024: torch.Tensor  # bool [1024, 1024]: sigmoid(bilinear upsample of best) > 0.5


class Sam2Model(nn.Module):
    """SAM 2.0 restricted to RynnEC's per-frame, memory-free decoding (state-dict keys match upstream)."""

    def __init__(self, cfg: Sam2Config) -> None:
        super().__init__()
        self.config = cfg
        self.image_encoder = ImageEncoder(cfg)
        self.sam_prompt_encoder = PromptEncoder(cfg)
        self.sam_mask_decoder = MaskDecoder(cfg)
        self.no_mem_embed = nn.Parameter(torch.zeros(1, 1, cfg.d_model))

    @classmethod
    def from_config(cls, cfg: Sam2Config) -> Sam2Model:
        """An inference-only model (eval mode, no gradients); weights come from load_inference_state_dict."""
        return cls(cfg).eval().requires_grad_(False)

    def load_inference_state_dict(
        self, sd: Mapping[str, torch.Tensor], shapes: Mapping[str, tuple[int, ...]] | None = None
    ) -> None:
        """Load checkpoint tensors (prefix stripped); every needed key must be present with its exact shape.

        Keys matched by :func:`is_ignored_key` are skipped; anything else unknown is an error, so a
        checkpoint of another architecture (or SAM 2.1) is rejected instead of being half loaded.
        ``shapes`` (every checkpoint key's shape, from the file headers) is what is checked when ``sd``
        holds only some of the tensors: the graph backends load the prompt encoder alone.
        """
        own = self.state_dict()
        every = {k: tuple(v.shape) for k, v in sd.items()} if shapes is None else dict(shapes)
        given = {k: tuple(s) for k, s in every.items() if not is_ignored_key(k)}
        missing = sorted(set(own) - set(given))
        unexpected = sorted(set(given) - set(own))
        wrong = sorted(
            f"{k}: checkpoint {given[k]} vs model {tuple(own[k].shape)}"
            for k in set(own) & set(given) if given[k] != tuple(own[k].shape)
        )
        if missing or unexpected or wrong:
            parts = []
            hint = self._size_hint(given)
            if hint:
                parts.append(hint)
            for label, keys in (("shape mismatch(es)", wrong), ("missing key(s)", missing),
                                ("unexpected key(s)", unexpected)):
                if keys:
                    more = f", ... ({len(keys) - 8} more)" if len(keys) > 8 else ""
                    parts.append(f"{len(keys)} {label}: " + "; ".join(keys[:8]) + more)
            raise ValueError("SAM2 state dict does not fit the model: " + " | ".join(parts))
        tensors = {k: v for k, v in sd.items() if k in own}
        # A model built on the meta device adopts the given tensors (their dtype/device) instead of copying.
        self.load_state_dict(
            tensors, strict=len(tensors) == len(own), assign=any(p.is_meta for p in self.parameters())
        )

    def _size_hint(self, given: Mapping[str, tuple[int, ...]]) -> str:
        """Name the config values a checkpoint disagrees on, when its key tensors' shapes reveal them."""
        cfg = self.config
        found = []
        patch = given.get("image_encoder.trunk.patch_embed.proj.weight")
        if patch is not None and patch[0] != cfg.embed_dim:
            found.append(f"trunk embed_dim {patch[0]} (config {cfg.embed_dim})")
        blocks = {int(k.split(".")[3]) for k in given if k.startswith("image_encoder.trunk.blocks.")}
        if blocks and max(blocks) + 1 != sum(cfg.stages):
            found.append(f"{max(blocks) + 1} Hiera blocks (config {sum(cfg.stages)})")
        no_mem = given.get("no_mem_embed")
        if no_mem is not None and no_mem[-1] != cfg.d_model:
            found.append(f"d_model {no_mem[-1]} (config {cfg.d_model})")
        return "checkpoint is a different SAM2 size: " + ", ".join(found) if found else ""

    @property
    def _param(self) -> torch.Tensor:
        return self.no_mem_embed

    def preprocess(self, frame: np.ndarray) -> torch.Tensor:
        """H×W×3 uint8 RGB → [1, 3, S, S] float32 on the CPU: bicubic resize to S×S, SAM normalisation.

        Upstream's ``DirectResize`` does not keep the aspect ratio; the mean/std are in 0–255 units.
        """
        if not isinstance(frame, np.ndarray) or frame.ndim != 3 or frame.shape[2] != 3:
            shape = getattr(frame, "shape", None)
            raise ValueError(f"SAM2 frame must be an H×W×3 numpy array, got shape {shape}")
        if frame.dtype != np.uint8:
            raise ValueError(f"SAM2 frame must be uint8 RGB, got dtype {frame.dtype}")
        if frame.shape[0] == 0 or frame.shape[1] == 0:
            raise ValueError(f"SAM2 frame is empty: shape {frame.shape}")
        size = self.config.image_size
        # Pillow 10 bicubic pixels (one Pillow call per axis, see model/resize.py), which upstream saw.
        resized = resize_bicubic(np.ascontiguousarray(frame), size, size)
        x = torch.from_numpy(resized).permute(2, 0, 1)
        mean = torch.tensor(PIXEL_MEAN).view(3, 1, 1)
        std = torch.tensor(PIXEL_STD).view(3, 1, 1)
        return ((x - mean) / std).unsqueeze(0).contiguous()

    @torch.inference_mode()
    def backbone(self, pixels: torch.Tensor) -> list[torch.Tensor]:
        """The three FPN levels (256², 128², 64² for 1024 inputs) before conv_s0/s1 and no_mem_embed."""
        size = self.config.image_size
        if pixels.ndim != 4 or tuple(pixels.shape[1:]) != (3, size, size):
            raise ValueError(f"SAM2 pixels must be [B, 3, {size}, {size}], got {tuple(pixels.shape)}")
        return self.image_encoder(pixels.to(device=self._param.device, dtype=self._param.dtype))

    @torch.inference_mode()
    def image_features(self, pixels: torch.Tensor) -> Sam2ImageFeatures:
        """Decoder inputs of a batch of frames: every frame is an initial conditioning frame (no memory)."""
        levels = self.backbone(pixels)
        decoder = self.sam_mask_decoder
        embed = levels[2] + self.no_mem_embed.reshape(1, -1, 1, 1)
        feat0, feat1 = decoder.conv_s0(levels[0]), decoder.conv_s1(levels[1])
        return Sam2ImageFeatures(embed, (feat0, feat1))

    @torch.inference_mode()
    def decode(self, feats: Sam2ImageFeatures, seg_embedding: torch.Tensor) -> Sam2Decoded:
        """Decode one frame for one [SEG] embedding ([D] or [1, D]): multimask → best IoU → 1024² mask."""
        dim = self.config.d_model
        if feats.batch_size != 1:
            raise ValueError(f"decode takes one frame's features, got a batch of {feats.batch_size}")
        if seg_embedding.numel() != dim or seg_embedding.ndim > 2:
            raise ValueError(
                f"seg_embedding must have shape [{dim}] or [1, {dim}], got {tuple(seg_embedding.shape)}"
            )
        seg = seg_embedding.to(device=self._param.device, dtype=self._param.dtype)
        sparse, dense = self.sam_prompt_encoder.embed(seg)
        masks, iou, obj = self.sam_mask_decoder(
            feats.image_embed, self.sam_prompt_encoder.dense_pe(), sparse, dense, feats.high_res_feats
        )
        lowres = masks[0, 1:].float()
        iou = iou[0, 1:].float()
        best = int(torch.argmax(iou))
        size = self.config.image_size
        upsampled = F.interpolate(lowres[best][None, None], size=(size, size), mode="bilinear",
                                  align_corners=False)
        return Sam2Decoded(
            lowres_logits=lowres,
            iou=iou,
            object_score=float(obj[0, 0]),
            best_index=best,
            best_lowres=lowres[best],
            mask_1024=torch.sigmoid(upsampled[0, 0]) > 0.5,
        )

    @torch.inference_mode()
    def decode_points(self, feats: Sam2ImageFeatures, points: torch.Tensor, labels: torch.Tensor,
                      height: int, width: int) -> PromptDecoded:
        """One frame (``height``×``width`` px) for point/box prompts, as SAM 2's image predictor decodes it.

        ``points`` [N, 2] are (x, y) frame pixels, ``labels`` [N] 1 positive, 0 negative, 2/3 a box's
        top-left/bottom-right corners. Coordinates scale to the S×S model input (``transform_coords``),
        the three multimask outputs are kept, and each is upsampled bilinearly to frame size and cut at
        logit 0 (``postprocess_masks`` with its default no hole filling).
        """
        if feats.batch_size != 1:
            raise ValueError(f"decode_points takes one frame's features, got a batch of {feats.batch_size}")
        size = self.config.image_size
        scale = torch.tensor([size / width, size / height], dtype=torch.float32)
        sparse, dense = self.sam_prompt_encoder.embed_points(points.float() * scale, labels)
        sparse = sparse.to(device=self._param.device, dtype=self._param.dtype)
        masks, iou, _ = self.sam_mask_decoder(
            feats.image_embed, self.sam_prompt_encoder.dense_pe(), sparse, dense, feats.high_res_feats
        )
        lowres = masks[0, 1:].float()
        logits = F.interpolate(lowres[None], size=(int(height), int(width)), mode="bilinear",
                               align_corners=False)[0]
        scores = iou[0, 1:].float()
        return PromptDecoded(lowres.cpu(), logits.cpu(), scores.cpu(), int(torch.argmax(scores)))


@dataclass
class PromptDecoded:
    """One frame decoded for a point/box prompt: the three candidate masks and SAM 2's IoU estimates."""

    lowres_logits: torch.Tensor  # [3, S/4, S/4] the decoder's own resolution
    logits: torch.Tensor  # [3, H, W] float32 at frame size
    iou: torch.Tensor  # [3] predicted IoU
    best_index: int  # argmax of iou

    @property
    def mask(self) -> np.ndarray:
        """The most confident candidate as a bool H×W mask (logit > 0)."""
        return (self.logits[self.best_index] > 0).numpy()


def resize_mask_to_frame(mask_1024: torch.Tensor | np.ndarray, height: int, width: int) -> np.ndarray:
    """Bool H×W mask at frame size with ``torchvision.transforms.v2.Resize`` semantics (eval/demo upstream).

    v2 turns a bool mask into float, resizes bilinearly with antialiasing and casts back to bool, so any
    pixel with a non-zero interpolated value is True (the mask grows slightly at its border).
    """
    def is_size(v: object) -> bool:
        return isinstance(v, (int, np.integer)) and not isinstance(v, bool) and bool(v >= 1)

    if not (is_size(height) and is_size(width)):
        raise ValueError(f"target size must be positive integers, got {height}x{width}")
    mask = torch.as_tensor(mask_1024)
    if mask.ndim != 2:
        raise ValueError(f"mask must be 2-D, got shape {tuple(mask.shape)}")
    as_float = mask.detach().to("cpu", torch.float32)[None, None]
    resized = F.interpolate(as_float, size=(int(height), int(width)), mode="bilinear", align_corners=False,
                            antialias=True)
    return (resized[0, 0] != 0).numpy()

