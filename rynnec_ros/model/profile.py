"""Engine latency per stage and the work-reuse speed-up (JSON), on a random or a real checkpoint.

``profile_engine`` is what ``rynnec-ros profile-engine`` runs; the benchmark suite can call it directly.
Numbers come from the engine's own ``Answer.timings`` (wall clock, CUDA-synchronised per stage).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

QUESTIONS = (
    "What is happening in the video?",
    "How far is the red square from the camera?",
    "What colour is the largest object?",
    "Is the red square moving left or right?",
    "How many objects are there?",
)


def synthetic_window(n: int, height: int, width: int, seed: int = 0) -> list[np.ndarray]:
    """A window of smooth frames with a moving square (cheap to make, not compressible to nothing)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width]
    base = np.stack([xx * 255 // max(width - 1, 1), yy * 255 // max(height - 1, 1), (xx + yy) % 256], -1)
    frames = []
    for t in range(n):
        f = base.copy()
        y0, x0 = (t * 7) % max(height // 2, 1), (t * 11) % max(width // 2, 1)
        f[y0 : y0 + height // 4, x0 : x0 + width // 4] = (220, 30, 30)
        f = f + rng.integers(0, 8, f.shape)
        frames.append(np.clip(f, 0, 255).astype(np.uint8))
    return frames


def _summary(timings: list[dict[str, float]]) -> dict[str, float]:
    keys = timings[0].keys()
    return {k: round(statistics.mean(t[k] for t in timings), 4) for k in keys}


def profile_engine(
    checkpoint: str | Path | None = None,
    size: str = "small",
    num_frames: int = 30,
    num_questions: int = 5,
    height: int = 480,
    width: int = 640,
    max_visual_tokens: int = 16384,
    max_new_tokens: int = 16,
    device: str = "cpu",
    dtype: str = "float32",
    sam2_frames: int = 1,
) -> dict[str, Any]:
    """Per-stage latency, and the speed-up of ``num_questions`` questions on one window from reuse."""
    import torch

    from .engine import RynnEC
    from .tiny import make_checkpoint

    with tempfile.TemporaryDirectory() as tmp:
        path = (
            Path(checkpoint)
            if checkpoint is not None
            else make_checkpoint(Path(tmp) / size, size=size, seed=0)
        )
        frames = synthetic_window(num_frames, height, width)
        questions = [QUESTIONS[i % len(QUESTIONS)] for i in range(num_questions)]
        result: dict[str, Any] = {
            "checkpoint": str(checkpoint) if checkpoint is not None else f"random:{size}",
            "device": device,
            "dtype": dtype,
            "torch_threads": torch.get_num_threads(),
            "num_frames": num_frames,
            "frame_size": [width, height],
            "max_visual_tokens": max_visual_tokens,
            "max_new_tokens": max_new_tokens,
            "num_questions": num_questions,
        }
        runs: dict[str, dict[str, Any]] = {}
        for reuse in (False, True):
            eng = RynnEC.from_pretrained(
                path, device=device, dtype=dtype, max_visual_tokens=max_visual_tokens, reuse=reuse
            )
            result["params_m"] = round(sum(p.numel() for p in eng.model.parameters()) / 1e6, 2)
            eng.answer(frames[:1], "warm up", max_new_tokens=1)  # one-off kernel/allocator warm-up
            eng.clear_cache()
            timings, answers = [], []
            t0 = time.perf_counter()
            for q in questions:
                a = eng.answer(frames, q, max_new_tokens=max_new_tokens)
                timings.append(a.timings)
                answers.append(a.token_ids)
            wall = time.perf_counter() - t0
            prep = eng.prepare(frames, questions[0])
            runs["reuse" if reuse else "no_reuse"] = {
                "total_s": round(wall, 3),
                "per_question_s": [round(t["total"], 4) for t in timings],
                "first_question_stages_s": {k: round(v, 4) for k, v in timings[0].items()},
                "later_questions_mean_stages_s": _summary(timings[1:]) if len(timings) > 1 else {},
                "generated_tokens": [len(a) for a in answers],
                "answers": answers,
                "stats": dict(eng.stats),
            }
            result["prompt_tokens"] = len(prep.input_ids)
            result["visual_tokens"] = prep.input_ids.count(eng.config.image_token_id)
            if reuse and sam2_frames > 0 and eng.model.sam2 is not None:
                seg = torch.ones(eng.model.sam2.config.d_model)
                t1 = time.perf_counter()
                eng.masks_for(frames[:sam2_frames], seg)
                cold = time.perf_counter() - t1
                t1 = time.perf_counter()
                eng.masks_for(frames[:sam2_frames], seg)
                warm = time.perf_counter() - t1
                result["sam2_per_frame_s"] = {
                    "encode_and_decode": round(cold / sam2_frames, 4),
                    "decode_cached_features": round(warm / sam2_frames, 4),
                }
        result["runs"] = runs
        result["identical_answers"] = runs["reuse"]["answers"] == runs["no_reuse"]["answers"]
        result["reuse_speedup"] = round(runs["no_reuse"]["total_s"] / runs["reuse"]["total_s"], 2)
        return result
