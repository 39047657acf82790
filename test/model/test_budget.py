"""Memory budget (rynnec_ros/model/budget.py) against numbers worked by hand from the published configs and
against the safetensors library's own reading of the checkpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rynnec_ros.model import budget

CHECKPOINT = Path(__file__).resolve().parents[1] / "data" / "rynnec-tiny" / "checkpoint"

# Qwen2.5-1.5B-Instruct / Qwen2.5-7B-Instruct config.json (../shared/docs/rynnec-upstream.md, §1).
QWEN_1_5B = {"num_hidden_layers": 28, "num_attention_heads": 12, "num_key_value_heads": 2,
             "hidden_size": 1536}
QWEN_7B = {"num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "hidden_size": 3584}


def test_kv_per_token_is_two_tensors_of_kv_heads_by_head_dim_per_layer() -> None:
    # 2B: head_dim 1536/12 = 128; 2 (K, V) x 28 layers x 2 KV heads x 128 x 2 bytes (fp16) = 28,672 bytes
    assert budget.kv_bytes_per_token(QWEN_1_5B, 2.0) == 28672
    # 7B: head_dim 3584/28 = 128; 2 x 28 x 4 x 128 x 2 = 57,344 bytes
    assert budget.kv_bytes_per_token(QWEN_7B, 2.0) == 57344
    # without num_key_value_heads every head has its own K/V (multi-head attention)
    mha = {"num_hidden_layers": 1, "num_attention_heads": 4, "hidden_size": 64}
    assert budget.kv_bytes_per_token(mha, 4.0) == 2 * 4 * 16 * 4


def test_header_counts_equal_the_safetensors_library() -> None:
    from safetensors import safe_open

    path = CHECKPOINT / "model.safetensors"
    ours = budget.header_params(path)
    with safe_open(str(path), framework="numpy") as handle:
        theirs = {}
        for key in handle.keys():  # noqa: SIM118 (safe_open is not a mapping)
            shape = handle.get_slice(key).get_shape()
            n = 1
            for d in shape:
                n *= d
            theirs[key] = n
    assert {k: n for k, (_dtype, n) in ours.items()} == theirs


def test_every_checkpoint_key_lands_in_a_named_component() -> None:
    parts = budget.component_params([CHECKPOINT / "model.safetensors"])
    assert set(parts) == {"llm", "vision", "heads", "sam2"}, parts
    raw = json.loads((CHECKPOINT / "config.json").read_text())
    # the tied embedding alone is vocab x hidden elements of the LLM part
    assert parts["llm"] > raw["vocab_size"] * raw["hidden_size"]


def test_estimate_adds_the_parts_and_refusal_names_them() -> None:
    raw = json.loads((CHECKPOINT / "config.json").read_text())
    b = budget.estimate(CHECKPOINT, "float16", 1000, 24, 100.0, 50.0)
    params = sum(n for _d, n in budget.header_params(CHECKPOINT / "model.safetensors").values())
    assert b.weights_mb == pytest.approx(params * 2 / budget.MB)
    assert b.window_tokens == 1000 + 24 + budget.TEXT_TOKENS
    assert b.kv_mb == pytest.approx(b.window_tokens * budget.kv_bytes_per_token(raw, 2.0) / budget.MB)
    # activations by hand from the measured constants: (40 MB + 1000 tokens x 53,248 bytes = 50.78125 MB
    # + SAM 2's 451 MB) in float32, halved for float16
    assert b.activations_mb == pytest.approx((40 + 50.78125 + 451) / 2)
    assert b.total_mb == pytest.approx(b.weights_mb + b.kv_mb + 150.0 + b.activations_mb
                                       + budget.RUNTIME_ALLOWANCE_MB)
    assert budget.refusal(b, b.total_mb + 1, "x") == ""
    why = budget.refusal(b, 100.0, "memory_limit_mb")
    assert "more than the 100 MB memory_limit_mb" in why and "frame buffer 100" in why and "caches 50" in why
    assert "vision/SAM 2 activations 271" in why  # (40 + 50.78 + 451) / 2 = 270.9, rounded


def test_available_memory_reads_meminfo(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       16110000 kB\nMemFree:  100 kB\nMemAvailable:    8192000 kB\n")
    assert budget.available_mb(meminfo) == pytest.approx(8192000 / 1024)
    meminfo.write_text("MemTotal: 1 kB\n")
    with pytest.raises(ValueError, match="MemAvailable"):
        budget.available_mb(meminfo)


def test_quantised_matrix_bytes_by_hand() -> None:
    # RynnEC-2B's down_proj: in 8960 = 70 blocks of 128, out 1536; float32 scales (model/export/quantize.py)
    # int4: 8960 x 1536 / 2 = 6,881,280 bytes of values + 70 x 1536 x 4 = 430,080 bytes of scales
    assert budget.quantized_matrix_bytes(8960, 1536, "int4") == 6881280 + 430080
    # int8: one byte per value, the same scales
    assert budget.quantized_matrix_bytes(8960, 1536, "int8") == 13762560 + 430080
    # in 1536 = 12 blocks of 128 (q_proj, out 1536): 1536 x 1536 / 2 + 12 x 1536 x 4
    assert budget.quantized_matrix_bytes(1536, 1536, "int4") == 1179648 + 73728


def test_quantised_estimate_counts_the_llm_linears_and_a_tied_head_at_their_precision() -> None:
    """Only decoder-layer matrices and the LM head change precision; a tied head is one more matrix (the
    host keeps the embedding); the refusal names the precision."""
    raw = json.loads((CHECKPOINT / "config.json").read_text())
    tensors = budget.header_tensors(CHECKPOINT / "model.safetensors")
    hidden, inter, layers = raw["hidden_size"], raw["intermediate_size"], raw["num_hidden_layers"]
    kv = raw["num_key_value_heads"] * hidden // raw["num_attention_heads"]
    # tiny config: K is 64 or 128, so every block is the whole K (block_size: 128 when it divides K, else
    # the largest power of two >= 16 that does) -> one float32 scale per output column
    per_layer_int4 = (hidden * hidden * 2 + hidden * kv * 2 + hidden * inter * 3) / 2 + 4 * (
        hidden + kv + kv + hidden + inter + inter + hidden)
    head_int4 = hidden * raw["vocab_size"] / 2 + 4 * raw["vocab_size"]
    linear_elements = layers * (2 * hidden * hidden + 2 * hidden * kv + 3 * hidden * inter)
    params = budget.header_params(CHECKPOINT / "model.safetensors")
    other = sum(n for _d, n in params.values()) - linear_elements
    assert budget.weight_bytes(tensors, 2.0, "int4", tied=True) == pytest.approx(
        other * 2.0 + layers * per_layer_int4 + head_int4)
    assert budget.weight_bytes(tensors, 2.0, "int4", tied=False) == pytest.approx(
        other * 2.0 + layers * per_layer_int4)
    b = budget.estimate(CHECKPOINT, "float16", 1000, 24, 100.0, 50.0, weights="int4")
    assert b.weights_mb == pytest.approx((other * 2.0 + layers * per_layer_int4 + head_int4) / budget.MB)
    assert "(int4 LLM linears)" in budget.refusal(b, 1.0, "memory_limit_mb")
    with pytest.raises(ValueError, match="weights 'int3'"):
        budget.estimate(CHECKPOINT, "float16", 1000, 24, 100.0, 50.0, weights="int3")


def test_an_int8_kv_cache_counts_one_byte_per_element() -> None:
    """kv_cache int8 (export/kvcache.py): the K/V term is the window's tokens plus the graph's scratch
    rows ((G − 1) × 128, G = 4 / 2 query heads per kv head in the tiny config) × 2 × layers × kv_heads ×
    head_dim bytes (config.json by hand), whatever the dtype; the other terms are unchanged."""
    raw = json.loads((CHECKPOINT / "config.json").read_text())
    head_dim = raw.get("head_dim") or raw["hidden_size"] // raw["num_attention_heads"]
    per_token = 2 * raw["num_hidden_layers"] * raw["num_key_value_heads"] * head_dim
    floats = budget.estimate(CHECKPOINT, "float32", 1000, 24, 100.0, 50.0)
    b = budget.estimate(CHECKPOINT, "float32", 1000, 24, 100.0, 50.0, kv_cache="int8")
    assert raw["num_attention_heads"] // raw["num_key_value_heads"] == 2
    assert b.kv_mb == pytest.approx((b.window_tokens + 128) * per_token / budget.MB)
    assert b.kv_mb == pytest.approx(floats.kv_mb / 4 * (b.window_tokens + 128) / b.window_tokens)
    assert b.total_mb == pytest.approx(floats.total_mb - floats.kv_mb + b.kv_mb)
    assert f"K/V {b.kv_mb:.0f} (int8, {b.window_tokens} tokens)" in b.describe()
    with pytest.raises(ValueError, match="kv_cache 'int4'"):
        budget.estimate(CHECKPOINT, "float32", 1000, 24, 100.0, 50.0, kv_cache="int4")
