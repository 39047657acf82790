"""``rynnec-ros bench spatial``: geometry time per spatial question on a rendered window (JSON report).

The issue's budget is 0.3 s per question at 640×480. A synthetic scene (``spatial.scene``) is rendered
at the requested size; every development-set paraphrase (``paraphrases.split("dev")``; ``--every K``:
every K-th of them) is asked on the window through ``SpatialEngine.answer`` with fresh objects each
time. "cold" clears the engine's plane cache before each question (a new window: plane detection
included), "warm" keeps it (several questions on one window, the node's usual case). Times are
wall-clock seconds of ``answer`` alone (``cpu_all``: process CPU seconds, which a busy shared machine
inflates less); rendering and mask extraction are outside the timed region.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``spatial`` to the ``bench`` subcommands."""
    p = subparsers.add_parser("spatial", help="spatial geometry: seconds per question at 640x480 (no model)")
    p.add_argument("--size", default="640x480", help="frame size WxH")
    p.add_argument("--frames", type=int, default=8, help="frames in the window")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeat", type=int, default=1, help="passes over the questions")
    p.add_argument("--every", type=int, default=1, help="ask every K-th development phrasing (K >= 1)")
    p.add_argument("--out", required=True, help="JSON report path")
    p.set_defaults(func=run)


def _stats(xs: list[float]) -> dict[str, float]:
    a = np.asarray(xs)
    return {
        "n": int(a.size),
        "median_s": round(float(np.median(a)), 4),
        "p90_s": round(float(np.percentile(a, 90)), 4),
        "max_s": round(float(a.max()), 4),
        "mean_s": round(float(a.mean()), 4),
    }


def measure(size: tuple[int, int], frames: int, seed: int, repeat: int, every: int = 1) -> dict[str, Any]:
    """Seconds per question (cold and warm plane cache), overall and per task."""
    from rynnec_ros.core.types import Frame, Region, Request
    from rynnec_ros.eval.paraphrases import split
    from rynnec_ros.scenes.scene import make_scene, render
    from rynnec_ros.spatial.engine import SpatialEngine

    w, h = size
    scene = make_scene(seed, frames, w, h)
    window, ids = [], []
    for i in range(frames):
        T = scene.world_T_camera(i)
        r = render(scene, T)
        window.append(Frame(rgb=r.rgb, stamp_ns=i, depth=r.depth, K=scene.camera.K, world_T_camera=T))
        ids.append(r.ids)
    seen = [o for o in scene.objects if sum(int((m == o.object_id).sum() > 200) for m in ids) >= 2]
    if len(seen) < 3:
        raise ValueError(f"scene {seed} shows fewer than 3 objects well; try another --seed")
    regions = [
        Region(o.object_id, {i: m == o.object_id for i, m in enumerate(ids) if (m == o.object_id).any()})
        for o in seen[:3]
    ]
    engine = SpatialEngine()
    timings: dict[str, dict[str, list[float]]] = {"cold": {}, "warm": {}}
    cpu: dict[str, list[float]] = {"cold": [], "warm": []}
    for _ in range(repeat):
        for mode in ("cold", "warm"):
            for _family, _expected, question in split("dev")[::every]:
                n = sum(f"<object{k}>" in question for k in range(3))
                request = Request(question=question, frames=window, regions=regions[:n])
                if mode == "cold":
                    engine.clear_cache()
                t0, c0 = time.perf_counter(), time.process_time()
                answer = engine.answer(request)
                dt = time.perf_counter() - t0
                cpu[mode].append(time.process_time() - c0)
                timings[mode].setdefault(answer.task or "unrecognised", []).append(dt)
    return {
        mode: {
            "all": _stats([t for ts in per.values() for t in ts]),
            "cpu_all": _stats(cpu[mode]),
            "per_task": {task: _stats(ts) for task, ts in sorted(per.items())},
        }
        for mode, per in timings.items()
    }


def run(args: argparse.Namespace) -> int:
    try:
        w, h = (int(x) for x in args.size.lower().split("x"))
    except ValueError:
        print(f"error: --size must look like 640x480, got {args.size!r}", file=sys.stderr)
        return 2
    if args.every < 1:
        print(f"error: --every must be at least 1, got {args.every}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    try:
        result = measure((w, h), args.frames, args.seed, args.repeat, args.every)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    report = {
        "bench": "spatial",
        "environment": {
            "python": platform.python_version(),
            "machine": platform.machine(),
            "processor": platform.processor(),
            "cpus": os.cpu_count(),
            "load_1min": os.getloadavg()[0],
            "numpy": np.__version__,
        },
        "config": {
            "size": [w, h],
            "frames": args.frames,
            "seed": args.seed,
            "repeat": args.repeat,
            "every": args.every,
        },
        "budget_s": 0.3,
        "results": result,
        "wall_s": round(time.perf_counter() - t0, 2),
    }
    Path(args.out).write_text(json.dumps(report, indent=2))
    for mode in ("cold", "warm"):
        s = result[mode]["all"]
        c = result[mode]["cpu_all"]
        print(
            f"spatial {mode}: median {s['median_s']:.3f} s, p90 {s['p90_s']:.3f} s, max {s['max_s']:.3f} s "
            f"(cpu median {c['median_s']:.3f} s) per question over {s['n']} ({w}x{h}, {args.frames} frames)"
        )
    return 0
