"""The node-side sections against the real node (subprocess); skipped where ROS is not built."""

from __future__ import annotations

from pathlib import Path

import pytest

from rynnec_ros.bench.ros_bench import ros_missing

WHY = ros_missing()
pytestmark = [pytest.mark.ros, pytest.mark.skipif(WHY is not None, reason=f"ROS not available: {WHY}")]

DATA = Path(__file__).resolve().parents[1] / "data" / "rynnec-tiny" / "checkpoint"


def test_ingest_measures_node_and_bare_subscriber(tmp_path: Path) -> None:
    from rynnec_ros.bench.ros_bench import ingest

    s = ingest(DATA, tmp_path, frames_n=6, rate_hz=10.0)
    assert s["available"] is True
    assert s["received"] == {"node": 6, "bare": 6}
    assert s["cpu_s_per_frame"]["node"] > 0 and s["ratio_node_vs_bare"] > 0
    assert s["buffer"]["frames"] == 6
    assert s["buffer"]["mb"] == pytest.approx(s["buffer"]["frames_x_frame_mb"], rel=0.01)


def test_service_overhead_is_latency_minus_engine_time(tmp_path: Path) -> None:
    from rynnec_ros.bench.ros_bench import service
    from rynnec_ros.bench.workload import synthetic_window

    s = service(DATA, tmp_path, synthetic_window(3, 112, 84), "<video>\nWhat is it?", new_tokens=2, repeat=3)
    assert s["available"] is True and s["frames_used"] == 3
    assert s["end_to_end"].median >= s["engine_total"].median > 0
    assert s["overhead_p95_ms"] >= s["overhead_p50_ms"] > 0
