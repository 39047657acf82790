"""Repeated wall/CPU timing with summary statistics.

Benchmarks compare variants measured in the same process and run (ratios), so that machine load
from other users affects both sides alike; every number records how it was taken.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class Stats:
    """Summary of repeated measurements of one quantity (seconds unless ``unit`` says otherwise)."""

    n: int
    mean: float
    median: float
    p95: float
    min: float
    max: float
    unit: str = "s"

    @classmethod
    def of(cls, values: list[float], unit: str = "s") -> Stats:
        if not values:
            raise ValueError("Stats.of needs at least one value")
        ordered = sorted(values)
        return cls(
            n=len(ordered),
            mean=statistics.fmean(ordered),
            median=statistics.median(ordered),
            p95=percentile(ordered, 95.0),
            min=ordered[0],
            max=ordered[-1],
            unit=unit,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (numpy's default method) without numpy."""
    if not values:
        raise ValueError("percentile of an empty list")
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"percentile q must be in [0, 100], got {q}")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


@dataclass
class Timing:
    """Wall and process-CPU seconds of repeated calls, after warm-up calls that are not counted."""

    wall: Stats
    cpu: Stats

    def to_dict(self) -> dict[str, Any]:
        return {"wall": self.wall.to_dict(), "cpu": self.cpu.to_dict()}


def time_call(
    fn: Callable[[], Any], repeat: int = 5, warmup: int = 1, sync: Callable[[], None] | None = None
) -> Timing:
    """Time ``fn`` ``repeat`` times; ``sync`` (e.g. ``torch.cuda.synchronize``) runs before each clock read
    because device work is asynchronous."""
    if repeat < 1:
        raise ValueError(f"repeat must be >= 1, got {repeat}")
    for _ in range(max(0, warmup)):
        fn()
    if sync is not None:
        sync()
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        if sync is not None:
            sync()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return Timing(wall=Stats.of(walls), cpu=Stats.of(cpus))


def ratio(numerator: float, denominator: float) -> float | None:
    """A ratio that stays JSON-safe (``None``) when the denominator is zero."""
    return numerator / denominator if denominator > 0 else None


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    """``field`` (VmRSS, VmHWM, RssAnon, RssFile) of ``/proc/<pid>/status`` in MB."""
    with open(f"/proc/{pid}/status", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError(f"no {field} for pid {pid}")
