"""Full-size random-weight RynnEC checkpoints for GPU benchmarks (the architecture of the official ones).

Speed and memory depend on the shapes, not on the values, so a random RynnEC-2B in the official
directory layout (Qwen2.5-1.5B LLM, VL3-SigLIP-NaViT, SAM 2.0 Hiera-L) measures what the released
model would. The tokenizer is the tiny test one; the vocabulary keeps the real 151 936 rows, so the
embedding and LM head cost what they really cost.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

# (LLM hidden, layers, heads, kv heads, ffn, vocab, tied) and (vision hidden, layers, heads, ffn)
FULL_SIZES = {
    "2b": {"llm": (1536, 28, 12, 2, 8960, 151936, True), "vision": (1152, 27, 16, 4304)},
    "7b": {"llm": (3584, 28, 28, 4, 18944, 152064, False), "vision": (1152, 27, 16, 4304)},
}


def make_full_checkpoint(
    out_dir: str | Path,
    size: str = "2b",
    seed: int = 0,
    dtype: torch.dtype = torch.bfloat16,
    sizes: dict[str, dict[str, tuple]] | None = None,
    keep_tiny_sam2: bool = False,
) -> Path:
    """Write a random checkpoint of the official shapes; SAM2 is Hiera-L (no yaml, as upstream).

    ``sizes`` adds shape sets beside :data:`FULL_SIZES` and ``keep_tiny_sam2`` keeps the tiny SAM2, so
    tests can exercise the writer at a size CI affords.
    """
    from safetensors.torch import save_file

    from rynnec_ros.fixtures.checkpoints import (
        VISION_DIR,
        Sam2MemoryConfig,
        ignored_sam2_state,
        make_checkpoint,
    )
    from rynnec_ros.model.config import RynnECConfig
    from rynnec_ros.model.modeling import RynnecQwen2ForCausalLM
    from rynnec_ros.model.sam2 import Sam2Config, Sam2Model

    table = {**FULL_SIZES, **(sizes or {})}
    if size not in table:
        raise ValueError(f"unknown size {size!r}; choose one of {sorted(table)}")
    out = make_checkpoint(out_dir, size="tiny", seed=seed)  # tokenizer, configs in the official layout
    hidden, layers, heads, kv, ffn, vocab, tied = table[size]["llm"]
    vhidden, vlayers, vheads, vffn = table[size]["vision"]
    cfg = json.loads((out / "config.json").read_text())
    cfg.update(
        hidden_size=hidden,
        num_hidden_layers=layers,
        max_window_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv,
        intermediate_size=ffn,
        vocab_size=vocab,
        tie_word_embeddings=tied,
        mm_hidden_size=vhidden,
        out_dim=cfg["out_dim"] if keep_tiny_sam2 else 256,
        mask_decoder_model="sam2_hiera_large.pt",
        torch_dtype=str(dtype).replace("torch.", ""),
    )
    (out / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
    vcfg_path = out / VISION_DIR / "config.json"
    vcfg = json.loads(vcfg_path.read_text())
    vcfg.update(
        hidden_size=vhidden, num_hidden_layers=vlayers, num_attention_heads=vheads, intermediate_size=vffn
    )
    vcfg_path.write_text(json.dumps(vcfg, indent=2) + "\n")
    sam2_yamls = sorted(out.glob("sam2*.yaml"))
    sam2_cfg = Sam2Config.from_yaml(sam2_yamls[0]) if keep_tiny_sam2 else Sam2Config.hiera_l()
    # The parts inference skips (memory, object pointers) too: upstream loads SAM2 strictly.
    memory_cfg = Sam2MemoryConfig.from_yaml(sam2_yamls[0]) if keep_tiny_sam2 else Sam2MemoryConfig()
    if not keep_tiny_sam2:
        for yaml in sam2_yamls:
            yaml.unlink()
    (out / VISION_DIR / "model.safetensors").unlink(missing_ok=True)

    torch.manual_seed(seed)
    model = RynnecQwen2ForCausalLM(RynnECConfig.from_pretrained(out))
    state = {k: v.to(dtype).contiguous() for k, v in model.state_dict().items()}
    if tied:
        state.pop("lm_head.weight", None)
    del model
    sam2 = Sam2Model.from_config(sam2_cfg)
    state.update(
        {"grounding_encoder.sam2_model." + k: v.to(dtype).contiguous() for k, v in sam2.state_dict().items()}
    )
    gen = torch.Generator().manual_seed(seed)
    skipped = ignored_sam2_state(memory_cfg, gen, "grounding_encoder.sam2_model.")
    state.update({k: v.to(dtype) for k, v in skipped.items()})
    save_file(state, str(out / "model.safetensors"), metadata={"format": "pt"})
    return out


def main(argv: list[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--size", default="2b", choices=sorted(FULL_SIZES))
    p.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"])
    args = p.parse_args(argv)
    path = make_full_checkpoint(args.out, args.size, dtype=getattr(torch, args.dtype))
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
