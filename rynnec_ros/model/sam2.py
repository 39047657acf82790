"""SAM 2.0 on RynnEC's per-frame path, from Meta's ``sam2`` package (1.1.0): Hiera + FPN image encoder,
prompt encoder, mask decoder.

RynnEC decodes every frame independently: each one is an "initial conditioning frame", so the image
embedding is the lowest FPN level plus ``no_mem_embed`` and memory attention, the memory encoder and the
object pointers never influence a returned mask. :class:`Sam2Model` holds the package's modules on that
path as its ``SAM2Base`` builds them from the checkpoint's hydra yaml (RynnEC vendors the same code as
``third_parts/sam2``); their state-dict keys are the checkpoint keys under ``grounding_encoder.sam2_model.``
with that prefix removed, so an official checkpoint loads without renaming, and model/tracking.py hands
the very same modules to the package's video predictor. The checkpoint tensors only the memory path reads
are described by :data:`IGNORED_KEYS` / :data:`IGNORED_KEY_PREFIXES` (see :func:`is_ignored_key`).

What is this project's own: the config checks (:class:`Sam2Config`: the per-frame path's flags, and a
yaml may name only the package's modules), the frame preprocessing (upstream's Pillow bicubic resize),
the [SEG] prompt (RynnEC's extension of ``SAM2Base``), best-IoU selection and the final
``sigmoid(logits) > 0.5`` in float32. The package's outputs equal the hand-written implementation they
replaced bit for bit (docs/acceleration.md, "SAM 2 from the sam2 package").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.overrides import TorchFunctionMode

from rynnec_ros.core.types import RequestError
from rynnec_ros.model.resize import resize_bicubic

if TYPE_CHECKING:  # the package ships no type information: these name the classes for the reader
    from sam2.modeling.backbones.image_encoder import ImageEncoder
    from sam2.modeling.sam.mask_decoder import MaskDecoder
    from sam2.modeling.sam.prompt_encoder import PromptEncoder

CHECKPOINT_PREFIX = "grounding_encoder.sam2_model."

# Tensors (names without CHECKPOINT_PREFIX) that the checkpoint holds for the memory bank and the object
# pointers: per-frame decoding never reads them, and only the tracker (model/tracking.py) loads them.
IGNORED_KEYS: frozenset[str] = frozenset({"maskmem_tpos_enc", "no_mem_pos_enc", "no_obj_ptr"})
IGNORED_KEY_PREFIXES: tuple[str, ...] = (
    "memory_attention.",
    "memory_encoder.",
    "obj_ptr_proj.",
    "obj_ptr_tpos_proj.",
    "mask_downsample.",
)

PIXEL_MEAN = (123.675, 116.28, 103.53)
PIXEL_STD = (58.395, 57.12, 57.375)
# Fixed in the upstream SAM2Base constructor, not part of the yaml.
BACKBONE_STRIDE = 16

MaskLogitsFn = Callable[
    [torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, tuple[torch.Tensor, torch.Tensor]],
    tuple[torch.Tensor, torch.Tensor, torch.Tensor],
]
"""``Sam2Model.mask_logits``' signature: (image_embed, image_pe, sparse, dense, high_res) → masks, IoU,
object-score logits."""


def is_ignored_key(key: str) -> bool:
    """True for a checkpoint tensor (prefix already stripped) that per-frame decoding does not load."""
    return key in IGNORED_KEYS or key.startswith(IGNORED_KEY_PREFIXES)


# --------------------------------------------------------------------------------------------- config


# Defaults of the upstream constructors (Hiera, FpnNeck, ImageEncoder, SAM2Base) for keys a yaml omits.
_UPSTREAM_DEFAULTS: dict[str, Any] = {
    "image_size": 512,
    "embed_dim": 96,
    "num_heads": 1,
    "stages": (2, 3, 16, 3),
    "global_att_blocks": (12, 16, 20),
    "window_pos_embed_bkg_spatial_size": (14, 14),
    "window_spec": (8, 4, 14, 7),
    "q_pool": 3,
    "q_stride": (2, 2),
    "dim_mul": 2.0,
    "head_mul": 2.0,
    "fpn_interp_model": "bilinear",
    "fuse_type": "sum",
    "scalp": 0,
    "iou_prediction_use_sigmoid": False,
    "pred_obj_scores": False,
    "pred_obj_scores_mlp": False,
    "use_high_res_features_in_sam": False,
    "directly_add_no_mem_embed": False,
}



def read_yaml_model(path: str | Path) -> dict[str, Any]:
    """The ``model`` mapping of a SAM 2.0 hydra config file (plain YAML; hydra is not needed)."""
    import yaml

    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"cannot read SAM2 config {path}: {exc}") from exc
    model = doc.get("model") if isinstance(doc, dict) else None
    if not isinstance(model, dict):
        raise ValueError(f"SAM2 config {path} has no 'model' mapping")
    return model

@dataclass(frozen=True)
class Sam2Config:
    """Sizes and flags of a SAM 2.0 model. The defaults are the official Hiera-L values."""

    image_size: int = 1024
    # Hiera trunk
    embed_dim: int = 144
    num_heads: int = 2
    stages: tuple[int, ...] = (2, 6, 36, 4)
    global_att_blocks: tuple[int, ...] = (23, 33, 43)
    window_pos_embed_bkg_spatial_size: tuple[int, int] = (7, 7)
    window_spec: tuple[int, ...] = (8, 4, 16, 8)
    q_pool: int = 3
    q_stride: tuple[int, int] = (2, 2)
    dim_mul: float = 2.0
    head_mul: float = 2.0
    # FPN neck (d_model is also the prompt encoder / mask decoder width)
    d_model: int = 256
    backbone_channel_list: tuple[int, ...] = (1152, 576, 288, 144)
    fpn_top_down_levels: tuple[int, ...] = (2, 3)
    fpn_interp_model: str = "nearest"
    fuse_type: str = "sum"
    scalp: int = 1
    # heads
    iou_prediction_use_sigmoid: bool = True
    pred_obj_scores: bool = True
    pred_obj_scores_mlp: bool = True
    # flags that must hold for the per-frame RynnEC path implemented here
    use_high_res_features_in_sam: bool = True
    directly_add_no_mem_embed: bool = True
    # the hydra yaml the package builds the modules from (None: the package's own sam2_hiera_l.yaml)
    yaml: Path | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        problems: list[str] = []
        if not self.use_high_res_features_in_sam:
            problems.append("use_high_res_features_in_sam must be true")
        if not self.directly_add_no_mem_embed:
            problems.append("directly_add_no_mem_embed must be true")
        if not self.pred_obj_scores:
            problems.append("pred_obj_scores must be true")
        if self.fuse_type not in ("sum", "avg"):
            problems.append(f"fuse_type must be 'sum' or 'avg', got {self.fuse_type!r}")
        if self.fpn_interp_model not in ("nearest", "bilinear", "bicubic"):
            problems.append(f"unsupported fpn_interp_model {self.fpn_interp_model!r}")
        if len(self.window_spec) != len(self.stages):
            problems.append(f"window_spec {self.window_spec} needs one entry per stage {self.stages}")
        widths = tuple(int(self.embed_dim * self.dim_mul**i) for i in range(len(self.stages)))[::-1]
        if tuple(self.backbone_channel_list) != widths:
            problems.append(
                f"backbone_channel_list {self.backbone_channel_list} does not match the trunk's stage "
                f"widths {widths}"
            )
        if len(self.backbone_channel_list) - self.scalp != 3:
            problems.append("the decoder needs exactly 3 FPN levels after scalp")
        if self.d_model % 8:
            problems.append(f"d_model {self.d_model} must be divisible by 8")
        if self.image_size % BACKBONE_STRIDE:
            problems.append(f"image_size {self.image_size} must be a multiple of {BACKBONE_STRIDE}")
        if problems:
            raise ValueError("unsupported SAM2 config: " + "; ".join(problems))

    @property
    def embedding_size(self) -> int:
        """Side of the decoder's image embedding grid (64 for 1024-pixel inputs)."""
        return self.image_size // BACKBONE_STRIDE

    @classmethod
    def hiera_l(cls) -> Sam2Config:
        """The official SAM 2.0 ``sam2_hiera_l.yaml`` that RynnEC hard-codes for its released checkpoints."""
        return cls()

    @classmethod
    def from_yaml(cls, path: str | Path) -> Sam2Config:
        """Read a SAM 2.0 hydra config's sizes and flags; the modules are built from the same file."""
        path = Path(path)
        model = read_yaml_model(path)
        try:
            encoder = model["image_encoder"]
            trunk, neck = encoder["trunk"], encoder["neck"]
            sources = {
                **{k: trunk[k] for k in trunk}, **{k: neck[k] for k in neck}, "scalp": encoder.get("scalp"),
                **{k: model[k] for k in model},
            }
        except (KeyError, TypeError) as exc:
            raise ValueError(f"SAM2 config {path} lacks model.image_encoder.trunk/neck mappings") from exc
        if "d_model" not in neck or "backbone_channel_list" not in neck:
            raise ValueError(f"SAM2 config {path}: neck needs d_model and backbone_channel_list")
        values: dict[str, Any] = {"yaml": path}
        for name, spec in cls.__dataclass_fields__.items():
            if name == "yaml":
                continue
            raw: Any = sources.get(name)
            if raw is None:
                raw = _UPSTREAM_DEFAULTS.get(name)
            if raw is None and name == "fpn_top_down_levels":  # FpnNeck default: every level
                raw = range(len(sources["backbone_channel_list"]))
            default: Any = spec.default
            try:
                if isinstance(default, tuple):
                    values[name] = tuple(int(x) for x in raw)
                elif isinstance(default, bool):
                    values[name] = bool(raw)
                else:
                    values[name] = type(default)(raw)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"SAM2 config {path}: bad value {raw!r} for {name}") from exc
        return cls(**values)


