"""What ``engine.RynnEC`` holds, declared once for the mixins that build it up (prompt building,
generation, segmentation), and the lock that serialises its public calls."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import torch

from .caches import BudgetedLRU, CacheBudget
from .compute import Compute
from .config import ProcessorConfig, RynnECConfig
from .decoding import CudaGraphDecoder, Decoder, KVCache
from .modeling import RynnecQwen2ForCausalLM
from .spec import EngineInfo
from .tokenizer import RynnECTokenizer
from .tracking import Sam2Tracker

_F = TypeVar("_F", bound=Callable[..., Any])


def locked(method: _F) -> _F:
    """Serialise public calls: the caches and the KV state are not safe to share between threads."""

    @functools.wraps(method)
    def wrapper(self: EngineState, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)

    return cast(_F, wrapper)


class EngineState:
    """The engine's attributes (set by ``RynnEC.__init__``, which says what each is for), declared here
    so that every mixin is type-checked against them."""

    model: RynnecQwen2ForCausalLM
    compute: Compute
    tokenizer: RynnECTokenizer
    config: RynnECConfig
    device: torch.device
    dtype: torch.dtype
    reuse: bool
    vision_batch: int
    info: EngineInfo
    cuda_graphs: bool
    processor: ProcessorConfig
    _lock: threading.RLock
    cache_budget: CacheBudget
    _vision_cache: BudgetedLRU
    _prefix_cache: BudgetedLRU
    _sam2_cache: BudgetedLRU
    checkpoint: Path | None
    _tracker: Sam2Tracker | None
    _kv: KVCache | None
    _graph: CudaGraphDecoder | None
    stats: dict[str, int]

    @property
    def decoder(self) -> Decoder:
        """The LLM stack of ``compute``: ``StaticQwen2`` on torch, the decoder graphs on a graph backend."""
        return self.compute.decoder

    def _sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
