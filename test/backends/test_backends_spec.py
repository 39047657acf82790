"""One engine description (``model/spec.py``) behind ``infer`` and ``eval``: the backend is a flag there too.

Expected answers are the upstream run's: ``generated_ids`` of the shared tiny fixture case a1 (RynnEC's
``mm_infer``, greedy, 12 tokens; its smallest top-1/top-2 logit margin is 0.08, far above fp32 ONNX vs
torch differences), so the test checks both backends against the released code, not against each other.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rynnec_ros.cli import main

from ..model.conftest import CHECKPOINT, Case

DATA = Path(__file__).resolve().parents[1] / "data" / "eval"


@pytest.mark.parametrize("backend", ["torch", "onnxruntime"])
def test_infer_answers_the_upstream_tokens_on_either_backend(
    backend: str, onnx_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = Case("a1_video_qa_224x168")
    flags = ["--backend", backend]
    if backend == "onnxruntime":
        flags += ["--onnx-dir", str(onnx_dir), "--threads", "2"]
    frames = [str(case.dir / f) for f in case.meta["frame_files"]]
    rc = main([
        "infer", "--checkpoint", str(CHECKPOINT), "--frames", *frames, "--question", case.meta["question"],
        "--max-new-tokens", str(case.meta["max_new_tokens"]), "--json", *flags,
    ])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert doc["token_ids"] == case.meta["generated_ids"]
    assert doc["backend"] == backend  # the answer says what produced it
    if backend == "onnxruntime":  # every exported graph, on the CPU provider ONNX Runtime really used
        assert len(doc["graph_providers"]) == 9
        assert set(doc["graph_providers"].values()) == {"CPUExecutionProvider"}
    else:
        assert doc["graph_providers"] == {}


def test_a_combination_that_cannot_load_is_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = tmp_path / "missing.png"  # never read: the engine options are checked first
    cases = [
        (["infer", "--checkpoint", str(CHECKPOINT), "--frames", str(frame), "--question", "q",
          "--backend", "onnxruntime"], "backend onnxruntime needs onnx_dir"),
        (["infer", "--checkpoint", str(CHECKPOINT), "--frames", str(frame), "--question", "q",
          "--backend", "tensorrt", "--engine-dir", str(tmp_path)], "backend tensorrt needs device cuda"),
        (["infer", "--frames", str(frame), "--question", "q"], "checkpoint is empty: backend torch loads"),
        (["infer", "--frames", str(frame), "--question", "q", "--backend", "remote"],
         "backend remote needs server_url"),
        (["infer", "--checkpoint", str(CHECKPOINT), "--frames", str(frame), "--question", "q",
          "--threads", "-1"], "threads must be in [0, 1024]"),
        (["eval", "embspatial", "--data", str(DATA / "embspatial"), "--out", str(tmp_path / "o"),
          "--checkpoint", str(CHECKPOINT), "--backend", "onnxruntime"], "backend onnxruntime needs onnx_dir"),
    ]
    for argv, reason in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert reason in err, (argv, err)
        assert "Traceback" not in err
    assert not (tmp_path / "o" / "results.jsonl").exists()
