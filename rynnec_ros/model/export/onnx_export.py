"""``rynnec-ros export onnx``: every compute graph of a RynnEC checkpoint as ONNX, plus ``manifest.json``.

What stays outside the graphs, on purpose: RoPE position tables of the vision tower (they depend on the
frame's patch grid and are cheap; keeping them out lets one graph take any frame size), token merging
and mask pooling (index shuffles without weights), token embedding lookup and the decoding loop. So the
graphs hold all the weights and FLOPs, and the control flow stays in the shared Python engine.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

from rynnec_ros.model.export.kvcache import KV_CACHES, calibrate, calibration_embeds, int8_kv_graph, scales_of
from rynnec_ros.model.export.llm import Decode, ExplicitKVQwen2, FusedDecode, Prefill, cache_names, kv_names
from rynnec_ros.model.export.manifest import GraphSpec, Manifest, TensorSpec
from rynnec_ros.model.export.quantize import BITS, QUANTIZED_GRAPHS, quantize_graph

OPSET = 17
GRAPHS = (
    "vision",
    "projector",
    "region",
    "llm_prefill",
    "llm_decode",
    "llm_decode_gqa",
    "lm_head",
    "seg_head",
    "sam2_image",
    "sam2_decoder",
)


class VisionGraph(nn.Module):
    """One frame's patches [N, 3·p·p] + RoPE cos/sin [N, head_dim] → post-LN features [N, C] (token order)."""

    def __init__(self, tower: nn.Module) -> None:
        super().__init__()
        self.tower = tower

    def forward(self, pixel_values: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = self.tower.embeddings(pixel_values)
        for layer in self.tower.encoder.layers:
            x = layer(x, cos, sin)
        return self.tower.post_layernorm(x)


def _dtype_name(t: torch.Tensor) -> str:
    return str(t.dtype).replace("torch.", "")


def _export(
    module: nn.Module,
    args: tuple[torch.Tensor, ...],
    path: Path,
    input_names: Sequence[str],
    output_names: Sequence[str],
    dynamic: dict[str, dict[int, str]],
) -> None:
    """TorchScript-based export (handles these explicit-shape wrappers and needs no onnxscript), into a
    scratch folder first: graphs over protobuf's 2 GB limit come out as one file per weight, which are
    then gathered into a single ``<name>.onnx.data`` next to the graph."""
    import onnx

    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".export-") as tmp:
        scratch = Path(tmp) / path.name
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                module,
                args,
                str(scratch),
                dynamo=False,
                opset_version=OPSET,
                input_names=list(input_names),
                output_names=list(output_names),
                dynamic_axes=dynamic,
                do_constant_folding=True,
            )
        model = onnx.load(str(scratch), load_external_data=True)
        big = sum(len(t.raw_data) for t in model.graph.initializer) > (1 << 30)
        for stale in path.parent.glob(path.name + ".data"):
            stale.unlink()
        onnx.save_model(
            model,
            str(path),
            save_as_external_data=big,
            all_tensors_to_one_file=True,
            location=path.name + ".data",
            size_threshold=1024,
        )


def _spec(
    file: str,
    inputs: dict[str, torch.Tensor],
    dyn: dict[str, dict[int, str]],
    outputs: Sequence[str],
    dims: dict[str, tuple[int, int, int]],
) -> GraphSpec:
    specs = {}
    for name, t in inputs.items():
        shape: list[int | str] = list(t.shape)
        for axis, dim_name in dyn.get(name, {}).items():
            shape[axis] = dim_name
        specs[name] = TensorSpec(dtype=_dtype_name(t), shape=shape)
    return GraphSpec(
        file=file, inputs=specs, outputs=list(outputs), dims={k: dims[k] for k in _used(specs, dims)}
    )


def _used(specs: dict[str, TensorSpec], dims: dict[str, tuple[int, int, int]]) -> list[str]:
    names = {d for s in specs.values() for d in s.shape if isinstance(d, str)}
    return [n for n in dims if n in names]


