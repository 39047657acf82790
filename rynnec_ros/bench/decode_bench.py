"""Static-KV decode step vs transformers' ``DynamicCache`` loop (the engine's previous decoder).

Both decode the same prepared prompt of the same engine: greedy ids must be identical, then each
decodes ``new_tokens`` teacher-forced filler tokens (so a random model's early eos cannot shorten
the run), interleaved, ``repeat`` times. The ratio is static over dynamic, median decode seconds.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from rynnec_ros.bench.engine_bench import filler_token
from rynnec_ros.bench.measure import Stats, ratio
from rynnec_ros.bench.workload import window_request
from rynnec_ros.model.engine import RynnEC
from rynnec_ros.model.engine_types import Prepared


def dynamic_cache_decode(
    engine: RynnEC, prep: Prepared, steps: int, force: Sequence[int] | None = None
) -> tuple[list[int], float]:
    """Greedy ids and decode seconds of transformers' own ``Qwen2Model`` with a ``DynamicCache``."""
    from transformers import DynamicCache

    llm, head = engine.model.model, engine.model.lm_head
    penalty = engine.config.repetition_penalty
    eos = set(engine.config.eos_token_ids)
    ids: list[int] = []
    with torch.inference_mode():
        cache = DynamicCache(config=engine.model.config)
        out = llm(inputs_embeds=prep.inputs_embeds, past_key_values=cache, use_cache=True)
        hidden = out.last_hidden_state[0, -1]
        engine._sync()
        t0 = time.perf_counter()
        for step in range(steps):
            logits = head(hidden).float()
            if force is not None:
                nxt = int(force[step])
            else:
                if penalty != 1.0 and ids:
                    logits = logits.clone()
                    prev = torch.tensor(sorted(set(ids)), device=logits.device)
                    s = logits[prev]
                    logits[prev] = torch.where(s < 0, s * penalty, s / penalty)
                nxt = int(torch.argmax(logits))
            ids.append(nxt)
            if (force is None and nxt in eos) or step == steps - 1:
                break
            emb = engine.model.embed(torch.tensor([[nxt]], device=engine.device))
            hidden = llm(inputs_embeds=emb, past_key_values=cache, use_cache=True).last_hidden_state[0, -1]
        engine._sync()
    return ids, time.perf_counter() - t0


def compare_decoders(
    engine: RynnEC, frames: Sequence[np.ndarray], question: str, new_tokens: int = 32, repeat: int = 3
) -> dict[str, Any]:
    prep = engine.prepare(window_request(frames, question))
    prep.keep_steps = False
    greedy_static = engine.generate(prep, new_tokens).ids
    greedy_dynamic, _ = dynamic_cache_decode(engine, prep, new_tokens)
    force = [filler_token(engine)] * new_tokens
    times: dict[str, list[float]] = {"static": [], "dynamic": []}
    dynamic_cache_decode(engine, prep, 2, force)  # warm-up of both paths
    engine.generate(prep, 2, force_ids=force)
    for r in range(repeat):
        for name in ("static", "dynamic") if r % 2 == 0 else ("dynamic", "static"):
            if name == "static":
                times[name].append(engine.generate(prep, new_tokens, force_ids=force).timings["decode"])
            else:
                times[name].append(dynamic_cache_decode(engine, prep, new_tokens, force)[1])
    st, dy = Stats.of(times["static"]), Stats.of(times["dynamic"])
    steps = new_tokens - 1
    return {
        "available": True,
        "device": str(engine.device),
        "dtype": str(engine.dtype).replace("torch.", ""),
        "cuda_graphs": engine.cuda_graphs,
        "prompt_tokens": len(prep.input_ids),
        "new_tokens": new_tokens,
        "greedy_ids_identical": greedy_static == greedy_dynamic,
        "greedy_ids": greedy_static,
        "static_decode": st,
        "dynamic_decode": dy,
        "static_tok_s": steps / st.median if st.median > 0 else None,
        "dynamic_tok_s": steps / dy.median if dy.median > 0 else None,
        "ratio_static_vs_dynamic": ratio(st.median, dy.median),
        "method": "same prepared prompt; greedy ids compared, then teacher-forced filler tokens timed "
        "(decode only, prefill excluded), interleaved, median of repeats",
    }
