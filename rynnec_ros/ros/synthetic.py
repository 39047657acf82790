"""A random checkpoint that segments: the tiny RynnEC with its output layer set to emit [SEG].

A randomly initialised RynnEC almost never generates its [SEG] token, so referring segmentation would
end in "no mask" and the mask path (hidden state -> [SEG] projection -> SAM2 -> per-frame masks ->
RLE -> ObjectMask) would never run in tests or the demo. This edits three tensors of a random
checkpoint so greedy decoding emits [SEG] first; everything downstream is the real engine on random
weights, so the masks are real SAM2 outputs with meaningless content.
"""

from __future__ import annotations

import json
from pathlib import Path


def make_segmenting_checkpoint(
    out_dir: Path | str, size: str = "tiny", seed: int = 0, stop_after_seg: bool = True
) -> Path:
    """Write a random checkpoint (official format) whose greedy decoding starts with [SEG].

    ``stop_after_seg=False`` keeps emitting [SEG] until ``max_new_tokens``: generations as long as asked,
    which the node's timeout, cancel and responsiveness tests need.
    """
    import numpy as np
    from safetensors.numpy import load_file, save_file

    from rynnec_ros.model.tiny import make_checkpoint

    out = make_checkpoint(out_dir, size=size, seed=seed, tie_word_embeddings=False)
    cfg = json.loads((out / "config.json").read_text())
    seg_id, eos_id = int(cfg["seg_token_index"]), int(cfg["eos_token_id"])
    last = int(cfg["num_hidden_layers"]) - 1
    head_dim = int(cfg["hidden_size"]) // int(cfg["num_attention_heads"])
    path = out / "model.safetensors"
    w = {k: v.copy() for k, v in load_file(path).items()}
    attn = f"model.layers.{last}.self_attn"
    # The first key/value head of the last layer outputs a constant (its bias) whatever it attends to,
    # and o_proj writes a large multiple of it into residual channel 0: after the final RMSNorm, channel 0
    # is positive and dominant for every position.
    w[f"{attn}.v_proj.weight"][:head_dim] = 0.0
    w[f"{attn}.v_proj.bias"][:head_dim] = 0.0
    w[f"{attn}.v_proj.bias"][0] = 1.0
    w[f"{attn}.o_proj.weight"][:, 0] = 0.0
    w[f"{attn}.o_proj.weight"][0, 0] = 1000.0
    w["model.norm.weight"][0] = abs(float(w["model.norm.weight"][0])) + 1.0
    # Output layer reads channel 0 only: [SEG] wins, EOS is the runner-up, and a repetition penalty of 1.1
    # makes EOS win the step after: the answer is one "[SEG]", like a trained model's "Sure, [SEG].".
    lm = np.zeros_like(w["lm_head.weight"])
    lm[seg_id, 0] = 1.0
    lm[eos_id, 0] = 0.95
    w["lm_head.weight"] = lm
    save_file(w, str(path), metadata={"format": "pt"})
    gen_path = out / "generation_config.json"
    gen = json.loads(gen_path.read_text()) if gen_path.exists() else {}
    gen["repetition_penalty"] = 1.1 if stop_after_seg else 1.0
    gen_path.write_text(json.dumps(gen, indent=2))
    return out
