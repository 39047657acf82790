"""Shared fixtures of the engine tests: the upstream parity fixture and random checkpoints."""

from __future__ import annotations

import json
from collections.abc import Hashable, Sequence
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from rynnec_ros.core.types import Frame, Region, Request

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "rynnec-tiny"
CHECKPOINT = FIXTURE / "checkpoint"
CASES = sorted(p.name for p in (FIXTURE / "cases").iterdir() if p.is_dir())

torch.set_num_threads(2)


def regions_of(
    masks: Sequence[np.ndarray], frame_indices: Sequence[int], object_ids: Sequence[int] | None = None
) -> list[Region]:
    """Regions from the reference fixture's flat lists (mask k on frame_indices[k] of object_ids[k])."""
    ids = list(object_ids) if object_ids is not None else list(range(len(masks)))
    regions: dict[int, Region] = {}
    for m, fi, oid in zip(masks, frame_indices, ids, strict=True):
        regions.setdefault(int(oid), Region(int(oid), {})).masks[int(fi)] = m  # type: ignore[index]
    return list(regions.values())


def request(
    frames: Sequence[np.ndarray],
    question: str,
    regions: Sequence[Region] = (),
    keys: Sequence[Hashable] | None = None,
    **kw: object,
) -> Request:
    """A ``Request`` on raw RGB frames (``keys``: ``Frame.key`` per frame, else the pixels are hashed)."""
    ks = list(keys) if keys is not None else [None] * len(frames)
    return Request(question, [Frame(f, key=k) for f, k in zip(frames, ks, strict=True)], list(regions), **kw)


class Case:
    def __init__(self, name: str) -> None:
        self.dir = FIXTURE / "cases" / name
        self.meta = json.loads((self.dir / "case.json").read_text())
        with np.load(self.dir / "arrays.npz", allow_pickle=False) as z:
            self.arrays = {k: z[k] for k in z.files}
        self.frames = [np.asarray(Image.open(self.dir / f).convert("RGB")) for f in self.meta["frame_files"]]

    @property
    def masks(self) -> list[np.ndarray] | None:
        return list(self.arrays["masks"]) if "masks" in self.arrays else None

    def request(self, **kw: object) -> Request:
        """The case's question, frames and regions as a ``Request``."""
        m = self.meta
        regions = regions_of(self.masks, m["mask_ids"], m.get("mask_object_index")) if self.masks else []
        return request(self.frames, m["question"], regions, **kw)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def cases() -> dict[str, Case]:
    return {n: Case(n) for n in CASES}


@pytest.fixture(scope="session")
def engine_noreuse():
    from rynnec_ros.model import RynnEC

    return RynnEC.from_pretrained(CHECKPOINT, reuse=False)


@pytest.fixture(scope="session")
def untied_ckpt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from rynnec_ros.fixtures.checkpoints import make_checkpoint

    return make_checkpoint(tmp_path_factory.mktemp("untied"), size="tiny", seed=7, tie_word_embeddings=False)


@pytest.fixture(scope="session")
def tied_ckpt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from rynnec_ros.fixtures.checkpoints import make_checkpoint

    return make_checkpoint(tmp_path_factory.mktemp("tied"), size="tiny", seed=11, tie_word_embeddings=True)


@pytest.fixture(scope="session")
def make_frames():
    """``make_frames(n, h, w, seed)``: synthetic RGB frames."""
    return synthetic_frames


def synthetic_frames(n: int, h: int, w: int, seed: int = 0) -> list[np.ndarray]:
    """Smooth frames with a moving square (not noise, so resizes and masks are meaningful)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    out = []
    for t in range(n):
        f = np.stack([(xx * 255 // max(w - 1, 1)), (yy * 255 // max(h - 1, 1)), np.full_like(xx, 40 * t)], -1)
        y0, x0 = int(rng.integers(0, max(h // 2, 1))), int(rng.integers(0, max(w // 2, 1)))
        f[y0 : y0 + h // 3, x0 : x0 + w // 3] = (220, 30, 30)
        out.append(f.astype(np.uint8))
    return out
