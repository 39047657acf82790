"""Weight-only int8 / int4 LLM graphs: every weight matrix as block-wise DequantizeLinear → MatMul.

A batch-1 decode step reads every LLM weight once per token, so its speed is the weight bytes over the
memory bandwidth (``bench/roofline.py``); activations are few. Weight-only quantisation cuts those bytes
4× (int8) or ~7× (int4 with one float32 scale per block) and leaves activations in float.

The graphs use one standard form that both runtimes take: ``DequantizeLinear`` (opset 21, ``axis=0``,
``block_size`` along the input features) of a constant signed INT4 / INT8 weight ``[K, N]`` with a
float32 scale per block ``[K / block, N]``, feeding the ``MatMul``.

* ONNX Runtime fuses each such pair into its ``MatMulNBits`` kernel when it loads the graph (its
  ``DQMatMulToMatMulNBits`` rewrite, checked in ``test_backends_quantize``), which reads the packed
  weights directly;
* TensorRT and NVIDIA ModelOpt take the same Q/DQ form for weight-only quantisation (TensorRT's
  ``IDequantizeLayer`` requires symmetric quantisation, hence no zero point).

Quantisation is round-to-nearest, symmetric per block: ``scale = max |w| / qmax`` (qmax 7 or 127),
``q = round(w / scale)``. Blocks are 128 input features (what the ``MatMulNBits`` CPU kernels and
ModelOpt's int4 default use), or the largest power of two ≥ 16 that divides K when 128 does not.
Weights are quantised from the float32 graph, every LLM linear and the LM head; norms, biases and
the RoPE table stay float32.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

BITS = {"int8": 8, "int4": 4}
QUANTIZED_GRAPHS = ("llm_prefill", "llm_decode", "llm_decode_gqa", "lm_head")
OPSET = 21  # DequantizeLinear with block_size and INT4 weights


def block_size(k: int, preferred: int = 128) -> int:
    """The block along K: ``preferred`` when it divides K, else the largest power of two ≥ 16 that does."""
    size = preferred
    while size >= 16:
        if k % size == 0:
            return size
        size //= 2
    raise ValueError(f"no block of 16 or more input features divides K={k}")


def quantize_blocks(w: np.ndarray, bits: int, block: int) -> tuple[np.ndarray, np.ndarray]:
    """``w`` [K, N] float → (q [K, N] int8 holding values in [-qmax, qmax], scales [K / block, N] float32)."""
    k, n = w.shape
    qmax = (1 << (bits - 1)) - 1
    blocks = w.astype(np.float32).reshape(k // block, block, n)
    scales = np.abs(blocks).max(axis=1) / qmax
    scales[scales == 0] = 1.0  # an all-zero block: any scale gives zeros
    q = np.clip(np.rint(blocks / scales[:, None, :]), -qmax, qmax).astype(np.int8)
    return q.reshape(k, n), scales.astype(np.float32)


def dequantize_blocks(q: np.ndarray, scales: np.ndarray, block: int) -> np.ndarray:
    """The float weight a quantised one stands for (the ONNX ``DequantizeLinear`` formula, zero point 0)."""
    k, n = q.shape
    return (q.reshape(k // block, block, n).astype(np.float32) * scales[:, None, :]).reshape(k, n)


def _weight_of(node: Any, inits: dict[str, Any]) -> tuple[str, bool] | None:
    """(initializer name, stored as [N, K]) of a node that multiplies by a constant weight, else None."""
    if node.op_type == "MatMul" and node.input[1] in inits and len(inits[node.input[1]].dims) == 2:
        return node.input[1], False
    if node.op_type == "Gemm" and len(node.input) >= 2 and node.input[1] in inits:
        attrs = {a.name: a for a in node.attribute}
        plain = all(
            (attrs[name].f if name in ("alpha", "beta") else attrs[name].i) == value
            for name, value in (("alpha", 1.0), ("beta", 1.0), ("transA", 0))
            if name in attrs
        )
        trans_b = bool(attrs["transB"].i) if "transB" in attrs else False
        if plain:
            return node.input[1], trans_b
    return None


def quantize_graph(src: Path, dst: Path, weights: str) -> dict[str, Any]:
    """Write ``dst``: the graph ``src`` with every constant weight matrix quantised to ``weights``.

    Returns what was done: matrices quantised, their block sizes, and the weight bytes before/after.
    """
    import ml_dtypes
    import onnx
    from onnx import helper, numpy_helper
    from onnx.external_data_helper import load_external_data_for_tensor, uses_external_data

    if weights not in BITS:
        raise ValueError(f"weights must be one of {sorted(BITS)}, got {weights!r}")
    bits = BITS[weights]
    qdtype = ml_dtypes.int4 if bits == 4 else np.int8  # numpy_helper stores int4 two per byte
    # the graph without its external weights converts between opsets in memory at any model size
    model = onnx.version_converter.convert_version(onnx.load(str(src), load_external_data=False), OPSET)
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    for t in graph.initializer:
        if uses_external_data(t):
            load_external_data_for_tensor(t, str(src.parent))
    done: dict[str, str] = {}  # weight name → dequantized tensor name
    nodes = []
    blocks: dict[int, int] = {}
    before = after = 0
    for node in graph.node:
        found = _weight_of(node, inits)
        if found is None:
            nodes.append(node)
            continue
        name, transposed = found
        if name not in done:
            w = numpy_helper.to_array(inits[name])
            w = w.T if transposed else w
            block = block_size(w.shape[0])
            q, scales = quantize_blocks(w, bits, block)
            blocks[block] = blocks.get(block, 0) + 1
            before += w.size * 4
            after += (w.size * bits + 7) // 8 + scales.nbytes
            qname, sname, dname = f"{name}.q{bits}", f"{name}.scale", f"{name}.dq"
            graph.initializer.append(numpy_helper.from_array(q.astype(qdtype), qname))
            graph.initializer.append(numpy_helper.from_array(scales, sname))
            dq = helper.make_node("DequantizeLinear", [qname, sname], [dname], axis=0, block_size=block)
            nodes.append(dq)
            done[name] = dname
        out = node.output[0]
        if node.op_type == "Gemm" and len(node.input) == 3 and node.input[2]:
            nodes.append(helper.make_node("MatMul", [node.input[0], done[name]], [out + ".mm"]))
            nodes.append(helper.make_node("Add", [out + ".mm", node.input[2]], [out]))
        else:
            nodes.append(helper.make_node("MatMul", [node.input[0], done[name]], [out]))
    used = {i for n in nodes for i in n.input}
    kept = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    del graph.node[:]
    graph.node.extend(nodes)
    onnx.checker.check_model(model)
    big = sum(len(t.raw_data) for t in graph.initializer) > (1 << 30)
    for stale in dst.parent.glob(dst.name + ".data"):
        stale.unlink()
    onnx.save_model(
        model, str(dst), save_as_external_data=big, all_tensors_to_one_file=True,
        location=dst.name + ".data", size_threshold=1024,
    )
    return {"matrices": len(done), "blocks": blocks, "float32_bytes": before, "quantized_bytes": after}
