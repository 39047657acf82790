"""What engine to build, said once: ``EngineSpec`` (frozen, validated on construction) and its flags.

The node's parameters (``ros/params.py``), ``rynnec-ros infer / eval / serve / bench`` (``add_engine_args``)
and Python callers (``load_engine``) all describe an engine with this one type, so every option has one
name, one default and one check, and a combination that cannot load (onnxruntime without an export,
TensorRT on a CPU) is refused before anything is read from disk. The field names are the node's parameter
names; the command-line flags are the same names with dashes.

No torch here: the node validates its parameters with these checks before it imports the model.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any

from rynnec_ros.core import wire
from rynnec_ros.core.checks import Check, anything, in_range, no_control_chars, one_of, positive
from rynnec_ros.core.types import EngineInfo

BACKENDS = ("torch", "onnxruntime", "tensorrt", "remote")
LOCAL_BACKENDS = BACKENDS[:3]
DTYPES = ("float32", "float16", "bfloat16")
ORT_PROVIDERS = ("", "cpu", "cuda", "tensorrt")
WEIGHTS = ("", "int8", "int4")
KV_CACHES = ("", "int8")
INT8_KV_CALL_TOKENS = 128
"""Most tokens per call of the int8-cache graph, which stacks each kv head's G query heads as rows
(``export/kvcache.py``): its mask is [G·S, positions] floats, and it writes (G − 1)·S scratch rows past its
last position, which the cache keeps beyond its capacity (``backends/graphs.py``; counted by ``budget``).
Measured: 3072 tokens of prefill cost the least CPU at 32–128 tokens per call (docs/acceleration.md)."""


def int8_kv_scratch_rows(query_rows: int) -> int:
    """Positions the int8-cache graph's cache keeps past its capacity for ``query_rows`` (G) query heads
    per kv head: (G − 1) · ``INT8_KV_CALL_TOKENS``, 0 when G is 1. The decoder allocates them and the
    memory budget counts them, so both take them from here."""
    return (query_rows - 1) * INT8_KV_CALL_TOKENS

DEFAULT_CACHE_MB = 1024.0
_PATHS = ("checkpoint", "onnx_dir", "engine_dir")  # a pathlib.Path is taken as its string


def _device(v: str) -> str:
    ok = v in ("cpu", "cuda") or (v.startswith("cuda:") and v[5:].isdigit())
    return "" if ok else "must be cpu, cuda or cuda:N"


# One check per option; ros/params.py declares the engine's parameters with these.
CHECKS: dict[str, Check] = {
    "checkpoint": no_control_chars,
    "backend": one_of(*BACKENDS),
    "device": _device,
    "dtype": one_of(*DTYPES),
    "onnx_dir": no_control_chars,
    "engine_dir": no_control_chars,
    "ort_provider": one_of(*ORT_PROVIDERS),
    "weights": one_of(*WEIGHTS),
    "kv_cache": one_of(*KV_CACHES),
    "threads": in_range(0, 1024),
    "max_visual_tokens": in_range(16, 1 << 20),
    "reuse": anything,
    "cache_mb": in_range(0, 1 << 20),
    "cache_frames": in_range(0, 1 << 20),
    "cache_windows": in_range(0, 1 << 16),
    "server_url": no_control_chars,
    "server_token": anything,
    "server_connect_timeout_s": positive(600.0),
    "server_request_timeout_s": positive(3600.0),
}


@dataclass(frozen=True)
class EngineSpec:
    """One engine: the checkpoint, what runs its compute, and the limits it is built with.

    ``threads`` 0 leaves torch's and ONNX Runtime's own choice. ``cache_mb`` bounds the reuse caches
    (vision features, prompt-prefix K/V, SAM2 features) together; ``cache_frames`` (vision and SAM2
    features) and ``cache_windows`` (prompt prefixes) bound their entries, one robot's window by default
    (a site server sizes them for its robots); ``reuse`` False turns them off (the benchmarks' cold
    path). ``weights`` int8 / int4 runs the LLM graphs an export quantised that way (weight-only; ""
    = the float32 graphs). ``kv_cache`` int8 decodes through the export's fused graph with an int8 K/V
    cache (onnxruntime on the CPU provider only; it changes numerics, so float stays the default). The
    ``server_*`` options apply to backend remote only, whose ``checkpoint``
    is the server's business; ``server_token`` is never shown by ``repr``.
    """

    checkpoint: str = ""
    backend: str = "torch"
    device: str = "cpu"
    dtype: str = "float32"
    onnx_dir: str = ""
    engine_dir: str = ""
    ort_provider: str = ""
    weights: str = ""
    kv_cache: str = ""
    threads: int = 0
    max_visual_tokens: int = 16384
    reuse: bool = True
    cache_mb: float = DEFAULT_CACHE_MB
    cache_frames: int = 64
    cache_windows: int = 2
    server_url: str = ""
    server_token: str = field(default="", repr=False)
    server_connect_timeout_s: float = 5.0
    server_request_timeout_s: float = 120.0

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            want = type(f.default)
            if f.name in _PATHS and isinstance(value, os.PathLike):
                value = os.fspath(value)
                object.__setattr__(self, f.name, value)
            if want is float and type(value) is int:
                object.__setattr__(self, f.name, float(value))  # 1024 means 1024.0 here
                value = float(value)
            if type(value) is not want:
                raise ValueError(f"{f.name} must be of type {want.__name__}, got {type(value).__name__}")
            reason = CHECKS[f.name](value)
            if reason:
                raise ValueError(f"{f.name} {reason}")
        reason = self._combination()
        if reason:
            raise ValueError(reason)

    def _combination(self) -> str:
        """Why these options cannot make an engine together ("" when they can)."""
        b = self.backend
        if b != "remote" and not self.checkpoint:
            return f"checkpoint is empty: backend {b} loads a checkpoint directory"
        if b == "onnxruntime" and not self.onnx_dir:
            return "backend onnxruntime needs onnx_dir (make one with `rynnec-ros export onnx`)"
        if b == "tensorrt":
            if not self.engine_dir:
                return "backend tensorrt needs engine_dir (make one with `rynnec-ros export tensorrt`)"
            if not self.device.startswith("cuda"):
                return "backend tensorrt needs device cuda or cuda:N"
        if b == "remote" and not self.server_url:
            return "backend remote needs server_url (host:port of `rynnec-ros serve`)"
        if self.ort_provider and b != "onnxruntime":
            return f"ort_provider applies to backend onnxruntime only, but backend is {b}"
        if self.weights and b not in ("onnxruntime", "tensorrt"):
            why = ": torch would need torchao, which this package does not depend on" if b == "torch" else ""
            return (
                f"weights {self.weights} applies to backends onnxruntime and tensorrt (quantised graphs of "
                f"`rynnec-ros export onnx --weights`), but backend is {b}{why}"
            )
        if self.kv_cache and (b != "onnxruntime" or self.ort_provider not in ("", "cpu")):
            return (
                f"kv_cache {self.kv_cache} applies to backend onnxruntime on its cpu provider only (the "
                "fused GroupQueryAttention graph of `rynnec-ros export onnx --kv-cache`; its GPU kernel and "
                f"TensorRT take no int8 cache), but backend is {b}"
                + (f" with ort_provider {self.ort_provider}" if self.ort_provider else "")
            )
        return ""

    def replace(self, **changes: Any) -> EngineSpec:
        """A copy with ``changes``, validated again."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_args(cls, args: argparse.Namespace, **overrides: Any) -> EngineSpec:
        """The spec ``add_engine_args``' flags describe (flags a command does not offer keep the defaults).

        The site token comes from ``--server-token-file`` or the ``RYNNEC_SERVER_TOKEN`` variable, never
        from a flag (``ps`` shows command lines to every user).
        """
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            value = getattr(args, f.name, None)
            if value is not None and f.name != "server_token":
                values[f.name] = value
        if values.get("backend") == "remote":
            values["server_token"], _ = wire.read_token(getattr(args, "server_token_file", "") or "")
        values.update(overrides)
        return cls(**values)


