"""Shared fixtures of the engine tests: the upstream parity fixture and random checkpoints."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "rynnec-tiny"
CHECKPOINT = FIXTURE / "checkpoint"
CASES = sorted(p.name for p in (FIXTURE / "cases").iterdir() if p.is_dir())

torch.set_num_threads(2)


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


@pytest.fixture(scope="session")
def cases() -> dict[str, Case]:
    return {n: Case(n) for n in CASES}


@pytest.fixture(scope="session")
def engine_noreuse():
    from rynnec_ros.model import RynnEC

    return RynnEC.from_pretrained(CHECKPOINT, reuse=False)


@pytest.fixture(scope="session")
def untied_ckpt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from rynnec_ros.model.tiny import make_checkpoint

    return make_checkpoint(tmp_path_factory.mktemp("untied"), size="tiny", seed=7, tie_word_embeddings=False)


@pytest.fixture(scope="session")
def tied_ckpt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from rynnec_ros.model.tiny import make_checkpoint

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
