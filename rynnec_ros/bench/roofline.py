"""Decode speed against the memory-bandwidth bound (bytes that must be read per token ÷ bandwidth).

At batch 1 every decode step reads all decoder weights, the LM head and the KV cache once, so
``bandwidth / bytes_per_token`` is the speed of light; real systems reach 50–70 % of it (anchors §4.1).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# Datasheet bandwidths (GB/s) of devices named by torch.cuda.get_device_name, for reference only:
# a measured copy bandwidth is preferred when the GPU is present.
DATASHEET_GBS = {"orin": 204.8, "h200": 4800.0, "h100": 3350.0, "a100": 2039.0}


def llm_weight_bytes(checkpoint: Path, bytes_per_param: int) -> tuple[int, dict[str, int]]:
    """Bytes a decode step reads: decoder layers, final norm and the LM head (the embedding if tied)."""
    from safetensors import safe_open

    from rynnec_ros.model.loader import safetensors_files

    cfg = json.loads((checkpoint / "config.json").read_text())
    tied = bool(cfg.get("tie_word_embeddings", False))
    counts = {"layers": 0, "norm": 0, "lm_head": 0}
    for f in safetensors_files(checkpoint):
        with safe_open(str(f), framework="pt") as h:
            for k in h.keys():  # noqa: SIM118 (safe_open is not a mapping)
                n = 1
                for d in h.get_slice(k).get_shape():
                    n *= int(d)
                if k.startswith("model.layers."):
                    counts["layers"] += n
                elif k == "model.norm.weight":
                    counts["norm"] += n
                elif k == "lm_head.weight" or (tied and k == "model.embed_tokens.weight"):
                    counts["lm_head"] = n
    return sum(counts.values()) * bytes_per_param, counts


def kv_bytes_per_token_read(checkpoint: Path, context: int, bytes_per_elem: int) -> int:
    cfg = json.loads((checkpoint / "config.json").read_text())
    heads = int(cfg["num_attention_heads"])
    head_dim = int(cfg.get("head_dim") or int(cfg["hidden_size"]) // heads)
    kv = int(cfg.get("num_key_value_heads", heads))
    return 2 * int(cfg["num_hidden_layers"]) * kv * head_dim * context * bytes_per_elem


def measure_copy_bandwidth(device: Any, size_mb: int = 1024, repeat: int = 10) -> float:
    """Device-to-device copy, bytes read + written per second (GB/s)."""
    import torch

    n = size_mb * (1 << 20) // 4
    src = torch.rand(n, device=device)
    dst = torch.empty_like(src)
    dst.copy_(src)
    torch.cuda.synchronize(device)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repeat):
        start.record()
        dst.copy_(src)
        end.record()
        torch.cuda.synchronize(device)
        times.append(start.elapsed_time(end) / 1000.0)
    times.sort()
    return 2 * n * 4 / times[len(times) // 2] / 1e9


def decode_bound(
    checkpoint: Path,
    dtype: Any,
    context: int,
    tok_s: float | None,
    device: Any,
    bandwidth_gbs: float | None = None,
) -> dict[str, Any]:
    """The bound and the measured fraction of it; on CPU only when a bandwidth is given."""
    import torch

    bpp = torch.empty(0, dtype=dtype).element_size()
    weights, counts = llm_weight_bytes(checkpoint, bpp)
    kv = kv_bytes_per_token_read(checkpoint, context, bpp)
    source = "given"
    bw = bandwidth_gbs
    if bw is None and getattr(device, "type", "cpu") == "cuda":
        bw = measure_copy_bandwidth(device)
        source = "measured device-to-device copy (read + write bytes)"
    out: dict[str, Any] = {
        "weight_bytes_per_token": weights,
        "kv_bytes_per_token": kv,
        "params": counts,
        "context_tokens": context,
        "bytes_per_param": bpp,
    }
    if bw is None:
        out.update(available=False, reason="no GPU: pass --bandwidth-gbs to compute the bound on this device")
        return out
    bound = bw * 1e9 / (weights + kv)
    out.update(
        available=True,
        bandwidth_gbs=bw,
        bandwidth_source=source,
        bound_tok_s=bound,
        fraction_of_bound=(tok_s / bound) if tok_s else None,
    )
    return out
