"""``rynnec-ros bench {engine,reuse,live,decode,backends,configure,ingest,service,cancel,all}`` and
``export``.

Every subcommand writes one JSON report (``--out``) with the environment, the configuration and one
section per measurement, and prints a one-line summary per section.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rynnec_ros.model.spec import LOCAL_BACKENDS, add_engine_args

SECTIONS = ("engine", "reuse", "live", "decode", "graph-decode", "backends", "configure", "prompts", "ingest",
            "service", "cancel")


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--checkpoint",
        default="small",
        help="checkpoint directory, or 'tiny' / 'small' for a fresh random one (default: small)",
    )
    add_engine_args(p, LOCAL_BACKENDS)  # --onnx-dir omitted: a fresh export in the work directory
    p.set_defaults(threads=2)
    p.add_argument("--frames", type=int, default=8, help="frames in the window")
    p.add_argument("--size", default="640x480", help="frame size WxH")
    p.add_argument("--new-tokens", type=int, default=16)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--question", default="<video>\nWhat is the red object doing?")
    p.add_argument(
        "--bandwidth-gbs",
        type=float,
        help="memory bandwidth for the decode bound (default: measured on CUDA; none on CPU)",
    )
    p.add_argument("--live-frames", type=int, default=30, help="live: frames in the live window (default 30)")
    p.add_argument("--block-frames", type=int, default=8,
                   help="live: K of the block window mode measured beside K = 1 and the paper's (default 8)")
    p.add_argument("--slide-frames", type=int,
                   help="live: steady-state frames after the window first filled (default: --block-frames)")
    p.add_argument(
        "--variants",
        default="torch,onnxruntime,onnxruntime:int8,onnxruntime:int4",
        help="graph-decode: engines side by side, backend[:weights][+kv8] (kv8: int8 K/V cache)",
    )
    p.add_argument("--contexts", default="3072,12288", help="graph-decode: cached positions per decode step")
    p.add_argument("--quality-tokens", type=int, default=200,
                   help="graph-decode: tokens per case comparing int8/int4 with float32 (0: skip)")
    p.add_argument("--quality-cases",
                   help="graph-decode: a reference fixture's cases directory (default: the synthetic window)")
    p.add_argument("--out", required=True, help="JSON report path")


def register(subparsers: argparse._SubParsersAction) -> None:
    from rynnec_ros.model.export.cli import register as register_export

    register_export(subparsers)
    bench = subparsers.add_parser("bench", help="benchmarks (JSON reports)")
    sub = bench.add_subparsers(dest="bench_command", required=True)
    helps = {
        "engine": "engine stages: vision per frame, prefill, TTFT, decode tok/s, SAM2 per frame",
        "reuse": "work reuse: 5 questions on one window with vs without caches; region QA CPU per vision "
        "batch",
        "live": "live window: precompute CPU per ingested frame (paper sampling, K = 1, K blocks), TTFT per "
        "position in a block vs a cold question",
        "decode": "static-KV decode step vs transformers' DynamicCache loop: identical ids, tok/s",
        "graph-decode": "decode tok/s, bytes/token and bandwidth bound of torch and ONNX Runtime "
        "fp32/int8/int4 at long contexts",
        "backends": "ONNX Runtime vs torch on the same checkpoint",
        "configure": "peak RSS of loading each backend in a fresh process (torch vs ONNX Runtime)",
        "activations": "peak activation memory of the released vision tower (one --size frame) and SAM 2 "
        "Hiera-L, random weights, fresh processes (not in 'all': minutes of CPU)",
        "prompts": "click -> SAM 2 mask (cold / cached), 3D point placement, propagation per frame, bytes",
        "ingest": "node ingest CPU per 1080p frame vs a bare rclpy subscriber (needs ROS)",
        "service": "service overhead: end-to-end latency minus engine time (needs ROS)",
        "cancel": "cancel latency p50/p95: action goal cancelled -> CANCELED result (needs ROS)",
        "all": "every section in one report",
    }
    for name, text in helps.items():
        p = sub.add_parser(name, help=text)
        _add_common(p)
        p.set_defaults(func=_run, sections=SECTIONS if name == "all" else (name,))
    from rynnec_ros.bench import serve_bench, soak, spatial_bench

    spatial_bench.register(sub)
    serve_bench.register(sub)
    soak.register(sub)


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"--size must look like 640x480, got {text!r}") from None
    return w, h


def _run(args: argparse.Namespace) -> int:
    try:
        return _run_sections(args)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _run_sections(args: argparse.Namespace) -> int:
    from rynnec_ros.bench.report import make_report, write_report
    from rynnec_ros.bench.sections import run_section
    from rynnec_ros.bench.workload import scratch_dir

    width, height = _size(args.size)
    config = {k: v for k, v in vars(args).items() if k not in ("func",)}
    sections: dict[str, Any] = {}
    with scratch_dir() as tmp:
        for name in args.sections:
            print(f"[bench] {name} ...", file=sys.stderr)
            sections[name] = run_section(name, args, Path(tmp), width, height)
            print(f"[bench] {name}: {summary(name, sections[name])}", file=sys.stderr)
    path = write_report(args.out, make_report(sections, config))
    print(f"wrote {path}")
    return 0


def summary(name: str, section: dict[str, Any]) -> str:
    """One line per section for the console."""
    if not section.get("available", False):
        return f"not available: {section.get('reason', '?')}"
    if name == "engine":
        v = section["vision_per_frame"].wall.median
        return (
            f"vision {v * 1e3:.1f} ms/frame, prefill {section['prefill'].median * 1e3:.1f} ms, "
            f"TTFT {section['ttft'].median * 1e3:.1f} ms, decode {section['decode_tok_s']:.1f} tok/s"
        )
    if name == "reuse":
        return (
            f"with/without reuse wall ratio {section['ratio_wall']:.3f} (identical answers: "
            f"{section['answers_identical']})"
            + (f"; region QA prepare CPU {section['region_qa']['ratio_prepare_cpu_is']}: "
               f"{section['region_qa']['ratio_prepare_cpu']:.3f}" if "region_qa" in section else "")
        )
    if name == "live":
        steady = ", ".join(f"{k} {v:.2f}" for k, v in section["steady_cpu_per_frame"].items())
        return (
            f"TTFT live/cold {section['ratio_ttft_live_vs_cold']:.3f} (target <= 0.5; identical answers: "
            f"{section['answers_identical']}), steady precompute CPU s/frame: {steady}"
        )
    if name == "decode":
        return (
            f"static/dynamic decode time {section['ratio_static_vs_dynamic']:.3f}, "
            f"{section['static_tok_s']:.1f} vs {section['dynamic_tok_s']:.1f} tok/s (identical ids: "
            f"{section['greedy_ids_identical']})"
        )
    if name == "graph-decode":
        return ", ".join(
            f"{v} {c}: {row['tok_s']:.1f} tok/s, best {row['tok_s_best']:.1f} "
            f"({row['fraction_of_bound']:.2f} of bound)"
            for v, r in section["variants"].items()
            for c, row in r["contexts"].items()
        )
    if name == "prompts":
        return (
            f"click->mask {section['click_to_mask_cold']['wall']['median'] * 1e3:.1f} ms cold, "
            f"{section['click_to_mask_cached_features']['wall']['median'] * 1e3:.1f} ms cached; point "
            f"placement {section['point_placement_per_frame_s'] * 1e6:.0f} us/frame; propagation "
            + (f"{section['propagation']['per_frame_s']['median'] * 1e3:.0f} ms/frame"
               if section["propagation"]["available"] else "n/a")
        )
    if name == "backends":
        parts = [f"{k}: {v['ratio_wall_vs_reference']:.3f}x" for k, v in section["backends"].items()]
        return "wall vs torch " + ", ".join(parts)
    if name == "configure":
        parts = [
            f"{k} {stored}: {v['load_peak_mb']:.0f} MB"
            for stored in ("as_stored", "stored_bfloat16")
            for k, v in section[stored]["backends"].items()
        ]
        return "configure peak above imports " + ", ".join(parts)
    if name == "activations":
        return (f"vision {section['vision_peak_mb']:.0f} MB ({section['vision'][0]['tokens']} tokens), "
                f"SAM 2 image encoder {section['sam2_peak_mb']:.0f} MB")
    if name == "cancel":
        parts = [f"{k} p50 {v['p50_ms']:.1f} / p95 {v['p95_ms']:.1f} ms" for k, v in section["phases"].items()
                 if v.get("available")]
        return "cancel -> CANCELED " + ", ".join(parts)
    return "done"
