"""Live window: time to first token on a precomputed window vs a cold one with the same frames.

Cold: caches cleared, one question on the window (vision + full prefill + first token). Live: caches
cleared, the frames arrive one by one and ``precompute`` runs after each (as the node's worker does in
idle time), then the same question. Answers must be identical. The ingest cost is the process CPU
time ``precompute`` spends per frame, while the window grows (the stored prefix is extended) and
then while it slides (the prefix changes from its first frame, so it is recomputed).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from rynnec_ros.bench.measure import Stats, ratio
from rynnec_ros.bench.workload import window_request
from rynnec_ros.model.engine import RynnEC


def _ingest(
    engine: RynnEC, stream: Sequence[np.ndarray], start: int, stop: int, window: int
) -> dict[str, Any]:
    """``precompute`` after each frame ``start..stop-1`` of ``stream`` (the last ``window`` frames)."""
    if stop <= start:
        return {"frames": 0}
    cpu, wall, encoded, computed = [], [], [], []
    for i in range(start, stop):
        lo = max(0, i + 1 - window)
        frames = window_request(stream[lo : i + 1], "", keys=range(lo, i + 1)).frames
        c0 = time.process_time()
        status = engine.precompute(frames)
        cpu.append(time.process_time() - c0)
        wall.append(status.seconds)
        encoded.append(status.frames_encoded)
        computed.append(status.prefix_tokens_computed)
    return {
        "frames": stop - start,
        "cpu_per_frame": Stats.of(cpu),
        "wall_per_frame": Stats.of(wall),
        "frames_encoded_per_call": Stats.of([float(x) for x in encoded], unit="frames"),
        "prefix_tokens_computed_per_call": Stats.of([float(x) for x in computed], unit="tokens"),
    }


def live_window(
    engine: RynnEC,
    stream: Sequence[np.ndarray],
    window: int,
    question: str,
    new_tokens: int = 16,
    repeat: int = 2,
) -> dict[str, Any]:
    """``stream`` holds ``window`` frames plus any extra ones used to measure the sliding phase."""
    if not engine.reuse:
        raise ValueError("live_window needs an engine built with reuse=True")
    if len(stream) < window:
        raise ValueError(f"need at least {window} frames, got {len(stream)}")
    last = list(range(len(stream) - window, len(stream)))
    warm = [f[: f.shape[0] // 2, : f.shape[1] // 2].copy() for f in stream[:1]]
    engine.answer(window_request(warm, question, max_new_tokens=2))  # kernels and thread pools
    cold_ttft, live_ttft, cold_ids, live_ids = [], [], [], []
    grow: dict[str, Any] = {}
    slide: dict[str, Any] = {}
    for _ in range(repeat):
        engine.clear_cache()
        request = window_request([stream[i] for i in last], question, keys=last, max_new_tokens=new_tokens)
        a = engine.answer(request)
        cold_ttft.append(a.timings["first_token"])
        cold_ids.append(a.token_ids)

        engine.clear_cache()
        grow = _ingest(engine, stream, 0, window, window)
        slide = _ingest(engine, stream, window, len(stream), window)
        a = engine.answer(request)
        live_ttft.append(a.timings["first_token"])
        live_ids.append(a.token_ids)
    cold, live = Stats.of(cold_ttft), Stats.of(live_ttft)
    h, w = stream[0].shape[:2]
    return {
        "available": True,
        "device": str(engine.device),
        "dtype": str(engine.dtype).replace("torch.", ""),
        "window_frames": window,
        "frame_size_wh": [int(w), int(h)],
        "question": question,
        "new_tokens": new_tokens,
        "cold_ttft": cold,
        "live_ttft": live,
        "ratio_ttft_live_vs_cold": ratio(live.median, cold.median),
        "target_ratio": 0.5,
        "answers_identical": cold_ids == live_ids,
        "ingest_growing_window": grow,
        "ingest_sliding_window": slide,
        "method": "TTFT = Answer.timings['first_token'] (call start to first token id on the host); "
        "caches cleared before each cold and each live run; live: precompute after every frame of the "
        "stream, then the question; median of repeats; ingest CPU = process CPU time of precompute",
    }
