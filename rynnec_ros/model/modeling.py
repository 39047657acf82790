"""RynnEC = Qwen2 LLM + VL3 vision tower + projector + region encoder + [SEG] head (+ SAM2 decoder).

Module names mirror the upstream ``RynnecQwen2ForCausalLM`` so a checkpoint's state dict loads without
renaming: ``model.*`` (Qwen2 + vision/projector/region/seg heads), ``lm_head``,
``grounding_encoder.sam2_model``.
The LLM is transformers' own ``Qwen2ForCausalLM`` (numerically the model upstream runs).
"""

from __future__ import annotations

import torch
from torch import nn
from transformers import Qwen2ForCausalLM

from .config import RynnECConfig
from .heads import MaskExtractor, MlpGeluProjector, SegHead
from .sam2 import Sam2Model
from .vision import Videollama3VisionEncoder, Videollama3VisionEncoderModel


class GroundingEncoder(nn.Module):
    """Holder so the SAM2 keys read ``grounding_encoder.sam2_model.*``."""

    def __init__(self, sam2_model: Sam2Model) -> None:
        super().__init__()
        self.sam2_model = sam2_model


class RynnecQwen2ForCausalLM(Qwen2ForCausalLM):
    def __init__(self, rconfig: RynnECConfig) -> None:
        super().__init__(rconfig.qwen2_config())
        self.rconfig = rconfig
        self.model.vision_encoder = Videollama3VisionEncoder(rconfig.vision)
        self.model.mm_projector = MlpGeluProjector(rconfig.mm_hidden_size, rconfig.hidden_size)
        self.model.region_encoder = MaskExtractor(rconfig.mm_hidden_size, rconfig.hidden_size)
        if rconfig.has_seg_head:
            self.model.text_hidden_fcs = nn.ModuleList([SegHead(rconfig.hidden_size, rconfig.out_dim)])
        self.grounding_encoder: GroundingEncoder | None = None

    @property
    def vision_tower(self) -> Videollama3VisionEncoderModel:
        tower: Videollama3VisionEncoderModel = self.model.vision_encoder.vision_encoder
        return tower

    @property
    def seg_head(self) -> nn.Module | None:
        fcs = getattr(self.model, "text_hidden_fcs", None)
        return None if fcs is None else fcs[0]

    @property
    def sam2(self) -> Sam2Model | None:
        if self.grounding_encoder is None:
            return None
        return self.grounding_encoder.sam2_model

    def embed(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.model.embed_tokens(input_ids)
