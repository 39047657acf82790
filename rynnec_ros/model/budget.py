"""Memory a configured node will need, computed before anything is loaded, so configure refuses with the
numbers instead of the robot swapping (issue 26, item 4).

The weights are counted from the checkpoint's safetensors headers (the format's 8-byte length and JSON
header: names, dtypes, shapes; no tensor is read) at the engine's dtype, except that with ``weights``
int8 / int4 the LLM's linears and its LM head are counted as ``model/export/quantize.py`` stores them (one
or half a byte per element and a float32 scale per block of input features, 128 where it divides them),
the LM head once more when it is tied to the embedding (the host keeps the embedding table at the
engine's dtype, the graph a quantised copy); the K/V cache from the language
model's config (two tensors of kv_heads × head_dim per layer and token); the frame buffer and the engine's
caches at their parameters' limits; the peak activations of the vision tower and of SAM 2's image encoder
from ``rynnec-ros bench activations`` (released sizes, float32, fresh processes; docs/acceleration.md):
the tower's grows with the tokens of one tower call, which the window's ``max_visual_tokens`` bounds (a
batch of frames shares it), SAM 2's is one 1024×1024 image. Both are counted at the engine's dtype
(half precision halves the activation tensors; only float32 was measured) and added, since the live
window's vision work may overlap a segmentation. Checkpoints of other sizes (the random test ones) are
counted as if released. What is not measured here — the torch/CUDA runtime and the node's own code — is
``RUNTIME_ALLOWANCE_MB``, a stated allowance.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rynnec_ros.core.wire import MAX_NEW_TOKENS
from rynnec_ros.model.export.quantize import BITS, block_size
from rynnec_ros.model.spec import KV_CACHES, int8_kv_scratch_rows

MB = 1 << 20
DTYPE_BYTES = {"float32": 4.0, "float16": 2.0, "bfloat16": 2.0}
# Bytes per element in a safetensors header's dtype names (the format's own spelling).
_HEADER_DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1,
                       "U8": 1, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1}
# Allowance for the torch/CUDA runtime and the node itself: a process with the node's imports and no
# weights is 439 MB on x86 CPU; the rest is for a Jetson's CUDA context and libraries (not measured).
RUNTIME_ALLOWANCE_MB = 1024.0
# Peak activations at the released sizes in float32 (`rynnec-ros bench activations`, docs/acceleration.md):
# the vision tower 102 / 266 / 571 MB for one frame of 1564 / 4784 / 10764 tokens (linear in tokens; the
# same at 6, 14 and 27 layers), so a fixed part and a part per token at or above all three; SAM 2
# Hiera-L + FPN on one 1024x1024 image. The fixed part is 40, not the 22 MB fitted on the development
# venv: a fresh clone's venv (same package versions) measured 15 MB more at every size (57 vs 42 MB at
# 396 tokens, 117 vs 102 MB at 1,564), allocator and thread mappings that the per-token part does not hold.
VISION_FIXED_MB = 40.0
VISION_BYTES_PER_TOKEN = 52 * 1024
SAM2_IMAGE_MB = 451.0
# Prompt text around the visual tokens (system prompt, question, regions) in the K/V cache.
TEXT_TOKENS = 1024
_MAX_HEADER_BYTES = 100 * MB  # a header larger than this is not a checkpoint's
SCALE_BYTES = 4  # one float32 scale per block of a quantised weight (model/export/quantize.py)

# Key prefixes of the official checkpoint, by component.
_COMPONENTS = (("model.vision_encoder.", "vision"), ("grounding_encoder.", "sam2"),
               ("model.mm_projector.", "heads"), ("model.region_encoder.", "heads"),
               ("model.text_hidden_fcs.", "heads"), ("model.", "llm"), ("lm_head.", "llm"))


def header_tensors(path: Path) -> dict[str, tuple[str, tuple[int, ...]]]:
    """``{tensor name: (dtype, shape)}`` from one safetensors file's header."""
    with path.open("rb") as fh:
        raw = fh.read(8)
        if len(raw) != 8:
            raise ValueError(f"{path}: not a safetensors file (shorter than its 8-byte header length)")
        (n,) = struct.unpack("<Q", raw)
        if n > _MAX_HEADER_BYTES:
            raise ValueError(f"{path}: safetensors header of {n} bytes is not plausible")
        header = json.loads(fh.read(n))
    return {name: (str(info["dtype"]), tuple(int(d) for d in info["shape"]))
            for name, info in header.items() if name != "__metadata__"}


def _elements(shape: tuple[int, ...]) -> int:
    count = 1
    for dim in shape:
        count *= dim
    return count


def header_params(path: Path) -> dict[str, tuple[str, int]]:
    """``{tensor name: (dtype, elements)}`` from one safetensors file's header."""
    return {name: (dtype, _elements(shape)) for name, (dtype, shape) in header_tensors(path).items()}


def component_params(files: list[Path]) -> dict[str, int]:
    """Parameters per component (llm, vision, heads, sam2, other) over the checkpoint's weight files."""
    totals: dict[str, int] = {}
    for f in files:
        for name, (_dtype, count) in header_params(f).items():
            part = next((c for prefix, c in _COMPONENTS if name.startswith(prefix)), "other")
            totals[part] = totals.get(part, 0) + count
    return totals


def quantized_matrix_bytes(in_features: int, out_features: int, weights: str) -> float:
    """Bytes of one ``[in, out]`` weight as the int8/int4 export stores it: the packed values and a
    float32 scale per block of ``block_size(in)`` input features for each output."""
    blocks = in_features // block_size(in_features)
    return in_features * out_features * BITS[weights] / 8 + blocks * out_features * SCALE_BYTES


