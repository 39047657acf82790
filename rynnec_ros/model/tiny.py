"""Random RynnEC checkpoints in the official directory format, for tests, the demo and benchmarks.

The layout, key names and shapes are those of an upstream ``save_pretrained`` (plus the vision-encoder folder
and a SAM2 yaml), including the SAM2 memory / object-pointer / point-prompt tensors that our inference skips
but upstream loads strictly. The weights are drawn like the shared parity fixture's: unit-scale fan-in
weights, perturbed norms and biases, sharpened LLM attention — so outputs are far from degenerate and a parity
bug shows up as a different answer rather than hiding in near-constant activations.
"""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from .sam2 import read_yaml_model

ASSETS = Path(__file__).resolve().parent / "assets" / "tiny"
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.json",
    "merges.txt",
)
SAM2_YAML = "sam2_hiera_tiny.yaml"
VISION_DIR = "vl3-siglip-navit-tiny"

# (LLM hidden, layers, heads, kv heads, ffn) and (vision hidden, layers, heads, ffn)
SIZES: dict[str, dict[str, Any]] = {
    "tiny": {"llm": (64, 2, 4, 2, 128), "vision": (48, 2, 3, 96), "out_dim": 32},
    "small": {"llm": (512, 8, 8, 2, 1536), "vision": (384, 6, 6, 1536), "out_dim": 32},
}
# Token ids of the bundled tokenizer (its added tokens follow the upstream order).
_TOKEN_IDS = {"bos": 600, "eos": 602, "image": 603, "region": 606, "seg": 607}
_VOCAB = 610


def _llm_config(size: str, tie: bool) -> dict[str, Any]:
    hidden, layers, heads, kv, ffn = SIZES[size]["llm"]
    vhidden = SIZES[size]["vision"][0]
    return {
        "architectures": ["RynnecQwen2ForCausalLM"],
        "attention_dropout": 0.0,
        "bos_token_id": _TOKEN_IDS["bos"],
        "eos_token_id": _TOKEN_IDS["eos"],
        "has_mask": True,
        "hidden_act": "silu",
        "hidden_size": hidden,
        "image_aspect_ratio": "qwen2vl",
        "image_token_index": _TOKEN_IDS["image"],
        "initializer_range": 0.02,
        "intermediate_size": ffn,
        "mask_decoder_model": "sam2_hiera_tiny.pt",
        "max_frames": 180,
        "max_position_embeddings": 32768,
        "max_window_layers": layers,
        "mm_hidden_size": vhidden,
        "mm_mask_decoder": True,
        "mm_max_length": 16384,
        "mm_projector_type": "mlp2x_gelu",
        "mm_vision_encoder": VISION_DIR,
        "mm_vision_select_feature": "patch",
        "mm_vision_select_layer": -1,
        "model_type": "rynnec_qwen2",
        "num_attention_heads": heads,
        "num_hidden_layers": layers,
        "num_key_value_heads": kv,
        "out_dim": SIZES[size]["out_dim"],
        "region_token_index": _TOKEN_IDS["region"],
        "rms_norm_eps": 1e-06,
        "rope_scaling": None,
        "rope_theta": 1000000.0,
        "seg_token_index": _TOKEN_IDS["seg"],
        "sliding_window": None,
        "spatial_merge_size": 2,
        "tie_word_embeddings": tie,
        "tokenizer_model_max_length": 16384,
        "tokenizer_padding_side": "right",
        "torch_dtype": "float32",
        "training": False,
        "use_cache": True,
        "use_mm_proj": True,
        "use_sliding_window": False,
        "use_token_compression": False,
        "vocab_size": _VOCAB,
    }


def _vision_files(size: str) -> tuple[dict[str, Any], dict[str, Any]]:
    hidden, layers, heads, ffn = SIZES[size]["vision"]
    config = {
        "architectures": ["Videollama3VisionEncoderModel"],
        "attention_dropout": 0.0,
        "hidden_act": "gelu_pytorch_tanh",
        "hidden_size": hidden,
        "intermediate_size": ffn,
        "layer_norm_eps": 1e-06,
        "model_type": "videollama3_vision_encoder",
        "num_attention_heads": heads,
        "num_channels": 3,
        "num_hidden_layers": layers,
        "patch_size": 14,
        "torch_dtype": "float32",
    }
    preprocessor = {
        "do_convert_rgb": True,
        "do_normalize": True,
        "do_rescale": True,
        "do_resize": True,
        "image_mean": [0.5, 0.5, 0.5],
        "image_processor_type": "Videollama3ImageProcessor",
        "image_std": [0.5, 0.5, 0.5],
        "max_tokens": 16384,
        "min_tokens": 16,
        "patch_size": 14,
        "resample": 3,
        "rescale_factor": 1 / 255,
    }
    return config, preprocessor