# The options' defaults, read from the class (a spec itself needs a checkpoint to validate).
DEFAULTS: dict[str, Any] = {f.name: f.default for f in dataclasses.fields(EngineSpec)}


def add_engine_args(parser: argparse.ArgumentParser, backends: tuple[str, ...] = BACKENDS) -> None:
    """The engine's flags (not ``--checkpoint``, whose meaning differs per command); read them back with
    ``EngineSpec.from_args``. Defaults are the spec's; a command changes one with ``set_defaults``."""
    d = DEFAULTS
    g = parser.add_argument_group("engine")
    g.add_argument("--backend", default=d["backend"], choices=list(backends), help="what runs the compute")
    g.add_argument("--device", default=d["device"], help="cpu, cuda or cuda:N")
    g.add_argument("--dtype", default=d["dtype"], choices=list(DTYPES))
    if "onnxruntime" in backends:
        g.add_argument("--onnx-dir", help="`rynnec-ros export onnx` output (backend onnxruntime)")
        g.add_argument("--ort-provider", "--provider", dest="ort_provider", choices=ORT_PROVIDERS[1:],
                       help="ONNX Runtime provider (default: cpu for device cpu, else cuda)")
        g.add_argument("--weights", choices=WEIGHTS[1:],
                       help="weight-only int8/int4 LLM graphs of the export (default: float32)")
        g.add_argument("--kv-cache", choices=KV_CACHES[1:],
                       help="int8 K/V cache (the export's --kv-cache graph; CPU provider; default: float)")
    if "tensorrt" in backends:
        g.add_argument("--engine-dir", help="`rynnec-ros export tensorrt` output (backend tensorrt)")
    g.add_argument("--threads", type=int, default=d["threads"],
                   help="torch / ONNX Runtime intra-op threads (0: their own choice)")
    g.add_argument("--max-visual-tokens", type=int, default=d["max_visual_tokens"],
                   help="visual token budget of the image processor, all frames together")
    g.add_argument("--cache-mb", type=float, default=d["cache_mb"],
                   help="MiB the engine's reuse caches hold together (0: no reuse across questions)")
    if "remote" in backends:
        g.add_argument("--server-url", default="", help="host:port of `rynnec-ros serve`")
        g.add_argument("--server-token-file", default="",
                       help=f"file holding the site token (default: the {wire.TOKEN_ENV} variable)")
        g.add_argument("--server-connect-timeout-s", type=float, default=d["server_connect_timeout_s"])
        g.add_argument("--server-request-timeout-s", type=float, default=d["server_request_timeout_s"])


__all__ = ["BACKENDS", "CHECKS", "DEFAULTS", "DTYPES", "KV_CACHES", "LOCAL_BACKENDS", "WEIGHTS", "EngineInfo",
           "EngineSpec", "add_engine_args"]
