"""Random RynnEC checkpoints in the official directory format, for tests, the demo and benchmarks.

The layout and key names are those of an upstream ``save_pretrained`` (plus the vision-encoder folder and a
SAM2 yaml), and the weights are drawn like the shared parity fixture's: unit-scale fan-in weights,
perturbed norms and biases, sharpened LLM attention — so outputs are far from degenerate and a parity
bug shows up as a different answer rather than hiding in near-constant activations.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import torch
from torch import nn

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


def _draw(name: str, t: torch.Tensor, module: nn.Module | None, gen: torch.Generator) -> torch.Tensor:
    """One parameter drawn with the fixture's scheme (see test/data/rynnec-tiny/README.md)."""
    shape = t.shape

    def normal(std: float) -> torch.Tensor:
        return torch.randn(shape, generator=gen) * std

    leaf = name.rsplit(".", 1)[-1]
    if name.endswith("embed_tokens.weight") or name == "lm_head.weight":
        return normal(0.25)
    if isinstance(module, nn.Embedding):
        return normal(1.0)
    is_norm = isinstance(module, (nn.LayerNorm,)) or type(module).__name__ in {"Qwen2RMSNorm", "LayerNorm2d"}
    if is_norm and leaf == "weight":
        return 1 + normal(0.1)
    if leaf == "bias":
        return normal(0.05)
    if leaf == "weight" and t.ndim >= 2:
        fan_in = (
            shape[0] * math.prod(shape[2:])
            if isinstance(module, nn.ConvTranspose2d)
            else math.prod(shape[1:])
        )
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
        value = _draw(prefix + name, t, owner, gen)
        if "output_hypernetworks_mlps" in name and ".layers.2." in name:
            value = value * 20.0  # push mask logits away from the 0 threshold (robust boolean masks)
        out[prefix + name] = value.to(torch.float32).contiguous()
    return out


def make_checkpoint(
    out_dir: str | Path, size: str = "tiny", seed: int = 0, tie_word_embeddings: bool = True
) -> Path:
    """Write a random checkpoint directory loadable by ``RynnEC.from_pretrained`` (and by upstream)."""
    from safetensors.torch import save_file

    from .config import RynnECConfig
    from .modeling import RynnecQwen2ForCausalLM
    from .sam2 import Sam2Config, Sam2Model

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
    sam2 = Sam2Model.from_config(Sam2Config.from_yaml(out / SAM2_YAML))
    state.update(_randomise(sam2, gen, prefix="grounding_encoder.sam2_model."))
    save_file(state, str(out / "model.safetensors"), metadata={"format": "pt"})
    vprefix = "model.vision_encoder.vision_encoder."
    save_file(
        {k[len(vprefix) :]: v for k, v in state.items() if k.startswith(vprefix)},
        str(vdir / "model.safetensors"),
        metadata={"format": "pt"},
    )
    return out