def _module_kind(module: nn.Module | None) -> str:
    """How the fixture's scheme treats a module's weights: embedding, norm, transposed conv or plain."""
    if isinstance(module, nn.Embedding):
        return "embedding"
    if isinstance(module, nn.LayerNorm) or type(module).__name__ in {"Qwen2RMSNorm", "LayerNorm2d"}:
        return "norm"
    if isinstance(module, nn.ConvTranspose2d):
        return "transposed"
    return "plain"


def _draw(name: str, shape: tuple[int, ...], kind: str, gen: torch.Generator) -> torch.Tensor:
    """One parameter drawn with the fixture's scheme (see test/data/rynnec-tiny/README.md)."""

    def normal(std: float) -> torch.Tensor:
        return torch.randn(shape, generator=gen) * std

    leaf = name.rsplit(".", 1)[-1]
    if name.endswith("embed_tokens.weight") or name == "lm_head.weight":
        return normal(0.25)
    if kind == "embedding":
        return normal(1.0)
    if kind == "norm" and leaf == "weight":
        return 1 + normal(0.1)
    if leaf == "bias":
        return normal(0.05)
    if leaf == "weight" and len(shape) >= 2:
        fan_in = shape[0] * math.prod(shape[2:]) if kind == "transposed" else math.prod(shape[1:])
        w = normal(1 / math.sqrt(fan_in))
        if ".self_attn.q_proj" in name or ".self_attn.k_proj" in name:
            w = w * (4.0 if name.startswith("model.layers.") else 1.0)
        if name.startswith("model.layers.") and ".o_proj" in name:
            w = w * 0.3
        if name.startswith("model.layers.") and ".down_proj" in name:
            w = w * 2.0
        return w
    return normal(0.2)


def _randomise(model: nn.Module, gen: torch.Generator, prefix: str = "") -> dict[str, torch.Tensor]:
    modules = dict(model.named_modules())
    state = model.state_dict()
    out: dict[str, torch.Tensor] = {}
    for name in sorted(state):
        owner = modules.get(name.rsplit(".", 1)[0]) if "." in name else model
        t = state[name]
        if not t.is_floating_point():
            out[prefix + name] = t.clone()
            continue
        value = _draw(prefix + name, tuple(t.shape), _module_kind(owner), gen)
        if "output_hypernetworks_mlps" in name and ".layers.2." in name:
            value = value * 20.0  # push mask logits away from the 0 threshold (robust boolean masks)
        out[prefix + name] = value.to(torch.float32).contiguous()
    return out


# ------------------------------------------------------------------------------------------------------------
# SAM2 parts that our per-frame inference never builds (rynnec_ros.model.sam2.is_ignored_key) but upstream
# constructs and loads strictly, so a checkpoint in the official format must hold them.

# Fixed in the upstream SAM2Base / PromptEncoder / MaskDownSampler constructors, not part of the yaml.
_PROMPT_MASK_IN_CHANS = 16
_NUM_POINT_EMBEDDINGS = 4
_OBJ_PTR_MLP_LAYERS = 3
_MASK_DOWNSAMPLE_KERNEL = 4


