"""Spatial commands: ``gen-scene``, ``gen-spatial-qa``, ``eval-spatial`` (= ``eval spatial``) and
``eval-paraphrases``.

``register(subparsers)`` adds the top-level commands; ``register_eval(eval_subparsers)`` adds
``spatial`` to the shared ``eval`` group owned by the evaluation area.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

# bagio's STORAGES, CHUNK_COMPRESSIONS and DEFAULT_DEPTH_SCALE, spelled out: importing bagio here would load
# numpy and scipy for every rynnec-ros command's argument parsing (bagio checks the values again).
_STORAGES = ("mcap", "sqlite3")
_CHUNK_COMPRESSIONS = ("none", "zstd")
_DEPTH_SCALE = 0.001


def register(subparsers: argparse._SubParsersAction) -> None:
    g = subparsers.add_parser(
        "gen-scene", help="render a synthetic RGB-D scene to a rosbag2 bag + spatial QA"
    )
    g.add_argument("--out", type=Path, required=True, help="output directory (bag/, questions.json, ...)")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--frames", type=int, default=16)
    g.add_argument("--width", type=int, default=320)
    g.add_argument("--height", type=int, default=240)
    g.add_argument("--depth-noise", type=float, default=0.0, help="relative depth noise σ (0.01 = 1%%)")
    g.add_argument("--holes", type=float, default=0.0, help="fraction of depth pixels set to NaN")
    g.add_argument("--mask-bleed", type=int, default=0, help="dilate object masks by this many pixels")
    g.add_argument("--per-task", type=int, default=5, help="questions per task family")
    g.add_argument("--arm-length", type=float, default=0.8, help="arm length (m) for reachability")
    g.add_argument(
        "--storage",
        choices=_STORAGES,
        default="mcap",
        help="rosbag2 storage of bag/: mcap (what Jazzy and Kilted record by default) or sqlite3 (Humble's)",
    )
    g.add_argument(
        "--chunk-compression",
        choices=_CHUNK_COMPRESSIONS,
        default="none",
        help="MCAP chunk compression: none (ros2 bag record's default) or zstd "
        "(its zstd_fast/zstd_small storage presets)",
    )
    g.set_defaults(func=_errors(_gen_scene))

    q = subparsers.add_parser("gen-spatial-qa", help="RynnEC-style spatial QA from an RGB-D bag with masks")
    q.add_argument("--bag", type=Path, required=True, help="rosbag2 directory (MCAP or sqlite3)")
    q.add_argument("--masks", type=Path, required=True, help="masks JSON (rynnec_ros.spatial_masks/1)")
    q.add_argument("--out", type=Path, required=True, help="questions JSON to write")
    q.add_argument("--per-task", type=int, default=5)
    q.add_argument("--max-window", type=int, default=32, help="most frames per question window")
    q.add_argument("--seed", type=int, default=0)
    q.add_argument("--arm-length", type=float, default=0.8)
    q.add_argument("--world-frame", default="odom", help="gravity-aligned TF frame (z up)")
    q.add_argument(
        "--depth-scale",
        type=float,
        default=_DEPTH_SCALE,
        help="metres per unit of 16UC1 depth (default 0.001: millimetres); 32FC1 depth is metres",
    )
    q.set_defaults(func=_errors(_gen_qa))

    e = subparsers.add_parser(
        "eval-spatial", help="score the geometric engine on spatial QA (= eval spatial)"
    )
    _eval_args(e)

    p = subparsers.add_parser(
        "eval-paraphrases",
        help="paraphrase sets (development, blind held-out) on rendered scenes, scored vs the scene model",
    )
    from rynnec_ros.eval.paraphrases import SPLITS  # the one list of splits; each blind round adds one

    p.add_argument(
        "--half",
        choices=[*SPLITS, "both"],
        default="both",
        help="dev: the development sets (eval/data/paraphrases/manifest.yaml); heldout: blind12 (written "
        f"blind, never tuned on); fresh … {SPLITS[-1]}: sets by writers who read no project document; "
        "both: dev and heldout",
    )
    p.add_argument(
        "--readings",
        action="store_true",
        help="only how each set is read (no scenes): read as labelled, silent wrong, refused, per set",
    )
    p.add_argument("--confirm-checkpoint", type=Path,
                   help="with --readings: also score each reading with this checkpoint as the second reader "
                   "(spatial_confirm; torch backend) and count what it confirms and vetoes")
    p.add_argument("--every", type=int, default=1, help="with --confirm-checkpoint: every N-th question")
    p.add_argument("--seeds", default="0,1,2", help="scene seeds, comma-separated")
    p.add_argument("--depth-noise", type=float, default=0.0, help="relative depth noise σ (0.01 = 1%%)")
    p.add_argument("--holes", type=float, default=0.0, help="fraction of depth pixels set to NaN")
    p.add_argument("--out", type=Path, help="write per-task scores and per-question records (JSON)")
    p.set_defaults(func=_errors(_eval_paraphrases))


def register_eval(eval_subparsers: argparse._SubParsersAction) -> None:
    e = eval_subparsers.add_parser("spatial", help="geometric spatial cognition on RGB-D bags + spatial QA")
    _eval_args(e)


def _eval_args(e: argparse.ArgumentParser) -> None:
    e.add_argument("--bag", type=Path, action="append", required=True, help="bag directory (repeatable)")
    e.add_argument(
        "--questions",
        type=Path,
        action="append",
        required=True,
        help="questions JSON, one per --bag in the same order",
    )
    e.add_argument("--out", type=Path, help="write per-task scores and per-question records (JSON)")
    e.add_argument("--use-task", action="store_true", help="pass the task field instead of recognising text")
    e.add_argument("--arm-length", type=float, default=None, help="default: the questions file's value")
    e.add_argument("--world-frame", default="odom")
    e.set_defaults(func=_errors(_eval))


def _errors(fn):
    def run(args: argparse.Namespace) -> int:
        try:
            return int(fn(args) or 0)
        except ValueError as exc:
            print(f"rynnec-ros: error: {exc}", file=sys.stderr)
            return 2

    return run


def _gen_scene(args: argparse.Namespace) -> int:
    from rynnec_ros.scenes.synth import SceneOptions, generate_scene

    summary = generate_scene(
        args.out,
        SceneOptions(
            seed=args.seed,
            frames=args.frames,
            width=args.width,
            height=args.height,
            depth_noise=args.depth_noise,
            holes=args.holes,
            mask_bleed_px=args.mask_bleed,
            per_task=args.per_task,
            arm_length_m=args.arm_length,
            storage=args.storage,
            chunk_compression=args.chunk_compression,
        ),
    )
    print(json.dumps(summary))
    return 0


def _gen_qa(args: argparse.Namespace) -> int:
    from rynnec_ros.scenes.dataset import QA_FORMAT, save_json
    from rynnec_ros.scenes.qa import GenParams, generate_from_bag
    from rynnec_ros.spatial.engine import SpatialEngine, SpatialParams

    engine = SpatialEngine(SpatialParams(arm_length_m=args.arm_length))
    params = GenParams(per_task=args.per_task, arm_length_m=args.arm_length, max_window=args.max_window)
    questions = generate_from_bag(
        args.bag,
        args.masks,
        params,
        engine,
        seed=args.seed,
        world_frame=args.world_frame,
        depth_scale=args.depth_scale,
    )
    save_json(
        args.out,
        {
            "format": QA_FORMAT,
            "bag": str(args.bag),
            "arm_length_m": args.arm_length,
            "source": "geometry",
            "questions": questions,
        },
    )
    print(json.dumps({"out": str(args.out), "questions": len(questions)}))
    return 0


def _eval(args: argparse.Namespace) -> int:
    from rynnec_ros.eval.spatial import evaluate, format_table, summarise
    from rynnec_ros.spatial.engine import SpatialParams

    if len(args.bag) != len(args.questions):
        raise ValueError(f"{len(args.bag)} --bag but {len(args.questions)} --questions; give them in pairs")
    records, labels = [], []
    for bag, qfile in zip(args.bag, args.questions, strict=True):
        params = None if args.arm_length is None else SpatialParams(arm_length_m=args.arm_length)
        res = evaluate(bag, qfile, params, use_task=args.use_task, world_frame=args.world_frame)
        for r in res["records"]:
            r["bag"] = str(bag)
        records.extend(res["records"])
        labels.append(res["labels"])
    per_task = summarise(records)
    for bag, label in zip(args.bag, labels, strict=True):
        print(f"{bag}: {label}")
    print(format_table(per_task))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(
            json.dumps(
                {
                    "labels": dict(zip(map(str, args.bag), labels, strict=True)),
                    "per_task": per_task,
                    "records": records,
                },
                indent=1,
            )
        )
    return 0


def _eval_paraphrases(args: argparse.Namespace) -> int:
    from rynnec_ros.eval.spatial import evaluate_paraphrases, format_table, overall

    seeds = tuple(int(x) for x in args.seeds.split(","))
    halves = ["dev", "heldout"] if args.half == "both" else [args.half]
    results: dict[str, Any] = {}
    if args.readings:
        from rynnec_ros.eval.spatial import readings

        for half in halves:
            results[half] = readings(half)
            for name, r in results[half].items():
                print(f"{half}/{name}: {r['n']} questions, {r['right']} read as labelled, "
                      f"{r['silent_wrong']} silent wrong, {r['refused']} refused")
                for w in r["wrong"]:
                    print(f"  WRONG   {w['expected']:45} read {w['read']:45} {w['question']!r}")
                for w in r["refusals"]:
                    print(f"  REFUSED {w['expected']:45} {w['question']!r}: {w['why'][-80:]}")
        if args.confirm_checkpoint is not None:
            from rynnec_ros.eval.spatial import confirmed_readings
            from rynnec_ros.model import RynnEC

            reader = RynnEC.from_pretrained(args.confirm_checkpoint)
            for half in halves:
                c = results[half]["confirm"] = confirmed_readings(half, reader, args.every)
                print(f"{half}: second reader on {c['asked']} readings (every {c['every']}): right "
                      f"{c['right_confirmed']} confirmed, {c['right_vetoed']} vetoed; silent wrong "
                      f"{c['wrong_vetoed']} vetoed, {c['wrong_confirmed']} confirmed")
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(results, indent=1))
        return 0
    for half in halves:
        res = evaluate_paraphrases(half, seeds, noise=args.depth_noise, holes=args.holes)
        res["overall"] = overall(res["records"])
        results[half] = res
        print(
            f"== {half} ({len(res['records'])} questions; depth noise {args.depth_noise}, holes {args.holes})"
        )
        print(format_table(res["per_task"]))
        print("overall: " + ", ".join(f"{m} {v['score']:.3f} ({v['n']})" for m, v in res["overall"].items()))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results if len(halves) > 1 else results[halves[0]], indent=1))
    return 0
