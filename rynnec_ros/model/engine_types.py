"""The values the engine's stages hand each other: encoded frames, the prompt and its chunk plan, stored
prefix K/V, a generation, and what ``precompute`` left ready (``engine.RynnEC``)."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field

import torch

from rynnec_ros.core.types import Region

from .processing import FrameInput


@dataclass
class FrameFeatures:
    raw: torch.Tensor  # [h·w, C] post-LN, token (merge-block) order
    projected: torch.Tensor  # [h·w/4, H] LLM embeddings in raster order of the merged grid
    merged: torch.Tensor  # [h·w/4, C]
    grid_h: int
    grid_w: int


@dataclass(frozen=True)
class Chunk:
    """Prompt positions [start, end) prefilled in one call; ``signature`` identifies their content.

    Prefix chunks (text before the frames, each frame with its separator) have a signature made of
    their text ids and frame keys, so equal signatures mean equal K/V; the question's chunks have
    ``None`` and are never reused.
    """

    start: int
    end: int
    signature: Hashable | None


@dataclass
class PrefixEntry:
    """Stored K/V of the first ``tokens`` positions, which are the chunks with these signatures."""

    signatures: tuple[Hashable, ...]
    tokens: int
    k: torch.Tensor
    v: torch.Tensor


@dataclass
class Prepared:
    """A fully built prompt: ids, embeddings and everything parity tests look at."""

    input_ids: list[int]
    prefix_len: int
    chunks: list[Chunk]
    frames: list[FrameFeatures]
    frame_inputs: list[FrameInput | None]
    inputs_embeds: torch.Tensor  # [1, L, H]
    region_grid_masks: list[torch.Tensor] = field(default_factory=list)
    region_pooled: torch.Tensor | None = None
    region_embeddings: torch.Tensor | None = None
    object_ids: list[int] = field(default_factory=list)
    mask_frames: list[int] = field(default_factory=list)
    prompted: list[Region] = field(default_factory=list)  # prompts and the SAM 2 masks made of them
    timings: dict[str, float] = field(default_factory=dict)
    # generate() records every step's logits and hidden state for parity checks and analysis;
    # answer()/segment() switch it off: V float32 logits per step reach GBs on long answers
    keep_steps: bool = True

    @property
    def prefix_chunks(self) -> list[Chunk]:
        return [c for c in self.chunks if c.signature is not None]


@dataclass
class Generation:
    ids: list[int]
    step_logits: list[torch.Tensor]  # float32 [V] per step (raw, before any penalty); [] unless kept
    step_hidden: list[torch.Tensor]  # final-norm hidden state that produced each step's logits; ditto
    seg_hidden: list[torch.Tensor]  # the hidden states that predicted a [SEG] token (always kept)
    timings: dict[str, float]
    logprobs: list[float]  # log-softmax of each step's raw logits at the id chosen (always kept)


@dataclass
class WindowStatus:
    """What ``precompute`` left ready for a window.

    ``complete`` is false when ``should_stop`` interrupted it; the work done is kept and the next
    call (or the question) continues from it.
    """

    frames: int
    frames_encoded: int
    prefix_tokens: int
    prefix_tokens_computed: int
    complete: bool
    seconds: float

