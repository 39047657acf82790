"""Generated tiny checkpoints carry exactly the upstream checkpoint's tensors (keys, shapes, dtypes).

The parity fixture was saved by the upstream code, so its key/shape table is the ground truth; upstream
loads SAM2 strictly, which is why the SAM2 parts our inference skips must be present too.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from safetensors import safe_open
from safetensors.torch import load_file

from rynnec_ros.fixtures.checkpoints import Sam2MemoryConfig, ignored_sam2_tensors, make_checkpoint
from rynnec_ros.model.sam2 import CHECKPOINT_PREFIX, is_ignored_key

FIXTURE_CK = Path(__file__).resolve().parents[1] / "data" / "rynnec-tiny" / "checkpoint"
TINY_YAML = FIXTURE_CK / "sam2_hiera_tiny.yaml"
VISION = "vl3-siglip-navit-tiny/model.safetensors"


def _table(path: Path) -> dict[str, tuple[tuple[int, ...], str]]:
    with safe_open(str(path), "pt") as f:
        return {k: (tuple(f.get_slice(k).get_shape()), f.get_slice(k).get_dtype()) for k in f.keys()}  # noqa: SIM118


def _split(table: dict[str, tuple[tuple[int, ...], str]]) -> tuple[dict, dict]:
    sam2 = {k: v for k, v in table.items() if k.startswith(CHECKPOINT_PREFIX)}
    return sam2, {k: v for k, v in table.items() if k not in sam2}


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_checkpoint(tmp_path_factory.mktemp("fmt"), size="tiny", seed=3)


def test_ignored_sam2_tensors_of_the_tiny_yaml_are_the_fixtures() -> None:
    def unread(name: str) -> bool:
        """Memory path, or the mask-prompt downscaling: Sam2Model loads it (the sam2 package's prompt
        encoder holds it) but per-frame decoding never reads it, and the writer draws it with these."""
        return is_ignored_key(name) or name.startswith("sam_prompt_encoder.mask_downscaling.")

    listed = ignored_sam2_tensors(Sam2MemoryConfig.from_yaml(TINY_YAML))
    names = [n for n, _ in listed]
    assert names == sorted(set(names))
    assert all(unread(n) for n in names)
    fixture = {
        k[len(CHECKPOINT_PREFIX) :]: shape
        for k, (shape, _) in _table(FIXTURE_CK / "model.safetensors").items()
        if k.startswith(CHECKPOINT_PREFIX) and unread(k[len(CHECKPOINT_PREFIX) :])
    }
    assert len(fixture) == 115  # 119 before the point/box prompt embeddings were loaded
    assert dict(listed) == fixture


def test_generated_checkpoint_has_the_fixtures_tensors(generated: Path) -> None:
    fix_sam2, fix_rest = _split(_table(FIXTURE_CK / "model.safetensors"))
    our_sam2, our_rest = _split(_table(generated / "model.safetensors"))
    assert our_sam2 == fix_sam2  # all 332, memory/pointer/prompt parts included
    assert our_rest == fix_rest  # LLM, projector, region encoder, [SEG] head, vision encoder
    assert _table(generated / VISION) == _table(FIXTURE_CK / VISION)


def test_untied_checkpoint_adds_only_lm_head(untied_ckpt: Path) -> None:
    fixture = _table(FIXTURE_CK / "model.safetensors")
    ours = _table(untied_ckpt / "model.safetensors")
    assert set(ours) == set(fixture) | {"lm_head.weight"}
    assert ours["lm_head.weight"] == ours["model.embed_tokens.weight"]
    assert {k: v[0] for k, v in ours.items() if k.startswith(CHECKPOINT_PREFIX)} == {
        k: v[0] for k, v in fixture.items() if k.startswith(CHECKPOINT_PREFIX)
    }


def test_ignored_tensors_are_drawn_like_the_rest(generated: Path) -> None:
    state = load_file(str(generated / "model.safetensors"))
    groups: dict[str, list[torch.Tensor]] = {"norm": [], "bias": [], "other": []}
    for name, _ in ignored_sam2_tensors(Sam2MemoryConfig.from_yaml(TINY_YAML)):
        t = state[CHECKPOINT_PREFIX + name].flatten()
        assert torch.isfinite(t).all() and (t != 0).all(), name
        if name.endswith(".bias"):
            groups["bias"].append(t)
        elif name.endswith(".weight") and state[CHECKPOINT_PREFIX + name].ndim == 1:
            groups["norm"].append(t)
        elif not name.endswith(".weight"):  # maskmem_tpos_enc, no_mem_pos_enc, no_obj_ptr, gamma
            groups["other"].append(t)
    norm, bias, other = (torch.cat(groups[k]) for k in ("norm", "bias", "other"))
    assert abs(norm.mean() - 1) < 0.02 and 0.08 < norm.std() < 0.12
    assert abs(bias.mean()) < 0.01 and 0.04 < bias.std() < 0.06
    emb = torch.cat([state[k].flatten() for k in state if ".point_embeddings." in k])  # Sam2Model's own now
    assert 0.75 < emb.std() < 1.25
    assert 0.16 < other.std() < 0.24
    fan_in = state[CHECKPOINT_PREFIX + "memory_attention.layers.0.linear2.weight"]  # [32, 64]
    assert 0.9 < fan_in.std() * 64**0.5 < 1.1


def test_generated_checkpoint_loads_and_answers(generated: Path, make_frames) -> None:
    from rynnec_ros.core.types import Frame, Request
    from rynnec_ros.model import RynnEC

    eng = RynnEC.from_pretrained(generated)
    frames = make_frames(2, 56, 84, seed=4)
    ans = eng.answer(Request("What is shown?", [Frame(f) for f in frames], max_new_tokens=4))
    assert 1 <= len(ans.token_ids) <= 4 and isinstance(ans.text, str)
    state = load_file(str(generated / "model.safetensors"))
    loaded = eng.model.sam2.state_dict()
    assert set(loaded) == {
        k[len(CHECKPOINT_PREFIX) :]
        for k in state
        if k.startswith(CHECKPOINT_PREFIX) and not is_ignored_key(k[len(CHECKPOINT_PREFIX) :])
    }
    for k, v in loaded.items():
        torch.testing.assert_close(v, state[CHECKPOINT_PREFIX + k], rtol=0, atol=0)
    seg = torch.randn(32, generator=torch.Generator().manual_seed(0))
    masks, scores = eng.masks_for([Frame(frames[0])], seg)
    assert masks[0] is not None and masks[0].shape == (56, 84) and masks[0].dtype == np.bool_
    assert np.isfinite(scores).all()


def test_hiera_l_defaults_give_the_official_shapes() -> None:
    shapes = dict(ignored_sam2_tensors(Sam2MemoryConfig()))
    assert len(shapes) == 167  # 171 with the 4 point embeddings, which Sam2Model now loads
    assert shapes["maskmem_tpos_enc"] == (7, 1, 1, 64)
    assert shapes["no_mem_pos_enc"] == (1, 1, 256) and shapes["no_obj_ptr"] == (1, 256)
    assert shapes["memory_attention.layers.3.cross_attn_image.k_proj.weight"] == (256, 64)
    assert shapes["memory_attention.layers.3.linear1.weight"] == (2048, 256)
    assert "memory_attention.layers.4.norm1.weight" not in shapes
    assert shapes["memory_encoder.mask_downsampler.encoder.9.weight"] == (256, 64, 3, 3)
    assert shapes["memory_encoder.mask_downsampler.encoder.12.weight"] == (256, 256, 1, 1)
    assert shapes["memory_encoder.fuser.layers.1.dwconv.weight"] == (256, 1, 7, 7)
    assert shapes["memory_encoder.fuser.layers.1.pwconv1.weight"] == (1024, 256)
    assert shapes["memory_encoder.out_proj.weight"] == (64, 256, 1, 1)
    assert shapes["mask_downsample.weight"] == (1, 1, 4, 4)
    assert shapes["obj_ptr_proj.layers.2.weight"] == (256, 256)
    assert shapes["sam_prompt_encoder.mask_downscaling.6.weight"] == (256, 16, 1, 1)


def test_flags_follow_upstream_construction() -> None:
    base = Sam2MemoryConfig()
    same_dim = dict(ignored_sam2_tensors(dataclasses.replace(base, mem_out_dim=256)))
    assert "memory_encoder.out_proj.weight" not in same_dim  # an Identity upstream
    assert same_dim["maskmem_tpos_enc"] == (7, 1, 1, 256)
    linear = dict(
        ignored_sam2_tensors(
            dataclasses.replace(base, use_mlp_for_obj_ptr_proj=False, proj_tpos_enc_in_obj_ptrs=True)
        )
    )
    assert linear["obj_ptr_proj.weight"] == (256, 256) and "obj_ptr_proj.layers.0.weight" not in linear
    assert linear["obj_ptr_tpos_proj.weight"] == (64, 256)
    no_ptrs = dict(ignored_sam2_tensors(dataclasses.replace(base, use_obj_ptrs_in_encoder=False)))
    assert not any(k.startswith(("mask_downsample.", "obj_ptr_proj.", "no_obj_ptr")) for k in no_ptrs)
    coarse = dict(
        ignored_sam2_tensors(
            dataclasses.replace(base, downsampler_stride=4, fuser_gamma=False, fuser_dwconv=False)
        )
    )
    p = "memory_encoder.mask_downsampler.encoder."
    assert coarse[p + "0.weight"] == (16, 1, 3, 3) and coarse[p + "3.weight"] == (256, 16, 3, 3)
    assert coarse[p + "6.weight"] == (256, 256, 1, 1)
    assert p + "9.weight" not in coarse
    assert coarse["memory_encoder.fuser.layers.0.dwconv.weight"] == (256, 256, 7, 7)
    assert "memory_encoder.fuser.layers.0.gamma" not in coarse
    with pytest.raises(ValueError, match="total_stride"):
        Sam2MemoryConfig(downsampler_stride=3)


def test_from_yaml_reports_what_is_missing(tmp_path: Path) -> None:
    doc = yaml.safe_load(TINY_YAML.read_text())
    bad = tmp_path / "bad.yaml"
    del doc["model"]["memory_attention"]["num_layers"]
    bad.write_text(yaml.safe_dump(doc))
    with pytest.raises(ValueError, match=r"bad\.yaml: lacks model\.memory_attention\.num_layers$"):
        Sam2MemoryConfig.from_yaml(bad)
    doc["model"]["memory_attention"]["num_layers"] = 2
    doc["model"]["memory_encoder"]["out_dim"] = "wide"
    bad.write_text(yaml.safe_dump(doc))
    with pytest.raises(ValueError, match="wide"):
        Sam2MemoryConfig.from_yaml(bad)
    del doc["model"]["memory_encoder"]
    bad.write_text(yaml.safe_dump(doc))
    with pytest.raises(ValueError, match=r"model\.memory_encoder mapping"):
        Sam2MemoryConfig.from_yaml(bad)
    bad.write_text("model: 3\n")
    with pytest.raises(ValueError, match="no 'model' mapping"):
        Sam2MemoryConfig.from_yaml(bad)
    with pytest.raises(ValueError, match="cannot read"):
        Sam2MemoryConfig.from_yaml(tmp_path / "missing.yaml")


def test_memory_width_must_match_the_neck(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rynnec_ros.fixtures import checkpoints as tiny

    doc = yaml.safe_load(TINY_YAML.read_text())
    doc["model"]["memory_attention"]["d_model"] = 64
    assets = tmp_path / "assets"
    assets.mkdir()
    for f in tiny.TOKENIZER_FILES:
        (assets / f).write_bytes((tiny.ASSETS / f).read_bytes())
    (assets / tiny.SAM2_YAML).write_text(yaml.safe_dump(doc))
    monkeypatch.setattr(tiny, "ASSETS", assets)
    with pytest.raises(ValueError, match=r"memory_attention\.d_model 64 must equal the neck d_model 32"):
        tiny.make_checkpoint(tmp_path / "ck")
