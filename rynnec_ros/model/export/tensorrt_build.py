"""Compile exported ONNX graphs to TensorRT engines with the TensorRT Python API.

Engines are specific to the TensorRT version and the GPU, and building one takes minutes for the
2B model, so built engines are cached under a key of (ONNX bytes, TensorRT version, GPU name and
compute capability, precision, optimisation profile); a rebuild happens only when one of them changes.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rynnec_ros.model.export.manifest import ORT_ONLY, GraphSpec, Manifest

PRECISIONS = ("fp32", "fp16", "bf16", "int8", "fp8")
Profile = Mapping[str, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]]


def tensorrt_available() -> tuple[bool, str]:
    """(True, version) when TensorRT and a CUDA device are usable; else (False, why)."""
    try:
        import tensorrt as trt
    except ImportError as exc:
        return False, f"tensorrt is not installed ({exc}); pip install tensorrt on a CUDA machine"
    try:
        import torch
    except ImportError:
        return False, "torch is not installed"
    if not torch.cuda.is_available():
        return False, f"tensorrt {trt.__version__} is installed but no CUDA device is visible"
    return True, str(trt.__version__)


def gpu_identity() -> str:
    import torch

    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return f"{props.name} sm_{props.major}{props.minor}"


def onnx_digest(onnx_path: Path) -> str:
    """SHA-256 of the graph file and its external-data files (weights live there for large graphs)."""
    h = hashlib.sha256()
    files = [onnx_path, *sorted(onnx_path.parent.glob(onnx_path.name + ".data*"))]
    for f in files:
        h.update(f.name.encode())
        with f.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 22), b""):
                h.update(chunk)
    return h.hexdigest()


def cache_key(onnx_hash: str, trt_version: str, gpu: str, precision: str, profile: Profile) -> str:
    blob = json.dumps(
        {
            "onnx": onnx_hash,
            "trt": trt_version,
            "gpu": gpu,
            "precision": precision,
            "profile": {k: [list(s) for s in v] for k, v in sorted(profile.items())},
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


class _Progress:
    """Prints TensorRT's build phases (TensorRT >= 10 calls this as an ``IProgressMonitor``)."""

    def __init__(self, label: str, stream: Any = sys.stderr) -> None:
        self.label = label
        self.stream = stream
        self.t0 = time.perf_counter()
        self.steps: dict[str, int] = {}

    def phase_start(self, phase_name: str, parent_phase: str | None, num_steps: int) -> None:
        self.steps[phase_name] = num_steps
        depth = 1 if parent_phase else 0
        self._line(f"{'  ' * depth}{phase_name} ({num_steps} steps)")

    def step_complete(self, phase_name: str, step: int) -> bool:
        total = self.steps.get(phase_name, 0)
        if total:
            self.stream.write(f"\r[{self.label}] {phase_name}: {step + 1}/{total}  ")
            self.stream.flush()
        return True  # False would cancel the build

    def phase_finish(self, phase_name: str) -> None:
        self._line(f"{phase_name} done")

    def _line(self, text: str) -> None:
        self.stream.write(f"\r[{self.label} {time.perf_counter() - self.t0:7.1f}s] {text}\n")
        self.stream.flush()


