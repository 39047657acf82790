"""Fixtures of the backend tests: the tiny upstream-format checkpoint and its ONNX export (made once)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

DATA = Path(__file__).resolve().parents[1] / "data" / "rynnec-tiny"
if not (DATA / "checkpoint" / "config.json").is_file():
    DATA = Path("/work/shared/fixtures/rynnec-tiny")
CHECKPOINT = DATA / "checkpoint"

torch.set_num_threads(2)


def load_case(name: str) -> tuple[dict, list[np.ndarray], list[np.ndarray] | None]:
    d = DATA / "cases" / name
    meta = json.loads((d / "case.json").read_text())
    frames = [np.asarray(Image.open(d / f).convert("RGB")) for f in meta["frame_files"]]
    with np.load(d / "arrays.npz", allow_pickle=False) as z:
        masks = list(z["masks"]) if "masks" in z.files else None
    return meta, frames, masks


@pytest.fixture(scope="session")
def onnx_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from rynnec_ros.model.export.onnx_export import export_onnx

    out = tmp_path_factory.mktemp("onnx-tiny")
    export_onnx(CHECKPOINT, out)
    return out


@pytest.fixture(scope="session")
def torch_model():
    from rynnec_ros.model.loader import load_model

    return load_model(CHECKPOINT)
