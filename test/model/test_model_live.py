"""Live window (``precompute``) and cancellation: same results as a cold engine, stops where asked."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from rynnec_ros.core.types import Cancelled, Region
from rynnec_ros.model import RynnEC

from .conftest import request

QUESTION = "<video>\nWhat is the red object doing?"


@pytest.fixture(scope="module")
def frames(make_frames) -> list[np.ndarray]:
    return make_frames(4, 120, 160, seed=8)


@pytest.fixture(scope="module")
def cold(untied_ckpt: Path) -> RynnEC:
    return RynnEC.from_pretrained(untied_ckpt, reuse=False)


class StopAfter:
    """``should_stop`` that turns true on its ``n``-th call (counting every poll)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.calls = 0

    def __call__(self) -> bool:
        self.calls += 1
        return self.calls >= self.n


def _logits(
    engine: RynnEC, frames: list[np.ndarray], keys: list[int], question: str = QUESTION
) -> torch.Tensor:
    gen = engine.generate(engine.prepare(request(frames, question, keys=keys)), 4)
    return torch.stack(gen.step_logits)


def test_precomputed_window_answers_like_a_cold_one(
    untied_ckpt: Path, cold: RynnEC, frames: list[np.ndarray]
) -> None:
    live = RynnEC.from_pretrained(untied_ckpt)
    keys = [100, 101, 102, 103]
    status = live.precompute(request(frames, "", keys=keys).frames)
    assert (
        status.complete
        and status.frames_encoded == 4
        and status.prefix_tokens_computed == status.prefix_tokens
    )
    misses = live.stats["vision_misses"]
    ans = live.answer(request(frames, QUESTION, keys=keys, max_new_tokens=6))
    assert live.stats["vision_misses"] == misses and live.stats["prefix_hits"] == 1
    assert ans.token_ids == cold.answer(request(frames, QUESTION, max_new_tokens=6)).token_ids
    torch.testing.assert_close(_logits(live, frames, keys), _logits(cold, frames, keys), atol=0, rtol=0)
    again = live.precompute(request(frames, "", keys=keys).frames)  # nothing left to do
    assert again.complete and again.frames_encoded == 0 and again.prefix_tokens_computed == 0


def test_appended_frames_extend_the_stored_prefix(
    untied_ckpt: Path, cold: RynnEC, frames: list[np.ndarray]
) -> None:
    live = RynnEC.from_pretrained(untied_ckpt)
    first = live.precompute(request(frames[:3], "", keys=[0, 1, 2]).frames)
    grown = live.precompute(request(frames, "", keys=[0, 1, 2, 3]).frames)
    # the per-frame grid is the same for 3 and 4 frames of this size, so only frame 3 is new
    assert grown.frames_encoded == 1 and live.stats["prefix_partial"] == 1
    assert grown.prefix_tokens_computed == grown.prefix_tokens - first.prefix_tokens
    assert len(live._prefix_cache) == 1  # the 3-frame run was superseded, not kept beside it
    torch.testing.assert_close(
        _logits(live, frames, [0, 1, 2, 3]), _logits(cold, frames, [0, 1, 2, 3]), atol=0, rtol=0
    )


