"""End to end: ``rynnec-ros eval ...`` on the tiny datasets and tiny checkpoint, directly and via the node.

The checkpoint is random, so the scores are meaningless; what is checked is that every item runs
through the real engine (or node), is scored, lands in the results file and the report, and that the
node path produces the same answers as the engine path for the same items.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from rynnec_ros.cli import main

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "test" / "data" / "eval"
CKPT = ROOT / "test" / "data" / "rynnec-tiny" / "checkpoint"

pytestmark = pytest.mark.slow


def _records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def _run(*argv: str) -> None:
    assert main(["eval", *argv, "--max-new-tokens", "8", "--no-progress"]) == 0


@pytest.fixture(scope="module")
def direct(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One direct run of each benchmark (first item of every subset/task folder), shared by the tests."""
    out = tmp_path_factory.mktemp("direct")
    _run(
        "rynnec-bench",
        "--data",
        str(DATA / "rynnec_bench"),
        "--checkpoint",
        str(CKPT),
        "--out",
        str(out / "rb"),
        "--limit",
        "1",
    )
    _run(
        "embspatial", "--data", str(DATA / "embspatial"), "--checkpoint", str(CKPT), "--out", str(out / "es")
    )
    _run(
        "robobench",
        "--data",
        str(DATA / "robobench"),
        "--checkpoint",
        str(CKPT),
        "--out",
        str(out / "ro"),
        "--limit",
        "1",
    )
    return out


def test_direct_rynnec_bench(direct: Path) -> None:
    recs = _records(direct / "rb")
    assert [r["key"] for r in recs] == ["object_cognition/0", "object_segmentation/0", "spatial_cognition/0"]
    assert all(0.0 <= r["score"] <= 1.0 for r in recs)
    assert not recs[0]["error"] and not recs[2]["error"]
    assert recs[1]["error"] in ("", "the model produced no [SEG] token, so there is no mask")
    assert recs[0]["prediction"] and recs[0]["judge"].startswith("offline(")
    seg = recs[1]
    assert 0.0 <= seg["j"] <= 1.0 and 0.0 <= seg["f"] <= 1.0
    report = (direct / "rb" / "report.md").read_text()
    assert "APPROXIMATE SCORES" in report and "| Model | Overall Mean | Object Properties |" in report
    assert (direct / "rb" / "tasks.png").stat().st_size > 1000


def test_direct_embspatial_both_strategies(direct: Path) -> None:
    recs = _records(direct / "es")
    assert len(recs) == 4
    for r in recs:
        assert len(r["option_loglik"]) == 4 and all(v < 0 for v in r["option_loglik"])
        assert r["likelihood_choice"] == max(range(4), key=lambda i: r["option_loglik"][i])
        assert r["generation"] in (0.0, 1.0) and r["likelihood"] in (0.0, 1.0)
    assert "| Model | Generation | Likelihood |" in (direct / "es" / "report.md").read_text()


def test_direct_robobench(direct: Path) -> None:
    recs = _records(direct / "ro")
    assert [r["kind"] for r in recs] == ["mc", "q1"]
    q1 = recs[1]
    assert q1["critical_states"] == ["at(apple, drawer)", "closed(drawer)"]
    assert q1["score"] == pytest.approx((q1["node_correctness"] + q1["task_completion"]) / 20 * 100)
    report = (direct / "ro" / "report.md").read_text()
    assert "- **judge (--judge)**: offline(" in report and "APPROXIMATE" in report


def test_direct_robobench_released_format(tmp_path: Path) -> None:
    """The CLI on released-format data (system prompts, dual-arm judge examples) runs to completion."""
    out = tmp_path / "ro"
    _run(
        "robobench",
        "--data",
        str(DATA.parent / "eval_robobench"),
        "--checkpoint",
        str(CKPT),
        "--out",
        str(out),
        "--limit",
        "1",
    )
    recs = _records(out)
    assert [r["kind"] for r in recs] == ["mc", "q1", "q1"]
    assert all(r["system_prompt"] for r in recs)
    assert all(r["score"] is None or 0.0 <= r["score"] <= 100.0 for r in recs)
    report = (out / "report.md").read_text()
    assert "released planning aggregation" in report and "system_prompt.json" in report


def test_resumed_run_keeps_results(direct: Path, tmp_path: Path) -> None:
    before = (direct / "ro" / "results.jsonl").read_text()
    # every item is already scored: the run only re-renders the report and never loads the model,
    # so even a checkpoint path that does not exist is fine
    _run(
        "robobench",
        "--data",
        str(DATA / "robobench"),
        "--checkpoint",
        str(tmp_path / "absent"),
        "--out",
        str(direct / "ro"),
        "--limit",
        "1",
    )
    assert (direct / "ro" / "results.jsonl").read_text() == before
    assert (direct / "ro" / "report.md").is_file()


