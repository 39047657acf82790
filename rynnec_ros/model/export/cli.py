"""``rynnec-ros export {onnx,tensorrt}``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rynnec_ros.model.spec import KV_CACHES


def _dims(text: str | None) -> dict[str, tuple[int, int, int]]:
    """``seq=1:4096:16384,patches=4:1564:65536`` → named (min, opt, max) ranges."""
    if not text:
        return {}
    out: dict[str, tuple[int, int, int]] = {}
    for item in text.split(","):
        try:
            name, rng = item.split("=")
            lo, opt, hi = (int(x) for x in rng.split(":"))
        except ValueError:
            raise ValueError(f"bad --dims entry {item!r}; expected name=min:opt:max") from None
        if not 1 <= lo <= opt <= hi:
            raise ValueError(f"--dims {name}: need 1 <= min <= opt <= max, got {lo}:{opt}:{hi}")
        out[name] = (lo, opt, hi)
    return out


def _onnx(args: argparse.Namespace) -> int:
    import torch

    from rynnec_ros.model.export.onnx_export import export_onnx

    torch.set_num_threads(args.threads)
    graphs = args.graphs.split(",") if args.graphs else None
    manifest = export_onnx(
        args.checkpoint, args.out, graphs=graphs, max_frame_tokens=args.max_frame_tokens,
        max_seq=args.max_seq, weights=args.weights.split(",") if args.weights else (),
        kv_cache=[args.kv_cache] if args.kv_cache else (),
    )
    print(f"wrote {len(manifest.graphs)} graphs to {args.out}: {', '.join(manifest.graphs)}")
    if args.check:
        from rynnec_ros.model.backends.ort import OrtGraph
        from rynnec_ros.model.export.parity import check_graphs
        from rynnec_ros.model.loader import load_model

        model = load_model(args.checkpoint)
        runners = {
            n: OrtGraph(Path(args.out) / g.file, threads=args.threads) for n, g in manifest.graphs.items()
        }
        rows = check_graphs(model, runners)
        for r in rows:
            print(
                f"  {'ok ' if r.ok else 'BAD'} {r.graph}.{r.output}: rel {r.rel:.2e} (tol {r.tol:.0e}), "
                f"max|Δ| {r.max_abs:.2e}"
            )
        if not all(r.ok for r in rows):
            return 1
    return 0


def _tensorrt(args: argparse.Namespace) -> int:
    from rynnec_ros.model.export.tensorrt_build import build_all

    graphs = args.graphs.split(",") if args.graphs else None
    results = build_all(
        Path(args.onnx),
        Path(args.out),
        precision=args.precision,
        weights=args.weights or "",
        graphs=graphs,
        dim_overrides=_dims(args.dims),
        workspace_gb=args.workspace_gb,
        calib_dir=Path(args.calib) if args.calib else None,
        force=args.force,
    )
    print(
        json.dumps(
            [
                {
                    "graph": r.graph,
                    "engine": r.engine.name,
                    "cached": r.cached,
                    "seconds": round(r.seconds, 1),
                }
                for r in results
            ],
            indent=2,
        )
    )
    return 0


def _guarded(fn):
    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except (ValueError, FileNotFoundError, RuntimeError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2

    return run


def register(subparsers: argparse._SubParsersAction) -> None:
    export = subparsers.add_parser("export", help="export the model to ONNX / build TensorRT engines")
    sub = export.add_subparsers(dest="export_command", required=True)

    p = sub.add_parser("onnx", help="export every compute graph of a checkpoint to ONNX")
    p.add_argument("--checkpoint", required=True, help="RynnEC checkpoint directory")
    p.add_argument("--out", required=True, help="output directory (graphs + manifest.json)")
    p.add_argument("--graphs", help="comma-separated subset (default: all)")
    p.add_argument("--max-frame-tokens", type=int, default=16384, help="largest LLM tokens per frame")
    p.add_argument("--max-seq", type=int, default=16384, help="largest prompt + generated length")
    p.add_argument(
        "--weights", help="also write the LLM graphs with weight-only int8 and/or int4 weights (int8,int4)"
    )
    p.add_argument(
        "--kv-cache", choices=KV_CACHES[1:],
        help="also write the fused decode graphs with an int8 K/V cache (scales calibrated here)",
    )
    p.add_argument("--threads", type=int, default=2)
    p.add_argument(
        "--check", action="store_true", help="check parity with torch (ONNX Runtime CPU) afterwards"
    )
    p.set_defaults(func=_guarded(_onnx))

    t = sub.add_parser("tensorrt", help="build TensorRT engines from an ONNX export (needs a CUDA GPU)")
    t.add_argument("--onnx", required=True, help="directory written by `export onnx`")
    t.add_argument("--out", required=True, help="engine directory (also the engine cache)")
    t.add_argument("--precision", default="fp16", choices=["fp32", "fp16", "bf16", "int8", "fp8"])
    t.add_argument("--weights", choices=["int8", "int4"],
                   help="build the LLM graphs from the export's weight-only int8/int4 Q/DQ graphs")
    t.add_argument("--graphs", help="comma-separated subset (default: all)")
    t.add_argument("--dims", help="override profile ranges, e.g. seq=1:2048:8192,past=1:2048:8192")
    t.add_argument("--workspace-gb", type=float, default=8.0)
    t.add_argument("--calib", help="int8 calibration: DIR/<graph>/*.npz input batches (default: random)")
    t.add_argument("--force", action="store_true", help="rebuild even when the cache has the engine")
    t.set_defaults(func=_guarded(_tensorrt))