def default_dims(max_frame_tokens: int, max_seq: int) -> dict[str, tuple[int, int, int]]:
    """(min, opt, max) of every named dimension; TensorRT builds its optimisation profiles from these."""
    opt_patches = min(4 * 391, max_frame_tokens * 4)  # a 640×480 frame at the 30-frame budget
    return {
        "patches": (4, opt_patches, 4 * max_frame_tokens),
        "tokens": (1, opt_patches // 4, max_frame_tokens),
        "regions": (1, 4, 64),
        "rows": (1, 1, 64),
        "seq": (1, min(4096, max_seq), max_seq),
        "new": (1, 1, 64),
        "past": (1, min(4096, max_seq), max_seq),
        "objects": (1, 1, 8),
        "frames": (1, 1, 8),
    }


class _Step:
    """Progress lines for the export (graphs of the 2B model take tens of seconds each)."""

    def __init__(self, total: int) -> None:
        self.total, self.i, self.t0 = total, 0, time.perf_counter()

    def __call__(self, name: str) -> None:
        self.i += 1
        print(
            f"[{self.i}/{self.total} {time.perf_counter() - self.t0:6.1f}s] exporting {name}", file=sys.stderr
        )


def export_onnx(
    checkpoint: str | Path,
    out_dir: str | Path,
    graphs: Sequence[str] | None = None,
    max_frame_tokens: int = 16384,
    max_seq: int = 16384,
    model: Any = None,
    weights: Sequence[str] = (),
    kv_cache: Sequence[str] = (),
) -> Manifest:
    """Export the selected graphs (default: all the checkpoint has) and write ``manifest.json``.

    Exported in float32 whatever the torch dtype: TensorRT picks fp16/int8 per layer itself, and
    ONNX Runtime CPU runs float32. A ``model`` passed in (instead of loading ``checkpoint``) is
    converted to float32 in place. ``weights`` (``int8``, ``int4``) adds weight-only quantised copies
    of the LLM graphs (``<graph>.<weights>.onnx``, ``export/quantize.py``), listed under the
    manifest's ``weights``; engines choose them with the ``weights`` option. ``kv_cache`` (``int8``)
    adds the fused decode graph of every weight precision with an int8 K/V cache (``add_kv_cache``).
    """
    from rynnec_ros.model.loader import load_model

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    m = model if model is not None else load_model(checkpoint, device="cpu", dtype="float32")
    m = m.float().eval()
    rc = m.rconfig
    wanted = list(graphs or GRAPHS)
    bad = [g for g in wanted if g not in GRAPHS]
    if bad:
        raise ValueError(f"unknown graphs {bad}; choose from {GRAPHS}")
    if m.seg_head is None:
        wanted = [g for g in wanted if g != "seg_head"]
    if m.sam2 is None:
        wanted = [g for g in wanted if not g.startswith("sam2")]
    dims = default_dims(max_frame_tokens, max_seq)
    exporters: dict[str, Callable[[], GraphSpec]] = {
        "vision": lambda: _export_vision(m, out, dims),
        "projector": lambda: _export_mlp(
            m.model.mm_projector, rc.mm_hidden_size, "projector", "tokens", out, dims
        ),
        "region": lambda: _export_mlp(
            m.model.region_encoder.feat_linear, rc.mm_hidden_size, "region", "regions", out, dims
        ),
        "llm_prefill": lambda: _export_prefill(m, out, dims),
        "llm_decode": lambda: _export_decode(m, out, dims),
        "llm_decode_gqa": lambda: _export_decode_gqa(m, out, dims),
        "lm_head": lambda: _export_mlp(m.lm_head, rc.hidden_size, "lm_head", "rows", out, dims),
        "seg_head": lambda: _export_mlp(m.seg_head, rc.hidden_size, "seg_head", "objects", out, dims),
        "sam2_image": lambda: _export_sam2_image(m.sam2, out, dims),
        "sam2_decoder": lambda: _export_sam2_decoder(m.sam2, out, dims),
    }
    bad_weights = [w for w in weights if w not in BITS]
    if bad_weights:
        raise ValueError(f"unknown weights {bad_weights}; choose from {sorted(BITS)}")
    bad_kv = [c for c in kv_cache if c not in KV_CACHES]
    if bad_kv:
        raise ValueError(f"unknown kv_cache {bad_kv}; choose from {list(KV_CACHES)}")
    if kv_cache and "llm_decode_gqa" not in wanted:
        raise ValueError("kv_cache needs the fused decode graph llm_decode_gqa among the graphs")
    quantized = len([g for g in QUANTIZED_GRAPHS if g in wanted])
    step = _Step(len(wanted) + len(weights) * quantized + len(kv_cache))
    specs: dict[str, GraphSpec] = {}
    for name in wanted:
        step(name)
        specs[name] = exporters[name]()
    manifest = Manifest(
        graphs=specs,
        info={
            "checkpoint": str(checkpoint),
            "opset": OPSET,
            "dtype": "float32",
            "hidden_size": rc.hidden_size,
            "vision_hidden_size": rc.mm_hidden_size,
            "merge_size": rc.merge_size,
            "num_layers": len(m.model.layers),
            "torch": torch.__version__,
        },
    )
    manifest.save(out)
    for w in weights:
        manifest = add_weights(out, w, step)
    for c in kv_cache:
        step(f"llm_decode_gqa ({c} K/V cache)")
        manifest = add_kv_cache(out, m, c)
    return manifest


def add_kv_cache(out_dir: str | Path, model: Any, kv_cache: str = "int8") -> Manifest:
    """Calibrate per-layer K/V scales on ``model`` (float32, the export's checkpoint) and write the fused
    decode graph of every weight precision of the export with an int8 cache (``export/kvcache.py``):
    ``llm_decode_gqa[.<weights>].kv8.onnx``, listed under the manifest's ``kv_cache``."""
    if kv_cache not in KV_CACHES:
        raise ValueError(f"kv_cache must be one of {list(KV_CACHES)}, got {kv_cache!r}")
    out = Path(out_dir)
    manifest = Manifest.load(out)
    core = _core(model)
    embeds = calibration_embeds(model)
    k_max, v_max = calibrate(core, embeds)
    k_scale, v_scale = scales_of(k_max), scales_of(v_max)
    manifest.kv_cache[kv_cache] = {}
    for weights in ["", *manifest.weights]:
        spec = manifest.graph("llm_decode_gqa", weights)
        file = spec.file.removesuffix(".onnx") + ".kv8.onnx"
        int8_kv_graph(out / spec.file, out / file, k_scale, v_scale)
        inputs = {
            n: (TensorSpec("int8", t.shape) if n.startswith("cache_") else t) for n, t in spec.inputs.items()
        }
        manifest.kv_cache[kv_cache][weights] = dataclasses.replace(spec, file=file, inputs=inputs)
    manifest.info.setdefault("kv_cache", {})[kv_cache] = {
        "scales": "per layer, per tensor (k_quant_type = v_quant_type = PER_TENSOR), max |x| / 127",
        "calibration": f"float32 prefill of {embeds.shape[1]} seeded token ids (export/kvcache.py)",
        "k_absmax": [float(x) for x in k_max],
        "v_absmax": [float(x) for x in v_max],
    }
    manifest.save(out)
    return manifest


def add_weights(out_dir: str | Path, weights: str, step: Callable[[str], None] | None = None) -> Manifest:
    """Quantise the LLM graphs of an export to ``weights`` (``export/quantize.py``) and list them in its
    manifest (``weights``; what was quantised under ``info["weights"]``)."""
    out = Path(out_dir)
    manifest = Manifest.load(out)
    manifest.weights[weights] = {}
    facts = manifest.info.setdefault("weights", {})
    facts[weights] = {}
    for name in [g for g in QUANTIZED_GRAPHS if g in manifest.graphs]:
        if step is not None:
            step(f"{name} ({weights} weights)")
        spec = manifest.graphs[name]
        file = f"{name}.{weights}.onnx"
        facts[weights][name] = quantize_graph(out / spec.file, out / file, weights)
        manifest.weights[weights][name] = dataclasses.replace(spec, file=file)
    manifest.save(out)
    return manifest


def _export_vision(m: Any, out: Path, dims: dict[str, tuple[int, int, int]]) -> GraphSpec:
    vc = m.rconfig.vision
    grid = 2 * m.rconfig.merge_size
    n = grid * grid
    pix = torch.randn(n, vc.num_channels * vc.patch_size**2)
    cos, sin = m.vision_tower.encoder.rope(grid, grid, m.rconfig.merge_size)
    inputs = {"pixel_values": pix, "cos": cos.float(), "sin": sin.float()}
    dyn = {
        "pixel_values": {0: "patches"},
        "cos": {0: "patches"},
        "sin": {0: "patches"},
        "features": {0: "patches"},
    }
    _export(
        VisionGraph(m.vision_tower),
        tuple(inputs.values()),
        out / "vision.onnx",
        list(inputs),
        ["features"],
        dyn,
    )
    return _spec("vision.onnx", inputs, dyn, ["features"], dims)


def _export_mlp(
    mlp: nn.Module, in_dim: int, name: str, dim: str, out: Path, dims: dict[str, tuple[int, int, int]]
) -> GraphSpec:
    inputs = {"x": torch.randn(3, in_dim)}
    dyn = {"x": {0: dim}, "y": {0: dim}}
    _export(mlp, (inputs["x"],), out / f"{name}.onnx", ["x"], ["y"], dyn)
    return _spec(f"{name}.onnx", inputs, dyn, ["y"], dims)


def _core(m: Any) -> ExplicitKVQwen2:
    return ExplicitKVQwen2(m.model).eval()


def _export_prefill(m: Any, out: Path, dims: dict[str, tuple[int, int, int]]) -> GraphSpec:
    core = _core(m)
    s = 5
    inputs = {
        "inputs_embeds": torch.randn(1, s, m.rconfig.hidden_size),
        "position_ids": torch.arange(s, dtype=torch.int64)[None],
    }
    new = kv_names("new", len(core.layers), core.num_kv)
    outputs = ["hidden", *new]
    dyn = {
        "inputs_embeds": {1: "seq"},
        "position_ids": {1: "seq"},
        "hidden": {1: "seq"},
        **{n: {0: "seq"} for n in new},
    }
    _export(Prefill(core), tuple(inputs.values()), out / "llm_prefill.onnx", list(inputs), outputs, dyn)
    return _spec("llm_prefill.onnx", inputs, dyn, outputs, dims)


def _export_decode(m: Any, out: Path, dims: dict[str, tuple[int, int, int]]) -> GraphSpec:
    """Past K/V per (layer, kind, kv head) in, the new positions out (see ``export/llm.py``)."""
    core = _core(m)
    p, s = 6, 2
    names = kv_names("past", len(core.layers), core.num_kv)
    new = kv_names("new", len(core.layers), core.num_kv)
    inputs = {
        "inputs_embeds": torch.randn(1, s, m.rconfig.hidden_size),
        "position_ids": torch.arange(p, p + s, dtype=torch.int64)[None],
        **{n: torch.randn(p, core.head_dim) for n in names},
    }
    outputs = ["hidden", *new]
    dyn = {
        "inputs_embeds": {1: "new"},
        "position_ids": {1: "new"},
        **{n: {0: "past"} for n in names},
        "hidden": {1: "new"},
        **{n: {0: "new"} for n in new},
    }
    _export(Decode(core), tuple(inputs.values()), out / "llm_decode.onnx", list(inputs), outputs, dyn)
    return _spec("llm_decode.onnx", inputs, dyn, outputs, dims)


def _export_decode_gqa(m: Any, out: Path, dims: dict[str, tuple[int, int, int]]) -> GraphSpec:
    """``llm_decode`` for ONNX Runtime: one ``GroupQueryAttention`` per layer over the whole cache
    buffer of the layer, read and written in place (``export/llm.py``, ``FusedDecode``)."""
    core = _core(m)
    p, s, capacity = 6, 2, 16
    names = cache_names("cache", len(core.layers))
    present = cache_names("present", len(core.layers))
    inputs = {
        "inputs_embeds": torch.randn(1, s, m.rconfig.hidden_size),
        "position_ids": torch.arange(p, p + s, dtype=torch.int64)[None],
        **{n: torch.randn(1, core.num_kv, capacity, core.head_dim) for n in names},
    }
    outputs = ["hidden", *present]
    dyn = {
        "inputs_embeds": {1: "new"},
        "position_ids": {1: "new"},
        **{n: {2: "capacity"} for n in [*names, *present]},
        "hidden": {1: "new"},
    }
    file = "llm_decode_gqa.onnx"
    _export(FusedDecode(core), tuple(inputs.values()), out / file, list(inputs), outputs, dyn)
    _shape_outputs_like(out / file, {"hidden": "inputs_embeds", **dict(zip(present, names, strict=True))})
    return _spec(file, inputs, dyn, outputs, {**dims, "capacity": dims["past"]})


def _shape_outputs_like(path: Path, like: dict[str, str]) -> None:
    """Give outputs the shape of the input each equals in shape (the exporter cannot infer contrib ops'
    shapes and names their dimensions after the node); the weights (external data) stay as they are."""
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    shapes = {i.name: i.type.tensor_type.shape for i in model.graph.input}
    for o in model.graph.output:
        if o.name in like:
            o.type.tensor_type.shape.CopyFrom(shapes[like[o.name]])
    onnx.save_model(model, str(path))


class Sam2ImageGraph(nn.Module):
    """Frames [B, 3, S, S] → what the mask decoder reads: level 2 + no_mem_embed and the conv_s0/s1 skips
    (``Sam2Model.features``: the package's image encoder)."""

    def __init__(self, sam2: nn.Module) -> None:
        super().__init__()
        self.sam2 = sam2

    def forward(self, pixels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return self.sam2.features(pixels)


class Sam2DecoderGraph(nn.Module):
    """``Sam2Model.mask_logits`` (the package's ``MaskDecoder.predict_masks``) with flat inputs;
    ``sparse`` = two padding points, then the [SEG] prompt."""

    def __init__(self, sam2: nn.Module) -> None:
        super().__init__()
        self.sam2 = sam2

    def forward(
        self,
        image_embed: torch.Tensor,
        image_pe: torch.Tensor,
        sparse: torch.Tensor,
        dense: torch.Tensor,
        feat_s0: torch.Tensor,
        feat_s1: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return self.sam2.mask_logits(image_embed, image_pe, sparse, dense, (feat_s0, feat_s1))


def _sam2_example(sam2: nn.Module) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    size = sam2.config.image_size
    with torch.no_grad():
        return Sam2ImageGraph(sam2)(torch.randn(1, 3, size, size))


@contextlib.contextmanager
def _frozen_pos_embed(trunk: nn.Module, grid: int) -> Iterator[None]:
    """Hiera interpolates its position embedding to the patch grid on every call; the input size is
    fixed (image_size²), so the export stores the interpolated table as a constant instead of running a
    bicubic resize per frame (a fifth of the ONNX Runtime time otherwise). Same values, traced once."""
    with torch.no_grad():
        table = trunk._get_pos_embed((grid, grid)).detach().clone()
    trunk._get_pos_embed = lambda hw: table
    try:
        yield
    finally:
        del trunk._get_pos_embed


def _export_sam2_image(sam2: nn.Module, out: Path, dims: dict[str, tuple[int, int, int]]) -> GraphSpec:
    size = sam2.config.image_size
    inputs = {"pixels": torch.randn(2, 3, size, size)}
    outputs = ["image_embed", "feat_s0", "feat_s1"]
    dyn = {"pixels": {0: "frames"}, **{o: {0: "frames"} for o in outputs}}
    grid = sam2.image_encoder.trunk.patch_embed(inputs["pixels"][:1]).shape[1]
    with _frozen_pos_embed(sam2.image_encoder.trunk, grid):
        _export(Sam2ImageGraph(sam2), (inputs["pixels"],), out / "sam2_image.onnx", ["pixels"], outputs, dyn)
    return _spec("sam2_image.onnx", inputs, dyn, outputs, dims)


def _export_sam2_decoder(sam2: nn.Module, out: Path, dims: dict[str, tuple[int, int, int]]) -> GraphSpec:
    embed, s0, s1 = _sam2_example(sam2)
    with torch.no_grad():
        sparse, dense = sam2.seg_prompt(torch.randn(sam2.config.d_model))
        pe = sam2.dense_pe()
    inputs = {
        "image_embed": embed,
        "image_pe": pe,
        "sparse": sparse,
        "dense": dense.contiguous(),
        "feat_s0": s0,
        "feat_s1": s1,
    }
    outputs = ["masks", "iou", "object_score"]
    _export(
        Sam2DecoderGraph(sam2), tuple(inputs.values()), out / "sam2_decoder.onnx", list(inputs), outputs, {}
    )
    return _spec("sam2_decoder.onnx", inputs, {}, outputs, dims)
