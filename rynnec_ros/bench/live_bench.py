"""Live window: what the idle-time precompute costs per ingested frame, and what a question then waits.

A stream of frames one sample period apart goes into a ``FrameBuffer`` that holds all of them (as the
node's 600-frame buffer does), and after each frame the window a question without stamps gets
(``FrameBuffer.select``, as the node's worker picks it) is precomputed, the way the node does in idle
time. Three window modes run on one engine in one run, caches cleared before each:

* ``paper``: ``live_window_block_frames`` 0, the whole buffer sampled and thinned to ``window`` frames
  (the node's default; once the buffer holds more than ``window`` samples, every frame reshuffles it);
* ``block_1``: the newest ``window`` samples (the start moves with every frame);
* ``block_K``: the start moves every ``block`` samples, so the prefix is rebuilt once per block.

The steady state is the ``slide`` frames after the window first filled (a whole number of blocks by
default). For ``block_K`` each position in the block also gets the question's time to first token,
once after the precompute finished and once with the newest frame still pending (a question arriving
before idle time). Every answer must equal a cold engine's on the same frames.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from rynnec_ros.bench.measure import Stats, ratio
from rynnec_ros.bench.workload import window_request
from rynnec_ros.core.buffer import BufferLimits, FrameBuffer
from rynnec_ros.core.types import NS_PER_S, Frame
from rynnec_ros.model.engine import RynnEC


def _cold(engine: RynnEC, frames: list[Frame], question: str, new_tokens: int) -> tuple[list[int], float]:
    """Token ids and TTFT of ``question`` on ``frames`` with nothing cached."""
    engine.clear_cache()
    a = engine.answer(_request(frames, question, new_tokens))
    return a.token_ids, a.timings["first_token"]


def _request(frames: list[Frame], question: str, new_tokens: int) -> Any:
    return window_request([f.rgb for f in frames], question, keys=[f.key for f in frames],
                          max_new_tokens=new_tokens)


def _stream(
    engine: RynnEC, stream: Sequence[np.ndarray], window: int, block: int, question: str, new_tokens: int,
    steady_from: int, ask: str,
) -> dict[str, Any]:
    """Frames one second apart into a buffer; after each, the window's precompute (``ask`` "" or
    "after": then the question) or, from ``steady_from`` on, the question alone (``ask`` "pending")."""
    engine.clear_cache()
    buf = FrameBuffer(BufferLimits(max_frames=len(stream), jump_back_s=1e6))
    records = []
    for i, rgb in enumerate(stream):
        buf.add(Frame(rgb, stamp_ns=i * NS_PER_S))
        frames = buf.select(fps=1.0, max_frames=window, block_frames=block)
        rec: dict[str, Any] = {"frame": i, "steady": i >= steady_from, "window": [f.stamp_ns // NS_PER_S
                                                                                  for f in frames]}
        if ask != "pending" or i < steady_from:  # pending: the question does the new frame's work
            c0 = time.process_time()
            status = engine.precompute(frames)
            rec.update(cpu=time.process_time() - c0, encoded=status.frames_encoded,
                       computed=status.prefix_tokens_computed)
        if ask and i >= steady_from:
            c0 = time.process_time()
            a = engine.answer(_request(frames, question, new_tokens))
            rec.update(ttft=a.timings["first_token"], question_cpu=time.process_time() - c0, ids=a.token_ids)
        rec["frames"] = frames
        records.append(rec)
    return {"records": records}


def _ingest(records: list[dict[str, Any]]) -> dict[str, Any]:
    if not records:
        return {"frames": 0}
    cpu = [r["cpu"] for r in records]
    return {
        "frames": len(records),
        "cpu_per_frame": Stats.of(cpu),
        "cpu_per_frame_mean": sum(cpu) / len(cpu),
        "frames_encoded_per_call": Stats.of([float(r["encoded"]) for r in records], unit="frames"),
        "prefix_tokens_computed_per_call": Stats.of([float(r["computed"]) for r in records], unit="tokens"),
        "window_frames": [min(len(r["window"]) for r in records), max(len(r["window"]) for r in records)],
    }


def live_window(
    engine: RynnEC,
    stream: Sequence[np.ndarray],
    window: int,
    question: str,
    new_tokens: int = 16,
    repeat: int = 2,
    block: int = 8,
    slide: int | None = None,
) -> dict[str, Any]:
    """``stream``: ``window`` frames to fill the window, then the steady-state frames (``slide``,
    default ``block``: one whole block)."""
    if not engine.reuse:
        raise ValueError("live_window needs an engine built with reuse=True")
    slide = block if slide is None else slide
    if not 1 <= block <= window:
        raise ValueError(f"block must be in [1, window={window}], got {block}")
    if slide < 1 or len(stream) < window + slide:
        raise ValueError(f"need {window} + {slide} frames (window + steady state), got {len(stream)}")
    stream = stream[: window + slide]
    warm = [f[: f.shape[0] // 2, : f.shape[1] // 2].copy() for f in stream[:1]]
    engine.answer(window_request(warm, question, max_new_tokens=2))  # kernels and thread pools
    modes: dict[str, dict[str, Any]] = {}
    identical = True
    for name, k in (("paper", 0), ("block_1", 1), (f"block_{block}", block)):
        run = _stream(engine, stream, window, k, question, new_tokens, window, "after" if k == block else "")
        recs = run["records"]
        last = recs[-1]["frames"]
        engine_ids = engine.answer(_request(last, question, new_tokens)).token_ids
        cold_ids, _ = _cold(engine, last, question, new_tokens)
        identical &= engine_ids == cold_ids
        modes[name] = {
            "block_frames": k,
            "growing": _ingest([r for r in recs if not r["steady"]]),
            "steady": _ingest([r for r in recs if r["steady"]]),
            "windows_steady": [r["window"] for r in recs if r["steady"]],
        }
        if k == block:
            pending = _stream(engine, stream, window, k, question, new_tokens, window, "pending")["records"]
            per_position = []
            for r, p in zip(recs, pending, strict=True):
                if not r["steady"]:
                    continue
                identical &= r["ids"] == p["ids"]
                per_position.append({
                    "frame": r["frame"], "window_frames": len(r["window"]),
                    "position_in_block": (r["window"][-1] - window) % k,  # 0: the start just moved
                    "precompute_cpu": r["cpu"], "prefix_tokens_computed": r["computed"],
                    "ttft_precomputed": r["ttft"], "ttft_newest_frame_pending": p["ttft"],
                    "question_cpu_pending": p["question_cpu"],
                })
            modes[name]["per_position"] = per_position
            block_last, live_ttft = last, recs[-1]["ttft"]
    cold = Stats.of([_cold(engine, block_last, question, new_tokens)[1] for _ in range(repeat)])
    h, w = stream[0].shape[:2]
    steady = {n: m["steady"]["cpu_per_frame_mean"] for n, m in modes.items()}
    return {
        "available": True,
        "device": str(engine.device),
        "dtype": str(engine.dtype).replace("torch.", ""),
        "window_frames": window,
        "block_frames": block,
        "steady_frames": slide,
        "frame_size_wh": [int(w), int(h)],
        "question": question,
        "new_tokens": new_tokens,
        "modes": modes,
        "steady_cpu_per_frame": steady,
        "ratio_steady_cpu_block_vs_1": ratio(steady[f"block_{block}"], steady["block_1"]),
        "ratio_steady_cpu_block_vs_paper": ratio(steady[f"block_{block}"], steady["paper"]),
        "cold_ttft": cold,
        "live_ttft": live_ttft,
        "ratio_ttft_live_vs_cold": ratio(live_ttft, cold.median),
        "target_ratio": 0.5,
        "answers_identical": identical,
        "method": "frames 1 s apart into a FrameBuffer holding all of them; after each, precompute of "
        "FrameBuffer.select(fps=1, max_frames=window, block_frames=0|1|block) on one engine, caches "
        "cleared per mode; ingest CPU = process CPU time of precompute (steady: mean over the frames after "
        "the window first filled); block mode: the question after each steady frame, once after the "
        "precompute and once (a second pass) before it; TTFT = Answer.timings['first_token'] (wall); "
        "answers: the last window of each mode against a cold engine (caches cleared), and the two "
        "passes against each other",
    }
