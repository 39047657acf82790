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
    fixture_requests,
    resolve_checkpoint,
    synthetic_window,
    window_request,
)
from rynnec_ros.model.spec import EngineSpec


def _spec(
    args: argparse.Namespace, checkpoint: Path, backend: str, workdir: Path, weights: str | None = None
) -> EngineSpec:
    """The engine ``args`` describe on ``backend`` (a section may compare two), with a fresh export for
    onnxruntime unless ``--onnx-dir`` names one; ``weights`` overrides ``--weights``."""
    onnx = backend == "onnxruntime"
    w = (args.weights or "") if weights is None else weights
    return EngineSpec.from_args(
        args, checkpoint=str(checkpoint), backend=backend,
        onnx_dir=str(ensure_onnx(checkpoint, args.onnx_dir, workdir, w)) if onnx else "",
        ort_provider=(args.ort_provider or "") if onnx else "",
        weights=w if onnx else "",
    )


def run_section(
    name: str, args: argparse.Namespace, workdir: Path, width: int, height: int
) -> dict[str, Any]:
    if name in ("ingest", "service", "cancel"):
        from rynnec_ros.bench.ros_bench import ros_section

        return ros_section(name, args, workdir, width, height)
    if name == "activations":
        from rynnec_ros.bench.activation_bench import activation_peaks

        return activation_peaks(width, height)
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
    if name == "graph-decode":
        return _graph_decode(args, checkpoint, workdir, width, height)
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


def _graph_decode(
    args: argparse.Namespace, checkpoint: Path, workdir: Path, width: int, height: int
) -> dict[str, Any]:
    """Every ``--variants`` entry in one process: ``torch``, ``onnxruntime``, ``onnxruntime:<weights>``, each
    ONNX Runtime one optionally with ``+kv8`` (the int8 K/V cache graph): ``onnxruntime:kv8``,
    ``onnxruntime:int4+kv8``."""
    from rynnec_ros.bench.graph_decode_bench import decode_at_contexts, measure_load, weight_quality
    from rynnec_ros.model.export.manifest import Manifest

    engines, files, rss = {}, {}, {}
    for variant in args.variants.split(","):
        backend, _, options = variant.partition(":")
        parts = [p for p in options.split("+") if p]
        kv_cache = "int8" if "kv8" in parts else ""
        weights = "".join(p for p in parts if p != "kv8")
        spec = _spec(args, checkpoint, backend, workdir, weights).replace(kv_cache=kv_cache)
        engines[variant], rss[variant] = measure_load(lambda s=spec: build_engine(s, reuse=False))
        if backend == "onnxruntime":
            manifest = Manifest.load(spec.onnx_dir)
            files[variant] = {
                g: Path(spec.onnx_dir) / manifest.graph(g, weights).file for g in ("llm_decode", "lm_head")
            }
            if kv_cache:
                files[variant]["llm_decode"] = Path(spec.onnx_dir) / manifest.kv_graph(kv_cache, weights).file
    contexts = [int(c) for c in args.contexts.split(",")]
    section = decode_at_contexts(
        engines, files, checkpoint, contexts, new_tokens=args.new_tokens, repeat=args.repeat,
        bandwidth_gbs=args.bandwidth_gbs, load_rss_mb=rss,
    )
    quantized = [v for v in engines if v.startswith("onnxruntime:")]
    if args.quality_tokens > 0 and "onnxruntime" in engines and quantized:
        if args.quality_cases:
            requests = fixture_requests(Path(args.quality_cases))
        else:
            requests = {"window": window_request(synthetic_window(args.frames, width, height), args.question)}
        section["quality"] = weight_quality(
            {v: engines[v] for v in ["onnxruntime", *quantized]}, "onnxruntime", requests, args.quality_tokens
        )
        section["quality_note"] = (
            "agreement with the float32 graphs of the same checkpoint; on a random-weight checkpoint this "
            "measures how far the quantisation moves the logits, not answer quality"
        )
    return section