def _monitor(label: str) -> Any:
    """An ``IProgressMonitor`` subclass instance when this TensorRT has one, else None."""
    import tensorrt as trt

    base = getattr(trt, "IProgressMonitor", None)
    if base is None:
        return None

    class Monitor(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            base.__init__(self)  # type: ignore[misc]
            self.impl = _Progress(label)

        def phase_start(self, phase_name: str, parent_phase: str | None, num_steps: int) -> None:
            self.impl.phase_start(phase_name, parent_phase, num_steps)

        def step_complete(self, phase_name: str, step: int) -> bool:
            return self.impl.step_complete(phase_name, step)

        def phase_finish(self, phase_name: str) -> None:
            self.impl.phase_finish(phase_name)

    return Monitor()


def _calibrator(base: Any, batches: Callable[[], Iterator[dict[str, np.ndarray]]], cache: Path) -> Any:
    """An entropy calibrator fed from ``batches`` (device copies are held until the next batch)."""
    import torch

    class Calibrator(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            base.__init__(self)
            self.it = batches()
            self.held: list[torch.Tensor] = []

        def get_batch_size(self) -> int:
            return 1

        def get_batch(self, names: list[str]) -> list[int] | None:
            try:
                batch = next(self.it)
            except StopIteration:
                return None
            self.held = [torch.from_numpy(np.ascontiguousarray(batch[n])).cuda() for n in names]
            return [t.data_ptr() for t in self.held]

        def read_calibration_cache(self) -> bytes | None:
            return cache.read_bytes() if cache.is_file() else None

        def write_calibration_cache(self, data: bytes) -> None:
            cache.write_bytes(bytes(data))

    return Calibrator()


def random_calibration(
    spec: GraphSpec, n: int = 8, seed: int = 0
) -> Callable[[], Iterator[dict[str, np.ndarray]]]:
    """Calibration inputs at the profile's opt shapes. Only a stand-in for random-weight checkpoints:
    for real weights pass recorded activations (``--calib DIR`` of .npz files) instead."""
    opt = {k: v[1] for k, v in spec.profile().items()}

    def gen() -> Iterator[dict[str, np.ndarray]]:
        rng = np.random.default_rng(seed)
        for _ in range(n):
            batch = {}
            for name, t in spec.inputs.items():
                if t.dtype.startswith("int"):
                    batch[name] = rng.integers(0, 8, size=opt[name]).astype(t.dtype)
                else:
                    batch[name] = rng.standard_normal(opt[name]).astype(np.float32)
            yield batch

    return gen


def npz_calibration(directory: Path) -> Callable[[], Iterator[dict[str, np.ndarray]]]:
    files = sorted(directory.glob("*.npz"))
    if not files:
        raise ValueError(f"no .npz calibration batches in {directory}")

    def gen() -> Iterator[dict[str, np.ndarray]]:
        for f in files:
            with np.load(f, allow_pickle=False) as z:
                yield {k: z[k] for k in z.files}

    return gen


@dataclass
class BuildResult:
    graph: str
    engine: Path
    cached: bool
    seconds: float
    precision: str
    weights: str = ""


def build_engine(
    onnx_path: Path,
    out_dir: Path,
    precision: str,
    profile: Profile,
    label: str = "",
    workspace_gb: float = 8.0,
    calibration: Callable[[], Iterator[dict[str, np.ndarray]]] | None = None,
    force: bool = False,
    weights: str = "",
) -> BuildResult:
    """Build (or reuse from the cache) one engine; ``profile`` maps input name to (min, opt, max) shapes.

    ``weights`` names the weight-only quantisation of a Q/DQ graph; the builder flag of that type is
    set so TensorRT keeps the DQ weights (the ONNX digest in the cache key already tells the graphs
    apart)."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    ok, why = tensorrt_available()
    if not ok:
        raise RuntimeError(why)
    import tensorrt as trt

    label = label or onnx_path.stem
    key = cache_key(onnx_digest(onnx_path), trt.__version__, gpu_identity(), precision, profile)
    out_dir.mkdir(parents=True, exist_ok=True)
    engine_path = out_dir / f"{onnx_path.stem}.{precision}.{key}.engine"
    if engine_path.is_file() and not force:
        print(f"[{label}] cache hit: {engine_path.name}", file=sys.stderr)
        return BuildResult(label, engine_path, True, 0.0, precision, weights)

    t0 = time.perf_counter()
    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    flags = 0
    if (
        hasattr(trt.NetworkDefinitionCreationFlag, "EXPLICIT_BATCH")
        and int(trt.__version__.split(".")[0]) < 10
    ):
        flags = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
    network = builder.create_network(flags)
    parser = trt.OnnxParser(network, logger)
    if not parser.parse_from_file(str(onnx_path)):
        errors = "; ".join(str(parser.get_error(i)) for i in range(parser.num_errors))
        raise RuntimeError(f"TensorRT could not parse {onnx_path}: {errors}")

    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, int(workspace_gb * (1 << 30)))
    monitor = _monitor(label)
    if monitor is not None:
        config.progress_monitor = monitor
    opt_profile = builder.create_optimization_profile()
    for name, (lo, opt, hi) in profile.items():
        opt_profile.set_shape(name, lo, opt, hi)
    config.add_optimization_profile(opt_profile)

    if precision in ("fp16", "int8", "fp8"):
        config.set_flag(trt.BuilderFlag.FP16)
    if precision == "bf16":
        if not hasattr(trt.BuilderFlag, "BF16"):
            raise ValueError(f"TensorRT {trt.__version__} has no bf16 support")
        config.set_flag(trt.BuilderFlag.BF16)
    if precision == "int8":
        if not getattr(builder, "platform_has_fast_int8", True):
            raise ValueError(f"{gpu_identity()} has no fast int8; use --precision fp16")
        config.set_flag(trt.BuilderFlag.INT8)
        has_qdq = any(network.get_layer(i).type == trt.LayerType.QUANTIZE for i in range(network.num_layers))
        if not has_qdq:
            if calibration is None:
                raise ValueError("int8 without Q/DQ nodes needs calibration data")
            cache = out_dir / f"{onnx_path.stem}.{key}.calib"
            config.int8_calibrator = _calibrator(trt.IInt8EntropyCalibrator2, calibration, cache)
            config.set_calibration_profile(opt_profile)
    if weights:
        flag = getattr(trt.BuilderFlag, weights.upper(), None)
        if flag is None:
            raise ValueError(f"TensorRT {trt.__version__} has no {weights} weight-only quantisation")
        config.set_flag(flag)
    if precision == "fp8":
        if not hasattr(trt.BuilderFlag, "FP8"):
            raise ValueError(f"TensorRT {trt.__version__} has no fp8 support")
        has_qdq = any(network.get_layer(i).type == trt.LayerType.QUANTIZE for i in range(network.num_layers))
        if not has_qdq:
            raise ValueError(
                "fp8 needs an ONNX graph with FP8 Q/DQ nodes (e.g. quantised with NVIDIA "
                "ModelOpt); this graph has none, so TensorRT would build plain fp16"
            )
        config.set_flag(trt.BuilderFlag.FP8)

    print(f"[{label}] building {precision} engine from {onnx_path.name} ...", file=sys.stderr)
    serialized = builder.build_serialized_network(network, config)
    if serialized is None:
        raise RuntimeError(f"TensorRT failed to build {onnx_path.name} (see the log above)")
    tmp = engine_path.with_suffix(".tmp")
    tmp.write_bytes(bytes(serialized))
    tmp.replace(engine_path)
    seconds = time.perf_counter() - t0
    meta = {
        "onnx": onnx_path.name,
        "precision": precision,
        "weights": weights,
        "tensorrt": trt.__version__,
        "gpu": gpu_identity(),
        "profile": {k: [list(s) for s in v] for k, v in profile.items()},
        "build_seconds": seconds,
    }
    engine_path.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    print(f"[{label}] built in {seconds:.1f}s -> {engine_path.name}", file=sys.stderr)
    return BuildResult(label, engine_path, False, seconds, precision, weights)


def build_all(
    onnx_dir: Path,
    out_dir: Path,
    precision: str = "fp16",
    graphs: list[str] | None = None,
    dim_overrides: Mapping[str, tuple[int, int, int]] | None = None,
    workspace_gb: float = 8.0,
    calib_dir: Path | None = None,
    force: bool = False,
    weights: str = "",
) -> list[BuildResult]:
    """Build every graph of an export directory and record graph -> engine file in ``engines.json``,
    which is what the ``tensorrt`` backend loads (so it never has to recompute cache keys).

    ``weights`` int8 / int4 builds the LLM graphs from the export's weight-only Q/DQ graphs
    (``export/quantize.py``): TensorRT keeps those weights quantised and dequantises them into the
    GEMMs at ``precision`` (fp16 on Orin); ``engines.json`` records the weights per graph."""
    manifest = Manifest.load(onnx_dir)
    names = graphs or [n for n in manifest.graphs if n not in ORT_ONLY]  # contrib ops: not for TensorRT
    unknown = [n for n in names if n not in manifest.graphs]
    if unknown:
        raise ValueError(f"unknown graphs {unknown}; the export has {list(manifest.graphs)}")
    results: list[BuildResult] = []
    for i, name in enumerate(names, 1):
        spec = manifest.graph(name, weights)
        quantized = weights if spec is not manifest.graphs[name] else ""
        if dim_overrides:
            spec.dims.update({k: v for k, v in dim_overrides.items() if k in spec.dims})
        calibration = None
        if precision == "int8":
            calibration = npz_calibration(calib_dir / name) if calib_dir else random_calibration(spec)
        print(f"[{i}/{len(names)}] {name}", file=sys.stderr)
        results.append(
            build_engine(
                onnx_dir / spec.file,
                out_dir,
                precision,
                spec.profile(),
                label=name,
                workspace_gb=workspace_gb,
                calibration=calibration,
                force=force,
                weights=quantized,
            )
        )
    index = {
        r.graph: {"engine": r.engine.name, "precision": r.precision, "weights": r.weights} for r in results
    }
    existing = out_dir / "engines.json"
    merged = json.loads(existing.read_text()) if existing.is_file() else {}
    merged.update(index)
    existing.write_text(json.dumps(merged, indent=2) + "\n", encoding="utf-8")
    return results
