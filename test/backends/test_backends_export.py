"""ONNX export: every graph against its torch module on ONNX Runtime CPU (float32).

Tolerance: relative error norm ‖ort − torch‖ / ‖torch‖ ≤ 1e-4 per output (float32 graphs differ
from torch only by the order of float32 sums; measured ~1e-6 on the tiny checkpoint).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from rynnec_ros.model.backends.ort import OrtGraph
from rynnec_ros.model.export.manifest import Manifest
from rynnec_ros.model.export.onnx_export import GRAPHS, VisionGraph
from rynnec_ros.model.export.parity import TOLERANCE, check_graphs


def test_export_writes_every_graph_and_a_manifest(onnx_dir: Path) -> None:
    manifest = Manifest.load(onnx_dir)
    assert set(manifest.graphs) == set(GRAPHS)
    for spec in manifest.graphs.values():
        assert (onnx_dir / spec.file).is_file()
        for name, (lo, opt, hi) in spec.profile().items():
            assert len(lo) == len(opt) == len(hi) == len(spec.inputs[name].shape)
            assert all(a <= b <= c for a, b, c in zip(lo, opt, hi, strict=True)), name
    assert manifest.graphs["llm_decode"].inputs["past"].shape[3] == "past"
    assert manifest.graphs["vision"].inputs["pixel_values"].shape[0] == "patches"


def test_every_graph_matches_torch_on_onnxruntime_cpu(onnx_dir: Path, torch_model) -> None:
    manifest = Manifest.load(onnx_dir)
    runners = {n: OrtGraph(onnx_dir / g.file, threads=2) for n, g in manifest.graphs.items()}
    rows = check_graphs(torch_model, runners, precision="fp32")
    assert {r.graph for r in rows} == set(GRAPHS)
    bad = [r.to_dict() for r in rows if not r.ok]
    assert not bad, bad
    assert all(r.rel <= TOLERANCE["fp32"] for r in rows)


@pytest.mark.parametrize(("grid_h", "grid_w"), [(4, 4), (12, 16), (6, 22)])
def test_vision_graph_takes_any_frame_size(onnx_dir: Path, torch_model, grid_h: int, grid_w: int) -> None:
    tower = torch_model.vision_tower
    cos, sin = tower.encoder.rope(grid_h, grid_w, 2)
    gen = torch.Generator().manual_seed(grid_h * 100 + grid_w)
    pix = torch.rand(grid_h * grid_w, 3 * 14 * 14, generator=gen) * 2 - 1
    with torch.no_grad():
        ref = VisionGraph(tower)(pix, cos, sin).numpy()
    got = OrtGraph(onnx_dir / "vision.onnx").run_numpy(
        {"pixel_values": pix.numpy(), "cos": cos.numpy(), "sin": sin.numpy()}
    )["features"]
    assert got.shape == ref.shape
    assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < 1e-4


def test_decode_graph_extends_the_cache_step_by_step(onnx_dir: Path, torch_model) -> None:
    """Prefill 6 tokens then decode 1 + 1 + 3: hidden states equal a single 11-token prefill."""
    prefill = OrtGraph(onnx_dir / "llm_prefill.onnx")
    decode = OrtGraph(onnx_dir / "llm_decode.onnx")
    ids = torch.randint(0, 600, (1, 11), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        emb = torch_model.model.embed_tokens(ids).numpy()
    full = prefill.run_numpy({"inputs_embeds": emb, "position_ids": np.arange(11)[None]})
    out = prefill.run_numpy({"inputs_embeds": emb[:, :6], "position_ids": np.arange(6)[None]})
    past, pos, hidden = out["present"], 6, [out["hidden"]]
    for n in (1, 1, 3):
        step = decode.run_numpy(
            {
                "inputs_embeds": emb[:, pos : pos + n],
                "position_ids": np.arange(pos, pos + n)[None],
                "past": past,
            }
        )
        past, pos = step["present"], pos + n
        hidden.append(step["hidden"])
    np.testing.assert_allclose(np.concatenate(hidden, axis=1), full["hidden"], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(past, full["present"], rtol=1e-4, atol=1e-4)
    assert past.shape[3] == 11


def test_export_rejects_unknown_graph_names(tmp_path: Path) -> None:
    from rynnec_ros.model.export.onnx_export import export_onnx

    from .conftest import CHECKPOINT

    with pytest.raises(ValueError, match="unknown graphs"):
        export_onnx(CHECKPOINT, tmp_path, graphs=["vision", "nope"])
