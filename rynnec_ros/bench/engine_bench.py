"""Engine stage timings: vision per frame, prefill, time to first token, decode tok/s, SAM2 per frame.

Measured on an engine built with ``reuse=False`` so every call does the full work; each stage is
timed on its own, after one warm-up, ``repeat`` times, and reported as median / p95 with the
process CPU time alongside (on a shared CPU, wall time alone misleads).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rynnec_ros.bench.measure import Stats, time_call
from rynnec_ros.bench.roofline import decode_bound
from rynnec_ros.bench.workload import window_request

METHOD = (
    "wall-clock (time.perf_counter) and process CPU time around each stage, CUDA synchronised before "
    "each clock read; warm-up call excluded; median of repeats; engine reuse caches disabled"
)


def _sync_fn(engine: Any) -> Callable[[], None] | None:
    if getattr(engine, "device", None) is not None and engine.device.type == "cuda":
        import torch

        return lambda: torch.cuda.synchronize(engine.device)
    return None


def filler_token(engine: Any) -> int:
    """An ordinary text token to teacher-force decode steps (a random model may stop at eos at once)."""
    ids = engine.tokenizer.encode(" the")
    eos = set(engine.config.eos_token_ids)
    for t in ids:
        if t not in eos:
            return int(t)
    raise ValueError("tokenizer has no ordinary token for ' the'")


def engine_stages(
    engine: Any,
    frames: Sequence[np.ndarray],
    question: str,
    new_tokens: int = 32,
    repeat: int = 3,
    checkpoint: str | Path | None = None,
    bandwidth_gbs: float | None = None,
) -> dict[str, Any]:
    from rynnec_ros.model.processing import preprocess_frame

    if new_tokens < 2:
        raise ValueError(f"new_tokens must be >= 2 to measure decoding, got {new_tokens}")
    sync = _sync_fn(engine)
    merge = engine.config.merge_size
    fi = preprocess_frame(frames[0], len(frames), engine.processor, merge)
    vision = time_call(lambda: engine.encode_frame(fi), repeat=repeat, warmup=1, sync=sync)

    request = window_request(frames, question)
    prep = engine.prepare(request)
    prefill_s: list[float] = []
    ttft_s: list[float] = []
    decode_s: list[float] = []
    force = [filler_token(engine)] * new_tokens
    engine.generate(prep, 1)  # warm-up
    for _ in range(repeat):
        t0 = time.perf_counter()
        p = engine.prepare(request)
        gen = engine.generate(p, 1)
        ttft_s.append(time.perf_counter() - t0)
        prefill_s.append(gen.timings["prefill"])
        gen = engine.generate(prep, new_tokens, force_ids=force)
        decode_s.append(gen.timings["decode"])
    decode = Stats.of(decode_s)
    steps = new_tokens - 1
    section: dict[str, Any] = {
        "available": True,
        "backend": engine.info.backend,
        "graph_providers": engine.info.graph_providers,
        "device": str(engine.device),
        "dtype": str(engine.dtype).replace("torch.", ""),
        "frames": len(frames),
        "frame_size_wh": [int(frames[0].shape[1]), int(frames[0].shape[0])],
        "visual_tokens_per_frame": fi.grid_h * fi.grid_w // (merge * merge),
        "prompt_tokens": len(prep.input_ids),
        "new_tokens": new_tokens,
        "vision_per_frame": vision,
        "prefill": Stats.of(prefill_s),
        "ttft": Stats.of(ttft_s),
        "decode": decode,
        "decode_tok_s": steps / decode.median if decode.median > 0 else None,
        "method": METHOD,
    }
    if engine.model.sam2 is not None:
        section["sam2_per_frame"] = _sam2(engine, frames, repeat, sync)
    else:
        section["sam2_per_frame"] = {"available": False, "reason": "checkpoint has no SAM2 weights"}
    if checkpoint is not None:
        context = len(prep.input_ids) + new_tokens // 2
        section["bandwidth_bound"] = decode_bound(
            Path(checkpoint), engine.dtype, context, section["decode_tok_s"], engine.device, bandwidth_gbs
        )
    return section


def _sam2(engine: Any, frames: Sequence[np.ndarray], repeat: int, sync: Callable[[], None] | None) -> Any:
    """Image encoder + mask decoder per frame, frames never cached (fresh keys per call)."""
    import torch

    dim = engine.model.sam2.config.d_model
    seg = torch.randn(dim, generator=torch.Generator().manual_seed(0)).to(engine.device)
    counter = iter(range(10**9))

    def run() -> None:
        for f in frames:
            engine.sam2_decode(f, ("bench", next(counter)), seg)

    t = time_call(run, repeat=repeat, warmup=1, sync=sync)
    n = len(frames)
    per = {k: getattr(t.wall, k) / n for k in ("mean", "median", "p95", "min", "max")}
    return {"wall": {**per, "n": t.wall.n, "unit": "s"}, "frames_per_call": n}
