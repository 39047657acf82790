"""Numerical parity of exported graphs (ONNX Runtime or TensorRT) with the torch modules they came from.

Inputs are drawn fresh from realistic ranges (pixels in [-1, 1], token embeddings of random ids, a KV
cache produced by the prefill itself), and errors are reported as max |out − ref| and the relative
norm ‖out − ref‖ / ‖ref‖, the latter being what the tolerances bound.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import torch

from rynnec_ros.model.export.llm import Decode, ExplicitKVQwen2, Prefill, cache_names, kv_names
from rynnec_ros.model.export.onnx_export import Sam2DecoderGraph, Sam2ImageGraph, VisionGraph

# Relative-norm tolerances: float32 graphs differ from torch by reordered float32 sums only;
# fp16/bf16/int8 engines by their arithmetic precision.
TOLERANCE = {"fp32": 1e-4, "fp16": 2e-2, "bf16": 5e-2, "int8": 1e-1, "fp8": 1e-1}

Graph = Callable[..., dict[str, torch.Tensor]]


@dataclass
class GraphParity:
    graph: str
    output: str
    max_abs: float
    rel: float
    tol: float

    @property
    def ok(self) -> bool:
        return self.rel <= self.tol

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


def _compare(
    graph: str, ref: Mapping[str, torch.Tensor], got: Mapping[str, torch.Tensor], tol: float
) -> list[GraphParity]:
    rows = []
    for name, r in ref.items():
        g = got[name].detach().to("cpu", torch.float64)
        rr = r.detach().to("cpu", torch.float64)
        if g.shape != rr.shape:
            raise AssertionError(f"{graph}.{name}: shape {tuple(g.shape)} != torch {tuple(rr.shape)}")
        if not torch.isfinite(g).all():
            rows.append(GraphParity(graph, name, float("inf"), float("inf"), tol))
            continue
        diff = (g - rr).norm().item()
        rel = diff / max(rr.norm().item(), 1e-12)
        rows.append(GraphParity(graph, name, (g - rr).abs().max().item(), rel, tol))
    return rows


def example_inputs(model: Any, seed: int = 0) -> dict[str, dict[str, torch.Tensor]]:
    """One input set per graph, at small sizes that still exercise every dynamic axis."""
    gen = torch.Generator().manual_seed(seed)
    rc = model.rconfig
    vc = rc.vision
    m = rc.merge_size
    gh, gw = 3 * m, 5 * m
    n = gh * gw
    cos, sin = model.vision_tower.encoder.rope(gh, gw, m)
    ids = torch.randint(0, rc.vocab_size, (1, 11), generator=gen)
    embeds = model.model.embed_tokens(ids.to(model.lm_head.weight.device)).float().detach()
    inputs: dict[str, dict[str, torch.Tensor]] = {
        "vision": {
            "pixel_values": torch.rand(n, vc.num_channels * vc.patch_size**2, generator=gen) * 2 - 1,
            "cos": cos.float(),
            "sin": sin.float(),
        },
        "projector": {"x": torch.randn(n // (m * m), rc.mm_hidden_size, generator=gen)},
        "region": {"x": torch.randn(2, rc.mm_hidden_size, generator=gen)},
        "llm_prefill": {"inputs_embeds": embeds[:, :8], "position_ids": torch.arange(8)[None]},
        "llm_decode": {"inputs_embeds": embeds[:, 8:], "position_ids": torch.arange(8, 11)[None]},
    }
    inputs["lm_head"] = {"x": torch.randn(3, rc.hidden_size, generator=gen)}
    if model.seg_head is not None:
        inputs["seg_head"] = {"x": torch.randn(1, rc.hidden_size, generator=gen)}
    if model.sam2 is not None:
        s = model.sam2.config.image_size
        inputs["sam2_image"] = {"pixels": torch.randn(2, 3, s, s, generator=gen)}
    return inputs


def _past(feeds: Mapping[str, torch.Tensor], core: ExplicitKVQwen2) -> list[torch.Tensor]:
    return [feeds[n] for n in kv_names("past", core.num_layers, core.num_kv)]


def _gqa_case(
    core: ExplicitKVQwen2, decode_feeds: dict[str, torch.Tensor], decode: Callable[..., Any]
) -> tuple[dict[str, torch.Tensor], Callable[..., Any]]:
    """The fused decode graph's feeds (the plain decode's past in a 16-position buffer per layer) and
    its reference: the plain torch ``Decode`` (checked against transformers elsewhere), whose new rows
    the graph's caches must hold after the past ones."""
    layers, kv = core.num_layers, core.num_kv
    past = kv_names("past", layers, kv)
    p = decode_feeds[past[0]].shape[0]
    feeds = {k: decode_feeds[k] for k in ("inputs_embeds", "position_ids")}
    for i, name in enumerate(cache_names("cache", layers)):
        buf = torch.zeros(1, kv, 16, core.head_dim, device=decode_feeds[past[0]].device)
        buf[0, :, :p] = torch.stack([decode_feeds[past[i * kv + j]] for j in range(kv)])
        feeds[name] = buf

    def reference(f: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        out = decode({**decode_feeds, **{k: f[k] for k in ("inputs_embeds", "position_ids")}})
        rows = {"hidden": out["hidden"]}
        new = kv_names("new", layers, kv)
        for i, name in enumerate(cache_names("present", layers)):
            heads = [torch.cat((decode_feeds[past[i * kv + j]], out[new[i * kv + j]])) for j in range(kv)]
            rows[name] = torch.stack(heads)[None]
        return rows

    return feeds, reference


def _valid_rows(graph: Graph, total: int) -> Graph:
    """The fused decode graph with its cache outputs cut to the ``total`` positions it defines."""

    def run(feeds: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        return {k: (v[:, :, :total] if k.startswith("present_") else v) for k, v in graph(feeds).items()}

    return run


@torch.no_grad()
def check_graphs(
    model: Any, graphs: Mapping[str, Graph], precision: str = "fp32", seed: int = 0
) -> list[GraphParity]:
    """Compare every graph in ``graphs`` (name → callable taking a feed dict) with its torch module."""
    model = model.float().eval()
    tol = TOLERANCE[precision]
    device = model.lm_head.weight.device
    inputs = {
        g: {k: v.to(device) for k, v in feeds.items()} for g, feeds in example_inputs(model, seed).items()
    }
    core = ExplicitKVQwen2(model.model).eval()
    llm_out = ["hidden", *kv_names("new", core.num_layers, core.num_kv)]
    torch_mods: dict[str, Callable[..., Any]] = {
        "vision": lambda f: {"features": VisionGraph(model.vision_tower)(**f)},
        "projector": lambda f: {"y": model.model.mm_projector(f["x"])},
        "region": lambda f: {"y": model.model.region_encoder.feat_linear(f["x"])},
        "llm_prefill": lambda f: dict(zip(llm_out, Prefill(core)(**f), strict=True)),
        "llm_decode": lambda f: dict(
            zip(llm_out, Decode(core)(f["inputs_embeds"], f["position_ids"], *_past(f, core)), strict=True)
        ),
        "lm_head": lambda f: {"y": model.lm_head(f["x"])},
        "seg_head": lambda f: {"y": model.seg_head(f["x"])},
        "sam2_image": lambda f: dict(
            zip(("image_embed", "feat_s0", "feat_s1"), Sam2ImageGraph(model.sam2)(f["pixels"]), strict=True)
        ),
        "sam2_decoder": lambda f: dict(
            zip(("masks", "iou", "object_score"), Sam2DecoderGraph(model.sam2)(**f), strict=True)
        ),
    }
    if "llm_decode" in graphs or "llm_decode_gqa" in graphs:
        prefill_out = torch_mods["llm_prefill"](inputs["llm_prefill"])
        for past, new in zip(kv_names("past", core.num_layers, core.num_kv), llm_out[1:], strict=True):
            inputs["llm_decode"][past] = prefill_out[new]
    if "llm_decode_gqa" in graphs:
        inputs["llm_decode_gqa"], torch_mods["llm_decode_gqa"] = _gqa_case(
            core, inputs["llm_decode"], torch_mods["llm_decode"]
        )
        graphs = {**graphs, "llm_decode_gqa": _valid_rows(graphs["llm_decode_gqa"], 11)}
    if "sam2_decoder" in graphs and model.sam2 is not None:
        embed, s0, s1 = Sam2ImageGraph(model.sam2)(inputs["sam2_image"]["pixels"][:1])
        seg = torch.randn(model.sam2.config.d_model, generator=torch.Generator().manual_seed(seed + 1)).to(
            device
        )
        sparse, dense = model.sam2.seg_prompt(seg)
        inputs["sam2_decoder"] = {
            "image_embed": embed,
            "image_pe": model.sam2.dense_pe(),
            "sparse": sparse,
            "dense": dense.contiguous(),
            "feat_s0": s0,
            "feat_s1": s1,
        }
    rows: list[GraphParity] = []
    for name, run in graphs.items():
        if name not in torch_mods:
            raise ValueError(f"no torch reference for graph {name!r}")
        feeds = inputs[name]
        rows += _compare(name, torch_mods[name](feeds), run(feeds), tol)
    return rows
