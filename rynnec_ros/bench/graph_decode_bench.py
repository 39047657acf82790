"""Decode tok/s of the torch and ONNX Runtime decoders at long contexts, against the bandwidth bound.

A batch-1 decode step is memory-bound: it reads every LLM weight and the valid KV once (roofline.py).
This section puts the variants side by side in one process (torch, ONNX Runtime fp32, int8, int4
weights), each engine's own decode step (``RynnEC._step_fn``: embedding, decoder stack, LM head) at
``context`` cached positions. Decode cost does not depend on the cached values, so the cache is
filled with seeded random K/V instead of a real prefill (a 12K-token prefill of every variant would
take minutes on a CPU and measure nothing this section reports); the quality of the quantised
weights is measured on real prompts (``weight_quality``).

Bytes per token are read from what each variant runs: the decode and LM-head graphs' initializers
(the weights as stored in the graph, int4 packed two per byte) and the KV bytes at the decode graph's
boundary (its past inputs and new outputs at this context), or for torch the checkpoint's LLM weights
and the valid KV. The bound is ``bandwidth / bytes``; the bandwidth is ``--bandwidth-gbs`` or this
machine's read-only bandwidth measured here with numpy (a sum over 512 MiB, single thread).
``weight_quality`` compares the quantised weights with float32 on real prompts.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from rynnec_ros.bench.engine_bench import filler_token
from rynnec_ros.bench.measure import Stats, rss_mb
from rynnec_ros.bench.roofline import kv_bytes_per_token_read, llm_weight_bytes
from rynnec_ros.core.types import Request
from rynnec_ros.model.engine import RynnEC
from rynnec_ros.model.export.kvcache import QUERY_ROWS_KEY


def _elem_bytes(onnx_type: int) -> float:
    """Bytes per element of an ONNX tensor type; int4 and uint4 are stored two per byte."""
    import onnx

    if onnx_type in (onnx.TensorProto.INT4, onnx.TensorProto.UINT4):
        return 0.5
    return float(onnx.helper.tensor_dtype_to_np_dtype(onnx_type).itemsize)


def measure_read_bandwidth(size_mb: int = 512, repeat: int = 5) -> float:
    """Read-only memory bandwidth (GB/s) of one thread: ``numpy.sum`` over ``size_mb`` of float32."""
    a = np.ones(size_mb * (1 << 20) // 4, dtype=np.float32)
    a.sum()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        a.sum()
        times.append(time.perf_counter() - t0)
    return a.nbytes / sorted(times)[len(times) // 2] / 1e9


def onnx_initializer_bytes(path: Path) -> int:
    """Bytes of a graph's initializers as stored (external data included, packed int4 as half a byte)."""
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    total = 0.0
    for t in model.graph.initializer:
        n = 1
        for d in t.dims:
            n *= int(d)
        total += np.ceil(n * _elem_bytes(t.data_type))
    return int(total)


def onnx_kv_io_bytes(path: Path, context: int, new: int = 1) -> int:
    """KV bytes crossing the decode graph's boundary per call at ``context`` cached positions.

    Every input and output but the embeddings, positions and hidden states, with the named dimensions
    ``past`` = context, ``new`` = ``new`` and ``total`` = context + new. An output ``new_X`` whose row
    width the exporter left unnamed has the rows of its input ``past_X``. The fused graph's layer
    buffers (``cache_X`` in, ``present_X`` out, dimension ``capacity``, bound to the same memory) count
    the valid rows read (context) and the new rows written, not the unused capacity; a graph that
    stacks G query rows per kv head (``kvcache.query_rows``) writes G rows per new position, G − 1 of
    them scratch.
    """
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    rows = int({p.key: p.value for p in model.metadata_props}.get(QUERY_ROWS_KEY, 1))
    sizes = {"past": context, "new": new, "total": context + new, "capacity": context}
    written = {**sizes, "capacity": new * rows}
    skip = {"inputs_embeds", "position_ids", "hidden"}
    row: dict[str, float] = {}
    total = 0.0
    for vi in [*model.graph.input, *model.graph.output]:
        if vi.name in skip:
            continue
        t = vi.type.tensor_type
        dims = [d.dim_param or int(d.dim_value) for d in t.shape.dim]
        width = _elem_bytes(t.elem_type)
        named = written if vi.name.startswith("present_") else sizes
        for d in dims[1:]:
            if isinstance(d, int):
                width *= d
            else:
                width *= named.get(d, float("nan"))
        if vi.name.startswith("past_"):
            row[vi.name[len("past_") :]] = width
        elif width != width:  # an unnamed row width: the matching past input's
            width = row[vi.name[len("new_") :]]
        first = dims[0] if dims else 1
        total += (sizes[first] if isinstance(first, str) else first) * width
    return int(total)


