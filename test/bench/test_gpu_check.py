"""The GPU check dry-runs on the CPU at tiny sizes: every phase runs or says why it was skipped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch


@pytest.mark.slow
def test_gpu_check_dry_run_on_cpu(tmp_path: Path) -> None:
    from rynnec_ros.bench.gpu_check import main

    if torch.cuda.is_available():
        pytest.skip("this is the CPU dry run; on a GPU machine run the check itself")
    argv = [
        "--out",
        str(tmp_path),
        "--size",
        "mini",
        "--device",
        "cpu",
        "--frames",
        "1",
        "--live-frames",
        "2",
    ]
    rc = main([*argv, "--frame-size", "56x56", "--new-tokens", "3", "--repeat", "1", "--work", str(tmp_path)])
    report = json.loads((tmp_path / "gpu_check.json").read_text())
    phases = report["sections"]
    assert rc == 0, {k: v.get("error") for k, v in phases.items() if v.get("status") == "failed"}
    assert {k: v["status"] for k, v in phases.items()} == {
        "env": "ok",
        "ckpt": "ok",
        "agreement": "ok",
        "decode": "ok",
        "graph-decode": "ok",
        "engine": "ok",
        "reuse": "ok",
        "live": "ok",
        "onnxruntime-gpu": "skipped",
        "tensorrt": "skipped",
    }
    assert "CUDA not available" in phases["env"]["cuda"]
    assert "CUDA not available" in phases["decode"]["cuda_graphs_phase"]
    assert phases["agreement"]["fp32_ids"] == phases["agreement"]["bf16_ids"]
    assert phases["decode"]["greedy_ids_identical"] and phases["live"]["answers_identical"]
    assert phases["tensorrt"]["reason"]
    decode = phases["graph-decode"]["variants"]["torch"]["contexts"]
    assert set(decode) == {"256", "512"} and all(c["tok_s"] > 0 for c in decode.values())
