"""Memory a configured node will need, computed before anything is loaded, so configure refuses with the
numbers instead of the robot swapping (issue 26, item 4).

The weights are counted from the checkpoint's safetensors headers (the format's 8-byte length and JSON
header: names, dtypes, shapes; no tensor is read) at the engine's dtype; the K/V cache from the language
model's config (two tensors of kv_heads × head_dim per layer and token); the frame buffer and the engine's
caches at their parameters' limits. Activations of the vision tower and SAM2 are not modelled: they go
into ``ACTIVATION_MARGIN_MB``, a stated allowance, not a measurement.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rynnec_ros.core.wire import MAX_NEW_TOKENS

MB = 1 << 20
DTYPE_BYTES = {"float32": 4.0, "float16": 2.0, "bfloat16": 2.0}
# Bytes per element in a safetensors header's dtype names (the format's own spelling).
_HEADER_DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1,
                       "U8": 1, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1}
# Allowance for the vision tower's and SAM2's activations, the torch/CUDA runtime and the node itself.
ACTIVATION_MARGIN_MB = 1024.0
# Prompt text around the visual tokens (system prompt, question, regions) in the K/V cache.
TEXT_TOKENS = 1024
_MAX_HEADER_BYTES = 100 * MB  # a header larger than this is not a checkpoint's

# Key prefixes of the official checkpoint, by component.
_COMPONENTS = (("model.vision_encoder.", "vision"), ("grounding_encoder.", "sam2"),
               ("model.mm_projector.", "heads"), ("model.region_encoder.", "heads"),
               ("model.text_hidden_fcs.", "heads"), ("model.", "llm"), ("lm_head.", "llm"))


def header_params(path: Path) -> dict[str, tuple[str, int]]:
    """``{tensor name: (dtype, elements)}`` from one safetensors file's header."""
    with path.open("rb") as fh:
        raw = fh.read(8)
        if len(raw) != 8:
            raise ValueError(f"{path}: not a safetensors file (shorter than its 8-byte header length)")
        (n,) = struct.unpack("<Q", raw)
        if n > _MAX_HEADER_BYTES:
            raise ValueError(f"{path}: safetensors header of {n} bytes is not plausible")
        header = json.loads(fh.read(n))
    out: dict[str, tuple[str, int]] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        count = 1
        for dim in info["shape"]:
            count *= int(dim)
        out[name] = (str(info["dtype"]), count)
    return out


def component_params(files: list[Path]) -> dict[str, int]:
    """Parameters per component (llm, vision, heads, sam2, other) over the checkpoint's weight files."""
    totals: dict[str, int] = {}
    for f in files:
        for name, (_dtype, count) in header_params(f).items():
            part = next((c for prefix, c in _COMPONENTS if name.startswith(prefix)), "other")
            totals[part] = totals.get(part, 0) + count
    return totals


def kv_bytes_per_token(raw_config: dict[str, Any], element_bytes: float) -> float:
    """K and V for one token in every layer: 2 × layers × kv_heads × head_dim elements."""
    layers = int(raw_config["num_hidden_layers"])
    heads = int(raw_config["num_attention_heads"])
    kv_heads = int(raw_config.get("num_key_value_heads") or heads)
    head_dim = int(raw_config.get("head_dim") or int(raw_config["hidden_size"]) // heads)
    return 2.0 * layers * kv_heads * head_dim * element_bytes


@dataclass(frozen=True)
class Budget:
    """Megabytes per part of what the node will hold; ``total_mb`` is what must fit."""

    weights_mb: float
    kv_mb: float
    buffer_mb: float
    cache_mb: float
    margin_mb: float
    window_tokens: int

    @property
    def total_mb(self) -> float:
        return self.weights_mb + self.kv_mb + self.buffer_mb + self.cache_mb + self.margin_mb

    def describe(self) -> str:
        return (f"{self.total_mb:.0f} MB = weights {self.weights_mb:.0f} + K/V {self.kv_mb:.0f} "
                f"({self.window_tokens} tokens) + frame buffer {self.buffer_mb:.0f} + caches "
                f"{self.cache_mb:.0f} + activations/runtime allowance {self.margin_mb:.0f}")


def estimate(checkpoint: str | Path, dtype: str, max_visual_tokens: int, max_new_tokens: int,
             buffer_mb: float, cache_mb: float) -> Budget:
    """The node's memory for ``checkpoint`` at ``dtype`` with these parameters (see the module doc)."""
    from rynnec_ros.model.loader import safetensors_files

    root = Path(checkpoint)
    if dtype not in DTYPE_BYTES:
        raise ValueError(f"dtype {dtype!r} is not one of {sorted(DTYPE_BYTES)}")
    raw = json.loads((root / "config.json").read_text())
    element = DTYPE_BYTES[dtype]
    params = sum(component_params(safetensors_files(root)).values())
    tokens = int(max_visual_tokens) + min(int(max_new_tokens), MAX_NEW_TOKENS) + TEXT_TOKENS
    return Budget(weights_mb=params * element / MB, kv_mb=tokens * kv_bytes_per_token(raw, element) / MB,
                  buffer_mb=float(buffer_mb), cache_mb=float(cache_mb), margin_mb=ACTIVATION_MARGIN_MB,
                  window_tokens=tokens)


def available_mb(meminfo: Path = Path("/proc/meminfo")) -> float:
    """MemAvailable (Linux): what can be allocated without swapping, on a Jetson for CPU and GPU alike
    (one unified memory)."""
    for line in meminfo.read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024 / MB
    raise ValueError(f"{meminfo} has no MemAvailable line")


def refusal(budget: Budget, limit_mb: float, what: str) -> str:
    """Why ``budget`` does not fit in ``limit_mb`` ("" when it does)."""
    if budget.total_mb <= limit_mb:
        return ""
    return (f"the node would need {budget.describe()}, more than the {limit_mb:.0f} MB {what}; lower "
            "buffer_max_mb, cache_mb or max_visual_tokens, choose a smaller dtype or model, or set "
            "memory_limit_mb")
