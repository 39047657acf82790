"""SAM2 config parsing, the Hiera-L architecture, state-dict validation and input checks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from rynnec_ros.model.sam2 import (
    IGNORED_KEY_PREFIXES,
    IGNORED_KEYS,
    Sam2Config,
    Sam2Model,
    is_ignored_key,
    resize_mask_to_frame,
)

TINY_YAML = """\
# @package _global_
model:
  _target_: third_parts.sam2.modeling.sam2_base.SAM2Base
  image_encoder:
    _target_: third_parts.sam2.modeling.backbones.image_encoder.ImageEncoder
    scalp: 1
    trunk:
      _target_: third_parts.sam2.modeling.backbones.hieradet.Hiera
      embed_dim: 8
      num_heads: 1
      stages: [1, 1, 2, 1]
      global_att_blocks: [3]
      window_pos_embed_bkg_spatial_size: [7, 7]
      window_spec: [8, 4, 16, 8]
    neck:
      _target_: third_parts.sam2.modeling.backbones.image_encoder.FpnNeck
      d_model: 16
      backbone_channel_list: [64, 32, 16, 8]
      fpn_top_down_levels: [2, 3]
      fpn_interp_model: nearest
  image_size: 256
  directly_add_no_mem_embed: true
  use_high_res_features_in_sam: true
  iou_prediction_use_sigmoid: true
  pred_obj_scores: true
  pred_obj_scores_mlp: true
"""


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
    assert cfg.embed_dim == 8 and cfg.stages == (1, 1, 2, 1) and cfg.global_att_blocks == (3,)
    assert cfg.d_model == 16 and cfg.backbone_channel_list == (64, 32, 16, 8)
    assert cfg.image_size == 256 and cfg.embedding_size == 16 and cfg.scalp == 1
    assert cfg.fpn_interp_model == "nearest" and cfg.iou_prediction_use_sigmoid


def test_from_yaml_bad_inputs(tmp_path: Path, tiny_yaml: Path) -> None:
    with pytest.raises(ValueError, match="cannot read"):
        Sam2Config.from_yaml(tmp_path / "missing.yaml")
    (tmp_path / "empty.yaml").write_text("foo: 1\n")
    with pytest.raises(ValueError, match="no 'model'"):
        Sam2Config.from_yaml(tmp_path / "empty.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text(TINY_YAML.replace("[64, 32, 16, 8]", "[64, 32, 16, 4]"))
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
    # 224.4M for the full SAM 2.0 Hiera-L minus the memory modules this package does not build; the
    # point/box prompt embeddings (4 × 256) are built since point prompts are decoded.
    assert sum(p.numel() for p in sam.parameters()) == 216_919_157 + 4 * 256


def test_load_rejects_wrong_config(tiny_yaml: Path) -> None:
    sam = Sam2Model.from_config(Sam2Config.from_yaml(tiny_yaml))
    state = _random_state(sam)
    with torch.device("meta"):
        big = Sam2Model.from_config(Sam2Config.hiera_l())
    with pytest.raises(ValueError) as err:
        big.load_inference_state_dict(state)
    message = str(err.value)
    assert "different SAM2 size: trunk embed_dim 8 (config 144), 5 Hiera blocks (config 48)" in message
    assert "d_model 16 (config 256)" in message
    assert "image_encoder.neck.convs.0.conv.bias: checkpoint (16,) vs model (256,)" in message
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
        "sam_prompt_encoder.mask_downscaling.0.weight": torch.zeros(4, 1, 2, 2),
    }
    assert all(is_ignored_key(k) for k in extra)
    assert not is_ignored_key("no_mem_embed") and not is_ignored_key("no_obj_ptr_extra")
    assert not is_ignored_key("sam_prompt_encoder.not_a_point_embed.weight")
    assert not is_ignored_key("sam_prompt_encoder.point_embeddings.0.weight")  # point prompts read them
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
    out = sam.decode(feats, torch.ones(16))
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
        sam.decode(feats, torch.zeros(16))
    with pytest.raises(ValueError, match="seg_embedding"):
        sam.decode(feats.frame(0), torch.zeros(2, 16))


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