# ----------------------------------------------------------------------------------------- modules

PACKAGE_YAML = "configs/sam2/sam2_hiera_l.yaml"
"""The SAM 2.0 Hiera-L config in the package, which RynnEC hard-codes when a checkpoint ships no yaml."""
BASE_TARGET = "sam2.modeling.sam2_base.SAM2Base"
_VENDORED = "third_parts.sam2."
# Hydra keys that would make instantiate do more than call a package constructor with the yaml's values.
_HYDRA_CALLS = frozenset({"_args_", "_partial_", "_convert_", "_recursive_"})


def package_yaml() -> Path:
    """The package's own ``sam2_hiera_l.yaml`` (SAM 2.0, as RynnEC's vendored copy)."""
    import sam2

    return Path(sam2.__file__).parent / PACKAGE_YAML


def _package_class(target: str, where: str) -> str:
    """``target`` as the package names it, if it is a module class the package defines under
    ``sam2.modeling`` (a dotted path could otherwise reach any attribute, e.g. a module's ``torch.load``)."""
    import importlib

    name = "sam2." + target[len(_VENDORED):] if target.startswith(_VENDORED) else target
    module, _, attr = name.rpartition(".")
    try:
        inside = module == "sam2.modeling" or module.startswith("sam2.modeling.")
        found = getattr(importlib.import_module(module), attr) if inside else None
    except (ImportError, AttributeError):
        found = None
    if not (isinstance(found, type) and issubclass(found, nn.Module) and found.__module__ == module):
        raise ValueError(f"{where}._target_ {target!r} is not a module class of the sam2 package")
    return name


