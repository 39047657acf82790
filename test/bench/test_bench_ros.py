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


def test_soak_states_its_bound_and_samples_the_node(tmp_path: Path) -> None:
    from rynnec_ros.bench.soak import MARGIN_MB, soak

    s = soak(DATA, tmp_path, duration_s=4.0, rate_hz=5.0, width=160, height=120, buffer_max_mb=1,
             question_period_s=1.0, cache_mb=2)
    assert s["available"] is True and s["questions_failed"] == 0
    # the bound is the two memory parameters plus the stated margin (docs/acceleration.md, bench soak)
    assert s["bound_mb"] == 1 + 2 + MARGIN_MB
    assert s["within_bound"] == (s["rss_growth_mb"] <= s["bound_mb"])
    # 160×120 rgb8 + float32 depth = 57 600 + 76 800 bytes a frame: 7 frames fit in 1 MiB
    assert 0 < s["buffered_mb_peak"] <= 1.0 and s["frames_kept"] >= 7
    assert 0 <= s["engine_cache_mb_peak"] <= 2.0
    assert len(s["timeline"]) >= 3 and all(len(row) == len(s["timeline_columns"]) for row in s["timeline"])
    assert s["rss_warmup_mb"] == pytest.approx(s["rss_baseline_mb"] - s["rss_active_mb"], abs=0.11)


def test_cancel_latency_per_phase_and_the_worker_is_free_after(tmp_path: Path) -> None:
    """bench cancel on a checkpoint that decodes until max_new_tokens (so no goal ends by itself): every
    goal ends CANCELED (action_msgs' "canceled after an external request"), with a latency for each
    phase, few pieces after the cancel (the engine checks between tokens), and the next request waits for
    no running inference (its `queue` stage)."""
    from rynnec_ros.bench.ros_bench import cancel
    from rynnec_ros.bench.workload import synthetic_window
    from rynnec_ros.fixtures.checkpoints import make_segmenting_checkpoint

    ckpt = make_segmenting_checkpoint(tmp_path / "endless", stop_after_seg=False)
    s = cancel(ckpt, tmp_path, synthetic_window(2, 64, 48), "<video>\nDescribe it.", samples=4)
    assert s["available"] is True
    assert set(s["phases"]) == {"ask_during_decode", "ask_at_acceptance", "segment_during_decode"}
    for phase, v in s["phases"].items():
        assert v["available"] is True and v["cancelled"] == 4 and v["ended_before_cancel"] == 0, (phase, v)
        assert v["p95_ms"] >= v["p50_ms"] > 0
        # the 4096 tokens it was allowed would be thousands of pieces
        assert v["pieces_after_cancel"].max < 200, (phase, v)
    assert s["next_request_queue_ms"] < 1000.0
