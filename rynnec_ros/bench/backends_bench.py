"""The same requests on two backends (ONNX Runtime vs torch by default), timed interleaved."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from rynnec_ros.bench.measure import Stats, ratio
from rynnec_ros.bench.workload import window_request


def compare_backends(
    engines: dict[str, Any],
    frames: Sequence[np.ndarray],
    question: str,
    new_tokens: int = 16,
    repeat: int = 3,
    reference: str = "torch",
) -> dict[str, Any]:
    """End-to-end ``answer`` wall/CPU time per backend (reuse off), ratios against ``reference``."""
    if reference not in engines:
        raise ValueError(f"reference backend {reference!r} not among {list(engines)}")
    for e in engines.values():
        if e.reuse:
            raise ValueError("compare_backends needs engines built with reuse=False")
        e.answer(window_request(frames, question, max_new_tokens=2))  # warm-up
    walls: dict[str, list[float]] = {k: [] for k in engines}
    cpus: dict[str, list[float]] = {k: [] for k in engines}
    stages: dict[str, dict[str, list[float]]] = {k: {} for k in engines}
    ids: dict[str, list[int]] = {}
    sam2: dict[str, list[float]] = {k: [] for k in engines}
    names = list(engines)
    for r in range(repeat):
        for name in names if r % 2 == 0 else names[::-1]:
            w0, c0 = time.perf_counter(), time.process_time()
            a = engines[name].answer(window_request(frames, question, max_new_tokens=new_tokens))
            walls[name].append(time.perf_counter() - w0)
            cpus[name].append(time.process_time() - c0)
            ids[name] = a.token_ids
            for k, v in a.timings.items():
                stages[name].setdefault(k, []).append(v)
            if engines[name].model.sam2 is not None:
                sam2[name].append(_sam2_frame(engines[name], frames[0], r))
    out: dict[str, Any] = {
        "available": True,
        "reference": reference,
        "frames": len(frames),
        "frame_size_wh": [int(frames[0].shape[1]), int(frames[0].shape[0])],
        "new_tokens": new_tokens,
        "backends": {},
    }
    ref_wall = Stats.of(walls[reference]).median
    ref_cpu = Stats.of(cpus[reference]).median
    for name in names:
        wall, cpu = Stats.of(walls[name]), Stats.of(cpus[name])
        out["backends"][name] = {
            "graph_providers": engines[name].info.graph_providers,
            "wall": wall,
            "cpu": cpu,
            "stage_median_s": {k: Stats.of(v).median for k, v in stages[name].items()},
            "ratio_wall_vs_reference": ratio(wall.median, ref_wall),
            "ratio_cpu_vs_reference": ratio(cpu.median, ref_cpu),
            "same_token_ids_as_reference": ids[name] == ids[reference],
            "sam2_per_frame": Stats.of(sam2[name]) if sam2[name] else None,
        }
    out["method"] = (
        "answer() end to end, engine caches off, one warm-up per backend, runs interleaved "
        "between backends and repeated; median wall and process CPU time; sam2_per_frame: SAM2 "
        "preprocess + image encoder + mask decoder of one uncached frame after each answer"
    )
    return out


def _sam2_frame(engine: Any, frame: np.ndarray, run: int) -> float:
    """Wall seconds of one uncached SAM2 frame (image encoder + mask decoder for a fixed prompt)."""
    import torch

    seg = torch.randn(engine.model.sam2.config.d_model, generator=torch.Generator().manual_seed(0))
    t0 = time.perf_counter()
    engine.sam2_decode(frame, ("bench-backends", run), seg.to(engine.device))
    if engine.device.type == "cuda":
        torch.cuda.synchronize(engine.device)
    return time.perf_counter() - t0