def _package_node(node: Any, where: str) -> Any:
    """A yaml node with RynnEC's vendored ``third_parts.sam2.*`` targets pointed at the package's ``sam2.*``.

    A checkpoint's yaml is input, and hydra calls whatever a ``_target_`` names: only the package's modules
    (``sam2.modeling.*``) are accepted, and Hiera's ``weights_path`` (a ``torch.load`` of a pickle) is
    refused. The sine position encodings skip their CUDA warm-up: the engine picks the device.
    """
    if isinstance(node, list):
        return [_package_node(v, f"{where}[{i}]") for i, v in enumerate(node)]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _HYDRA_CALLS or (key == "weights_path" and value is not None):
            raise ValueError(f"{where}.{key} is not accepted in a checkpoint's SAM2 config")
        if key == "_target_":
            out[key] = _package_class(str(value), where)
        else:
            out[key] = _package_node(value, f"{where}.{key}")
    if str(out.get("_target_", "")).endswith(".PositionEmbeddingSine"):
        out["warmup_cache"] = False
    return out


class _ScheduleOnCpu(TorchFunctionMode):
    """``torch.linspace`` on the CPU whatever the default device: Hiera reads its drop-path schedule back
    with ``.item()``, which a meta tensor cannot give, and the loader builds SAM 2 on the meta device
    (no random Hiera-L weights, 5 s and 1 GB, only to be replaced by the checkpoint's)."""

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = dict(kwargs or {})
        if func is torch.linspace and kwargs.get("device") is None:
            kwargs["device"] = "cpu"
        return func(*args, **kwargs)


