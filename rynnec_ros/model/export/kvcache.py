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

The same rewrite stacks each kv head's query heads as rows of one head (``query_rows``): the kernel's
int8 path dequantises a kv head's rows once per query head, which made the int8 attention cost nearly
what the float one did; one pass per kv head is what makes the quarter of the bytes pay (measured in
docs/acceleration.md, "int8 K/V cache").

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
QUERY_ROWS_KEY = "rynnec_ros.query_rows"
"""Model property of an int8-cache graph: G, the query heads stacked as rows per kv head (``query_rows``)."""
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
    group = query_rows(graph)
    props = {p.key: p.value for p in model.metadata_props}
    helper.set_model_props(model, {**props, QUERY_ROWS_KEY: str(group)})
    onnx.save_model(model, str(dst))


def query_rows(graph: Any) -> int:
    """Rewrite each ``GroupQueryAttention`` of ``graph`` to see a kv head's G query heads as G·S rows of
    one head; returns G (the graph is unchanged when G is 1).

    Why: ONNX Runtime 1.32's CPU kernel runs one pair of GEMMs per query head, and with an int8 cache it
    dequantises the kv head's rows for each of them, so the G query heads of a kv head cost G passes
    over its cache. Given ``num_heads`` = ``kv_num_heads`` and the G heads stacked as rows (row
    ``g·S + s`` is query head ``kv·G + g`` of token ``s``), it makes one pass per kv head with G·S rows.
    What keeps the answer the same: every row is rotated at its token's position (``position_ids``,
    the S positions tiled G times); the op writes G·S new K/V rows (the S real ones first, copies after
    them, in scratch rows past the S positions that the next call overwrites); and an
    ``attention_bias`` lets row ``(g, s)`` see the columns up to its own position only, hiding both
    the later tokens of the chunk and the scratch rows. So a call of S tokens needs (G − 1)·S rows of
    cache capacity beyond its last position (``GraphDecoderStack`` keeps them), and the bias is
    [G·S, total + (G − 1)·S] floats (the engine calls with at most ``INT8_KV_CALL_TOKENS`` tokens).
    Measured (docs/acceleration.md, "int8 K/V cache"): with float32 caches the rewrite did not help (the
    float attention is bound by memory, not by the per-head passes), so only the int8 graphs use it.
    """
    from onnx import TensorProto, helper, numpy_helper

    nodes = [n for n in graph.node if n.op_type == "GroupQueryAttention"]
    attrs = {a.name: helper.get_attribute_value(a) for a in nodes[0].attribute}
    heads, kv = int(attrs["num_heads"]), int(attrs["kv_num_heads"])
    group = heads // kv
    if group == 1:
        return 1
    cache = next(vi for vi in graph.input if vi.name == "cache_k.0")
    hd = cache.type.tensor_type.shape.dim[3].dim_value
    seqlens, total = nodes[0].input[5], nodes[0].input[6]  # the same two tensors feed every layer

    def const(name: str, value: Any, dtype: Any = np.int64) -> str:
        graph.initializer.append(numpy_helper.from_array(np.asarray(value, dtype), f"rows.{name}"))
        return f"rows.{name}"

    tile_rows, tile_group = const("tile_rows", [1, group, 1]), const("tile_group", [1, group])
    first = [
        # S, and (G - 1)·S extra rows the op writes after the S real ones
        helper.make_node("Shape", ["position_ids"], ["rows.s"], start=1, end=2),
        helper.make_node("Mul", ["rows.s", const("g1", [group - 1])], ["rows.extra"]),
        helper.make_node("Cast", ["rows.extra"], ["rows.extra32"], to=TensorProto.INT32),
        helper.make_node("Add", [seqlens, "rows.extra32"], ["rows.seqlens"]),
        helper.make_node("Squeeze", ["rows.extra32", const("axis0", [0])], ["rows.extra0"]),
        helper.make_node("Add", [total, "rows.extra0"], ["rows.total"]),
        # each row's position (its token's), and its last visible column
        helper.make_node("Tile", ["position_ids", tile_group], ["rows.positions"]),
        helper.make_node("Reshape", ["rows.positions", const("column", [-1, 1])], ["rows.last"]),
        helper.make_node("Range", [const("zero", 0, np.int32), "rows.total", const("one", 1, np.int32)],
                         ["rows.cols32"]),
        helper.make_node("Cast", ["rows.cols32"], ["rows.cols"], to=TensorProto.INT64),
        helper.make_node("LessOrEqual", ["rows.cols", "rows.last"], ["rows.visible"]),
        helper.make_node("Where", ["rows.visible", const("open", 0.0, np.float32),
                                   const("shut", -np.inf, np.float32)], ["rows.bias2"]),
        helper.make_node("Unsqueeze", ["rows.bias2", const("axes01", [0, 1])], ["rows.bias"]),
    ]
    q_split, q_rows = const("q_split", [1, -1, kv, group, hd]), const("q_rows", [1, -1, kv * hd])
    o_split, o_join = const("o_split", [1, group, -1, kv, hd]), const("o_join", [1, -1, heads * hd])
    out: list[Any] = []
    last_producer = 0
    for i, node in enumerate(graph.node):
        if node.op_type != "GroupQueryAttention":
            out.append(node)
            if seqlens in node.output or total in node.output:
                last_producer = len(out)
            continue
        p = f"rows.{i}"
        q, k, v = node.input[0], node.input[1], node.input[2]
        out += [
            helper.make_node("Reshape", [q, q_split], [f"{p}.q5"]),  # [1, S, kv, G, hd]
            helper.make_node("Transpose", [f"{p}.q5"], [f"{p}.qt"], perm=[0, 3, 1, 2, 4]),
            helper.make_node("Reshape", [f"{p}.qt", q_rows], [f"{p}.q"]),  # [1, G·S, kv·hd]
            helper.make_node("Tile", [k, tile_rows], [f"{p}.k"]),
            helper.make_node("Tile", [v, tile_rows], [f"{p}.v"]),
        ]
        inputs = list(node.input) + [""] * (14 - len(node.input))
        inputs[0:3] = [f"{p}.q", f"{p}.k", f"{p}.v"]
        inputs[5:7] = ["rows.seqlens", "rows.total"]
        inputs[9:11] = ["rows.positions", "rows.bias"]
        node_attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        node_attrs["num_heads"] = kv
        node_attrs = {n: (a.decode() if isinstance(a, bytes) else a) for n, a in node_attrs.items()}
        out.append(helper.make_node("GroupQueryAttention", inputs, [f"{p}.o", *node.output[1:]],
                                    domain="com.microsoft", name=node.name, **node_attrs))
        out += [
            helper.make_node("Reshape", [f"{p}.o", o_split], [f"{p}.o5"]),  # [1, G, S, kv, hd]
            helper.make_node("Transpose", [f"{p}.o5"], [f"{p}.ot"], perm=[0, 2, 3, 1, 4]),
            helper.make_node("Reshape", [f"{p}.ot", o_join], [node.output[0]]),  # [1, S, heads·hd]
        ]
    out[last_producer:last_producer] = first
    del graph.node[:]
    graph.node.extend(out)
    return group

