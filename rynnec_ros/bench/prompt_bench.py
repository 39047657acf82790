"""``bench prompts``: what a click or a 3D point costs before the question is asked.

Measured in one run on one engine: a click turned into a mask on a frame SAM 2 has not seen (image
encoder + prompt decoder) and on one it has (decoder only, the features cached by an earlier [SEG] or
prompt); a 3D point placed on every frame of a window (projection + depth check per frame, on frames
rendered from the scene model with depth and poses); the bytes a prompted region holds per frame (its
mask, plus the cached SAM 2 features of that frame); and SAM 2's video propagation through the window
per frame, with the memory bank one followed object holds.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from rynnec_ros.bench.measure import ratio, time_call
from rynnec_ros.bench.report import not_available
from rynnec_ros.core.types import Frame, Prompt, Region, Request
from rynnec_ros.model.caches import held_bytes
from rynnec_ros.scenes.scene import make_scene, render
from rynnec_ros.spatial.prompts import point_views


def prompt_costs(engine: Any, frames: Sequence[np.ndarray], repeat: int,
                 sync: Callable[[], None] | None = None) -> dict[str, Any]:
    if engine.model.sam2 is None:
        return not_available("the checkpoint has no SAM 2 weights")
    if engine.info.backend != "torch":
        return not_available("point and box prompts run on backend torch only")
    h, w = frames[0].shape[:2]
    click = Prompt(0, [(w / 2, h / 2)], [1])
    fresh = itertools.count()

    def on(frame: np.ndarray, key: Any) -> None:
        request = Request("", [Frame(rgb=frame, key=key)], [Region(0, {}, prompts=(click,))])
        engine.resolve_prompts(request)

    cold = time_call(lambda: on(frames[0], ("bench-prompt", next(fresh))), repeat=repeat, sync=sync)
    on(frames[0], "bench-prompt-warm")
    warm = time_call(lambda: on(frames[0], "bench-prompt-warm"), repeat=repeat, sync=sync)
    sam2 = engine.model.sam2
    features = sam2.image_features(sam2.preprocess(frames[0]))  # what the cache holds per frame
    window = _posed_window(len(frames), w, h)
    scene, posed = window
    target = scene.objects[0].center + np.array([0.0, 0.0, scene.objects[0].height / 2])
    place = time_call(lambda: point_views(target, posed), repeat=repeat)
    n = len(posed)
    return {
        "available": True,
        "frame_size": [w, h],
        "click_to_mask_cold": cold.to_dict(),
        "click_to_mask_cached_features": warm.to_dict(),
        "ratio_cached_vs_cold": ratio(warm.wall.median, cold.wall.median),
        "point_placement_per_frame_s": place.wall.median / n,
        "point_placement_frames": n,
        "held_bytes_per_prompted_frame": {"mask": h * w, "sam2_features": held_bytes(features)},
        "propagation": _propagation(engine, frames, click, repeat, sync),
    }


def _propagation(engine: Any, frames: Sequence[np.ndarray], click: Prompt, repeat: int,
                 sync: Callable[[], None] | None) -> dict[str, Any]:
    """A click on the newest frame followed back through the window (SAM 2's video predictor): per frame,
    and the bytes of the memory bank one followed object holds while the request runs."""
    if len(frames) < 2:
        return not_available("propagation needs --frames >= 2")
    sam2, tracker = engine.model.sam2, engine.tracker()
    h, w = frames[0].shape[:2]
    pixels = torch.cat([sam2.preprocess(f) for f in frames])
    clicks = {len(frames) - 1: (np.asarray(click.points, np.float32), np.asarray(click.labels, np.int32))}
    held: list[int] = []
    t = time_call(lambda: held.append(tracker.track(pixels, h, w, clicks).held_bytes), repeat=repeat,
                  sync=sync)
    n = len(frames)
    return {
        "available": True,
        "frames": n,
        "per_frame_s": {k: getattr(t.wall, k) / n for k in ("median", "min", "max")},
        "memory_bank_bytes_per_object": held[-1],
        "memory_bank_bytes_per_object_and_frame": held[-1] / n,
        "live": _live(tracker, pixels, h, w, clicks, sync),
    }


def _live(tracker: Any, pixels: torch.Tensor, h: int, w: int, clicks: dict[int, Any],
          sync: Callable[[], None] | None) -> dict[str, Any]:
    """``track_objects``: the window's track followed on through ``reach`` + 4 more frames (the window's
    frames again, one at a time): seconds per frame, and the memory bank after the first and the last
    step and after ``reach`` steps, from where it stops growing (the oldest outputs fall out of reach)."""
    track = tracker.track(pixels, h, w, clicks)
    steps = tracker.reach + 4
    held: list[int] = []
    seconds: list[float] = []
    frames = itertools.cycle(pixels)
    for _ in range(steps):
        t = time_call(lambda: tracker.extend(track, next(frames)), repeat=1, warmup=0, sync=sync)
        seconds.append(t.wall.median)
        held.append(track.held_bytes)
    return {
        "steps": steps,
        "per_frame_s": {"median": float(np.median(seconds)), "min": min(seconds), "max": max(seconds)},
        "memory_bank_bytes_after_first_step": held[0],
        "memory_bank_bytes_after_last_step": held[-1],
        "memory_bank_bytes_after_reach_steps": held[tracker.reach - 1],
        "reach_frames": tracker.reach,
    }


def _posed_window(n: int, width: int, height: int) -> tuple[Any, list[Frame]]:
    """``n`` frames of a generated scene with exact depth, intrinsics and poses (what placement reads)."""
    scene = make_scene(0, n, width, height)
    posed = []
    for i in range(n):
        T = scene.world_T_camera(i)
        r = render(scene, T)
        posed.append(Frame(rgb=r.rgb, stamp_ns=i, depth=r.depth, K=scene.camera.K, world_T_camera=T))
    return scene, posed
