"""Statistics, timing and report plumbing of the benchmarks."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from rynnec_ros.bench.measure import Stats, percentile, ratio, time_call
from rynnec_ros.bench.report import make_report, not_available, write_report


@pytest.mark.parametrize("q", [0.0, 12.5, 50.0, 95.0, 100.0])
def test_percentile_matches_numpy(q: float) -> None:
    values = [3.0, 1.0, 7.5, 2.25, 9.0, 4.0]
    assert percentile(values, q) == pytest.approx(float(np.percentile(values, q)))


def test_stats_summary() -> None:
    s = Stats.of([4.0, 1.0, 3.0, 2.0])
    assert (s.n, s.min, s.max, s.median, s.mean) == (4, 1.0, 4.0, 2.5, 2.5)
    assert s.p95 == pytest.approx(float(np.percentile([1, 2, 3, 4], 95)))
    with pytest.raises(ValueError):
        Stats.of([])
    with pytest.raises(ValueError):
        percentile([1.0], 101)


def test_time_call_counts_only_timed_calls() -> None:
    calls: list[int] = []
    synced: list[int] = []
    t = time_call(lambda: calls.append(1), repeat=4, warmup=2, sync=lambda: synced.append(1))
    assert len(calls) == 6
    assert t.wall.n == t.cpu.n == 4
    assert len(synced) == 5  # once after warm-up, once per timed call
    assert t.wall.min >= 0.0
    with pytest.raises(ValueError):
        time_call(lambda: None, repeat=0)


def test_ratio_is_json_safe() -> None:
    assert ratio(1.0, 4.0) == 0.25
    assert ratio(1.0, 0.0) is None


def test_report_is_valid_json_with_environment(tmp_path: Path) -> None:
    report = make_report(
        {
            "engine": {"x": Stats.of([1.0, 2.0]), "bad": math.inf, "v": np.float32(0.5)},
            "ingest": not_available("no ROS here"),
        },
        {"checkpoint": "tiny"},
    )
    path = write_report(tmp_path / "sub" / "r.json", report)
    data = json.loads(path.read_text())
    assert data["schema"] == "rynnec_ros.bench/1"
    env = data["environment"]
    for key in ("python", "cpu_model", "cpu_count", "packages", "gpus", "torch_threads", "timestamp_utc"):
        assert key in env
    assert data["sections"]["engine"]["x"]["median"] == 1.5
    assert data["sections"]["engine"]["bad"] is None
    assert data["sections"]["engine"]["v"] == 0.5
    assert data["sections"]["ingest"] == {"available": False, "reason": "no ROS here"}
