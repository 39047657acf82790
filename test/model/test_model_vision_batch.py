"""The vision tower over a batch of same-size frames equals the tower frame by frame.

The frame-by-frame path is the one checked against upstream's reference outputs (test_model_parity);
batching only stacks frames along a leading axis, so each frame's attention still sees only its own
patches. Expected values therefore come from that path. The tolerance allows for a BLAS kernel that
blocks a taller matrix product differently (float32 reduction order); on the CPU this was written on
the two are bit-identical.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from .conftest import CHECKPOINT


@pytest.fixture(scope="module")
def engine():
    from rynnec_ros.model.engine import RynnEC

    return RynnEC.from_pretrained(CHECKPOINT, reuse=False)


@pytest.mark.parametrize("size", [(168, 224), (240, 320), (97, 131)])
def test_batched_tower_equals_frame_by_frame(engine, size: tuple[int, int]) -> None:
    from rynnec_ros.model.processing import preprocess_frame

    rng = np.random.default_rng(size[0])
    merge = engine.config.merge_size
    frames = [rng.integers(0, 256, (*size, 3), dtype=np.uint8) for _ in range(3)]
    fis = [preprocess_frame(f, len(frames), engine.processor, merge) for f in frames]
    gh, gw = fis[0].grid_h, fis[0].grid_w
    tower = engine.model.vision_tower
    with torch.inference_mode():
        pvs = [torch.from_numpy(fi.pixel_values) for fi in fis]
        one = [tower(pv, gh, gw, merge) for pv in pvs]
        many = tower(torch.stack(pvs), gh, gw, merge)
    assert many.shape == (3, *one[0].shape)
    for i, ref in enumerate(one):
        scale = float(ref.abs().max())
        torch.testing.assert_close(many[i], ref, rtol=0, atol=1e-5 * scale)
    # frames differ, so a batch that mixed frames' patches would not match every frame
    assert not torch.equal(one[0], one[1])


def test_encode_windows_fills_the_cache_for_each_question(engine) -> None:
    """Two robots' windows encoded together: each question then finds all its frames cached and
    answers exactly as an engine that encoded them itself (frame by frame, within its own question)."""
    from rynnec_ros.core.types import Frame, Request
    from rynnec_ros.model.engine import RynnEC

    rng = np.random.default_rng(7)
    windows = [
        [Frame(rng.integers(0, 256, (168, 224, 3), dtype=np.uint8), key=("r0", j)) for j in range(3)],
        [Frame(rng.integers(0, 256, (120, 160, 3), dtype=np.uint8), key=("r1", j)) for j in range(2)],
    ]
    shared = RynnEC.from_pretrained(CHECKPOINT)
    assert shared.encode_windows(windows) == 5
    assert shared.encode_windows(windows) == 0  # all cached now
    for w in windows:
        before = dict(shared.stats)
        got = shared.answer(Request("What is in the video?", frames=w, max_new_tokens=6))
        assert shared.stats["vision_hits"] - before["vision_hits"] == len(w)
        assert shared.stats["vision_misses"] == before["vision_misses"]
        ref = engine.answer(Request("What is in the video?", frames=w, max_new_tokens=6))
        assert got.token_ids == ref.token_ids