@dataclass(frozen=True)
class Sam2MemoryConfig:
    """Sizes and flags of the SAM2 memory / object-pointer / point-and-mask-prompt parts.

    Defaults are the official ``sam2_hiera_l.yaml`` values; :meth:`from_yaml` falls back to the upstream
    constructor defaults for keys a yaml omits (``memory_encoder.in_dim`` and
    ``mask_downsampler.embed_dim`` default to 256 upstream, whatever the model width).
    """

    hidden_dim: int = 256  # memory_attention.d_model; upstream also sizes the prompt encoder with it
    attn_layers: int = 4
    layer_dim: int = 256  # memory_attention.layer.d_model
    ffn_dim: int = 2048
    # (embedding_dim, embedding_dim // downsample_rate, kv_in_dim) of the two RoPE attentions
    self_attn: tuple[int, int, int] = (256, 256, 256)
    cross_attn: tuple[int, int, int] = (256, 256, 64)
    mem_in_dim: int = 256
    mem_out_dim: int = 64
    downsampler_dim: int = 256
    downsampler_kernel: int = 3
    downsampler_stride: int = 2
    downsampler_total_stride: int = 16
    fuser_layers: int = 2
    fuser_dim: int = 256
    fuser_kernel: int = 7
    fuser_dwconv: bool = True
    fuser_gamma: bool = True  # layer_scale_init_value > 0
    fuser_input_projection: bool = False
    num_maskmem: int = 7
    use_obj_ptrs_in_encoder: bool = True
    pred_obj_scores: bool = True
    use_mlp_for_obj_ptr_proj: bool = True
    proj_tpos_enc_in_obj_ptrs: bool = False

    def __post_init__(self) -> None:
        stride, total = self.downsampler_stride, self.downsampler_total_stride
        if stride < 2 or stride ** _downsampler_layers(stride, total) != total:
            raise ValueError(
                f"mask_downsampler stride {stride} must be >= 2 and a root of total_stride {total}"
            )

    @classmethod
    def from_yaml(cls, path: str | Path) -> Sam2MemoryConfig:
        """Read the memory parts of a SAM 2.0 hydra config (``_target_`` entries are ignored)."""
        model = read_yaml_model(path)
        try:
            return cls._from_model(model)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"SAM2 config {path}: {exc}") from exc

    @classmethod
    def _from_model(cls, model: dict[str, Any]) -> Sam2MemoryConfig:
        def section(parent: dict[str, Any], key: str, where: str) -> dict[str, Any]:
            value = parent.get(key)
            if not isinstance(value, dict):
                raise ValueError(f"lacks the {where}{key} mapping")
            return value

        def need(parent: dict[str, Any], key: str, where: str) -> Any:
            if parent.get(key) is None:
                raise ValueError(f"lacks {where}{key}")
            return parent[key]

        attn = section(model, "memory_attention", "model.")
        layer = section(attn, "layer", "model.memory_attention.")
        enc = section(model, "memory_encoder", "model.")
        down = section(enc, "mask_downsampler", "model.memory_encoder.") if "mask_downsampler" in enc else {}
        fuser = section(enc, "fuser", "model.memory_encoder.")
        block = section(fuser, "layer", "model.memory_encoder.fuser.")

        def attention(key: str) -> tuple[int, int, int]:
            where = f"model.memory_attention.layer.{key}."
            spec = section(layer, key, "model.memory_attention.layer.")
            dim = int(need(spec, "embedding_dim", where))
            kv = spec.get("kv_in_dim")
            return dim, dim // int(spec.get("downsample_rate", 1)), int(dim if kv is None else kv)

        return cls(
            hidden_dim=int(need(attn, "d_model", "model.memory_attention.")),
            attn_layers=int(need(attn, "num_layers", "model.memory_attention.")),
            layer_dim=int(need(layer, "d_model", "model.memory_attention.layer.")),
            ffn_dim=int(need(layer, "dim_feedforward", "model.memory_attention.layer.")),
            self_attn=attention("self_attention"),
            cross_attn=attention("cross_attention"),
            mem_in_dim=int(enc.get("in_dim", 256)),
            mem_out_dim=int(need(enc, "out_dim", "model.memory_encoder.")),
            downsampler_dim=int(down.get("embed_dim", 256)),
            downsampler_kernel=int(down.get("kernel_size", 4)),
            downsampler_stride=int(down.get("stride", 4)),
            downsampler_total_stride=int(down.get("total_stride", 16)),
            fuser_layers=int(need(fuser, "num_layers", "model.memory_encoder.fuser.")),
            fuser_dim=int(need(block, "dim", "model.memory_encoder.fuser.layer.")),
            fuser_kernel=int(block.get("kernel_size", 7)),
            fuser_dwconv=bool(block.get("use_dwconv", True)),
            # yaml 1.1 reads "1e-6" as a string, hence float()
            fuser_gamma=float(block.get("layer_scale_init_value", 1e-6)) > 0,
            fuser_input_projection=bool(fuser.get("input_projection", False)),
            num_maskmem=int(model.get("num_maskmem", 7)),
            use_obj_ptrs_in_encoder=bool(model.get("use_obj_ptrs_in_encoder", False)),
            pred_obj_scores=bool(model.get("pred_obj_scores", False)),
            use_mlp_for_obj_ptr_proj=bool(model.get("use_mlp_for_obj_ptr_proj", False)),
            proj_tpos_enc_in_obj_ptrs=bool(model.get("proj_tpos_enc_in_obj_ptrs", False)),
        )