def test_block_window_precompute_extends_within_a_block_and_answers_like_a_cold_run(
    untied_ckpt: Path, cold: RynnEC, make_frames
) -> None:
    """The node's live window with blocks (``live_window_block_frames`` 2, 4 frames): frames one second
    apart into a buffer, the window precomputed after each. Within a block the stored prefix only gains
    the new frame's chunk; when the start moves the prefix is rebuilt; every window's logits equal a
    cold engine's on the same frames (atol 0)."""
    from rynnec_ros.core.buffer import BufferLimits, FrameBuffer
    from rynnec_ros.core.types import NS_PER_S, Frame

    stream = make_frames(7, 120, 160, seed=3)
    live = RynnEC.from_pretrained(untied_ckpt)
    buf = FrameBuffer(BufferLimits(max_frames=20, jump_back_s=1e6))
    log, sizes = [], []
    for i, rgb in enumerate(stream):
        buf.add(Frame(rgb, stamp_ns=i * NS_PER_S))
        window = buf.select(fps=1.0, max_frames=4, block_frames=2)
        status = live.precompute(window)
        log.append(([f.stamp_ns // NS_PER_S for f in window], status.frames_encoded,
                    status.prefix_tokens - status.prefix_tokens_computed))
        sizes.append(status.prefix_tokens)
        keys = [f.key for f in window]
        torch.testing.assert_close(_logits(live, [f.rgb for f in window], keys),
                                   _logits(cold, [f.rgb for f in window], keys), atol=0, rtol=0)
    # start = lowest multiple of 2 with newest - start < 4; one new frame encoded per call (the per-frame
    # grid of 120x160 does not depend on the frame count here); tokens reused: the previous window's
    # whole prefix while the window grows, only the text before the frames when the start moved
    text = live.prepare(request(stream[:1], "", keys=[0])).prefix_chunks[0].end
    assert log == [
        ([0], 1, 0),
        ([0, 1], 1, sizes[0]),
        ([0, 1, 2], 1, sizes[1]),
        ([0, 1, 2, 3], 1, sizes[2]),
        ([2, 3, 4], 1, text),
        ([2, 3, 4, 5], 1, sizes[4]),
        ([4, 5, 6], 1, text),
    ]


def test_resized_sizes_say_when_the_token_budget_binds(untied_ckpt: Path) -> None:
    """Hand-worked for patch 14, merge 2 (28-px blocks) and 16384 tokens: up to 12 845 056 px per window.
    640×480 rounds to 644×476 = 306 544 px, within 12 845 056 / 30 = 428 168: one size for 23..30 frames.
    1280×720 (921 600 px) shrinks by sqrt(921 600 / max_pixels): at 30 frames 476×868 px (floors of
    17.5 and 31.2 blocks), at 23 frames (558 480 px) 560×980 (20.02 and 35.6 blocks)."""
    eng = RynnEC.from_pretrained(untied_ckpt, reuse=False)
    assert eng.processor.max_tokens == 16384 and eng.processor.patch_size == 14 and eng.config.merge_size == 2
    assert eng.resized_sizes(480, 640, range(23, 31)) == {(476, 644)}
    assert eng.resized_sizes(720, 1280, [23, 30]) == {(560, 980), (476, 868)}


def test_interrupted_precompute_keeps_its_work(
    untied_ckpt: Path, cold: RynnEC, frames: list[np.ndarray]
) -> None:
    live = RynnEC.from_pretrained(untied_ckpt)
    keys = [7, 8, 9, 10]
    layers = len(live.model.model.layers)
    # polls: one per frame encoded (4), then one per layer of each prefix chunk; stop inside chunk 3
    stop = StopAfter(4 + 2 * layers + 2)
    part = live.precompute(request(frames, "", keys=keys).frames, should_stop=stop)
    assert not part.complete and part.frames_encoded == 4
    rest = live.precompute(request(frames, "", keys=keys).frames)
    assert rest.complete and 0 < rest.prefix_tokens_computed < rest.prefix_tokens
    torch.testing.assert_close(_logits(live, frames, keys), _logits(cold, frames, keys), atol=0, rtol=0)


def test_cancel_stops_inside_the_prefill_and_the_engine_recovers(
    untied_ckpt: Path, cold: RynnEC, frames: list[np.ndarray]
) -> None:
    eng = RynnEC.from_pretrained(untied_ckpt)
    stop = StopAfter(4 + 2)  # after the 4 frames, at the second layer of the first prefill chunk
    with pytest.raises(Cancelled):
        eng.answer(request(frames, QUESTION, max_new_tokens=6), should_stop=stop)
    assert stop.calls == 6
    assert eng.stats["vision_misses"] == 4  # the frames encoded before the cancel stay cached
    want = cold.answer(request(frames, QUESTION, max_new_tokens=6)).token_ids
    assert eng.answer(request(frames, QUESTION, max_new_tokens=6)).token_ids == want


def test_cancel_between_decode_tokens(untied_ckpt: Path, frames: list[np.ndarray]) -> None:
    eng = RynnEC.from_pretrained(untied_ckpt)
    force = eng.tokenizer.encode(" the the the the")
    prep = eng.prepare(request(frames, QUESTION))
    polls_prefill = len(prep.chunks) * len(eng.model.model.layers)
    stop = StopAfter(polls_prefill + 2)  # lets the first decode step through, stops before the second
    with pytest.raises(Cancelled):
        eng.generate(prep, len(force), force_ids=force, should_stop=stop)
    assert stop.calls == polls_prefill + 2


def test_segment_and_score_options_take_should_stop(untied_ckpt: Path, frames: list[np.ndarray]) -> None:
    eng = RynnEC.from_pretrained(untied_ckpt)
    with pytest.raises(Cancelled):
        eng.segment(request(frames, "Please segment the red square."), should_stop=lambda: True)
    with pytest.raises(Cancelled):
        region = Region(0, {0: np.ones((120, 160), bool)})
        eng.score_options(
            request(frames, "Is <object0> red?", [region], options=["yes"]), should_stop=lambda: True
        )


def test_the_captured_step_body_equals_the_eager_step(untied_ckpt: Path, frames: list[np.ndarray]) -> None:
    """What CUDA captures (bucketed span, position from a tensor, stale tail masked) run eagerly here."""
    from rynnec_ros.model.decoding import CudaGraphDecoder

    eng = RynnEC.from_pretrained(untied_ckpt, reuse=False)
    prep = eng.prepare(request(frames, QUESTION))
    with torch.inference_mode():
        cache, _ = eng._prefill(prep, 8, None)
        n = cache.length
        cache.k[:, :, n:] = 1e3  # stale positions after pos must not leak into attention
        cache.v[:, :, n:] = -1e3
        token = torch.tensor([5])
        step, seen = eng._step_fn(cache, int(eng.model.lm_head.weight.shape[0]))
        hidden, logits = step(token)
        assert cache.length == n + 1 and bool(seen[5])
        body = CudaGraphDecoder(eng.decoder, eng.model.lm_head, cache, seen.numel(), 1.0)
        span = body.span_for(n)
        assert n < span <= cache.capacity
        body.token.copy_(token)
        body.pos.fill_(n)
        body._body(span)
        torch.testing.assert_close(body.hidden, hidden, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(body.logits, logits, atol=1e-4, rtol=1e-4)
        assert bool(body.seen[5]) and int(body.seen.sum()) == 1
