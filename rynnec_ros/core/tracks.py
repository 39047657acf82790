"""Objects kept followed as frames arrive: the node's ``track_objects`` registry.

An answer that followed an object over its window (``Followed``, SAM 2's memory) can go on following it
on every newer frame. This registry holds those objects between answers, bounded two ways: at most
``max_objects`` (the newest kept) and their memory banks together at most ``budget_bytes`` (the oldest
dropped first). An object SAM 2 has lost on ``max_lost`` frames in a row is dropped: its memory then
only holds the empty masks it keeps predicting.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from .types import Followed, Frame, Predictor


@dataclass
class LiveTrack:
    """One followed object: who it is, its tracker memory, and the last frame it was followed onto."""

    object_id: int
    label: str
    followed: Followed
    stamp_ns: int
    shape: tuple[int, int]
    lost: int = 0


class LiveTracks:
    """Followed objects by object id, oldest started first."""

    def __init__(self, max_objects: int, budget_bytes: int, max_lost: int = 10) -> None:
        self.max_objects = max_objects
        self.budget_bytes = budget_bytes
        self.max_lost = max_lost
        self._tracks: OrderedDict[int, LiveTrack] = OrderedDict()
        self._lock = threading.Lock()
        self.dropped: list[tuple[int, str]] = []  # (object id, why), newest last; read by the node's log

    def __len__(self) -> int:
        return len(self._tracks)

    @property
    def held_bytes(self) -> int:
        with self._lock:
            return sum(t.followed.held_bytes for t in self._tracks.values())

    def ids(self) -> list[int]:
        with self._lock:
            return list(self._tracks)

    def start(self, object_id: int, label: str, followed: Followed, last: Frame) -> None:
        """Follow ``followed`` on from ``last`` (the newest frame it was followed over); an object with
        the same id is replaced."""
        with self._lock:
            self._tracks.pop(object_id, None)
            self._tracks[object_id] = LiveTrack(object_id, label, followed, last.stamp_ns,
                                                (int(last.rgb.shape[0]), int(last.rgb.shape[1])))
            self._bound()

    def step(self, predictor: Predictor, frame: Frame) -> list[tuple[LiveTrack, np.ndarray]]:
        """Follow every object onto ``frame`` when it is newer than the object's last frame and of its
        size: (track, mask) for each it was found on; the lost ones count a miss."""
        with self._lock:
            todo = [t for t in self._tracks.values()
                    if frame.stamp_ns > t.stamp_ns and tuple(frame.rgb.shape[:2]) == t.shape]
        found = []
        for t in todo:
            try:
                mask = predictor.follow(t.followed, frame)
            except ValueError as exc:
                self._drop(t.object_id, str(exc))
                continue
            t.stamp_ns = frame.stamp_ns
            if mask.any():
                t.lost = 0
                found.append((t, mask))
            else:
                t.lost += 1
                if t.lost >= self.max_lost:
                    self._drop(t.object_id, f"lost on {t.lost} frames in a row")
        with self._lock:
            self._bound()
        return found

    def clear(self) -> None:
        with self._lock:
            self._tracks.clear()

    def _drop(self, object_id: int, why: str) -> None:
        with self._lock:
            if self._tracks.pop(object_id, None) is not None:
                self.dropped.append((object_id, why))
                del self.dropped[:-32]

    def _bound(self) -> None:
        """Oldest first out until both bounds hold (called with the lock held)."""
        while len(self._tracks) > self.max_objects:
            oid, _ = self._tracks.popitem(last=False)
            self.dropped.append((oid, f"more than max_tracked_objects={self.max_objects}"))
        while self._tracks and sum(t.followed.held_bytes for t in self._tracks.values()) > self.budget_bytes:
            oid, t = self._tracks.popitem(last=False)
            self.dropped.append((oid, f"the tracks' memory passed {self.budget_bytes} bytes "
                                      f"({t.followed.held_bytes} held by this one)"))
        del self.dropped[:-32]
