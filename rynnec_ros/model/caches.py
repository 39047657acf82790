"""The engine's reuse caches: entry-bounded LRUs that share one byte budget of tensor storage.

Counting entries bounds nothing for tensors whose size depends on the checkpoint and the frame count, so
the vision, prompt-prefix and SAM2 caches charge the storages they keep alive to one ``CacheBudget``
(the node's ``cache_mb``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable
from typing import Any

import numpy as np
import torch

from rynnec_ros.core.lru import LRU


def held_bytes(value: Any) -> int:
    """Bytes of the tensor storages ``value`` keeps alive (dataclasses, dicts, sequences walked).

    Storages, not ``nbytes``: a view holds its whole base buffer, and the tensors of one entry that
    share a storage count it once.
    """
    storages: dict[tuple[str, int], int] = {}
    todo = [value]
    while todo:
        v = todo.pop()
        if isinstance(v, torch.Tensor):
            st = v.untyped_storage()
            storages[(str(st.device), st.data_ptr())] = st.nbytes()
        elif isinstance(v, np.ndarray):
            base = v if v.base is None else v.base
            storages[("numpy", id(base))] = int(getattr(base, "nbytes", v.nbytes))
        elif dataclasses.is_dataclass(v) and not isinstance(v, type):
            todo.extend(getattr(v, f.name) for f in dataclasses.fields(v))
        elif isinstance(v, dict):
            todo.extend(v.values())
        elif isinstance(v, (list, tuple)):
            todo.extend(v)
    return sum(storages.values())


class CacheBudget:
    """A byte budget shared by several ``BudgetedLRU`` caches.

    The engine's caches hold tensors whose size depends on the checkpoint and the frame count (a
    RynnEC-2B window's prefix K/V alone is hundreds of MB), so counting entries bounds nothing; the
    node's memory bound is stated in bytes. Over budget, the least recently used entry of all member
    caches goes first, so a cache that is not being used gives way to one that is.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = int(max_bytes)
        self.used = 0
        self._caches: list[BudgetedLRU] = []
        self._clock = 0

    def tick(self) -> int:
        self._clock += 1
        return self._clock

    def join(self, cache: BudgetedLRU) -> None:
        self._caches.append(cache)

    def make_room(self) -> None:
        """Evict least recently used entries (across the member caches) until within the budget."""
        while self.used > self.max_bytes:
            oldest = min((c for c in self._caches if c), key=lambda c: c.oldest_tick(), default=None)
            if oldest is None:
                return
            oldest.popitem(last=False)


class BudgetedLRU(LRU[Any, Any]):
    """An ``LRU`` also bounded, through ``budget``, in bytes of tensor storage.

    Entries are stored as given; ``held_bytes`` of each is charged to the budget on ``put`` and
    returned on removal. An entry larger than the whole budget is not stored.
    """

    def __init__(self, capacity: int, budget: CacheBudget) -> None:
        super().__init__(capacity)
        self.budget = budget
        budget.join(self)
        self._meta: dict[Hashable, tuple[int, int]] = {}  # key -> (last use tick, bytes)
        self.nbytes = 0

    def oldest_tick(self) -> int:
        return self._meta[next(iter(self))][0]

    def touch(self, key: Hashable) -> bool:
        if not super().touch(key):
            return False
        self._meta[key] = (self.budget.tick(), self._meta[key][1])
        return True

    def put(self, key: Hashable, value: Any) -> None:
        size = held_bytes(value)
        if self.capacity <= 0 or size > self.budget.max_bytes:
            return
        if key in self:
            del self[key]
        self._meta[key] = (self.budget.tick(), size)  # charged before the base class may evict
        self.nbytes += size
        self.budget.used += size
        super().put(key, value)
        self.budget.make_room()

    def __setitem__(self, key: Hashable, value: Any) -> None:
        raise TypeError("use BudgetedLRU.put, which charges the entry's bytes to the budget")

    def __delitem__(self, key: Hashable) -> None:
        super().__delitem__(key)
        _, size = self._meta.pop(key)
        self.nbytes -= size
        self.budget.used -= size

    def popitem(self, last: bool = True) -> tuple[Hashable, Any]:
        key = next(reversed(self)) if last else next(iter(self))
        value = self[key]
        del self[key]
        return key, value

    def clear(self) -> None:
        for key in list(self):
            del self[key]