def test_http_judge_through_the_cli(judge_stub: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RYNNEC_JUDGE_API_KEY", "secret")
    judge_stub.script = [(200, "###Judge: 4")]  # the one judged item (a colour question) → 4/5
    out = tmp_path / "rb"
    _run(
        "rynnec-bench",
        "--data",
        str(DATA / "rynnec_bench"),
        "--checkpoint",
        str(CKPT),
        "--out",
        str(out),
        "--limit",
        "1",
        "--judge",
        "http",
        "--judge-url",
        judge_stub.url,
        "--judge-model",
        "stub-model",
    )
    recs = _records(out)
    assert recs[0]["judge"] == "http:stub-model" and recs[0]["score"] == pytest.approx(0.8)
    assert len(judge_stub.requests) == 1 and judge_stub.requests[0]["auth"] == "Bearer secret"
    assert recs[2]["judge"] == "numeric:upstream"  # numeric items never reach the judge
    assert "APPROXIMATE" not in (out / "report.md").read_text()


def test_unreachable_judge_stops_resumably(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "eval",
        "rynnec-bench",
        "--data",
        str(DATA / "rynnec_bench"),
        "--checkpoint",
        str(CKPT),
        "--out",
        str(tmp_path / "o"),
        "--limit",
        "1",
        "--judge",
        "http",
        "--judge-url",
        "http://127.0.0.1:9/v1",
        "--judge-retries",
        "1",
        "--no-progress",
        "--max-new-tokens",
        "4",
    ]
    assert main(argv) == 3
    assert "re-run to resume" in capsys.readouterr().err


def test_cli_reports_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "eval",
                "robobench",
                "--data",
                str(tmp_path),
                "--checkpoint",
                str(CKPT),
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
    assert "no RoboBench questions.json" in capsys.readouterr().err
    assert main(["eval", "embspatial", "--data", str(DATA / "embspatial"), "--out", str(tmp_path / "o")]) == 2
    assert "--checkpoint is required" in capsys.readouterr().err
    # a checkpoint that cannot be loaded stops the run; it is not recorded as every item failing
    out = tmp_path / "bad"
    argv = ["eval", "robobench", "--data", str(DATA / "robobench"), "--checkpoint", str(tmp_path), "--out"]
    assert main([*argv, str(out), "--no-progress"]) == 2
    assert "not a RynnEC checkpoint" in capsys.readouterr().err
    assert not (out / "results.jsonl").exists()


def _ros_ready() -> bool:
    try:
        importlib.import_module("rynnec_ros.ros")  # extends the package path to the built interfaces
        importlib.import_module("rynnec_ros.srv")
    except ImportError:
        return False
    return True


class RunningNode(NamedTuple):
    namespace: str
    log: Path

    def log_tail(self, lines: int = 60) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningNode]:
    """The cognition node with the tiny checkpoint, on a private DDS domain and namespace."""
    if not _ros_ready():
        pytest.skip("ROS 2 interfaces not built/sourced (. scripts/env.sh)")
    domain = str(1 + os.getpid() % 100)
    namespace = f"evaltest{os.getpid()}"
    log = tmp_path_factory.mktemp("node") / "node.log"
    env = {**os.environ, "ROS_DOMAIN_ID": domain, "OMP_NUM_THREADS": "2"}
    with log.open("w") as fh:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "rynnec_ros.cli",
                "node",
                "--namespace",
                namespace,
                "-p",
                f"checkpoint:={CKPT}",
            ],
            env=env,
            stdout=fh,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
        )
    old = os.environ.get("ROS_DOMAIN_ID")
    os.environ["ROS_DOMAIN_ID"] = domain
    try:
        yield RunningNode(namespace, log)
    finally:
        if old is None:
            os.environ.pop("ROS_DOMAIN_ID", None)
        else:
            os.environ["ROS_DOMAIN_ID"] = old
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.mark.ros
def test_via_node_matches_direct(node: RunningNode, direct: Path, tmp_path: Path) -> None:
    try:
        _via_node_matches_direct(node.namespace, direct, tmp_path)
    except AssertionError:
        print(f"the node's log ({node.log}), last lines:\n{node.log_tail()}")  # shown with the failure
        raise


def _via_node_matches_direct(namespace: str, direct: Path, tmp_path: Path) -> None:
    common = ["--via-node", "--node-namespace", namespace]
    _run(
        "robobench", "--data", str(DATA / "robobench"), "--out", str(tmp_path / "ro"), "--limit", "1", *common
    )
    _run("embspatial", "--data", str(DATA / "embspatial"), "--out", str(tmp_path / "es"), *common)
    _run(
        "rynnec-bench",
        "--data",
        str(DATA / "rynnec_bench"),
        "--out",
        str(tmp_path / "rb"),
        "--limit",
        "1",
        *common,
    )
    # greedy decoding on the same frames and prompt: the deployed stack answers exactly as the engine
    for name in ("ro", "es"):
        via, ref = _records(tmp_path / name), _records(direct / name)
        assert [r["prediction"] for r in via] == [r["prediction"] for r in ref], [r.get("error") for r in via]
    es = _records(tmp_path / "es")
    assert all("likelihood" not in r for r in es)  # the node exposes no option likelihoods
    rb = _records(tmp_path / "rb")
    assert [r["key"] for r in rb] == ["object_cognition/0", "object_segmentation/0", "spatial_cognition/0"]
    assert rb[0]["prediction"] == _records(direct / "rb")[0]["prediction"], rb[0]["error"]
    assert "cognition node" in (tmp_path / "rb" / "report.md").read_text()