def _is_llm_linear(name: str, shape: tuple[int, ...]) -> bool:
    """A matrix the int8/int4 export quantises: the decoder layers' projections and the LM head."""
    return len(shape) == 2 and name.endswith(".weight") and (
        name.startswith("model.layers.") or name == "lm_head.weight")


def weight_bytes(tensors: dict[str, tuple[str, tuple[int, ...]]], element: float, weights: str,
                 tied: bool) -> float:
    """Bytes of the checkpoint's weights at ``element`` bytes each, the LLM's linears at ``weights``
    (see the module doc; ``tied``: the config's ``tie_word_embeddings``)."""
    if not weights:
        return sum(_elements(shape) for _dtype, shape in tensors.values()) * element
    if weights not in BITS:
        raise ValueError(f"weights {weights!r} is not one of {sorted(BITS)} or empty")
    total = 0.0
    for name, (_dtype, shape) in tensors.items():
        if _is_llm_linear(name, shape):
            out_features, in_features = shape  # torch's Linear stores [out, in]
            total += quantized_matrix_bytes(in_features, out_features, weights)
        else:
            total += _elements(shape) * element
    embed = tensors.get("model.embed_tokens.weight")
    if tied and "lm_head.weight" not in tensors and embed is not None:
        vocab, hidden = embed[1]
        total += quantized_matrix_bytes(hidden, vocab, weights)
    return total


def activation_mb(max_visual_tokens: int, element: float) -> float:
    """Peak activations of one vision-tower call over ``max_visual_tokens`` and one SAM 2 image, at
    ``element`` bytes per value (measured in float32; see the module doc)."""
    fp32 = VISION_FIXED_MB + max_visual_tokens * VISION_BYTES_PER_TOKEN / MB + SAM2_IMAGE_MB
    return fp32 * element / 4.0


def kv_bytes_per_token(raw_config: dict[str, Any], element_bytes: float) -> float:
    """K and V for one token in every layer: 2 × layers × kv_heads × head_dim elements."""
    layers = int(raw_config["num_hidden_layers"])
    heads = int(raw_config["num_attention_heads"])
    kv_heads = int(raw_config.get("num_key_value_heads") or heads)
    head_dim = int(raw_config.get("head_dim") or int(raw_config["hidden_size"]) // heads)
    return 2.0 * layers * kv_heads * head_dim * element_bytes


def scratch_rows(raw_config: dict[str, Any]) -> int:
    """Positions the int8-cache graph's cache keeps past its capacity (``spec.int8_kv_scratch_rows``) for
    the config's G query heads per kv head (``export/kvcache.py`` stacks them as rows)."""
    heads = int(raw_config["num_attention_heads"])
    return int8_kv_scratch_rows(heads // int(raw_config.get("num_key_value_heads") or heads))


@dataclass(frozen=True)
class Budget:
    """Megabytes per part of what the node will hold; ``total_mb`` is what must fit."""

    weights_mb: float
    kv_mb: float
    buffer_mb: float
    cache_mb: float
    activations_mb: float
    margin_mb: float
    window_tokens: int
    weights: str = ""
    kv_cache: str = ""

    @property
    def total_mb(self) -> float:
        return (self.weights_mb + self.kv_mb + self.buffer_mb + self.cache_mb + self.activations_mb
                + self.margin_mb)

    def describe(self) -> str:
        llm = f" ({self.weights} LLM linears)" if self.weights else ""
        kv = f"{self.kv_cache}, " if self.kv_cache else ""
        return (f"{self.total_mb:.0f} MB = weights {self.weights_mb:.0f}{llm} + K/V {self.kv_mb:.0f} "
                f"({kv}{self.window_tokens} tokens) + frame buffer {self.buffer_mb:.0f} + caches "
                f"{self.cache_mb:.0f} + vision/SAM 2 activations {self.activations_mb:.0f} + runtime "
                f"allowance {self.margin_mb:.0f}")


def estimate(checkpoint: str | Path, dtype: str, max_visual_tokens: int, max_new_tokens: int,
             buffer_mb: float, cache_mb: float, weights: str = "", kv_cache: str = "") -> Budget:
    """The node's memory for ``checkpoint`` at ``dtype`` (LLM linears at ``weights`` when set, the K/V at
    one byte per element with ``kv_cache`` int8) with these parameters (see the module doc)."""
    from rynnec_ros.model.loader import safetensors_files

    root = Path(checkpoint)
    if dtype not in DTYPE_BYTES:
        raise ValueError(f"dtype {dtype!r} is not one of {sorted(DTYPE_BYTES)}")
    raw = json.loads((root / "config.json").read_text())
    element = DTYPE_BYTES[dtype]
    tensors: dict[str, tuple[str, tuple[int, ...]]] = {}
    for f in safetensors_files(root):
        tensors.update(header_tensors(f))
    tied = bool(raw.get("tie_word_embeddings", False))
    if kv_cache not in KV_CACHES:
        raise ValueError(f"kv_cache {kv_cache!r} is not one of {KV_CACHES}")
    kv_element = 1.0 if kv_cache == "int8" else element
    tokens = int(max_visual_tokens) + min(int(max_new_tokens), MAX_NEW_TOKENS) + TEXT_TOKENS
    kv_rows = tokens + (scratch_rows(raw) if kv_cache == "int8" else 0)
    return Budget(weights_mb=weight_bytes(tensors, element, weights, tied) / MB,
                  kv_mb=kv_rows * kv_bytes_per_token(raw, kv_element) / MB, buffer_mb=float(buffer_mb),
                  cache_mb=float(cache_mb), activations_mb=activation_mb(int(max_visual_tokens), element),
                  margin_mb=RUNTIME_ALLOWANCE_MB, window_tokens=tokens, weights=weights,
                  kv_cache=kv_cache)


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
