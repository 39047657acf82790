"""Work reuse: several questions about one window, with the engine's caches on versus off.

Both engines get the same frame keys (as the node passes ROS stamps) and the same questions; the
ratio is the median total time with reuse over the median without, from interleaved runs. The
answers must be identical, otherwise the reuse is wrong and the ratio meaningless.

``region_qa``: one cold region question on the window with the vision tower fed frame by frame (the
engine's CPU default) and 4 frames per call (its CUDA default, and every device's before issue 26 item 6),
interleaved on one engine; CPU time of ``prepare`` (preprocessing, vision, region encoder) and of the
prefill and decode.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from rynnec_ros.bench.measure import Stats, ratio
from rynnec_ros.bench.workload import window_request
from rynnec_ros.core.types import Region

DEFAULT_QUESTIONS = (
    "<video>\nWhat is the red object?",
    "<video>\nHow many objects are on the table?",
    "<video>\nWhere is the red object relative to the camera?",
    "<video>\nWhat colour is the background?",
    "<video>\nIs the camera moving?",
)


def _ask_all(
    engine: Any, frames: Sequence[np.ndarray], keys: list[int], questions: Sequence[str], new_tokens: int
) -> tuple[float, float, list[list[int]], list[dict[str, float]]]:
    w0, c0 = time.perf_counter(), time.process_time()
    ids, timings = [], []
    for q in questions:
        a = engine.answer(window_request(frames, q, keys, max_new_tokens=new_tokens))
        ids.append(a.token_ids)
        timings.append(a.timings)
    return time.perf_counter() - w0, time.process_time() - c0, ids, timings


def work_reuse(
    with_reuse: Any,
    without_reuse: Any,
    frames: Sequence[np.ndarray],
    questions: Sequence[str] = DEFAULT_QUESTIONS,
    new_tokens: int = 16,
    repeat: int = 3,
) -> dict[str, Any]:
    if not with_reuse.reuse or without_reuse.reuse:
        raise ValueError("work_reuse needs one engine with reuse=True and one with reuse=False")
    keys = list(range(len(frames)))
    warm = [f[: f.shape[0] // 2, : f.shape[1] // 2].copy() for f in frames[:1]]
    for e in (with_reuse, without_reuse):  # warm up kernels and thread pools on another window
        e.answer(window_request(warm, questions[0], max_new_tokens=2))
    walls: dict[str, list[float]] = {"with": [], "without": []}
    cpus: dict[str, list[float]] = {"with": [], "without": []}
    answers: dict[str, list[list[int]]] = {}
    per_question: dict[str, list[dict[str, float]]] = {}
    for r in range(repeat):
        order = [("without", without_reuse), ("with", with_reuse)]
        if r % 2:
            order.reverse()
        for name, engine in order:
            engine.clear_cache()
            wall, cpu, ids, timings = _ask_all(engine, frames, keys, questions, new_tokens)
            walls[name].append(wall)
            cpus[name].append(cpu)
            answers[name] = ids
            per_question[name] = timings
    same = answers["with"] == answers["without"]
    w, wo = Stats.of(walls["with"]), Stats.of(walls["without"])
    cw, cwo = Stats.of(cpus["with"]), Stats.of(cpus["without"])
    return {
        "available": True,
        "questions": len(questions),
        "frames": len(frames),
        "frame_size_wh": [int(frames[0].shape[1]), int(frames[0].shape[0])],
        "new_tokens": new_tokens,
        "with_reuse_wall": w,
        "without_reuse_wall": wo,
        "with_reuse_cpu": cw,
        "without_reuse_cpu": cwo,
        "ratio_wall": ratio(w.median, wo.median),
        "ratio_cpu": ratio(cw.median, cwo.median),
        "target_ratio": 0.35,
        "answers_identical": same,
        "per_question_timings_with_reuse": per_question["with"],
        "method": "5 questions on one window, total wall/CPU time per set; caches cleared before each set; "
        "sets interleaved (with/without) and repeated; median",
    }


def region_qa(
    engine: Any, frames: Sequence[np.ndarray], new_tokens: int = 16, repeat: int = 3,
    batches: Sequence[int] = (1, 4),
) -> dict[str, Any]:
    """Process CPU of one cold region question per ``vision_batch`` (frames per vision-tower call)."""
    if engine.reuse:
        raise ValueError("region_qa measures cold questions: it needs an engine built with reuse=False")
    h, w = frames[0].shape[:2]
    mask = np.zeros((h, w), bool)
    mask[h // 3 : 2 * h // 3, w // 3 : 2 * w // 3] = True  # the object: the middle ninth of frame 1

    def ask() -> tuple[float, float, list[int]]:
        request = window_request(frames, "<video>\nWhat is <object0> doing?", max_new_tokens=new_tokens)
        request.regions = [Region(0, {min(1, len(frames) - 1): mask})]
        c0 = time.process_time()
        prep = engine.prepare(request, keep_inputs=False)
        prep.keep_steps = False
        c1 = time.process_time()
        gen = engine.generate(prep, new_tokens)
        return c1 - c0, time.process_time() - c1, gen.ids

    default = engine.vision_batch
    cpu: dict[int, tuple[list[float], list[float]]] = {b: ([], []) for b in batches}
    ids: dict[int, list[int]] = {}
    try:
        engine.vision_batch = batches[0]
        ask()  # warm-up
        for r in range(repeat):
            for b in batches if r % 2 == 0 else list(reversed(batches)):
                engine.vision_batch = b
                prepare, rest, ids[b] = ask()
                cpu[b][0].append(prepare)
                cpu[b][1].append(rest)
    finally:
        engine.vision_batch = default
    arms = {f"vision_batch_{b}": {"prepare_cpu": Stats.of(p), "prefill_decode_cpu": Stats.of(q)}
            for b, (p, q) in cpu.items()}
    first, last = batches[0], batches[-1]
    return {
        "frames": len(frames),
        "engine_default_vision_batch": default,
        "arms": arms,
        "ratio_prepare_cpu": ratio(Stats.of(cpu[first][0]).median, Stats.of(cpu[last][0]).median),
        "ratio_prepare_cpu_is": f"vision_batch {first} / {last}",
        "answers_identical": len({tuple(v) for v in ids.values()}) == 1,
        "method": "one region question (mask on frame 1), caches off; prepare() and generate() timed with "
        "time.process_time (threads spinning under load count too: run with --threads 1 for steady "
        "figures); arms interleaved, order alternating; median",
    }
