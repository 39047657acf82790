"""``rynnec-ros make-tiny-checkpoint`` and ``rynnec-ros infer``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .spec import EngineSpec, add_engine_args


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "make-tiny-checkpoint", help="write a random RynnEC checkpoint (official format)"
    )
    p.add_argument("dir", type=Path)
    p.add_argument("--size", choices=["tiny", "small"], default="tiny")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--untied", action="store_true", help="separate lm_head instead of tied embeddings")
    p.set_defaults(func=_make_tiny)

    q = subparsers.add_parser("infer", help="ask RynnEC a question about a video or images")
    q.add_argument("--checkpoint", default="", help="checkpoint directory (not with --backend remote)")
    src = q.add_mutually_exclusive_group(required=True)
    src.add_argument("--video", type=Path)
    src.add_argument("--frames", type=Path, nargs="+")
    q.add_argument("--question", required=True)
    q.add_argument(
        "--mask",
        action="append",
        default=[],
        metavar="FRAME_INDEX:MASK.png",
        help="region mask on a frame; one object per mask, referred to as <object0>, <object1>, ...",
    )
    q.add_argument("--segment", action="store_true", help="segmentation: write one mask PNG per frame")
    q.add_argument("--json", action="store_true", help="print the answer as JSON")
    q.add_argument("--max-frames", type=int, default=30, help="video: at most this many frames (1 fps)")
    q.add_argument("--fps", type=float, default=1.0)
    q.add_argument("--out-dir", type=Path, default=Path("rynnec_masks"))
    q.add_argument("--max-new-tokens", type=int, default=128)
    add_engine_args(q)
    q.set_defaults(func=_infer)


def _make_tiny(args: argparse.Namespace) -> int:
    from rynnec_ros.fixtures.checkpoints import make_checkpoint

    out = make_checkpoint(args.dir, size=args.size, seed=args.seed, tie_word_embeddings=not args.untied)
    print(out)
    return 0


def _parse_mask_arg(spec: str) -> tuple[int, Path]:
    idx, sep, path = spec.partition(":")
    if not sep or not idx.strip().lstrip("-").isdigit():
        raise ValueError(f"--mask must be FRAME_INDEX:MASK.png, got {spec!r}")
    return int(idx), Path(path)


def _infer(args: argparse.Namespace) -> int:
    import numpy as np
    from PIL import Image

    from rynnec_ros.core.types import Frame, Region, Request

    from .backends import load_engine
    from .video import read_image, read_mask, read_video

    try:
        spec = EngineSpec.from_args(args)  # refuse a combination that cannot load before reading video
        if args.video is not None:
            frames, _ = read_video(args.video, fps=args.fps, max_frames=args.max_frames)
        else:
            frames = [read_image(p) for p in args.frames]
        specs = [_parse_mask_arg(s) for s in args.mask]
        for k, (idx, _) in enumerate(specs):
            if not 0 <= idx < len(frames):
                raise ValueError(f"--mask {k}: frame index {idx} out of range for {len(frames)} frames")
        request = Request(
            question=args.question,
            frames=[Frame(f) for f in frames],
            regions=[Region(k, {idx: read_mask(p)}) for k, (idx, p) in enumerate(specs)],
            max_new_tokens=args.max_new_tokens,
        )
        engine = load_engine(spec)
        if args.segment:
            if specs:
                raise ValueError("--mask cannot be combined with --segment")
            ans = engine.segment(request)
        else:
            ans = engine.answer(request)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    mask_files: list[str] = []
    if args.segment and ans.masks is not None:
        args.out_dir.mkdir(parents=True, exist_ok=True)
        for i, m in enumerate(ans.masks):
            if m is None:
                continue
            f = args.out_dir / f"mask_{i:03d}.png"
            Image.fromarray(np.where(m, 255, 0).astype(np.uint8)).save(f)
            mask_files.append(str(f))
    if args.json:
        doc = {
            "text": ans.text,
            "token_ids": ans.token_ids,
            "value": ans.value,
            "unit": ans.unit,
            "option_index": ans.option_index,
            "mask_files": mask_files,
            "mask_scores": ans.mask_scores,
            "reason": ans.reason,
            "num_frames": len(frames),
            "backend": engine.info.backend,
            "graph_providers": engine.info.graph_providers,
            "timings": ans.timings,
        }
        print(json.dumps(doc, indent=2))
    else:
        print(ans.text)
        if ans.reason:
            print(f"({ans.reason})", file=sys.stderr)
        for f in mask_files:
            print(f"mask: {f}", file=sys.stderr)
    return 0
