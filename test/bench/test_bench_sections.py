"""The benchmark sections on the tiny checkpoint (1 repeat: these check the outputs, not the speed)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from rynnec_ros.bench.backends_bench import compare_backends
from rynnec_ros.bench.engine_bench import engine_stages
from rynnec_ros.bench.live_bench import live_window
from rynnec_ros.bench.reuse_bench import region_qa, work_reuse
from rynnec_ros.bench.roofline import decode_bound, kv_bytes_per_token_read, llm_weight_bytes
from rynnec_ros.bench.workload import build_engine, synthetic_window, window_request
from rynnec_ros.model.spec import EngineSpec

DATA = Path(__file__).resolve().parents[1] / "data" / "rynnec-tiny" / "checkpoint"
CHECKPOINT = (
    DATA if (DATA / "config.json").is_file() else Path("/work/shared/fixtures/rynnec-tiny/checkpoint")
)

torch.set_num_threads(2)


@pytest.fixture(scope="module")
def frames() -> list[np.ndarray]:
    return synthetic_window(2, 224, 168)


def test_synthetic_window_is_deterministic_and_moving() -> None:
    a, b = synthetic_window(3, 64, 48, seed=1), synthetic_window(3, 64, 48, seed=1)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert a[0].shape == (48, 64, 3) and a[0].dtype == np.uint8
    assert not np.array_equal(a[0], a[1])
    with pytest.raises(ValueError):
        synthetic_window(0, 64, 48)


def test_engine_stages(frames: list[np.ndarray]) -> None:
    engine = build_engine(EngineSpec(str(CHECKPOINT)), reuse=False)
    s = engine_stages(engine, frames, "<video>\nWhat is it?", new_tokens=4, repeat=1, checkpoint=CHECKPOINT)
    assert s["available"] and s["backend"] == "torch"
    assert s["visual_tokens_per_frame"] == 48 and s["frames"] == 2
    for key in ("vision_per_frame",):
        assert s[key].wall.median > 0
    for key in ("prefill", "ttft", "decode"):
        assert s[key].median > 0
    assert s["ttft"].median >= s["prefill"].median
    assert s["decode_tok_s"] > 0
    assert s["sam2_per_frame"]["wall"]["median"] > 0
    assert s["bandwidth_bound"]["available"] is False  # CPU without a given bandwidth
    assert "reason" in s["bandwidth_bound"]


def test_reuse_gives_identical_answers_faster(frames: list[np.ndarray]) -> None:
    spec = EngineSpec(str(CHECKPOINT))
    s = work_reuse(build_engine(spec, True), build_engine(spec, False), frames, new_tokens=3, repeat=1)
    assert s["answers_identical"] is True
    assert s["questions"] == 5
    assert s["ratio_wall"] is not None and s["ratio_wall"] > 0
    assert len(s["per_question_timings_with_reuse"]) == 5
    with pytest.raises(ValueError, match="reuse"):
        work_reuse(build_engine(spec, False), build_engine(spec, False), frames)


def test_region_qa_compares_vision_batches_with_identical_answers(frames: list[np.ndarray]) -> None:
    engine = build_engine(EngineSpec(str(CHECKPOINT)), False)
    assert engine.vision_batch == 1  # the CPU default
    s = region_qa(engine, frames, new_tokens=3, repeat=1)
    assert s["answers_identical"] is True and s["engine_default_vision_batch"] == 1
    assert set(s["arms"]) == {"vision_batch_1", "vision_batch_4"}
    assert all(a["prepare_cpu"].n == 1 and a["prepare_cpu"].median > 0 for a in s["arms"].values())
    assert engine.vision_batch == 1  # restored
    with pytest.raises(ValueError, match="reuse=False"):
        region_qa(build_engine(EngineSpec(str(CHECKPOINT)), True), frames)


def test_live_window_modes_side_by_side() -> None:
    """Window 4, blocks of 2, one block of steady state (frames 4 and 5, one sample each second).
    Expected windows from sample_recent's rule (start = lowest multiple of 2 with newest - start < 4):
    newest 4 -> start 2; newest 5 -> start 2. K = 1: the newest 4 samples."""
    engine = build_engine(EngineSpec(str(CHECKPOINT)), True)
    s = live_window(engine, synthetic_window(6, 64, 48), 4, "<video>\nWhat is it?", new_tokens=2, repeat=1,
                    block=2)
    assert s["answers_identical"] is True
    modes = s["modes"]
    assert set(modes) == {"paper", "block_1", "block_2"}
    assert modes["block_2"]["windows_steady"] == [[2, 3, 4], [2, 3, 4, 5]]
    assert modes["block_1"]["windows_steady"] == [[1, 2, 3, 4], [2, 3, 4, 5]]
    # the paper's sampling thins the 5, then 6 buffered samples to 4: linspace(0, 4 | 5, 4), rounded
    assert modes["paper"]["windows_steady"] == [[0, 1, 3, 4], [0, 2, 3, 5]]
    first, second = modes["block_2"]["per_position"]
    assert (first["position_in_block"], second["position_in_block"]) == (0, 1)
    # position 0 rebuilds the prefix of 3 frames, position 1 adds one frame's chunk to it
    assert 0 < second["prefix_tokens_computed"] < first["prefix_tokens_computed"]
    assert modes["block_1"]["steady"]["frames_encoded_per_call"].max == 1
    assert s["steady_cpu_per_frame"]["block_2"] > 0 and s["ratio_steady_cpu_block_vs_1"] is not None
    with pytest.raises(ValueError, match="block"):
        live_window(engine, synthetic_window(6, 64, 48), 4, "q", block=5)


def test_backend_comparison_checks_identical_ids(frames: list[np.ndarray], tmp_path: Path) -> None:
    from rynnec_ros.model.export.onnx_export import export_onnx

    export_onnx(CHECKPOINT, tmp_path)
    engines = {
        "torch": build_engine(EngineSpec(str(CHECKPOINT)), False),
        "onnxruntime": build_engine(
            EngineSpec(str(CHECKPOINT), backend="onnxruntime", onnx_dir=str(tmp_path)), False
        ),
    }
    s = compare_backends(engines, frames, "<video>\nWhat is it?", new_tokens=4, repeat=1)
    ort = s["backends"]["onnxruntime"]
    assert ort["same_token_ids_as_reference"] is True
    assert set(ort["graph_providers"].values()) == {"CPUExecutionProvider"}
    assert s["backends"]["torch"]["ratio_wall_vs_reference"] == 1.0
    assert ort["ratio_wall_vs_reference"] > 0
    assert ort["sam2_per_frame"].median > 0 and ort["sam2_per_frame"].n == 1


def test_bandwidth_bound_arithmetic() -> None:
    cfg = json.loads((CHECKPOINT / "config.json").read_text())
    weights, counts = llm_weight_bytes(CHECKPOINT, 2)
    h, ffn, layers = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]
    kv_dim = cfg["num_key_value_heads"] * h // cfg["num_attention_heads"]
    per_layer = h * h + h + 2 * (h * kv_dim + kv_dim) + h * h + 3 * h * ffn + 2 * h
    assert counts["layers"] == layers * per_layer
    assert counts["lm_head"] == cfg["vocab_size"] * h  # tied: the embedding matrix
    assert weights == 2 * (counts["layers"] + counts["norm"] + counts["lm_head"])
    kv = kv_bytes_per_token_read(CHECKPOINT, 100, 2)
    assert kv == 2 * layers * kv_dim * 100 * 2
    b = decode_bound(CHECKPOINT, torch.float16, 100, 50.0, torch.device("cpu"), bandwidth_gbs=204.8)
    assert b["bound_tok_s"] == pytest.approx(204.8e9 / (weights + kv))
    assert b["fraction_of_bound"] == pytest.approx(50.0 / b["bound_tok_s"])


def test_bench_cli_writes_a_report(tmp_path: Path) -> None:
    from rynnec_ros.cli import main

    out = tmp_path / "r.json"
    rc = main(
        [
            "bench",
            "engine",
            "--checkpoint",
            str(CHECKPOINT),
            "--frames",
            "1",
            "--size",
            "224x168",
            "--repeat",
            "1",
            "--new-tokens",
            "3",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    data = json.loads(out.read_text())
    eng = data["sections"]["engine"]
    assert eng["available"] is True and eng["vision_per_frame"]["wall"]["median"] > 0
    assert data["config"]["checkpoint"] == str(CHECKPOINT)
    assert main(["bench", "engine", "--checkpoint", str(tmp_path), "--out", str(out)]) == 2
    assert main(["bench", "engine", "--size", "big", "--out", str(out)]) == 2


def test_ros_sections_say_why_they_are_missing(tmp_path: Path) -> None:
    from rynnec_ros.bench.ros_bench import ros_missing
    from rynnec_ros.cli import main

    if ros_missing() is None:
        pytest.skip("ROS is available here: the section runs instead")
    out = tmp_path / "r.json"
    assert main(["bench", "ingest", "--out", str(out)]) == 0
    section = json.loads(out.read_text())["sections"]["ingest"]
    assert section["available"] is False and "not importable" in section["reason"]


def test_full_size_writer_makes_a_loadable_checkpoint(tmp_path: Path) -> None:
    """The 2B writer at a CI-sized shape set: real vocabulary rows, the engine loads and answers."""
    from rynnec_ros.bench.fullsize import FULL_SIZES, make_full_checkpoint
    from rynnec_ros.model.backends import load_engine

    mini = {"mini": {"llm": (64, 2, 4, 2, 128, 151936, True), "vision": (48, 1, 3, 96)}}
    path = make_full_checkpoint(tmp_path / "ck", "mini", sizes=mini, keep_tiny_sam2=True)
    cfg = json.loads((path / "config.json").read_text())
    assert cfg["vocab_size"] == 151936 and cfg["hidden_size"] == 64
    from safetensors import safe_open

    with safe_open(str(path / "model.safetensors"), "pt") as f:
        keys = set(f.keys())
    for part in ("memory_attention.", "memory_encoder.", "obj_ptr_proj."):  # upstream loads SAM2 strictly
        assert any(k.startswith("grounding_encoder.sam2_model." + part) for k in keys), part
    engine = load_engine(path, backend="torch")
    assert engine.model.model.embed_tokens.weight.shape == (151936, 64)
    ans = engine.answer(window_request(synthetic_window(1, 56, 56), "What is it?", max_new_tokens=2))
    assert len(ans.token_ids) >= 1
    assert FULL_SIZES["2b"]["llm"][:5] == (1536, 28, 12, 2, 8960)
    with pytest.raises(ValueError, match="unknown size"):
        make_full_checkpoint(tmp_path / "x", "3b")


def test_bench_prompts_reports_click_and_point_costs(tmp_path: Path) -> None:
    """``bench prompts``: both click timings, placement over the window's frames, the bytes a prompted
    frame holds (its bool mask is one byte per pixel: 224·168), and propagation over the 3 frames."""
    from rynnec_ros.cli import main

    out = tmp_path / "p.json"
    assert main(["bench", "prompts", "--checkpoint", str(CHECKPOINT), "--frames", "3", "--size", "224x168",
                 "--repeat", "1", "--out", str(out)]) == 0
    sec = json.loads(out.read_text())["sections"]["prompts"]
    assert sec["available"] is True and sec["frame_size"] == [224, 168]
    assert sec["click_to_mask_cold"]["wall"]["n"] == 1
    assert sec["click_to_mask_cached_features"]["wall"]["median"] > 0
    assert sec["point_placement_frames"] == 3 and sec["point_placement_per_frame_s"] > 0
    assert sec["held_bytes_per_prompted_frame"]["mask"] == 224 * 168
    assert sec["held_bytes_per_prompted_frame"]["sam2_features"] > 0
    prop = sec["propagation"]
    assert prop["available"] is True and prop["frames"] == 3 and prop["per_frame_s"]["median"] > 0
    assert prop["memory_bank_bytes_per_object"] > 0
    live = prop["live"]  # a live track: bounded once `reach` frames have passed (model/tracking.py)
    assert live["steps"] == live["reach_frames"] + 4 and live["per_frame_s"]["median"] > 0
    assert live["memory_bank_bytes_after_last_step"] == live["memory_bank_bytes_after_reach_steps"]
    assert live["memory_bank_bytes_after_last_step"] > live["memory_bank_bytes_after_first_step"]
