"""The engine's caches are bounded in bytes of tensor storage, shared by the vision, prefix and SAM2 caches.

Expected sizes are worked out by hand from the tensors' shapes and dtypes (elements × bytes per element);
the per-frame feature size of the tiny checkpoint is derived from its config (patch 14, merge 2, vision
width 48, LLM width 64, float32), not read from the engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch

from rynnec_ros.core.types import Frame, Request
from rynnec_ros.model import RynnEC
from rynnec_ros.model.caches import BudgetedLRU, CacheBudget, held_bytes

FIXTURE_CKPT = Path(__file__).resolve().parents[1] / "data" / "rynnec-tiny" / "checkpoint"

# A 112×112 frame is 8×8 patches of 14 px (64 tokens) and 4×4 merged tokens (2×2 merge):
# raw 64×48 + merged 16×48 + projected 16×64 float32 values = (3072 + 768 + 1024) × 4 bytes.
TINY_112_FEATURE_BYTES = (64 * 48 + 16 * 48 + 16 * 64) * 4  # 19456


def f32(n: int) -> torch.Tensor:
    return torch.zeros(n, dtype=torch.float32)  # 4·n bytes


@dataclass
class Pair:
    k: torch.Tensor
    v: torch.Tensor


def test_held_bytes_counts_storages_once_and_whole() -> None:
    base = f32(1000)  # 4000 bytes
    assert held_bytes(base) == 4000
    assert held_bytes(base[:10]) == 4000  # a view keeps its whole base alive
    assert held_bytes(Pair(base, base[5:20])) == 4000  # one storage, counted once
    assert held_bytes(Pair(f32(10), torch.zeros(10, dtype=torch.float64))) == 40 + 80
    assert held_bytes({"a": (f32(2), [f32(3)])}) == 8 + 12
    assert held_bytes(np.zeros((10, 10), np.uint8)) == 100


def test_least_recently_used_goes_first_when_over_budget() -> None:
    lru = BudgetedLRU(capacity=100, budget=CacheBudget(9000))
    lru.put("a", f32(1000))  # 4000
    lru.put("b", f32(1000))  # 8000
    lru.put("c", f32(750))  # 11000 > 9000: a (oldest) goes -> 7000
    assert list(lru) == ["b", "c"] and lru.nbytes == 7000 == lru.budget.used
    lru.get_touch("b")  # c is now the least recently used
    lru.put("d", f32(500))  # 9000: fits exactly
    assert list(lru) == ["c", "b", "d"] and lru.budget.used == 9000
    lru.put("e", f32(250))  # 10000: c (3000) goes -> 7000
    assert list(lru) == ["b", "d", "e"] and lru.budget.used == 7000


def test_the_budget_is_shared_and_evicts_the_oldest_entry_of_any_cache() -> None:
    budget = CacheBudget(9000)
    vision, prefix = BudgetedLRU(100, budget), BudgetedLRU(100, budget)
    vision.put("x", f32(1000))  # 4000
    prefix.put("y", f32(1000))  # 8000
    vision.get_touch("x")  # y is now the oldest of both
    prefix.put("z", f32(1000))  # 12000: y goes -> 8000
    assert list(vision) == ["x"] and list(prefix) == ["z"]
    assert vision.nbytes == prefix.nbytes == 4000 and budget.used == 8000


def test_too_large_entries_are_not_stored_and_removal_returns_bytes() -> None:
    lru = BudgetedLRU(capacity=2, budget=CacheBudget(5000))
    lru.put("a", f32(1000))
    lru.put("huge", f32(2000))  # 8000 > the whole budget: not stored, nothing evicted
    assert list(lru) == ["a"] and lru.budget.used == 4000
    lru.put("a", f32(500))  # replacing an entry charges the new size only
    assert lru.budget.used == 2000
    lru.put("b", f32(10))
    lru.put("c", f32(10))  # the entry bound still holds: a goes
    assert list(lru) == ["b", "c"] and lru.budget.used == 80
    del lru["b"]
    assert lru.budget.used == 40
    lru.clear()
    assert not lru and lru.nbytes == 0 and lru.budget.used == 0


def test_direct_assignment_is_refused() -> None:
    lru = BudgetedLRU(4, CacheBudget(100))
    with pytest.raises(TypeError, match=r"LRU\.put"):
        lru["a"] = f32(1)


def _frames(n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    return [rng.integers(0, 256, (112, 112, 3), dtype=np.uint8) for _ in range(n)]


def _storage_bytes(engine: RynnEC) -> int:
    """What the three caches hold, summed here from the tensors' storages (independent of the LRU)."""
    total = 0
    for feats in engine._vision_cache.values():
        total += sum(t.untyped_storage().nbytes() for t in (feats.raw, feats.projected, feats.merged))
    for entry in engine._prefix_cache.values():
        total += entry.k.untyped_storage().nbytes() + entry.v.untyped_storage().nbytes()
    for sam in engine._sam2_cache.values():
        total += sum(t.untyped_storage().nbytes() for t in (sam.image_embed, *sam.high_res_feats))
    return total


def test_engine_vision_cache_keeps_what_fits_in_cache_mb() -> None:
    budget = 3 * TINY_112_FEATURE_BYTES + 100  # three frames' features, not four
    engine = RynnEC.from_pretrained(FIXTURE_CKPT, cache_mb=budget / (1 << 20))
    frames = _frames(6)
    for i, f in enumerate(frames):  # prepare() encodes (vision cache) without touching the prefix cache
        engine.prepare(Request("", [Frame(f, key=i)]))
        assert engine.cache_nbytes <= budget
    assert [k[0] for k in engine._vision_cache] == [("key", 3), ("key", 4), ("key", 5)]
    assert engine.cache_nbytes == 3 * TINY_112_FEATURE_BYTES == _storage_bytes(engine)
    engine.prepare(Request("", [Frame(frames[5], key=5)]))
    assert engine.stats["vision_hits"] == 1 and engine.stats["vision_misses"] == 6


def test_engine_caches_never_exceed_the_budget_over_a_stream() -> None:
    budget = 200_000  # a few frames' features and prefixes of the tiny checkpoint
    engine = RynnEC.from_pretrained(FIXTURE_CKPT, cache_mb=budget / (1 << 20))
    frames = [Frame(f, key=i) for i, f in enumerate(_frames(10))]
    seg = torch.zeros(engine.model.sam2.config.d_model)
    for i in range(len(frames) - 2):  # a sliding 3-frame live window, a question, masks of its newest frame
        window = frames[i : i + 3]
        engine.precompute(window)
        engine.answer(Request("What is here?", window, max_new_tokens=2))
        engine.masks_for(window[-1:], seg)
        assert 0 < engine.cache_nbytes <= budget
        assert engine.cache_nbytes == _storage_bytes(engine)
    assert engine.stats["vision_misses"] > len(engine._vision_cache)  # entries were evicted
    assert engine.stats["vision_hits"] > 0 and engine.stats["prefix_hits"] > 0  # and reuse still works


def test_zero_cache_mb_caches_nothing_and_negative_is_refused() -> None:
    engine = RynnEC.from_pretrained(FIXTURE_CKPT, cache_mb=0)
    engine.prepare(Request("", [Frame(_frames(1)[0], key=0)]))
    assert not engine._vision_cache and engine.cache_nbytes == 0
    with pytest.raises(ValueError, match="cache_mb"):
        RynnEC.from_pretrained(FIXTURE_CKPT, cache_mb=-1)
