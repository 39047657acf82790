"""An int8 K/V cache for the fused ONNX Runtime decode graph, with scales calibrated at export.

At long contexts a decode step reads the whole valid cache once per token; on the small checkpoint at
3K positions the float32 K/V (25 MB) is twice the int4 weights, and ONNX Runtime's CPU
``GroupQueryAttention`` reads a kv head's rows once per query head that shares it, so the attention is
half of an int4 step (docs/acceleration.md, "Fused decode attention"). The same kernel takes int8
caches with static scales: it quantises the new rows as it writes them (``round(x / scale)``, round half
to even, saturating at -128 / 127: measured on ONNX Runtime 1.32, ``test_backends_kvcache``) and
dequantises (``q · scale``) as it reads, so a quarter of the bytes cross the memory bus and nothing
else in the graph changes.

``int8_kv_graph`` rewrites a fused graph (``llm_decode_gqa``, any weights) so: the ``cache_*`` inputs
and ``present_*`` outputs become int8, and each layer's node gets its ``k_scale`` / ``v_scale`` as
initializers (``kv8.k_scale.{layer}``), ``k_quant_type`` = ``v_quant_type`` = ``PER_TENSOR`` and
``kv_cache_bit_width`` 8. Scales are per layer and per tensor: the kernel takes per-channel scales
too (``[kv_heads · head_dim]``), but only for K and V together, and that path took 3.2 ms instead of
1.8 ms for 8 layers at 3K in isolation, which loses the speed the option exists for.

The scales come from a calibration pass (``calibrate``): the float32 decoder over token embeddings of
the checkpoint, recording each layer's largest |K| (after RoPE, as cached) and |V|; ``scale = max /
127``. A value beyond the calibrated range saturates to ±127 · scale (it is clipped, not wrapped). The
calibration text is seeded token ids from the vocabulary, not images: visual tokens of a real
checkpoint may reach larger K/V and saturate; the export records the calibrated maxima
(``manifest.json`` ``info.kv_cache``) so that they can be checked against a real prompt.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from rynnec_ros.model.export.llm import ExplicitKVQwen2

KV_CACHES = ("int8",)
QMAX = 127
CALIBRATION_TOKENS = 512
"""Positions of the calibration pass: enough for RoPE to turn every channel pair through many angles."""


def calibrate(core: ExplicitKVQwen2, embeds: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """Largest |K| (rotated, as cached) and |V| per layer over a prefill of ``embeds`` [1, S, H]."""
    positions = torch.arange(embeds.shape[1], dtype=torch.int64)[None]
    with torch.inference_mode():
        _, *new = core.run(embeds.float(), positions, ())
    kv = core.num_kv
    k_max = np.zeros(core.num_layers, np.float32)
    v_max = np.zeros(core.num_layers, np.float32)
    for i in range(core.num_layers):
        keys, values = new[2 * i * kv : (2 * i + 1) * kv], new[(2 * i + 1) * kv : (2 * i + 2) * kv]
        k_max[i] = max(float(t.abs().max()) for t in keys)
        v_max[i] = max(float(t.abs().max()) for t in values)
    return k_max, v_max


def calibration_embeds(model: Any, tokens: int = CALIBRATION_TOKENS, seed: int = 0) -> torch.Tensor:
    """Token embeddings [1, tokens, H] of seeded ids drawn from the checkpoint's vocabulary."""
    table = model.model.embed_tokens.weight
    ids = torch.randint(0, table.shape[0], (1, tokens), generator=torch.Generator().manual_seed(seed))
    return table[ids].detach().float()


def scales_of(absmax: np.ndarray) -> np.ndarray:
    """``max / 127`` per layer; a layer that never produced a non-zero value gets 1 (any scale fits 0)."""
    scale = np.asarray(absmax, np.float32) / QMAX
    scale[scale == 0] = 1.0
    return scale


def int8_kv_graph(src: Path, dst: Path, k_scale: np.ndarray, v_scale: np.ndarray) -> None:
    """Write ``dst``: the fused decode graph ``src`` with int8 caches and static per-layer scales.

    Weights stored outside the graph (``<graph>.onnx.data``, graphs over 1 GB) are not copied: the new
    graph refers to the same data file, so ``dst`` must be in ``src``'s directory.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    if Path(dst).parent.resolve() != Path(src).parent.resolve():
        raise ValueError("the int8-cache graph shares its weights file with its source: same directory")
    model = onnx.load(str(src), load_external_data=False)
    graph = model.graph
    nodes = [n for n in graph.node if n.op_type == "GroupQueryAttention"]
    if len(nodes) != len(k_scale) or len(nodes) != len(v_scale):
        raise ValueError(f"{src.name}: {len(nodes)} attention nodes but {len(k_scale)} layer scales")
    for vi in [*graph.input, *graph.output]:
        if vi.name.startswith(("cache_", "present_")):
            vi.type.tensor_type.elem_type = TensorProto.INT8
    for i, node in enumerate(nodes):  # traced in layer order (export/llm.py run_fused)
        names = (f"kv8.k_scale.{i}", f"kv8.v_scale.{i}")
        for name, value in zip(names, (k_scale[i], v_scale[i]), strict=True):
            graph.initializer.append(numpy_helper.from_array(np.array([value], np.float32), name))
        inputs = list(node.input) + [""] * (14 - len(node.input))
        inputs[12:14] = names  # k_scale, v_scale (after the optional position_ids, bias, head_sink)
        del node.input[:]
        node.input.extend(inputs)
        node.attribute.extend([
            helper.make_attribute("k_quant_type", "PER_TENSOR"),
            helper.make_attribute("v_quant_type", "PER_TENSOR"),
            helper.make_attribute("kv_cache_bit_width", 8),
        ])
    onnx.save_model(model, str(dst))