def _downsampler_layers(stride: int, total_stride: int) -> int:
    """Number of strided convs in upstream's MaskDownSampler (its own integer-log formula)."""
    return int(math.log2(total_stride) // math.log2(stride))


def ignored_sam2_tensors(cfg: Sam2MemoryConfig) -> list[tuple[str, tuple[int, ...]]]:
    """(name, shape) of every SAM2 tensor upstream builds beyond ``Sam2Model``, sorted by name.

    Names carry no ``grounding_encoder.sam2_model.`` prefix. Every 1-D ``weight`` here belongs to a norm and
    ``sam_prompt_encoder.point_embeddings.*`` are embeddings, which is all the weight drawing needs to know.
    """
    out: list[tuple[str, tuple[int, ...]]] = []

    def linear(name: str, fan_in: int, fan_out: int) -> None:
        out.extend(((f"{name}.weight", (fan_out, fan_in)), (f"{name}.bias", (fan_out,))))

    def conv(name: str, c_in: int, c_out: int, kernel: int, groups: int = 1) -> None:
        out.extend(((f"{name}.weight", (c_out, c_in // groups, kernel, kernel)), (f"{name}.bias", (c_out,))))

    def norm(name: str, dim: int) -> None:
        out.extend(((f"{name}.weight", (dim,)), (f"{name}.bias", (dim,))))

    hidden = cfg.hidden_dim
    for i in range(cfg.attn_layers):
        p = f"memory_attention.layers.{i}."
        for attn, (dim, internal, kv) in (("self_attn", cfg.self_attn), ("cross_attn_image", cfg.cross_attn)):
            linear(p + attn + ".q_proj", dim, internal)
            linear(p + attn + ".k_proj", kv, internal)
            linear(p + attn + ".v_proj", kv, internal)
            linear(p + attn + ".out_proj", internal, dim)
        linear(p + "linear1", cfg.layer_dim, cfg.ffn_dim)
        linear(p + "linear2", cfg.ffn_dim, cfg.layer_dim)
        for n in (1, 2, 3):
            norm(f"{p}norm{n}", cfg.layer_dim)
    norm("memory_attention.norm", hidden)

    # MaskDownSampler: (conv, LayerNorm2d, activation) per stride step, then a 1x1 conv to embed_dim
    p, chans = "memory_encoder.mask_downsampler.encoder.", 1
    steps = _downsampler_layers(cfg.downsampler_stride, cfg.downsampler_total_stride)
    for step in range(steps):
        wider = chans * cfg.downsampler_stride**2
        conv(f"{p}{3 * step}", chans, wider, cfg.downsampler_kernel)
        norm(f"{p}{3 * step + 1}", wider)
        chans = wider
    conv(f"{p}{3 * steps}", chans, cfg.downsampler_dim, 1)
    conv("memory_encoder.pix_feat_proj", cfg.mem_in_dim, cfg.mem_in_dim, 1)
    if cfg.fuser_input_projection:
        conv("memory_encoder.fuser.proj", cfg.fuser_dim, cfg.fuser_dim, 1)
    dim = cfg.fuser_dim
    for i in range(cfg.fuser_layers):
        p = f"memory_encoder.fuser.layers.{i}."
        conv(p + "dwconv", dim, dim, cfg.fuser_kernel, groups=dim if cfg.fuser_dwconv else 1)
        norm(p + "norm", dim)
        linear(p + "pwconv1", dim, 4 * dim)
        linear(p + "pwconv2", 4 * dim, dim)
        if cfg.fuser_gamma:
            out.append((p + "gamma", (dim,)))
    mem_dim = hidden
    if cfg.mem_out_dim != cfg.mem_in_dim:  # upstream's out_proj is an Identity otherwise
        conv("memory_encoder.out_proj", cfg.mem_in_dim, cfg.mem_out_dim, 1)
        mem_dim = cfg.mem_out_dim

    out.append(("maskmem_tpos_enc", (cfg.num_maskmem, 1, 1, mem_dim)))
    out.append(("no_mem_pos_enc", (1, 1, hidden)))
    if cfg.use_obj_ptrs_in_encoder:
        conv("mask_downsample", 1, 1, _MASK_DOWNSAMPLE_KERNEL)
        if cfg.use_mlp_for_obj_ptr_proj:
            for i in range(_OBJ_PTR_MLP_LAYERS):
                linear(f"obj_ptr_proj.layers.{i}", hidden, hidden)
        else:
            linear("obj_ptr_proj", hidden, hidden)
        if cfg.pred_obj_scores:
            out.append(("no_obj_ptr", (1, hidden)))
    if cfg.proj_tpos_enc_in_obj_ptrs:
        linear("obj_ptr_tpos_proj", hidden, mem_dim)

    for i in range(_NUM_POINT_EMBEDDINGS):
        out.append((f"sam_prompt_encoder.point_embeddings.{i}.weight", (1, hidden)))
    p, quarter = "sam_prompt_encoder.mask_downscaling.", _PROMPT_MASK_IN_CHANS // 4
    conv(p + "0", 1, quarter, 2)
    norm(p + "1", quarter)
    conv(p + "3", quarter, _PROMPT_MASK_IN_CHANS, 2)
    norm(p + "4", _PROMPT_MASK_IN_CHANS)
    conv(p + "6", _PROMPT_MASK_IN_CHANS, hidden, 1)
    return sorted(out)


def ignored_sam2_state(cfg: Sam2MemoryConfig, gen: torch.Generator, prefix: str) -> dict[str, torch.Tensor]:
    """Random values for :func:`ignored_sam2_tensors`, so upstream's strict SAM2 load accepts the file."""
    out: dict[str, torch.Tensor] = {}
    for name, shape in ignored_sam2_tensors(cfg):
        if ".point_embeddings." in name:
            kind = "embedding"
        elif name.endswith(".weight") and len(shape) == 1:
            kind = "norm"
        else:
            kind = "plain"
        out[prefix + name] = _draw(prefix + name, shape, kind, gen).to(torch.float32).contiguous()
    return out


def make_checkpoint(
    out_dir: str | Path, size: str = "tiny", seed: int = 0, tie_word_embeddings: bool = True
) -> Path:
    """Write a random checkpoint directory loadable by ``RynnEC.from_pretrained`` (and by upstream)."""
    from safetensors.torch import save_file

    from .config import RynnECConfig
    from .modeling import RynnecQwen2ForCausalLM
    from .sam2 import CHECKPOINT_PREFIX, Sam2Config, Sam2Model

    if size not in SIZES:
        raise ValueError(f"unknown size {size!r}; choose one of {sorted(SIZES)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for f in (*TOKENIZER_FILES, SAM2_YAML):
        shutil.copyfile(ASSETS / f, out / f)
    (out / "config.json").write_text(json.dumps(_llm_config(size, tie_word_embeddings), indent=2) + "\n")
    gen_cfg = {"bos_token_id": _TOKEN_IDS["bos"], "eos_token_id": _TOKEN_IDS["eos"]}
    (out / "generation_config.json").write_text(json.dumps(gen_cfg, indent=2) + "\n")
    vdir = out / VISION_DIR
    vdir.mkdir(exist_ok=True)
    vcfg, pcfg = _vision_files(size)
    (vdir / "config.json").write_text(json.dumps(vcfg, indent=2) + "\n")
    (vdir / "preprocessor_config.json").write_text(json.dumps(pcfg, indent=2) + "\n")

    gen = torch.Generator().manual_seed(int(seed))
    rconfig = RynnECConfig.from_pretrained(out)
    model = RynnecQwen2ForCausalLM(rconfig)
    state = _randomise(model, gen)
    if tie_word_embeddings:
        state.pop("lm_head.weight", None)
    sam2_cfg = Sam2Config.from_yaml(out / SAM2_YAML)
    memory_cfg = Sam2MemoryConfig.from_yaml(out / SAM2_YAML)
    if memory_cfg.hidden_dim != sam2_cfg.d_model:
        raise ValueError(
            f"{SAM2_YAML}: memory_attention.d_model {memory_cfg.hidden_dim} must equal the neck d_model "
            f"{sam2_cfg.d_model} (upstream sizes the prompt encoder and mask decoder with it)"
        )
    sam2 = Sam2Model.from_config(sam2_cfg)
    state.update(_randomise(sam2, gen, prefix=CHECKPOINT_PREFIX))
    # drawn last, so every tensor inference reads keeps the values of earlier versions of this writer
    state.update(ignored_sam2_state(memory_cfg, gen, CHECKPOINT_PREFIX))
    save_file(state, str(out / "model.safetensors"), metadata={"format": "pt"})
    vprefix = "model.vision_encoder.vision_encoder."
    save_file(
        {k[len(vprefix) :]: v for k, v in state.items() if k.startswith(vprefix)},
        str(vdir / "model.safetensors"),
        metadata={"format": "pt"},
    )
    return out
