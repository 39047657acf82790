"""The one least-recently-used mapping: the engine's reuse caches, the site server's frame store, the
remote client's record of uploaded frames and the spatial engine's plane and object caches.

Bounded in entries; reading through ``get_touch`` or ``touch`` and writing through ``put`` make an entry
the newest, and the oldest goes first. Not locked: each owner already holds its own lock around its
cache, and one lock per owner keeps the check-then-store sequences atomic.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(OrderedDict[K, V], Generic[K, V]):
    """At most ``capacity`` entries (0: nothing is stored); subclasses may bound more (bytes)."""

    def __init__(self, capacity: int) -> None:
        super().__init__()
        self.capacity = capacity

    def touch(self, key: K) -> bool:
        """Make ``key`` the newest entry; False when it is not held."""
        if key not in self:
            return False
        self.move_to_end(key)
        return True

    def get_touch(self, key: K) -> V | None:
        """The value of ``key`` (made the newest), or None when it is not held."""
        return self[key] if self.touch(key) else None

    def put(self, key: K, value: V) -> None:
        """Store ``key`` as the newest entry, then drop the oldest beyond ``capacity``."""
        if self.capacity <= 0:
            return
        if key in self:
            del self[key]
        OrderedDict.__setitem__(self, key, value)
        while len(self) > self.capacity:
            self.popitem(last=False)
