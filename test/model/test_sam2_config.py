"""SAM2 config parsing, the Hiera-L architecture, state-dict validation and input checks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from rynnec_ros.fixtures.checkpoints import ASSETS, SAM2_YAML
from rynnec_ros.model.sam2 import (
    IGNORED_KEY_PREFIXES,
    IGNORED_KEYS,
    Sam2Config,
    Sam2Model,
    is_ignored_key,
    resize_mask_to_frame,
)

# The tiny checkpoint's SAM 2 yaml (the full SAM2Base config the sam2 package builds) at 256² inputs.
TINY_YAML = (ASSETS / SAM2_YAML).read_text().replace("image_size: 1024", "image_size: 256")


@pytest.fixture()
def tiny_yaml(tmp_path: Path) -> Path:
    path = tmp_path / "sam2_test.yaml"
    path.write_text(TINY_YAML)
    return path


def _random_state(model: Sam2Model, seed: int = 0) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return {k: torch.randn(v.shape, generator=gen) * 0.2 for k, v in model.state_dict().items()}


def test_from_yaml_reads_sizes_and_flags(tiny_yaml: Path) -> None:
    cfg = Sam2Config.from_yaml(tiny_yaml)
    assert cfg.embed_dim == 16 and cfg.stages == (1, 1, 2, 1) and cfg.global_att_blocks == (3,)
    assert cfg.d_model == 32 and cfg.backbone_channel_list == (128, 64, 32, 16)
    assert cfg.image_size == 256 and cfg.embedding_size == 16 and cfg.scalp == 1
    assert cfg.fpn_interp_model == "nearest" and cfg.iou_prediction_use_sigmoid


def test_from_yaml_bad_inputs(tmp_path: Path, tiny_yaml: Path) -> None:
    with pytest.raises(ValueError, match="cannot read"):
        Sam2Config.from_yaml(tmp_path / "missing.yaml")
    (tmp_path / "empty.yaml").write_text("foo: 1\n")
    with pytest.raises(ValueError, match="no 'model'"):
        Sam2Config.from_yaml(tmp_path / "empty.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text(TINY_YAML.replace("[128, 64, 32, 16]", "[128, 64, 32, 8]"))
    with pytest.raises(ValueError, match="backbone_channel_list"):
        Sam2Config.from_yaml(bad)
    no_mem = tmp_path / "no_mem.yaml"
    no_mem.write_text(TINY_YAML.replace("no_mem_embed: true", "no_mem_embed: false"))
    with pytest.raises(ValueError, match="directly_add_no_mem_embed"):
        Sam2Config.from_yaml(no_mem)


def test_hiera_l_matches_official_architecture() -> None:
    """Official SAM 2.0 Hiera-L shapes, built on the meta device (no 217M-parameter allocation)."""
    with torch.device("meta"):
        sam = Sam2Model.from_config(Sam2Config.hiera_l())
    shapes = {k: tuple(v.shape) for k, v in sam.state_dict().items()}
    expected = {
        "image_encoder.trunk.patch_embed.proj.weight": (144, 3, 7, 7),
        "image_encoder.trunk.pos_embed": (1, 144, 7, 7),
        "image_encoder.trunk.pos_embed_window": (1, 144, 8, 8),
        "image_encoder.trunk.blocks.2.proj.weight": (288, 144),
        "image_encoder.trunk.blocks.8.proj.weight": (576, 288),
        "image_encoder.trunk.blocks.44.proj.weight": (1152, 576),
        "image_encoder.trunk.blocks.47.attn.qkv.weight": (3456, 1152),
        "image_encoder.trunk.blocks.47.mlp.layers.0.weight": (4608, 1152),
        "image_encoder.neck.convs.0.conv.weight": (256, 1152, 1, 1),
        "image_encoder.neck.convs.3.conv.weight": (256, 144, 1, 1),
        "sam_mask_decoder.conv_s0.weight": (32, 256, 1, 1),
        "sam_mask_decoder.conv_s1.weight": (64, 256, 1, 1),
        "sam_mask_decoder.output_upscaling.0.weight": (256, 64, 2, 2),
        "sam_mask_decoder.output_upscaling.3.weight": (64, 32, 2, 2),
        "sam_mask_decoder.transformer.layers.1.cross_attn_token_to_image.q_proj.weight": (128, 256),
        "sam_mask_decoder.transformer.layers.1.mlp.layers.0.weight": (2048, 256),
        "sam_mask_decoder.iou_prediction_head.layers.2.weight": (4, 256),
        "sam_mask_decoder.pred_obj_score_head.layers.2.weight": (1, 256),
        "sam_mask_decoder.mask_tokens.weight": (4, 256),
        "sam_prompt_encoder.pe_layer.positional_encoding_gaussian_matrix": (2, 128),
        "no_mem_embed": (1, 1, 256),
    }
    for key, shape in expected.items():
        assert shapes.get(key) == shape, key
    trunk = sam.image_encoder.trunk
    assert len(trunk.blocks) == 48
    assert [i for i, b in enumerate(trunk.blocks) if b.window_size == 0] == [23, 33, 43]
    assert [i for i, b in enumerate(trunk.blocks) if b.q_stride] == [2, 8, 44]
    # The first block of a stage keeps the previous stage's window (upstream lag).
    assert [trunk.blocks[i].window_size for i in (2, 8, 9, 44, 45)] == [8, 4, 16, 16, 8]
    assert [trunk.blocks[i].attn.num_heads for i in (0, 2, 8, 44)] == [2, 4, 8, 16]
    # 224.4M for the full SAM 2.0 Hiera-L minus the memory modules per-frame decoding does not build;
    # the point/box prompt embeddings (4 × 256) are built since point prompts are decoded, and the
    # prompt encoder's mask downscaling with it (upstream's mask_in_chans 16, by hand: conv 1→4 k2
    # 20, LayerNorm2d 8, conv 4→16 k2 272, LayerNorm2d 32, conv 16→256 k1 4352 = 4684).
    assert sum(p.numel() for p in sam.parameters()) == 216_919_157 + 4 * 256 + 4684


def test_load_rejects_wrong_config(tiny_yaml: Path) -> None:
    sam = Sam2Model.from_config(Sam2Config.from_yaml(tiny_yaml))
    state = _random_state(sam)
    with torch.device("meta"):
        big = Sam2Model.from_config(Sam2Config.hiera_l())
    with pytest.raises(ValueError) as err:
        big.load_inference_state_dict(state)
    message = str(err.value)
    assert "different SAM2 size: trunk embed_dim 16 (config 144), 5 Hiera blocks (config 48)" in message
    assert "d_model 32 (config 256)" in message
    assert "image_encoder.neck.convs.0.conv.bias: checkpoint (32,) vs model (256,)" in message
    assert "more)" in message and len(message) < 3000


def test_load_lists_missing_and_unexpected_keys(tiny_yaml: Path) -> None:
    sam = Sam2Model.from_config(Sam2Config.from_yaml(tiny_yaml))
    state = _random_state(sam)
    del state["no_mem_embed"]
    state["image_encoder.trunk.blocks.9.norm1.weight"] = torch.ones(8)
    with pytest.raises(ValueError) as err:
        sam.load_inference_state_dict(state)
    assert "missing key(s): no_mem_embed" in str(err.value)
    assert "unexpected key(s): image_encoder.trunk.blocks.9.norm1.weight" in str(err.value)


def test_ignored_keys_are_skipped_and_weights_loaded(tiny_yaml: Path) -> None:
    sam = Sam2Model.from_config(Sam2Config.from_yaml(tiny_yaml))
    state = _random_state(sam, seed=3)
    extra = {
        "memory_attention.layers.0.self_attn.q_proj.weight": torch.zeros(16, 16),
        "memory_encoder.fuser.layers.0.gamma": torch.zeros(16),
        "maskmem_tpos_enc": torch.zeros(7, 1, 1, 8),
        "no_mem_pos_enc": torch.zeros(1, 1, 16),
        "no_obj_ptr": torch.zeros(1, 16),
        "obj_ptr_proj.layers.0.weight": torch.zeros(16, 16),
        "mask_downsample.weight": torch.zeros(1, 1, 4, 4),
    }
    assert all(is_ignored_key(k) for k in extra)
    assert not is_ignored_key("no_mem_embed") and not is_ignored_key("no_obj_ptr_extra")
    assert not is_ignored_key("sam_prompt_encoder.not_a_point_embed.weight")
    assert not is_ignored_key("sam_prompt_encoder.point_embeddings.0.weight")  # point prompts read them
    # the package's prompt encoder holds its mask downscaling, so the checkpoint's is loaded into it
    assert not is_ignored_key("sam_prompt_encoder.mask_downscaling.0.weight")
    assert "no_obj_ptr" in IGNORED_KEYS and "memory_attention." in IGNORED_KEY_PREFIXES
    sam.load_inference_state_dict({**state, **extra})
    loaded = sam.state_dict()
    for key, value in state.items():
        assert torch.equal(loaded[key], value), key


def test_meta_model_adopts_loaded_tensors(tiny_yaml: Path) -> None:
    cfg = Sam2Config.from_yaml(tiny_yaml)
    state = _random_state(Sam2Model.from_config(cfg), seed=5)
    with torch.device("meta"):
        sam = Sam2Model.from_config(cfg)
    sam.load_inference_state_dict(state)
    assert all(p.device.type == "cpu" and not p.requires_grad for p in sam.parameters())
    feats = sam.image_features(torch.zeros(1, 3, 256, 256))
    out = sam.decode(feats, torch.ones(32))
    assert out.mask_1024.shape == (256, 256) and out.lowres_logits.shape == (3, 64, 64)
    assert 0 <= out.best_index < 3 and out.best_index == int(out.iou.argmax())


def test_input_validation(tiny_yaml: Path) -> None:
    sam = Sam2Model.from_config(Sam2Config.from_yaml(tiny_yaml))
    with pytest.raises(ValueError, match="uint8"):
        sam.preprocess(np.zeros((10, 12, 3), dtype=np.float32))
    with pytest.raises(ValueError, match=r"H×W×3"):
        sam.preprocess(np.zeros((10, 12), dtype=np.uint8))
    with pytest.raises(ValueError, match="empty"):
        sam.preprocess(np.zeros((0, 12, 3), dtype=np.uint8))
    pixels = sam.preprocess(np.full((10, 30, 3), 200, dtype=np.uint8))
    assert pixels.shape == (1, 3, 256, 256) and pixels.dtype == torch.float32
    with pytest.raises(ValueError, match="pixels must be"):
        sam.image_features(torch.zeros(1, 3, 128, 128))
    feats = sam.image_features(torch.cat([pixels, pixels]))
    with pytest.raises(ValueError, match="one frame"):
        sam.decode(feats, torch.zeros(32))
    with pytest.raises(ValueError, match="seg_embedding"):
        sam.decode(feats.frame(0), torch.zeros(2, 32))


def test_resize_mask_to_frame_semantics() -> None:
    mask = np.zeros((8, 8), dtype=bool)
    mask[2:4, 2:4] = True
    up = resize_mask_to_frame(mask, 16, 16)
    assert up.shape == (16, 16) and up.dtype == np.bool_
    # Bilinear + "any non-zero is True": the square grows by the interpolation footprint.
    assert up[4:8, 4:8].all() and up.sum() > 16 and not up[0].any()
    down = resize_mask_to_frame(torch.from_numpy(mask), 3, 5)
    assert down.shape == (3, 5) and down.any()
    assert not resize_mask_to_frame(np.zeros((8, 8), dtype=bool), 4, 4).any()
    with pytest.raises(ValueError, match="2-D"):
        resize_mask_to_frame(np.zeros((1, 8, 8), dtype=bool), 4, 4)
    with pytest.raises(ValueError, match="positive integers"):
        resize_mask_to_frame(mask, 0, 4)


def test_the_packages_hiera_l_yaml_is_the_default_config() -> None:
    """A checkpoint without a yaml gets the package's own ``configs/sam2/sam2_hiera_l.yaml`` (SAM 2.0,
    the file RynnEC hard-codes), and its sizes are the official Hiera-L values of ``Sam2Config()``."""
    from rynnec_ros.model.sam2 import package_yaml

    assert package_yaml().is_file()
    assert Sam2Config.from_yaml(package_yaml()) == Sam2Config.hiera_l()
    assert Sam2Config.hiera_l().yaml is None


def test_the_modules_are_the_sam2_packages(tiny_yaml: Path) -> None:
    """Built from the yaml by the package itself: its classes, configured as the file says."""
    from sam2.modeling.backbones.hieradet import Hiera
    from sam2.modeling.sam.mask_decoder import MaskDecoder
    from sam2.modeling.sam.prompt_encoder import PromptEncoder

    sam = Sam2Model.from_config(Sam2Config.from_yaml(tiny_yaml))
    assert isinstance(sam.image_encoder.trunk, Hiera) and isinstance(sam.sam_mask_decoder, MaskDecoder)
    assert isinstance(sam.sam_prompt_encoder, PromptEncoder)
    assert sam.sam_prompt_encoder.input_image_size == (256, 256)
    assert sam.sam_prompt_encoder.image_embedding_size == (16, 16)
    assert sam.image_encoder.neck.fpn_top_down_levels == [2, 3] and sam.image_encoder.scalp == 1


@pytest.mark.parametrize(("edit", "message"), [
    (("third_parts.sam2.modeling.backbones.hieradet.Hiera", "os.system"), "not a module class of the sam2"),
    (("third_parts.sam2.modeling.backbones.hieradet.Hiera", "sam2.modeling.sam2_base.torch.load"),
     "not a module class of the sam2"),
    (("third_parts.sam2.modeling.backbones.hieradet.Hiera", "sam2.modeling.sam2_base.trunc_normal_"),
     "not a module class of the sam2"),
    (("      embed_dim: 16\n", "      embed_dim: 16\n      weights_path: /tmp/hiera.pt\n"), "weights_path"),
    (("    scalp: 1\n", "    scalp: 1\n    _args_: [1]\n"), "_args_"),
])
def test_a_yaml_may_build_only_the_packages_modules(tmp_path: Path, edit: tuple[str, str],
                                                    message: str) -> None:
    """A checkpoint's yaml is input and hydra calls what it names: other callables, a pickle to load
    (Hiera's ``weights_path``) and hydra's call options are refused before anything is built."""
    bad = tmp_path / "bad.yaml"
    assert edit[0] in TINY_YAML
    bad.write_text(TINY_YAML.replace(*edit))
    with pytest.raises(ValueError, match=message):
        Sam2Model.from_config(Sam2Config.from_yaml(bad))


def test_a_yaml_the_package_cannot_build_is_a_clear_error(tmp_path: Path) -> None:
    """SAM2Base needs its memory modules' config too (upstream builds them): a yaml without is refused."""
    cut = tmp_path / "no_memory.yaml"
    memory = slice(TINY_YAML.index("  memory_attention:"), TINY_YAML.index("  num_maskmem:"))
    cut.write_text(TINY_YAML[: memory.start] + TINY_YAML[memory.stop :])
    cfg = Sam2Config.from_yaml(cut)  # the sizes and flags are all there
    with pytest.raises(ValueError, match="the sam2 package cannot build it"):
        Sam2Model.from_config(cfg)