def _bytes_per_token(
    engine: RynnEC, checkpoint: Path, onnx_files: dict[str, Path], context: int
) -> dict[str, int]:
    if not onnx_files:
        elem = torch.empty(0, dtype=engine.dtype).element_size()
        weights, _ = llm_weight_bytes(checkpoint, elem)
        kv = kv_bytes_per_token_read(checkpoint, context, elem)
        return {"weights": weights, "kv": kv, "total": weights + kv}
    weights = sum(onnx_initializer_bytes(p) for p in onnx_files.values())
    kv = onnx_kv_io_bytes(onnx_files["llm_decode"], context)
    return {"weights": weights, "kv": kv, "total": weights + kv}


def _filled_cache(engine: RynnEC, context: int, steps: int, seed: int) -> Any:
    """The engine's working cache holding ``context`` positions of seeded random K/V."""
    cache = engine._working_cache(context + steps)
    if cache.k.numel() == 0:  # a graph decoder shapes its buffers on the first call
        engine.decoder.forward(engine.model.embed(torch.tensor([[0]], device=engine.device)), cache)
    gen = torch.Generator().manual_seed(seed)
    cache.k.copy_(torch.randn(cache.k.shape, generator=gen, dtype=torch.float32).to(cache.k.dtype))
    cache.v.copy_(torch.randn(cache.v.shape, generator=gen, dtype=torch.float32).to(cache.v.dtype))
    cache.length = context
    return cache


def _decode_seconds(engine: RynnEC, context: int, steps: int, token: int) -> tuple[float, float]:
    """Wall and process-CPU seconds of ``steps`` decode steps from ``context`` cached positions."""
    cache = engine._kv
    assert cache is not None
    cache.length = context
    with torch.inference_mode():
        step, _ = engine._step_fn(cache, engine.model.config.vocab_size)
        t = torch.tensor([token], device=engine.device)
        engine._sync()
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(steps):
            step(t)
        engine._sync()
    return time.perf_counter() - t0, time.process_time() - c0


def decode_at_contexts(
    engines: dict[str, RynnEC],
    onnx_files: dict[str, dict[str, Path]],
    checkpoint: Path,
    contexts: Sequence[int],
    new_tokens: int = 16,
    repeat: int = 3,
    bandwidth_gbs: float | None = None,
    load_rss_mb: dict[str, dict[str, float]] | None = None,
) -> dict[str, Any]:
    """Interleaved decode timing of every engine at every context (see module docstring)."""
    bw = bandwidth_gbs if bandwidth_gbs is not None else measure_read_bandwidth()
    bw_source = "given" if bandwidth_gbs is not None else "measured: numpy.sum over 512 MiB float32, 1 thread"
    rows: dict[str, dict[str, Any]] = {name: {"contexts": {}} for name in engines}
    for context in contexts:
        times: dict[str, list[float]] = {name: [] for name in engines}
        cpu: dict[str, list[float]] = {name: [] for name in engines}
        for engine in engines.values():
            with torch.inference_mode():
                _filled_cache(engine, context, new_tokens, seed=context)
            _decode_seconds(engine, context, 2, filler_token(engine))  # warm-up
        names = list(engines)
        for r in range(repeat):
            for name in names if r % 2 == 0 else reversed(names):
                engine = engines[name]
                wall, used = _decode_seconds(engine, context, new_tokens, filler_token(engine))
                times[name].append(wall)
                cpu[name].append(used)
        for name, engine in engines.items():
            st = Stats.of(times[name])
            tok_s = new_tokens / st.median
            b = _bytes_per_token(engine, checkpoint, onnx_files.get(name, {}), context)
            bound = bw * 1e9 / b["total"]
            rows[name]["contexts"][str(context)] = {
                "decode": st,
                "tok_s": tok_s,
                "tok_s_best": new_tokens / st.min,  # the least disturbed round on a shared machine
                # CPU seconds per token: what other users' load inflates least (wall waits for cores)
                "cpu_ms_per_token": Stats.of(cpu[name]).median / new_tokens * 1e3,
                "bytes_per_token": b,
                "bound_tok_s": bound,
                "fraction_of_bound": tok_s / bound,
            }
    for name in engines:
        rows[name]["rss"] = (load_rss_mb or {}).get(name, {})
    ref = next(iter(engines))
    for name in engines:
        mine, theirs = rows[name]["contexts"], rows[ref]["contexts"]
        rows[name]["tok_s_ratio_vs_" + ref] = {c: mine[c]["tok_s"] / theirs[c]["tok_s"] for c in mine}
    return {
        "available": True,
        "variants": rows,
        "contexts": list(contexts),
        "new_tokens": new_tokens,
        "bandwidth_gbs": bw,
        "bandwidth_source": bw_source,
        "load_average": os.getloadavg(),
        "process_peak_rss_mb": rss_mb(os.getpid(), "VmHWM"),
        "method": "each variant's own decode step (embedding, decoder, LM head) over a cache holding "
        "`context` seeded random K/V positions, `new_tokens` teacher-forced steps, interleaved rounds, "
        "median (tok_s), fastest round (tok_s_best), median process CPU per token; bytes per token from "
        "the graphs' initializers and KV I/O (torch: checkpoint LLM weights + valid KV)",
    }


