"""``python3 -m rynnec_ros.bench.gpu_check --out DIR``: the whole GPU check in one offline call.

Runs under the GPU machine's own python3 and packages (torch, transformers 4.57 or 5.x, numpy) and
installs nothing. Phases, each timed and recorded as ok / failed (with the error) / skipped (with the
reason), under one time budget:

``env``        versions, device, clocks; on CUDA the measured copy bandwidth and bf16 matmul rate
``ckpt``       a random-weight checkpoint of the official shapes (``--size 2b``) on local disk
``agreement``  fp32 vs bf16 on one fixed prompt: greedy ids, and bf16 logits teacher-forced on the
               fp32 ids, within ``LOGIT_TOLERANCE`` of the fp32 logit range
``decode``     static-KV decode (CUDA graphs on CUDA) vs transformers' DynamicCache loop, with the
               bandwidth bound; ``engine``, ``reuse``, ``live`` the ``rynnec-ros bench`` sections
``graph-decode`` ``bench graph-decode``'s decode tok/s and bytes per token at 3K / 12K cached positions
               (bf16 torch with CUDA graphs; the ONNX Runtime variants need onnxruntime-gpu, see below)
``onnxruntime-gpu`` / ``tensorrt``  only reported: their wheels are not on that machine

On a machine without CUDA (the CI dry run, ``--size mini``) the same phases run on the CPU and the
CUDA-only measurements say so. Everything lands in ``DIR/gpu_check.json``.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from rynnec_ros.bench.fullsize import FULL_SIZES, make_full_checkpoint
from rynnec_ros.bench.report import make_report, not_available, write_report
from rynnec_ros.bench.workload import synthetic_window, window_request
from rynnec_ros.model.engine import RynnEC

MINI = {"mini": {"llm": (64, 2, 4, 2, 128, 151936, True), "vision": (48, 1, 3, 96)}}
"""CI dry-run shapes: the full vocabulary and layout at a size a CPU runs in seconds."""

LOGIT_TOLERANCE = 0.02
"""bf16 vs fp32: max |Δ logit| over the teacher-forced steps, as a fraction of the fp32 logit range."""

QUESTION = "<video>\nWhat is the red object doing?"


class Budget:
    """Wall-clock budget shared by the phases: a phase that would start too late is skipped."""

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds

    def left(self) -> float:
        return self.deadline - time.monotonic()


def _phase(results: dict[str, Any], name: str, budget: Budget, fn: Callable[[], dict[str, Any]]) -> None:
    if budget.left() <= 0:
        results[name] = {"status": "skipped", "reason": "time budget spent"}
        return
    t0 = time.perf_counter()
    print(f"[gpu_check] {name} ...", file=sys.stderr, flush=True)
    try:
        out = fn()
        status = "ok" if out.get("available", True) and out.get("pass", True) else "failed"
        if out.get("available") is False:
            status = "skipped"
        results[name] = {"status": status, **out}
    except Exception as exc:  # a failing phase is recorded; the others still run
        results[name] = {
            "status": "failed",
            "error": f"{type(exc).__name__}: {exc}",
            "trace": traceback.format_exc(),
        }
    results[name]["seconds"] = time.perf_counter() - t0
    print(
        f"[gpu_check] {name}: {results[name]['status']} ({results[name]['seconds']:.1f} s)", file=sys.stderr
    )
    if torch.cuda.is_available():
        gc.collect()
        torch.cuda.empty_cache()


def _env(device: torch.device) -> dict[str, Any]:
    out: dict[str, Any] = {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "transformers": importlib.import_module("transformers").__version__,
        "numpy": importlib.import_module("numpy").__version__,
        "device": str(device),
    }
    if device.type != "cuda":
        out["cuda"] = "CUDA not available: bandwidth and matmul rate not measured"
        return out
    from rynnec_ros.bench.roofline import measure_copy_bandwidth

    out["gpu"] = torch.cuda.get_device_name(device)
    out["copy_bandwidth_gbs"] = measure_copy_bandwidth(device)
    a = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
    for _ in range(3):
        a @ a
    torch.cuda.synchronize(device)
    t0 = time.perf_counter()
    for _ in range(10):
        a @ a
    torch.cuda.synchronize(device)
    out["bf16_matmul_tflops"] = 10 * 2 * 8192**3 / (time.perf_counter() - t0) / 1e12
    return out


def _optional(module: str, why: str) -> dict[str, Any]:
    try:
        mod = importlib.import_module(module)
    except Exception as exc:
        return not_available(f"{module} is not importable here ({exc}); {why}")
    if module == "onnxruntime":
        providers = mod.get_available_providers()
        if "CUDAExecutionProvider" not in providers:
            return not_available(f"onnxruntime {mod.__version__} has no CUDA provider ({providers}); {why}")
    return not_available(
        f"{module} {getattr(mod, '__version__', '?')} present, but its phase is not part of this check"
    )


def _agreement(ckpt: Path, device: str, frames: list[Any], steps: int) -> dict[str, Any]:
    """fp32 vs bf16 on one prompt: greedy ids, and bf16 logits on the fp32 ids (teacher forced)."""
    request = window_request(frames, QUESTION)
    fp32 = RynnEC.from_pretrained(ckpt, device=device, dtype="float32", reuse=False)
    gen32 = fp32.generate(fp32.prepare(request), steps)
    ref = torch.stack(gen32.step_logits).cpu()
    del fp32
    gc.collect()
    bf16 = RynnEC.from_pretrained(ckpt, device=device, dtype="bfloat16", reuse=False)
    greedy16 = bf16.generate(bf16.prepare(request), steps).ids
    forced = bf16.generate(bf16.prepare(request), len(gen32.ids), force_ids=gen32.ids)
    low = torch.stack(forced.step_logits).cpu()
    diff = float((low - ref).abs().max())
    span = float(ref.max() - ref.min())
    same = 0
    for a, b in zip(gen32.ids, greedy16, strict=False):
        if a != b:
            break
        same += 1
    top1 = float((low.argmax(-1) == ref.argmax(-1)).float().mean())
    return {
        "pass": gen32.ids == greedy16 and diff <= LOGIT_TOLERANCE * span,
        "tolerance": f"greedy ids identical and max |dlogit| <= {LOGIT_TOLERANCE} x fp32 logit range",
        "fp32_ids": gen32.ids,
        "bf16_ids": greedy16,
        "identical_prefix_tokens": same,
        "max_abs_logit_diff": diff,
        "fp32_logit_range": span,
        "relative_diff": diff / span if span else None,
        "teacher_forced_top1_agreement": top1,
    }


def _decode(ckpt: Path, device: str, frames: list[Any], new_tokens: int, repeat: int) -> dict[str, Any]:
    from rynnec_ros.bench.decode_bench import compare_decoders
    from rynnec_ros.bench.roofline import decode_bound

    engine = RynnEC.from_pretrained(ckpt, device=device, dtype="bfloat16", reuse=False)
    out = compare_decoders(engine, frames, QUESTION, new_tokens=new_tokens, repeat=repeat)
    if engine.device.type == "cuda":  # the same step without graphs, to show what capture buys
        engine.cuda_graphs = False
        eager = compare_decoders(engine, frames, QUESTION, new_tokens=new_tokens, repeat=1)
        out["static_eager_tok_s"] = eager["static_tok_s"]
        out["graph_ids_equal_eager_ids"] = eager["greedy_ids"] == out["greedy_ids"]
    else:
        out["cuda_graphs_phase"] = "skipped: CUDA not available (the same step ran eagerly)"
    out["bandwidth_bound"] = decode_bound(
        ckpt, engine.dtype, out["prompt_tokens"] + new_tokens // 2, out["static_tok_s"], engine.device
    )
    out["pass"] = bool(out["greedy_ids_identical"]) and out.get("graph_ids_equal_eager_ids", True)
    return out


def _graph_decode(ckpt: Path, device: str, new_tokens: int, repeat: int) -> dict[str, Any]:
    """``bench graph-decode`` on this device; against the measured copy bandwidth on CUDA (read and write
    bytes, so the bound is optimistic by up to 2×), the contexts cut to 256 / 512 on the CPU dry run."""
    from rynnec_ros.bench.graph_decode_bench import decode_at_contexts
    from rynnec_ros.bench.roofline import measure_copy_bandwidth

    engine = RynnEC.from_pretrained(ckpt, device=device, dtype="bfloat16", reuse=False)
    cuda = engine.device.type == "cuda"
    out = decode_at_contexts(
        {"torch": engine}, {}, ckpt, (3072, 12288) if cuda else (256, 512), new_tokens=new_tokens,
        repeat=repeat, bandwidth_gbs=measure_copy_bandwidth(engine.device) if cuda else None,
    )
    out["onnxruntime_variants"] = "not run: need onnxruntime-gpu (not on this machine)"
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--size", default="2b", choices=sorted({**FULL_SIZES, **MINI}))
    p.add_argument("--device", default="auto", help="cuda | cpu | auto (cuda when available)")
    p.add_argument("--work", type=Path, help="checkpoint directory (default: a temporary one)")
    p.add_argument("--frames", type=int, default=8, help="engine/reuse/decode window")
    p.add_argument("--live-frames", type=int, default=30)
    p.add_argument("--frame-size", default="640x480")
    p.add_argument("--new-tokens", type=int, default=64)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--budget-s", type=float, default=450.0, help="skip phases that would start later")
    args = p.parse_args(argv)

    device = "cuda" if args.device == "auto" and torch.cuda.is_available() else args.device
    if device == "auto":
        device = "cpu"
    width, height = (int(x) for x in args.frame_size.lower().split("x"))
    budget = Budget(args.budget_s)
    results: dict[str, Any] = {}
    dev = torch.device(device)
    tmp = tempfile.TemporaryDirectory(prefix="rynnec-gpu-check-")
    ckpt = (args.work or Path(tmp.name)) / f"rynnec-{args.size}"
    frames = synthetic_window(args.frames, width, height)

    _phase(results, "env", budget, lambda: _env(dev))

    def build() -> dict[str, Any]:
        if not (ckpt / "model.safetensors").is_file():
            make_full_checkpoint(ckpt, args.size, sizes=MINI, keep_tiny_sam2=args.size in MINI)
        return {"checkpoint": str(ckpt), "bytes": (ckpt / "model.safetensors").stat().st_size}

    _phase(results, "ckpt", budget, build)
    if results["ckpt"]["status"] != "ok":
        results["stopped"] = "no checkpoint, nothing else can run"
    else:
        from rynnec_ros.bench.engine_bench import engine_stages
        from rynnec_ros.bench.live_bench import live_window
        from rynnec_ros.bench.reuse_bench import work_reuse

        def bf16(reuse: bool) -> RynnEC:
            return RynnEC.from_pretrained(ckpt, device=device, dtype="bfloat16", reuse=reuse)

        _phase(results, "agreement", budget, lambda: _agreement(ckpt, device, frames[:2], 16))
        _phase(results, "decode", budget, lambda: _decode(ckpt, device, frames, args.new_tokens, args.repeat))
        _phase(
            results, "graph-decode", budget, lambda: _graph_decode(ckpt, device, args.new_tokens, args.repeat)
        )
        _phase(
            results,
            "engine",
            budget,
            lambda: engine_stages(
                bf16(False), frames, QUESTION, new_tokens=args.new_tokens, repeat=args.repeat, checkpoint=ckpt
            ),
        )
        _phase(
            results,
            "reuse",
            budget,
            lambda: work_reuse(bf16(True), bf16(False), frames, new_tokens=16, repeat=args.repeat),
        )
        block = min(8, args.live_frames)  # the window mode with blocks of 8 frames, one block of steady state
        stream = synthetic_window(args.live_frames + block, width, height)
        _phase(
            results,
            "live",
            budget,
            lambda: live_window(bf16(True), stream, args.live_frames, QUESTION, new_tokens=16, repeat=2,
                                block=block),
        )
    why = "its wheel is not on the GPU machine (no package index there); the robot-side path"
    _phase(results, "onnxruntime-gpu", budget, lambda: _optional("onnxruntime", why))
    _phase(results, "tensorrt", budget, lambda: _optional("tensorrt", why))
    tmp.cleanup()

    config = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    config["device_used"] = device
    path = write_report(args.out / "gpu_check.json", make_report(results, config))
    print(json.dumps({k: v.get("status") for k, v in results.items() if isinstance(v, dict)}))
    print(f"wrote {path}")
    failed = [k for k, v in results.items() if isinstance(v, dict) and v.get("status") == "failed"]
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
