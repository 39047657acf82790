"""Configuration of a RynnEC checkpoint directory, read without network access.

The official checkpoints keep the vision-encoder hyper-parameters and the image-processor settings in a
separate folder named by ``mm_vision_encoder`` (upstream downloads it); when that folder is not next to
``config.json`` the VL3-SigLIP-NaViT values are used, which is what the official checkpoints were built from.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

MODEL_TYPE = "rynnec_qwen2"
IMAGE_TOKEN = "<image>"
REGION_TOKEN = "<REGION>"
SEG_TOKEN = "[SEG]"


@dataclass
class VisionConfig:
    """VL3-SigLIP-NaViT encoder (2D-RoPE SigLIP without position embeddings)."""

    hidden_size: int = 1152
    intermediate_size: int = 4304
    num_hidden_layers: int = 27
    num_attention_heads: int = 16
    num_channels: int = 3
    patch_size: int = 14
    hidden_act: str = "gelu_pytorch_tanh"
    layer_norm_eps: float = 1e-6
    rope_theta: float = 10000.0

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_attention_heads

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> VisionConfig:
        known = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        return cls(**known)


@dataclass
class ProcessorConfig:
    """Image-processor settings (``preprocessor_config.json`` of the vision-encoder folder)."""

    image_mean: tuple[float, float, float] = (0.5, 0.5, 0.5)
    image_std: tuple[float, float, float] = (0.5, 0.5, 0.5)
    rescale_factor: float = 1 / 255
    min_tokens: int = 16
    max_tokens: int = 16384
    patch_size: int = 14
    resample: int = 3

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ProcessorConfig:
        known = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        for k in ("image_mean", "image_std"):
            if k in known:
                known[k] = tuple(float(x) for x in known[k])
        return cls(**known)


@dataclass
class RynnECConfig:
    """Everything the engine needs from a checkpoint directory."""

    path: Path
    raw: dict[str, Any]
    vision: VisionConfig
    processor: ProcessorConfig
    hidden_size: int
    vocab_size: int
    mm_hidden_size: int
    projector_type: str
    merge_size: int
    out_dim: int
    has_seg_head: bool
    tie_word_embeddings: bool
    image_token_id: int | None = None
    region_token_id: int | None = None
    seg_token_id: int | None = None
    eos_token_ids: list[int] = field(default_factory=list)
    repetition_penalty: float = 1.0
    sam2_config_path: Path | None = None

    @classmethod
    def from_pretrained(cls, path: str | os.PathLike[str]) -> RynnECConfig:
        root = Path(path)
        cfg_file = root / "config.json"
        if not cfg_file.is_file():
            raise ValueError(f"{root}: no config.json (not a RynnEC checkpoint directory)")
        try:
            raw = json.loads(cfg_file.read_text())
        except json.JSONDecodeError as exc:
            raise ValueError(f"{cfg_file}: invalid JSON ({exc})") from exc
        model_type = raw.get("model_type")
        if model_type != MODEL_TYPE:
            raise ValueError(
                f"{cfg_file}: model_type is {model_type!r}, expected {MODEL_TYPE!r} (a RynnEC checkpoint)"
            )
        for key in ("hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size"):
            if key not in raw:
                raise ValueError(f"{cfg_file}: missing required field {key!r}")

        vision_dir = _find_vision_dir(root, raw)
        vision = VisionConfig()
        processor = ProcessorConfig()
        if isinstance(raw.get("vision_encoder_config"), dict):
            vision = VisionConfig.from_dict(raw["vision_encoder_config"])
        if vision_dir is not None:
            if (vision_dir / "config.json").is_file():
                vision = VisionConfig.from_dict(json.loads((vision_dir / "config.json").read_text()))
            if (vision_dir / "preprocessor_config.json").is_file():
                processor = ProcessorConfig.from_dict(
                    json.loads((vision_dir / "preprocessor_config.json").read_text())
                )
        mm_hidden = int(raw.get("mm_hidden_size", vision.hidden_size))
        if mm_hidden != vision.hidden_size:
            raise ValueError(
                f"{cfg_file}: mm_hidden_size {mm_hidden} != vision encoder hidden_size {vision.hidden_size}"
            )
        projector_type = raw.get("mm_projector_type", "mlp2x_gelu")
        if projector_type != "mlp2x_gelu":
            raise ValueError(
                f"{cfg_file}: unsupported mm_projector_type {projector_type!r} (only mlp2x_gelu)"
            )

        eos = raw.get("eos_token_id")
        penalty = 1.0
        gen_file = root / "generation_config.json"
        if gen_file.is_file():
            gen = json.loads(gen_file.read_text())
            eos = gen.get("eos_token_id", eos)
            penalty = float(gen.get("repetition_penalty") or 1.0)
        eos_ids = [] if eos is None else ([int(eos)] if isinstance(eos, int) else [int(e) for e in eos])

        return cls(
            path=root,
            raw=raw,
            vision=vision,
            processor=processor,
            hidden_size=int(raw["hidden_size"]),
            vocab_size=int(raw["vocab_size"]),
            mm_hidden_size=mm_hidden,
            projector_type=projector_type,
            merge_size=int(raw.get("spatial_merge_size", 2)),
            out_dim=int(raw.get("out_dim", 256)),
            has_seg_head=bool(raw.get("mm_mask_decoder", False)),
            tie_word_embeddings=bool(raw.get("tie_word_embeddings", False)),
            image_token_id=raw.get("image_token_index"),
            region_token_id=raw.get("region_token_index"),
            seg_token_id=raw.get("seg_token_index"),
            eos_token_ids=eos_ids,
            repetition_penalty=penalty,
            sam2_config_path=_find_sam2_yaml(root),
        )

    def qwen2_config(self) -> Any:
        """The transformers ``Qwen2Config`` of the language model part."""
        from transformers import Qwen2Config

        skip = {"model_type", "architectures", "transformers_version", "torch_dtype", "dtype", "auto_map"}
        kwargs = {k: v for k, v in self.raw.items() if k not in skip}
        cfg = Qwen2Config(**kwargs)
        cfg._attn_implementation = "sdpa"
        return cfg

    def resolve_token_ids(self, tokenizer: Any) -> None:
        """Fill the special token ids from the tokenizer and check they agree with config.json."""
        for attr, token in (
            ("image_token_id", IMAGE_TOKEN),
            ("region_token_id", REGION_TOKEN),
            ("seg_token_id", SEG_TOKEN),
        ):
            tok_id = tokenizer.convert_tokens_to_ids(token)
            if tok_id is not None and tok_id == tokenizer.unk_token_id:
                tok_id = None
            cfg_id = getattr(self, attr)
            if cfg_id is None:
                if tok_id is None and attr != "seg_token_id":
                    raise ValueError(
                        f"{self.path}: token {token} is neither in config.json nor in the tokenizer"
                    )
                setattr(self, attr, tok_id)
            elif tok_id is not None and int(tok_id) != int(cfg_id):
                raise ValueError(
                    f"{self.path}: config.json says {token} is id {cfg_id} "
                    f"but the tokenizer maps it to {tok_id}"
                )
        if tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in self.eos_token_ids:
            self.eos_token_ids.append(int(tokenizer.eos_token_id))
        if not self.eos_token_ids:
            raise ValueError(f"{self.path}: no eos token id in config, generation_config or tokenizer")


def _find_vision_dir(root: Path, raw: dict[str, Any]) -> Path | None:
    """The local vision-encoder folder named by ``mm_vision_encoder`` (an HF id or a relative path)."""
    name = raw.get("mm_vision_encoder") or raw.get("vision_encoder")
    candidates: list[Path] = []
    if isinstance(name, str) and name:
        candidates += [root / name, root / Path(name).name]
    candidates.append(root / "vision_encoder")
    for c in candidates:
        if c.is_dir() and ((c / "config.json").is_file() or (c / "preprocessor_config.json").is_file()):
            return c
    return None


def _find_sam2_yaml(root: Path) -> Path | None:
    """A SAM2 hydra yaml shipped in the checkpoint (the official checkpoints ship none: Hiera-L)."""
    found = sorted(p for p in root.glob("*.yaml") if "sam2" in p.name.lower())
    return found[0] if found else None