def build_sam2(yaml_path: Path | None, target: str = BASE_TARGET, **given: nn.Module) -> Any:
    """The package's ``target`` (``SAM2Base`` or a subclass) built by hydra from ``yaml_path``'s ``model``
    node (None: the package's Hiera-L), as ``sam2.build_sam`` builds it but from the checkpoint's file.

    ``given`` modules (e.g. ``image_encoder``) are passed to the constructor instead of being built from
    their node. ``compile_image_encoder`` is forced off: the graphs are traced, and the engine's cache of
    features stands in for it. Weights are the constructors' random ones until the caller loads the
    checkpoint's.
    """
    import importlib.util

    if importlib.util.find_spec("sam2") is None:
        raise ValueError("SAM 2 (segmentation, point prompts, tracking) needs Meta's sam2 package: "
                         "requirements-sam2.txt, docs/install.md")
    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    path = package_yaml() if yaml_path is None else Path(yaml_path)
    try:
        model = OmegaConf.to_container(OmegaConf.load(str(path)).model, resolve=True)
    except Exception as exc:  # OmegaConf raises its own error types for unreadable, odd or unresolved yaml
        raise ValueError(f"cannot read SAM2 config {path}: {exc}") from exc
    node = _package_node(model, "model")
    node.update(_target_=target, compile_image_encoder=False)
    for name in given:
        node.pop(name, None)
    try:
        with _ScheduleOnCpu():
            return instantiate(OmegaConf.create(node), _recursive_=True, **given)
    except Exception as exc:  # hydra wraps a constructor's error in its InstantiationException
        raise ValueError(f"SAM2 config {path}: the sam2 package cannot build it: {exc}") from exc

# -------------------------------------------------------------------------------------------- model


@dataclass
class Sam2ImageFeatures:
    """Per-frame decoder inputs; computed once per frame and reusable for any number of [SEG] prompts."""

    image_embed: torch.Tensor  # [B, D, 64, 64]: FPN level 2 + no_mem_embed
    high_res_feats: tuple[torch.Tensor, torch.Tensor]  # conv_s0(level 0) [B, D/8, 256²], conv_s1(level 1)

    @property
    def batch_size(self) -> int:
        return self.image_embed.shape[0]

    def frame(self, index: int) -> Sam2ImageFeatures:
        """Features of one frame of a batch (keeps the batch dimension of size 1)."""
        if not -self.batch_size <= index < self.batch_size:
            raise ValueError(f"frame index {index} out of range for {self.batch_size} frames")
        index %= self.batch_size
        sl = slice(index, index + 1)
        feat0, feat1 = self.high_res_feats
        return Sam2ImageFeatures(self.image_embed[sl], (feat0[sl], feat1[sl]))


