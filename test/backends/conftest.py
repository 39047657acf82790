"""Fixtures of the backend tests: the tiny upstream-format checkpoint and its ONNX export (made once)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from ..model.conftest import CHECKPOINT, Case

torch.set_num_threads(2)


def load_case(name: str) -> tuple[dict, list[np.ndarray], list[np.ndarray] | None]:
    case = Case(name)
    return case.meta, case.frames, case.masks


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
