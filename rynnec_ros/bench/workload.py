"""Checkpoints, engines and synthetic frame windows that the benchmark sections share."""

from __future__ import annotations

import tempfile
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from rynnec_ros.core.types import Frame, Request
from rynnec_ros.model.spec import EngineSpec

if TYPE_CHECKING:
    from rynnec_ros.model.engine import RynnEC

RANDOM_SIZES = ("tiny", "small")


def resolve_checkpoint(name: str, workdir: Path) -> Path:
    """A checkpoint directory, or a fresh random one for ``tiny`` / ``small`` (seed 0)."""
    if name in RANDOM_SIZES:
        from rynnec_ros.fixtures.checkpoints import make_checkpoint

        out = workdir / f"rynnec-{name}"
        if (out / "model.safetensors").is_file():  # made by an earlier section of this run
            return out
        return make_checkpoint(out, size=name, seed=0)
    path = Path(name)
    if not (path / "config.json").is_file():
        raise ValueError(f"--checkpoint {name!r} is neither a checkpoint directory nor one of {RANDOM_SIZES}")
    return path


def ensure_onnx(checkpoint: Path, onnx_dir: str | None, workdir: Path, weights: str = "") -> Path:
    """The given export directory, or a fresh export of ``checkpoint`` under ``workdir`` (with the LLM
    graphs quantised to ``weights`` too, when given)."""
    if onnx_dir:
        return Path(onnx_dir)
    from rynnec_ros.model.export.manifest import Manifest
    from rynnec_ros.model.export.onnx_export import add_weights, export_onnx

    out = workdir / f"onnx-{checkpoint.name}"
    if not (out / "manifest.json").is_file():  # else exported by an earlier section of this run
        export_onnx(checkpoint, out)
    if weights and weights not in Manifest.load(out).weights:
        add_weights(out, weights)
    return out


def build_engine(spec: EngineSpec, reuse: bool) -> RynnEC:
    """A local engine for a section; ``reuse`` False measures the cold path (no caches across calls)."""
    from rynnec_ros.model.backends import load_engine
    from rynnec_ros.model.engine import RynnEC

    engine = load_engine(spec.replace(reuse=reuse))
    if not isinstance(engine, RynnEC):
        raise ValueError(f"benchmarks run a local engine, not backend {spec.backend!r}")
    return engine


def synthetic_window(n: int, width: int, height: int, seed: int = 0) -> list[np.ndarray]:
    """A camera-like window: a textured scene that pans a little from frame to frame.

    Timing does not depend on pixel values for these models, but masks and answers are checked
    across variants, so the frames are deterministic.
    """
    if n < 1 or width < 28 or height < 28:
        raise ValueError(f"need >= 1 frame of at least 28×28 px, got {n} × {width}×{height}")
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 256, size=(height + 8 * n, width + 8 * n, 3), dtype=np.uint8)
    yy, xx = np.mgrid[0:height, 0:width]
    frames = []
    for i in range(n):
        f = base[4 * i : 4 * i + height, 8 * i : 8 * i + width].copy()
        blob = (xx - width * (0.3 + 0.05 * i)) ** 2 + (yy - height * 0.5) ** 2 < (
            min(width, height) * 0.2
        ) ** 2
        f[blob] = (220, 30, 30)
        frames.append(f)
    return frames


def window_request(
    frames: Sequence[np.ndarray],
    question: str,
    keys: Sequence[Hashable] | None = None,
    max_new_tokens: int = 16,
) -> Request:
    """A request on raw frames; ``keys`` become ``Frame.key`` (as the node's buffer sets them)."""
    ks = list(keys) if keys is not None else [None] * len(frames)
    return Request(
        question, [Frame(f, key=k) for f, k in zip(frames, ks, strict=True)], max_new_tokens=max_new_tokens
    )


def scratch_dir() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="rynnec-bench-")


def fixture_requests(cases_dir: Path) -> dict[str, Request]:
    """The question-and-frames cases of a reference fixture (``<case>/case.json`` + its frame files);
    cases with region masks are left out (their masks are arrays the fixture keeps elsewhere)."""
    import json

    from PIL import Image

    out: dict[str, Request] = {}
    for case in sorted(p for p in cases_dir.iterdir() if (p / "case.json").is_file()):
        meta = json.loads((case / "case.json").read_text(encoding="utf-8"))
        if meta.get("mask_ids"):
            continue
        frames = [np.asarray(Image.open(case / f).convert("RGB")) for f in meta["frame_files"]]
        out[case.name] = window_request(frames, meta["question"])
    if not out:
        raise ValueError(f"no question-and-frames cases under {cases_dir}")
    return out