def measure_load(build: Any) -> tuple[Any, dict[str, float]]:
    """Build an engine and report the RSS it added and the peak above the RSS before it."""
    before = rss_mb(os.getpid())
    with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
        fh.write("5")  # reset VmHWM to the current RSS
    engine = build()
    return engine, {
        "rss_added_mb": rss_mb(os.getpid()) - before,
        "load_peak_above_start_mb": rss_mb(os.getpid(), "VmHWM") - before,
    }



@contextlib.contextmanager
def _no_eos(engine: RynnEC) -> Iterator[None]:
    """Generate exactly the asked number of tokens (a random checkpoint may emit eos at once)."""
    saved = list(engine.config.eos_token_ids)
    engine.config.eos_token_ids.clear()
    try:
        yield
    finally:
        engine.config.eos_token_ids[:] = saved


def _generation(engine: RynnEC, request: Request, steps: int, force: Sequence[int] | None = None) -> Any:
    prep = engine.prepare(request)
    prep.keep_steps = True
    with _no_eos(engine), torch.inference_mode():
        return engine.generate(prep, steps, force_ids=force)


def weight_quality(
    engines: dict[str, RynnEC], reference: str, requests: dict[str, Request], new_tokens: int = 200
) -> dict[str, Any]:
    """Quantised weights against ``reference`` (float32) on real prompts, ``new_tokens`` per case.

    * teacher-forced: each engine is fed the reference's greedy ids; per step, the argmax of its logits
      agrees with the reference's or not (``top1_agreement``), and its logits differ by
      ``logit_abs_err`` (max and mean over steps and vocabulary, with the reference's logit range);
    * free-running: each engine's own greedy ids, the fraction equal to the reference's position by
      position, and the first position where they differ (None: never within ``new_tokens``).
    eos is suppressed so that every case runs ``new_tokens`` steps.
    """
    ref = engines[reference]
    out: dict[str, Any] = {}
    for case, request in requests.items():
        base = _generation(ref, request, new_tokens)
        ref_logits = torch.stack(base.step_logits)
        rows: dict[str, Any] = {"prompt_tokens": len(ref.prepare(request).input_ids)}
        for name, engine in engines.items():
            if name == reference:
                continue
            forced = torch.stack(_generation(engine, request, new_tokens, base.ids).step_logits)
            free = _generation(engine, request, new_tokens).ids
            err = (forced - ref_logits).abs()
            same = [a == b for a, b in zip(free, base.ids, strict=True)]
            rows[name] = {
                "top1_agreement": float((forced.argmax(-1) == ref_logits.argmax(-1)).float().mean()),
                "logit_abs_err_max": float(err.max()),
                "logit_abs_err_mean": float(err.mean()),
                "reference_logit_range": float(ref_logits.max() - ref_logits.min()),
                "free_running_agreement": sum(same) / len(same),
                "first_difference": same.index(False) if not all(same) else None,
                "steps": len(base.ids),
            }
        out[case] = rows
    return out
