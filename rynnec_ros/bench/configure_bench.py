"""Peak memory of configuring each backend, every one in a fresh process (what a node's configure costs).

A robot that runs ONNX Runtime or TensorRT should not pay for the torch weights too: on a Jetson the CPU
and the GPU share one RAM. Each backend is loaded by a child interpreter that first imports everything
the load needs (torch, onnxruntime, the engine), records its RSS (the baseline: libraries, no weights),
resets the kernel's high-water mark (``/proc/self/clear_refs`` ← 5), calls ``load_engine`` and reports
the peak (``VmHWM``) and its RSS after the load. ``load_peak_mb`` = peak − baseline is the memory the
configure step itself needed. Weights read from safetensors stay file-backed until first touched, so the
child then answers one question (two frames, two tokens) and reports the peak through that too:
``first_answer_peak_mb`` is what the configured engine really occupies. (``ru_maxrss`` would not do:
Linux carries it over from the parent across ``exec``, so a child of a large benchmark process reports
its parent's peak.)

The section runs on the checkpoint as given and on a bfloat16 copy of it: a checkpoint stored in bfloat16
(as Qwen2.5 releases are) loaded for a float32 engine is converted tensor by tensor, which is where
building the torch model first would cost a full float32 copy of the weights.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rynnec_ros.bench.measure import rss_mb
from rynnec_ros.model.spec import EngineSpec

_MB = 1024.0 * 1024.0


def _child(spec: EngineSpec) -> dict[str, Any]:
    """Runs in the child: load one engine, report its memory."""
    import torch

    import rynnec_ros.model.engine  # noqa: F401 (imported for the baseline, not used here)
    from rynnec_ros.bench.workload import build_engine, synthetic_window, window_request

    if spec.backend == "onnxruntime":
        import onnxruntime  # noqa: F401

    if spec.threads:
        torch.set_num_threads(spec.threads)
    baseline = rss_mb(os.getpid())
    with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
        fh.write("5")  # reset VmHWM to the current RSS
    t0 = time.perf_counter()
    engine = build_engine(spec, reuse=True)
    load_s = time.perf_counter() - t0
    held = sum(t.numel() * t.element_size() for t in engine.model.parameters()) / _MB
    after = rss_mb(os.getpid())
    peak = rss_mb(os.getpid(), "VmHWM")  # read second: the kernel reports max(high-water mark, current RSS)
    engine.answer(window_request(synthetic_window(2, 320, 240), "What is this?", max_new_tokens=2))
    return {
        "baseline_rss_mb": baseline,
        "peak_rss_mb": peak,
        "rss_after_load_mb": after,
        "load_peak_mb": peak - baseline,
        "first_answer_peak_mb": rss_mb(os.getpid(), "VmHWM") - baseline,
        "load_s": load_s,
        "torch_parameters_held_mb": held,
        "graph_providers": engine.info.graph_providers,
    }


def bfloat16_copy(checkpoint: Path, workdir: Path) -> Path:
    """``checkpoint`` with every floating tensor stored in bfloat16 (config and tokenizer unchanged)."""
    import torch
    from safetensors.torch import load_file, save_file

    from rynnec_ros.model.loader import safetensors_files

    out = workdir / f"{checkpoint.name}-bf16"
    if (out / "config.json").is_file():
        return out
    shutil.copytree(checkpoint, out, dirs_exist_ok=True)
    for f in safetensors_files(checkpoint):
        state = load_file(str(f))
        cast = {k: v.to(torch.bfloat16) if v.is_floating_point() else v for k, v in state.items()}
        save_file(cast, str(out / f.name), metadata={"format": "pt"})
    return out


def configure_memory(specs: dict[str, EngineSpec], timeout_s: float = 600.0) -> dict[str, Any]:
    """Peak RSS of loading each spec in its own process; ratios against the torch backend when present."""
    rows: dict[str, Any] = {}
    for name, spec in specs.items():
        proc = subprocess.run(
            [sys.executable, "-m", "rynnec_ros.bench.configure_bench", json.dumps(dataclasses.asdict(spec))],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"configure of backend {name} failed:\n{proc.stderr[-2000:]}")
        rows[name] = json.loads(proc.stdout.strip().splitlines()[-1])
    out: dict[str, Any] = {"available": True, "backends": rows}
    if "torch" in rows:
        for key in ("load_peak_mb", "first_answer_peak_mb"):
            ref = rows["torch"][key]
            out[f"ratio_{key}_vs_torch"] = {k: v[key] / ref for k, v in rows.items() if ref > 0}
    out["method"] = (
        "one fresh interpreter per backend: imports first (baseline RSS), VmHWM reset, then load_engine; "
        "peak = VmHWM; load_peak_mb = peak - baseline; first_answer_peak_mb = peak through one answer "
        "after the load - baseline; torch_parameters_held_mb = the torch parameters the engine still "
        "holds after configure"
    )
    return out


if __name__ == "__main__":
    print(json.dumps(_child(EngineSpec(**json.loads(sys.argv[1])))))
