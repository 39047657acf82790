"""Builds the engines a section needs and runs it; what a section cannot measure here it says so."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

from rynnec_ros.bench.report import not_available
from rynnec_ros.bench.workload import (
    build_engine,
    ensure_onnx,
    resolve_checkpoint,
    synthetic_window,
)
from rynnec_ros.model.spec import EngineSpec


def _spec(args: argparse.Namespace, checkpoint: Path, backend: str, workdir: Path) -> EngineSpec:
    """The engine ``args`` describe on ``backend`` (a section may compare two), with a fresh export for
    onnxruntime unless ``--onnx-dir`` names one."""
    onnx = backend == "onnxruntime"
    return EngineSpec.from_args(
        args, checkpoint=str(checkpoint), backend=backend,
        onnx_dir=str(ensure_onnx(checkpoint, args.onnx_dir, workdir)) if onnx else "",
        ort_provider=(args.ort_provider or "") if onnx else "",
    )


def run_section(
    name: str, args: argparse.Namespace, workdir: Path, width: int, height: int
) -> dict[str, Any]:
    if name in ("ingest", "service", "cancel"):
        from rynnec_ros.bench.ros_bench import ros_section

        return ros_section(name, args, workdir, width, height)
    checkpoint = resolve_checkpoint(args.checkpoint, workdir)
    frames = synthetic_window(args.frames, width, height)
    if name == "engine":
        from rynnec_ros.bench.engine_bench import engine_stages

        engine = build_engine(_spec(args, checkpoint, args.backend, workdir), reuse=False)
        return engine_stages(
            engine,
            frames,
            args.question,
            new_tokens=args.new_tokens,
            repeat=args.repeat,
            checkpoint=checkpoint,
            bandwidth_gbs=args.bandwidth_gbs,
        )
    if name == "reuse":
        from rynnec_ros.bench.reuse_bench import region_qa, work_reuse

        spec = _spec(args, checkpoint, args.backend, workdir)
        cold = build_engine(spec, reuse=False)
        section = work_reuse(build_engine(spec, reuse=True), cold, frames, new_tokens=args.new_tokens,
                             repeat=args.repeat)
        if args.backend == "torch":  # the graph backends' vision graphs take one frame per call
            section["region_qa"] = region_qa(cold, frames, new_tokens=args.new_tokens, repeat=args.repeat)
        return section
    if name == "live":
        from rynnec_ros.bench.live_bench import live_window

        slide = args.slide_frames or args.block_frames
        stream = synthetic_window(args.live_frames + slide, width, height)
        engine = build_engine(_spec(args, checkpoint, args.backend, workdir), reuse=True)
        return live_window(
            engine, stream, args.live_frames, args.question, new_tokens=args.new_tokens, repeat=args.repeat,
            block=args.block_frames, slide=slide,
        )
    if name == "prompts":
        from rynnec_ros.bench.prompt_bench import prompt_costs

        engine = build_engine(_spec(args, checkpoint, args.backend, workdir), reuse=True)
        return prompt_costs(engine, frames, repeat=args.repeat)
    if name == "decode":
        from rynnec_ros.bench.decode_bench import compare_decoders

        if args.backend != "torch":
            return not_available("the decode comparison runs the torch decoder against transformers'")
        engine = build_engine(_spec(args, checkpoint, args.backend, workdir), reuse=False)
        return compare_decoders(engine, frames, args.question, new_tokens=args.new_tokens, repeat=args.repeat)
    if name == "backends":
        from rynnec_ros.bench.backends_bench import compare_backends

        other = "onnxruntime" if args.backend == "torch" else args.backend
        engines = {
            b: build_engine(_spec(args, checkpoint, b, workdir), reuse=False) for b in ("torch", other)
        }
        return compare_backends(
            engines, frames, args.question, new_tokens=args.new_tokens, repeat=args.repeat
        )
    if name == "configure":
        from rynnec_ros.bench.configure_bench import bfloat16_copy, configure_memory

        other = "onnxruntime" if args.backend == "torch" else args.backend
        specs = {b: _spec(args, checkpoint, b, workdir) for b in ("torch", other)}
        bf16 = str(bfloat16_copy(checkpoint, workdir))
        return {
            "as_stored": configure_memory(specs),
            "stored_bfloat16": configure_memory(
                {b: dataclasses.replace(s, checkpoint=bf16) for b, s in specs.items()}
            ),
        } | {"available": True}
    return not_available(f"unknown section {name!r}")
