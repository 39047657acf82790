"""Cross-robot vision batching in the site server's models, in process (no Triton): three robots'
questions that arrive together are encoded in one round, and each answer equals a local engine's.

The model functions are called the way PyTriton calls them (a list of request dicts of numpy arrays,
every request's ask generator iterated on one event loop, the model's); the expected answers come
from a separate local engine that encodes its own frames inside its own ``answer`` call.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rynnec_ros.core import wire
from rynnec_ros.core.types import Answer, Frame, Request

from .conftest import drain

CHECKPOINT = Path(__file__).resolve().parents[1] / "data" / "rynnec-tiny" / "checkpoint"
QUESTION = "What is in the video?"


def _upload(models, keys: list[str], frames: list[np.ndarray]) -> None:
    models.upload([{"keys": np.array([k.encode() for k in keys], dtype=object), "rgb": np.stack(frames)}])


async def _ask(models: Any, keys: list[str]) -> Answer:
    body = wire.encode_request("answer", Request(QUESTION, frames=[], max_new_tokens=6), keys, stream=False)
    (final,) = [(kind, doc) for kind, doc in await drain(models, body) if kind != "token"]
    assert final[0] == "answer", final
    return wire.decode_answer(json.dumps(final[1]).encode())


@pytest.mark.parametrize("robots", [3])
def test_concurrent_questions_are_encoded_in_one_round(robots: int) -> None:
    from rynnec_ros.model.engine import RynnEC
    from rynnec_ros.serve.server import FrameStore, RynnECModels

    rng = np.random.default_rng(3)
    windows = {
        f"r{i}": [rng.integers(0, 256, (168, 224, 3), dtype=np.uint8) for _ in range(2 + i)]
        for i in range(robots)
    }
    keys = {r: [f"{r}-{j}" for j in range(len(w))] for r, w in windows.items()}
    engine = RynnEC.from_pretrained(CHECKPOINT)
    models = RynnECModels(engine, FrameStore(64), batch_window_s=0.5)  # wide: the questions surely meet
    for r, w in windows.items():
        _upload(models, keys[r], w)

    async def together() -> list[Answer]:
        return await asyncio.wait_for(asyncio.gather(*(_ask(models, keys[r]) for r in windows)), 120)

    answers = dict(zip(windows, asyncio.run(together()), strict=True))
    frames = sum(len(w) for w in windows.values())
    assert (models.batcher.rounds, models.batcher.windows, models.batcher.frames) == (1, robots, frames)
    assert engine.stats["vision_misses"] == frames  # nothing encoded twice
    assert engine.stats["vision_hits"] == frames  # every question found all its frames cached
    local = RynnEC.from_pretrained(CHECKPOINT, reuse=False)
    for r, w in windows.items():
        ref = local.answer(Request(QUESTION, frames=[Frame(f) for f in w], max_new_tokens=6))
        assert answers[r].token_ids == ref.token_ids, r
