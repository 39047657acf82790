"""The small RynnEC heads around the LLM: visual projector, region encoder and the [SEG] projection."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class MlpGeluProjector(nn.Module):
    """``mlp2x_gelu``: merged vision features → LLM embeddings (keys ``readout.{0,2}``)."""

    def __init__(self, in_dim: int, hidden: int) -> None:
        super().__init__()
        self.readout = nn.Sequential(nn.Linear(in_dim, hidden), nn.GELU(), nn.Linear(hidden, hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.readout(x)


def mask_to_grid(mask: torch.Tensor, grid_h: int, grid_w: int) -> torch.Tensor:
    """Frame-size mask → patch grid: bilinear (align_corners=False) then ``> 0`` (any overlap counts).

    Bilinear downsampling only reads the pixels next to each grid cell's sample point, so a small
    object between sample points vanishes and the grid mask is empty; ``MaskExtractor.pool`` then
    yields zeros. Upstream behaves the same, so it is kept for parity (``RynnEC`` only rejects
    masks that are empty at frame size).
    """
    m = mask.to(torch.float32)[None, None]
    return F.interpolate(m, size=(grid_h, grid_w), mode="bilinear", align_corners=False)[0, 0] > 0


def scrambled_grid(raw: torch.Tensor, grid_h: int, grid_w: int) -> torch.Tensor:
    """Upstream ``reshape_images_to_raw_grid``: ``.view(h, w, C)`` of the *token-order* sequence.

    Tokens are in 2×2 merge-block order, so this grid is spatially scrambled; the official model was
    trained with it, so it is reproduced as is.
    """
    return raw.reshape(grid_h, grid_w, raw.shape[-1])


class MaskExtractor(nn.Module):
    """Region encoder: masked mean of raw vision features then ``feat_linear`` (Linear-GELU-Linear)."""

    def __init__(self, in_dim: int, hidden: int) -> None:
        super().__init__()
        self.feat_linear = nn.Sequential(nn.Linear(in_dim, hidden), nn.GELU(), nn.Linear(hidden, hidden))

    @staticmethod
    def pool(grid: torch.Tensor, grid_mask: torch.Tensor) -> torch.Tensor:
        """Masked mean in float32 with upstream's eps (division before the sum)."""
        m = grid_mask.to(torch.float32)
        weights = m / (m.sum() + 1e-8)
        return torch.einsum("hwc,hw->c", grid.to(torch.float32), weights)

    def forward(self, pooled: torch.Tensor) -> torch.Tensor:
        return self.feat_linear(pooled.to(next(self.feat_linear.parameters()).dtype))


class SegHead(nn.Sequential):
    """``text_hidden_fcs[0]``: Linear(H,H) → ReLU → Linear(H,out_dim) → Dropout(0)."""

    def __init__(self, hidden: int, out_dim: int) -> None:
        super().__init__(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, out_dim), nn.Dropout(0.0))