@dataclass
class Sam2Decoded:
    """One frame decoded for one [SEG] prompt (float32 tensors on the model's device)."""

    lowres_logits: torch.Tensor  # [3, 256, 256] multimask logits
    iou: torch.Tensor  # [3] predicted IoU
    object_score: float  # object-score logit (not used for gating, as upstream)
    best_index: int  # argmax of iou
    best_lowres: torch.Tensor  # [256, 256]
    mask_1024: torch.Tensor  # bool [1024, 1024]: sigmoid(bilinear upsample of best) > 0.5


class Sam2Model(nn.Module):
    """SAM 2.0 restricted to RynnEC's per-frame, memory-free decoding: the ``sam2`` package's image encoder,
    prompt encoder and mask decoder as its ``SAM2Base`` builds them from the config (state-dict keys match
    upstream's)."""

    def __init__(self, cfg: Sam2Config) -> None:
        super().__init__()
        self.config = cfg
        base = build_sam2(cfg.yaml)
        if (base.image_size, base.hidden_dim) != (cfg.image_size, cfg.d_model):
            raise ValueError(f"the sam2 package built image size {base.image_size}, width {base.hidden_dim} "
                             f"from a config that reads {cfg.image_size}, {cfg.d_model}")
        self.image_encoder: ImageEncoder = base.image_encoder
        self.sam_prompt_encoder: PromptEncoder = base.sam_prompt_encoder
        self.sam_mask_decoder: MaskDecoder = base.sam_mask_decoder
        self.no_mem_embed: nn.Parameter = base.no_mem_embed

    @classmethod
    def from_config(cls, cfg: Sam2Config) -> Sam2Model:
        """An inference-only model (eval mode, no gradients); weights come from load_inference_state_dict."""
        return cls(cfg).eval().requires_grad_(False)

    def load_inference_state_dict(
        self, sd: Mapping[str, torch.Tensor], shapes: Mapping[str, tuple[int, ...]] | None = None
    ) -> None:
        """Load checkpoint tensors (prefix stripped); every needed key must be present with its exact shape.

        Keys matched by :func:`is_ignored_key` are skipped; anything else unknown is an error, so a
        checkpoint of another architecture (or SAM 2.1) is rejected instead of being half loaded.
        ``shapes`` (every checkpoint key's shape, from the file headers) is what is checked when ``sd``
        holds only some of the tensors: the graph backends load only the host ones (loader.HOST_PREFIXES).
        """
        own = self.state_dict()
        every = {k: tuple(v.shape) for k, v in sd.items()} if shapes is None else dict(shapes)
        given = {k: tuple(s) for k, s in every.items() if not is_ignored_key(k)}
        missing = sorted(set(own) - set(given))
        unexpected = sorted(set(given) - set(own))
        wrong = sorted(
            f"{k}: checkpoint {given[k]} vs model {tuple(own[k].shape)}"
            for k in set(own) & set(given) if given[k] != tuple(own[k].shape)
        )
        if missing or unexpected or wrong:
            parts = []
            hint = self._size_hint(given)
            if hint:
                parts.append(hint)
            for label, keys in (("shape mismatch(es)", wrong), ("missing key(s)", missing),
                                ("unexpected key(s)", unexpected)):
                if keys:
                    more = f", ... ({len(keys) - 8} more)" if len(keys) > 8 else ""
                    parts.append(f"{len(keys)} {label}: " + "; ".join(keys[:8]) + more)
            raise ValueError("SAM2 state dict does not fit the model: " + " | ".join(parts))
        tensors = {k: v for k, v in sd.items() if k in own}
        # A model built on the meta device adopts the given tensors (their dtype/device) instead of copying.
        self.load_state_dict(
            tensors, strict=len(tensors) == len(own), assign=any(p.is_meta for p in self.parameters())
        )

    def _size_hint(self, given: Mapping[str, tuple[int, ...]]) -> str:
        """Name the config values a checkpoint disagrees on, when its key tensors' shapes reveal them."""
        cfg = self.config
        found = []
        patch = given.get("image_encoder.trunk.patch_embed.proj.weight")
        if patch is not None and patch[0] != cfg.embed_dim:
            found.append(f"trunk embed_dim {patch[0]} (config {cfg.embed_dim})")
        blocks = {int(k.split(".")[3]) for k in given if k.startswith("image_encoder.trunk.blocks.")}
        if blocks and max(blocks) + 1 != sum(cfg.stages):
            found.append(f"{max(blocks) + 1} Hiera blocks (config {sum(cfg.stages)})")
        no_mem = given.get("no_mem_embed")
        if no_mem is not None and no_mem[-1] != cfg.d_model:
            found.append(f"d_model {no_mem[-1]} (config {cfg.d_model})")
        return "checkpoint is a different SAM2 size: " + ", ".join(found) if found else ""

    @property
    def _param(self) -> torch.Tensor:
        return self.no_mem_embed

    def preprocess(self, frame: np.ndarray) -> torch.Tensor:
        """H×W×3 uint8 RGB → [1, 3, S, S] float32 on the CPU: bicubic resize to S×S, SAM normalisation.

        Upstream's ``DirectResize`` does not keep the aspect ratio; the mean/std are in 0–255 units.
        """
        if not isinstance(frame, np.ndarray) or frame.ndim != 3 or frame.shape[2] != 3:
            shape = getattr(frame, "shape", None)
            raise RequestError(f"SAM2 frame must be an H×W×3 numpy array, got shape {shape}")
        if frame.dtype != np.uint8:
            raise RequestError(f"SAM2 frame must be uint8 RGB, got dtype {frame.dtype}")
        if frame.shape[0] == 0 or frame.shape[1] == 0:
            raise RequestError(f"SAM2 frame is empty: shape {frame.shape}")
        size = self.config.image_size
        # Pillow 10 bicubic pixels (one Pillow call per axis, see model/resize.py), which upstream saw.
        resized = resize_bicubic(np.ascontiguousarray(frame), size, size)
        x = torch.from_numpy(resized).permute(2, 0, 1)
        mean = torch.tensor(PIXEL_MEAN).view(3, 1, 1)
        std = torch.tensor(PIXEL_STD).view(3, 1, 1)
        return ((x - mean) / std).unsqueeze(0).contiguous()

    def _autocast(self) -> torch.autocast:
        """Half-precision weights run the package's modules under autocast, as upstream runs SAM 2
        (``torch.autocast(bfloat16)``): its prompt encoder multiplies float32 coordinates with its own
        Gaussian matrix, which a plain bfloat16 model refuses."""
        p = self._param
        return torch.autocast(p.device.type, dtype=p.dtype, enabled=p.dtype != torch.float32)

    def _pixels(self, pixels: torch.Tensor) -> torch.Tensor:
        size = self.config.image_size
        if pixels.ndim != 4 or tuple(pixels.shape[1:]) != (3, size, size):
            raise ValueError(f"SAM2 pixels must be [B, 3, {size}, {size}], got {tuple(pixels.shape)}")
        return pixels.to(device=self._param.device, dtype=self._param.dtype)

    @torch.inference_mode()
    def backbone(self, pixels: torch.Tensor) -> list[torch.Tensor]:
        """The three FPN levels (256², 128², 64² for 1024 inputs) before conv_s0/s1 and no_mem_embed."""
        return list(self.image_encoder(self._pixels(pixels))["backbone_fpn"])

    def features(self, pixels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``image_embed``, ``feat_s0``, ``feat_s1`` of [B, 3, S, S] pixels on the model's device and dtype:
        ``SAM2Base.forward_image`` + ``_prepare_backbone_features`` + ``no_mem_embed`` on an initial
        conditioning frame, in NCHW. (The ONNX export traces this.)"""
        dtype = self._param.dtype

        def own(x: torch.Tensor) -> torch.Tensor:
            # The package's FPN adds its top-down path in float32; a half-precision model goes back to
            # its dtype (a float32 one is left as is: no cast in the exported graph).
            return x if x.dtype == dtype else x.to(dtype)

        levels = self.image_encoder(pixels)["backbone_fpn"]
        decoder = self.sam_mask_decoder
        embed = own(levels[2] + self.no_mem_embed.reshape(1, -1, 1, 1))
        return embed, decoder.conv_s0(own(levels[0])), decoder.conv_s1(own(levels[1]))

    @torch.inference_mode()
    def image_features(self, pixels: torch.Tensor) -> Sam2ImageFeatures:
        """Decoder inputs of a batch of frames: every frame is an initial conditioning frame (no memory)."""
        embed, feat0, feat1 = self.features(self._pixels(pixels))
        return Sam2ImageFeatures(embed, (feat0, feat1))

    def dense_pe(self) -> torch.Tensor:
        """``get_dense_pe()``: [1, D, E, E] positional encoding of the image embedding grid."""
        with self._autocast():
            pe = self.sam_prompt_encoder.get_dense_pe()
        return pe.to(self._param.dtype)

    def prompt(self, points: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Sparse [1, N + 1, D] and dense [1, D, E, E] embeddings of N points (x, y in S×S input pixels)
        labelled -1 (not a point), 0/1 (negative/positive click) or 2/3 (a box's corners): the package's
        prompt encoder as its image predictor calls it (pixel centres, one padding point)."""
        p = self._param
        xy = points.reshape(1, -1, 2).to(device=p.device, dtype=torch.float32)
        with self._autocast():
            sparse, dense = self.sam_prompt_encoder(
                points=(xy, labels.reshape(1, -1).to(p.device)), boxes=None, masks=None
            )
        return sparse.to(p.dtype), dense.to(p.dtype)

    def seg_prompt(self, seg_embedding: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Sparse [1, 3, D] = [not_a_point, not_a_point, seg] and dense ``no_mask_embed``.

        RynnEC's ``SAM2Base`` extension prompts with one dummy point labelled -1 (the encoder pads a
        second) and appends the [SEG] vector; a -1 point embeds to exactly ``not_a_point_embed``.
        """
        sparse, dense = self.prompt(torch.zeros(1, 2), -torch.ones(1, dtype=torch.int32))
        seg = seg_embedding.reshape(1, 1, -1).to(device=sparse.device, dtype=sparse.dtype)
        return torch.cat([sparse, seg], dim=1), dense

    def mask_logits(self, image_embed: torch.Tensor, image_pe: torch.Tensor, sparse: torch.Tensor,
                    dense: torch.Tensor, high_res: tuple[torch.Tensor, torch.Tensor],
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """All 1 + 3 mask logits [B, 4, 4E, 4E], IoU [B, 4] and object-score logits [B, 1]: the package's
        ``MaskDecoder.predict_masks``, one prompt set per frame. (The ONNX export traces this; the graph
        backends run the exported graph in its place, see ``decode``.)"""
        masks, iou, _, obj = self.sam_mask_decoder.predict_masks(
            image_embeddings=image_embed, image_pe=image_pe, sparse_prompt_embeddings=sparse,
            dense_prompt_embeddings=dense, repeat_image=False, high_res_features=list(high_res),
        )
        return masks, iou, obj

    @torch.inference_mode()
    def decode(self, feats: Sam2ImageFeatures, seg_embedding: torch.Tensor,
               mask_logits: MaskLogitsFn | None = None) -> Sam2Decoded:
        """Decode one frame for one [SEG] embedding ([D] or [1, D]): multimask → best IoU → S² mask.

        ``mask_logits`` runs the mask decoder (default: this model's ``mask_logits``); the engine passes
        its ``Compute``'s, which is an exported graph on the graph backends.
        """
        dim = self.config.d_model
        if feats.batch_size != 1:
            raise ValueError(f"decode takes one frame's features, got a batch of {feats.batch_size}")
        if seg_embedding.numel() != dim or seg_embedding.ndim > 2:
            raise ValueError(
                f"seg_embedding must have shape [{dim}] or [1, {dim}], got {tuple(seg_embedding.shape)}"
            )
        sparse, dense = self.seg_prompt(seg_embedding)
        pe, high_res = self.dense_pe(), feats.high_res_feats
        run = self.mask_logits if mask_logits is None else mask_logits
        masks, iou, obj = run(feats.image_embed, pe, sparse, dense, high_res)
        lowres = masks[0, 1:].float()
        iou = iou[0, 1:].float()
        best = int(torch.argmax(iou))
        size = self.config.image_size
        upsampled = F.interpolate(lowres[best][None, None], size=(size, size), mode="bilinear",
                                  align_corners=False)
        return Sam2Decoded(
            lowres_logits=lowres,
            iou=iou,
            object_score=float(obj[0, 0]),
            best_index=best,
            best_lowres=lowres[best],
            mask_1024=torch.sigmoid(upsampled[0, 0]) > 0.5,
        )

    @torch.inference_mode()
    def decode_points(self, feats: Sam2ImageFeatures, points: torch.Tensor, labels: torch.Tensor,
                      height: int, width: int) -> PromptDecoded:
        """One frame (``height``×``width`` px) for point/box prompts, as SAM 2's image predictor decodes it.

        ``points`` [N, 2] are (x, y) frame pixels, ``labels`` [N] 1 positive, 0 negative, 2/3 a box's
        top-left/bottom-right corners (ahead of the clicks, as ``SAM2ImagePredictor._predict`` puts
        them). Coordinates scale to the S×S model input as its ``transform_coords`` does (x / W · S),
        the three multimask outputs are kept, and each is upsampled bilinearly to frame size and cut
        at logit 0 (``postprocess_masks`` with its default no hole filling).
        """
        if feats.batch_size != 1:
            raise ValueError(f"decode_points takes one frame's features, got a batch of {feats.batch_size}")
        size = self.config.image_size
        coords = points.float() / torch.tensor([width, height], dtype=torch.float32) * size
        sparse, dense = self.prompt(coords, labels)
        pe, high_res = self.dense_pe(), feats.high_res_feats
        masks, iou, _ = self.mask_logits(feats.image_embed, pe, sparse, dense, high_res)
        lowres = masks[0, 1:].float()
        logits = F.interpolate(lowres[None], size=(int(height), int(width)), mode="bilinear",
                               align_corners=False)[0]
        scores = iou[0, 1:].float()
        return PromptDecoded(lowres.cpu(), logits.cpu(), scores.cpu(), int(torch.argmax(scores)))


@dataclass
class PromptDecoded:
    """One frame decoded for a point/box prompt: the three candidate masks and SAM 2's IoU estimates."""

    lowres_logits: torch.Tensor  # [3, S/4, S/4] the decoder's own resolution
    logits: torch.Tensor  # [3, H, W] float32 at frame size
    iou: torch.Tensor  # [3] predicted IoU
    best_index: int  # argmax of iou

    @property
    def mask(self) -> np.ndarray:
        """The most confident candidate as a bool H×W mask (logit > 0)."""
        return (self.logits[self.best_index] > 0).numpy()


def resize_mask_to_frame(mask_1024: torch.Tensor | np.ndarray, height: int, width: int) -> np.ndarray:
    """Bool H×W mask at frame size with ``torchvision.transforms.v2.Resize`` semantics (eval/demo upstream).

    v2 turns a bool mask into float, resizes bilinearly with antialiasing and casts back to bool, so any
    pixel with a non-zero interpolated value is True (the mask grows slightly at its border).
    """
    def is_size(v: object) -> bool:
        return isinstance(v, (int, np.integer)) and not isinstance(v, bool) and bool(v >= 1)

    if not (is_size(height) and is_size(width)):
        raise ValueError(f"target size must be positive integers, got {height}x{width}")
    mask = torch.as_tensor(mask_1024)
    if mask.ndim != 2:
        raise ValueError(f"mask must be 2-D, got shape {tuple(mask.shape)}")
    as_float = mask.detach().to("cpu", torch.float32)[None, None]
    resized = F.interpolate(as_float, size=(int(height), int(width)), mode="bilinear", align_corners=False,
                            antialias=True)
    return (resized[0, 0] != 0).numpy()

