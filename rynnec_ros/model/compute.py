"""What the engine computes with: one ``Compute`` object, handed to ``RynnEC`` when it is built.

The engine keeps everything around the networks (preprocessing, prompt building, caches, the decoding
loop, SAM 2's prompt encoding and mask post-processing, parsing) and calls the networks only through
this protocol, so a backend is a ``Compute``, not a set of modules patched into a live model:
``TorchCompute`` runs the checkpoint's own modules, ``backends.graphs.GraphCompute`` the exported graphs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import torch

from .decoding import Decoder, StaticQwen2

if TYPE_CHECKING:
    from .modeling import RynnecQwen2ForCausalLM
    from .sam2 import Sam2ImageFeatures, Sam2Model


class Compute(Protocol):
    """The compute components the engine calls, with the torch modules' signatures and results."""

    @property
    def decoder(self) -> Decoder:
        """The LLM decoder stack over the engine's KV cache (prefill chunks and decode steps)."""
        ...

    @property
    def has_seg_head(self) -> bool:
        """Whether ``seg_head`` can run (the checkpoint has a [SEG] head)."""
        ...

    def vision_tower(self, pixel_values: torch.Tensor, grid_h: int, grid_w: int, merge: int) -> torch.Tensor:
        """Post-LN features of one frame [N, C] or of a batch of same-size frames [B, N, C]."""
        ...

    def projector(self, merged: torch.Tensor) -> torch.Tensor:
        """Merged vision features [N, C] → LLM embeddings [N, H]."""
        ...

    def region_encoder(self, pooled: torch.Tensor) -> torch.Tensor:
        """Pooled region features [R, C] (``MaskExtractor.pool``) → region embeddings [R, H]."""
        ...

    def lm_head(self, hidden: torch.Tensor) -> torch.Tensor:
        """Final-norm hidden states [..., H] → logits [..., V]."""
        ...

    def seg_head(self, hidden: torch.Tensor) -> torch.Tensor:
        """Hidden states that predicted [SEG] [n, H] → SAM 2 prompt vectors [n, D]."""
        ...

    def sam2_image_features(self, pixels: torch.Tensor) -> Sam2ImageFeatures:
        """SAM 2 decoder inputs of [B, 3, S, S] pixels (``Sam2Model.image_features``)."""
        ...

    def sam2_mask_logits(
        self,
        image_embed: torch.Tensor,
        image_pe: torch.Tensor,
        sparse: torch.Tensor,
        dense: torch.Tensor,
        high_res: tuple[torch.Tensor, torch.Tensor],
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Mask logits, IoU and object-score logits (``Sam2Model.mask_logits``)."""
        ...


class TorchCompute:
    """The checkpoint's own torch modules (backend ``torch``)."""

    def __init__(self, model: RynnecQwen2ForCausalLM) -> None:
        self.model = model
        self._decoder: StaticQwen2 | None = None

    @property
    def decoder(self) -> StaticQwen2:
        # built on first use: it refuses configurations it cannot run (sliding-window attention) then
        if self._decoder is None:
            self._decoder = StaticQwen2(self.model.model)
        return self._decoder

    @property
    def has_seg_head(self) -> bool:
        return self.model.seg_head is not None

    def vision_tower(self, pixel_values: torch.Tensor, grid_h: int, grid_w: int, merge: int) -> torch.Tensor:
        return self.model.vision_tower(pixel_values, grid_h, grid_w, merge)

    def projector(self, merged: torch.Tensor) -> torch.Tensor:
        return self.model.model.mm_projector(merged)

    def region_encoder(self, pooled: torch.Tensor) -> torch.Tensor:
        return self.model.model.region_encoder(pooled)

    def lm_head(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.model.lm_head(hidden)

    def seg_head(self, hidden: torch.Tensor) -> torch.Tensor:
        head = self.model.seg_head
        if head is None:
            raise ValueError("this checkpoint has no [SEG] head")
        return head(hidden)

    def _sam2(self) -> Sam2Model:
        sam2 = self.model.sam2
        if sam2 is None:
            raise ValueError("this checkpoint has no SAM2 mask decoder")
        return sam2

    def sam2_image_features(self, pixels: torch.Tensor) -> Sam2ImageFeatures:
        return self._sam2().image_features(pixels)

    def sam2_mask_logits(
        self,
        image_embed: torch.Tensor,
        image_pe: torch.Tensor,
        sparse: torch.Tensor,
        dense: torch.Tensor,
        high_res: tuple[torch.Tensor, torch.Tensor],
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return self._sam2().mask_logits(image_embed, image_pe, sparse, dense, high_res)
