"""``rynnec-ros bench serve`` end to end on the tiny checkpoint: a real server, 1 and 2 robots.

The report must have throughput and latency for both sides, the ratio, and the server's answers equal
to the local engines' (same pixels and questions: the bench itself compares the token ids).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..model.conftest import CHECKPOINT
from .conftest import serve_python

pytest.importorskip("tritonclient.grpc")


@pytest.mark.timeout(600)
def test_bench_serve_writes_a_report_with_identical_answers(tmp_path: Path) -> None:
    from rynnec_ros.cli import main

    out = tmp_path / "serve.json"
    args = ["bench", "serve", "--checkpoint", str(CHECKPOINT), "--robots", "1,2", "--questions", "2"]
    args += ["--frames", "2", "--size", "112x84", "--new-tokens", "3", "--threads", "1"]
    rc = main([*args, "--serve-python", serve_python(), "--timeout", "300", "--out", str(out)])
    assert rc == 0
    section = json.loads(out.read_text())["sections"]["serve"]
    assert set(section["robots"]) == {"1", "2"}
    for n, row in section["robots"].items():
        for side in ("server", "server_unbatched", "local"):
            assert row[side]["available"] is True, (n, side, row[side])
            assert row[side]["questions"] == 2 * int(n)
            assert row[side]["throughput_qps"] > 0
            assert 0 < row[side]["latency"]["median"] <= row[side]["latency"]["p95"]
        assert row["throughput_ratio_server_vs_local"] > 0
        assert row["answers_identical"] is True, n
        assert row["answers_identical_unbatched"] is True, n  # batching changes no answer
        assert row["throughput_ratio_batched_vs_unbatched"] > 0
