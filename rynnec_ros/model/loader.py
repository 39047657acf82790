"""Loading a RynnEC checkpoint directory: safetensors only, strict key and shape checks, no network.

The LLM/vision part is built on the meta device and the checkpoint tensors are assigned directly, so a
7B checkpoint needs one copy of its weights in memory, not two. For the graph backends
(``graph_backed=True``) only the tensors the host side computes with are read (token embedding, SAM2
prompt encoder): every key and shape is still checked from the safetensors headers, but the graph-owned
weights are never read from their memory-mapped files, and their modules stay on the meta device until
``backends.graphs.GraphCompute`` drops them (its graphs compute them).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import torch
from safetensors import SafetensorError, safe_open

from .config import RynnECConfig
from .modeling import GroundingEncoder, RynnecQwen2ForCausalLM
from .vision import VisionRotaryEmbedding

if TYPE_CHECKING:
    from .sam2 import Sam2Model

log = logging.getLogger(__name__)

SAM2_PREFIX = "grounding_encoder.sam2_model."
# What the engine computes with outside the exported graphs (see export/onnx_export.py's docstring).
# The prompt encoder's mask-prompt downscaling is not among them: nothing per-frame prompts with a mask.
HOST_PREFIXES = ("model.embed_tokens.", SAM2_PREFIX + "no_mem_embed", *(
    f"{SAM2_PREFIX}sam_prompt_encoder.{name}." for name in
    ("pe_layer", "point_embeddings", "not_a_point_embed", "no_mask_embed")
))

_V = TypeVar("_V")


def is_host_key(key: str) -> bool:
    """True for a checkpoint tensor the graph backends still need in torch (everything else is a graph's)."""
    return key.startswith(HOST_PREFIXES)

_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def parse_dtype(dtype: str | torch.dtype) -> torch.dtype:
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype not in _DTYPES:
        raise ValueError(f"unsupported dtype {dtype!r}; use one of {sorted(_DTYPES)}")
    return _DTYPES[dtype]


def safetensors_files(root: Path) -> list[Path]:
    """The checkpoint's weight files; refuses pickle-based formats."""
    index = root / "model.safetensors.index.json"
    if index.is_file():
        weight_map = json.loads(index.read_text()).get("weight_map", {})
        files = sorted({root / f for f in weight_map.values()})
        missing = [str(f) for f in files if not f.is_file()]
        if missing:
            raise ValueError(f"{root}: shards named in model.safetensors.index.json are missing: {missing}")
        return files
    single = root / "model.safetensors"
    if single.is_file():
        return [single]
    shards = sorted(root.glob("model-*-of-*.safetensors"))
    if shards:
        return shards
    pickled = sorted(p.name for p in root.iterdir() if p.suffix in {".bin", ".pt", ".pth", ".ckpt"})
    if pickled:
        raise ValueError(
            f"{root}: only safetensors weights are supported (found {pickled}); pickle-based files are "
            "never loaded — convert them with safetensors.torch.save_file on a trusted machine"
        )
    raise ValueError(f"{root}: no model.safetensors or model.safetensors.index.json")


def read_state_dict(
    root: Path, dtype: torch.dtype, device: torch.device, keep: Callable[[str], bool] | None = None
) -> tuple[dict[str, torch.Tensor], dict[str, tuple[int, ...]]]:
    """The tensors ``keep`` selects (default: all) and the shape of every tensor, from the file headers."""
    state: dict[str, torch.Tensor] = {}
    shapes: dict[str, tuple[int, ...]] = {}
    for f in safetensors_files(root):
        try:
            with safe_open(str(f), framework="pt", device="cpu") as handle:
                for key in handle.keys():  # noqa: SIM118 (safe_open is not a mapping)
                    shapes[key] = tuple(handle.get_slice(key).get_shape())
                    if keep is not None and not keep(key):
                        continue
                    t = handle.get_tensor(key)
                    state[key] = t.to(device=device, dtype=dtype) if t.is_floating_point() else t.to(device)
        except (OSError, SafetensorError) as exc:
            raise ValueError(f"{f}: not a readable safetensors file ({exc})") from exc
    return state, shapes


def _check_keys(
    expected: dict[str, torch.Size], state: Mapping[str, tuple[int, ...]], what: str
) -> None:
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    problems = []
    if missing:
        problems.append(f"missing keys ({len(missing)}): {missing}")
    if unexpected:
        problems.append(f"unexpected keys ({len(unexpected)}): {unexpected}")
    mismatched = [
        f"{k}: checkpoint {state[k]} vs model {tuple(s)}"
        for k, s in expected.items()
        if k in state and tuple(state[k]) != tuple(s)
    ]
    if mismatched:
        problems.append(f"shape mismatches ({len(mismatched)}): {mismatched}")
    if problems:
        raise ValueError(f"{what} does not match the model config:\n  " + "\n  ".join(problems))


def _split_sam2(state: dict[str, _V]) -> dict[str, _V]:
    return {k[len(SAM2_PREFIX) :]: state.pop(k) for k in [k for k in state if k.startswith(SAM2_PREFIX)]}


def _build_sam2(rconfig: RynnECConfig) -> Sam2Model:
    """SAM 2.0 from the checkpoint's yaml when it ships one, else the Hiera-L that upstream hard-codes."""
    from .sam2 import Sam2Config, Sam2Model

    path = rconfig.sam2_config_path
    cfg = Sam2Config.from_yaml(path) if path is not None else Sam2Config.hiera_l()
    with torch.device("meta"):
        return Sam2Model.from_config(cfg)


def load_model(
    path: str | Path,
    device: str | torch.device = "cpu",
    dtype: str | torch.dtype = "float32",
    rconfig: RynnECConfig | None = None,
    graph_backed: bool = False,
) -> RynnecQwen2ForCausalLM:
    """Build the model from ``path`` and load its weights; ValueError on any mismatch.

    ``graph_backed``: load only the host tensors (see the module docstring); the rest stays on meta.
    """
    root = Path(path)
    rconfig = rconfig if rconfig is not None else RynnECConfig.from_pretrained(root)
    torch_dtype = parse_dtype(dtype)
    dev = torch.device(device)
    keep = is_host_key if graph_backed else None
    state, shapes = read_state_dict(root, torch_dtype, dev, keep)
    sam2_state, sam2_shapes = _split_sam2(state), _split_sam2(shapes)
    if not rconfig.has_seg_head and any(k.startswith("model.text_hidden_fcs.") for k in shapes):
        # upstream builds the [SEG] head only when config.json has ``mm_mask_decoder``; a checkpoint that
        # carries its weights can still segment, so build it rather than reject the keys
        log.warning(
            "%s: config.json lacks mm_mask_decoder but the checkpoint has a [SEG] head; using it", root
        )
        rconfig.has_seg_head = True

    with torch.device("meta"):
        model = RynnecQwen2ForCausalLM(rconfig)
    expected = {k: v.shape for k, v in model.state_dict().items()}
    if rconfig.tie_word_embeddings:
        expected.pop("lm_head.weight", None)
        state.pop("lm_head.weight", None)  # some tied checkpoints store a copy; the embedding wins
        shapes.pop("lm_head.weight", None)
    _check_keys(expected, shapes, f"{root} (LLM/vision part)")
    if rconfig.tie_word_embeddings:
        state["lm_head.weight"] = state["model.embed_tokens.weight"]
    model.load_state_dict(state, strict=not graph_backed, assign=True)
    if rconfig.tie_word_embeddings:
        model.lm_head.weight = model.model.embed_tokens.weight
    _materialise_buffers(model, dev)

    if sam2_state:
        sam2 = _build_sam2(rconfig)
        try:
            sam2.load_inference_state_dict(sam2_state, shapes=sam2_shapes)
        except ValueError as exc:
            raise ValueError(f"{root} ({SAM2_PREFIX}*): {exc}") from exc
        model.grounding_encoder = GroundingEncoder(sam2)
    else:
        log.warning("%s has no %s* weights: segmentation is unavailable", root, SAM2_PREFIX)

    leftover = [
        n for n, t in [*model.named_parameters(), *model.named_buffers()]
        if t.is_meta and (keep is None or keep(n))
    ]
    if leftover:
        raise ValueError(f"{root}: tensors left uninitialised after loading: {leftover}")
    return model.eval()


def _materialise_buffers(model: RynnecQwen2ForCausalLM, device: torch.device) -> None:
    """Recreate the non-persistent RoPE buffers that the meta-device build left empty."""
    from transformers.models.qwen2.modeling_qwen2 import Qwen2RotaryEmbedding

    with torch.device(device):  # transformers 5 dropped the ``device`` argument
        model.model.rotary_emb = Qwen2RotaryEmbedding(config=model.config)
    enc = model.vision_tower.encoder
    old = enc.rotary_pos_emb
    new = VisionRotaryEmbedding(old.inv_freq.shape[0] * 2, model.rconfig.vision.rope_theta)
    enc.rotary_pos_emb = new.to(device)
