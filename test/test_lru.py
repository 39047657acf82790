"""core/lru.py: the least-recently-used order and bound, worked by hand (the standard LRU definition:
a read or write makes an entry the newest; over capacity the oldest goes)."""

from __future__ import annotations

from rynnec_ros.core.lru import LRU


def test_reads_and_writes_make_an_entry_newest_and_the_oldest_goes_first() -> None:
    lru: LRU[str, int] = LRU(3)
    for k, v in (("a", 1), ("b", 2), ("c", 3)):
        lru.put(k, v)
    assert lru.get_touch("a") == 1  # order now b, c, a
    lru.put("d", 4)  # b goes
    assert list(lru) == ["c", "a", "d"]
    assert lru.touch("c") and not lru.touch("b")  # order a, d, c
    lru.put("a", 10)  # rewriting makes it newest: d, c, a
    lru.put("e", 5)  # d goes
    assert list(lru.items()) == [("c", 3), ("a", 10), ("e", 5)]
    assert lru.get_touch("missing") is None


def test_capacity_zero_stores_nothing() -> None:
    lru: LRU[str, int] = LRU(0)
    lru.put("a", 1)
    assert len(lru) == 0 and lru.get_touch("a") is None
