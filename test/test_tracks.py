"""``core.tracks.LiveTracks``: which objects are followed onto a new frame, and which are dropped.

The predictor is a test double isolating the registry (SAM 2's own following is tested against Meta's
package in test/model/test_tracking.py): it returns a mask chosen per object and counts its calls. The
expected orders and counts below follow the documented rules, worked by hand.
"""

from __future__ import annotations

import numpy as np

from rynnec_ros.core.tracks import LiveTracks
from rynnec_ros.core.types import Followed, Frame


class _Follower:
    def __init__(self, found: dict[int, bool], grow: int = 0) -> None:
        self.found = found  # object id (held_bytes tag) -> found on the next frame
        self.grow = grow
        self.calls: list[tuple[int, int]] = []

    def follow(self, followed: Followed, frame: Frame) -> np.ndarray:
        oid = int(followed.masks[0][0, 0])
        self.calls.append((oid, frame.stamp_ns))
        followed.held_bytes += self.grow
        if oid < 0:
            raise ValueError("a frame of another size")
        return np.full(frame.rgb.shape[:2], self.found.get(oid, True))


def _followed(oid: int, held: int = 100) -> Followed:
    return Followed({0: np.full((2, 2), oid)}, held)


def _frame(stamp: int, size: int = 4) -> Frame:
    return Frame(np.zeros((size, size, 3), np.uint8), stamp_ns=stamp)


def test_only_newer_frames_of_the_same_size_are_followed() -> None:
    tracks = LiveTracks(max_objects=4, budget_bytes=10_000)
    tracks.start(1, "cup", _followed(1), _frame(100))
    tracks.start(2, "mug", _followed(2), _frame(200))
    f = _Follower({})
    assert [t.object_id for t, _ in tracks.step(f, _frame(150))] == [1]  # 150 is older than object 2's 200
    assert [t.object_id for t, _ in tracks.step(f, _frame(150))] == []  # nothing newer for either now
    assert tracks.step(f, _frame(300, size=8)) == []  # another size: no one's next frame
    assert [t.object_id for t, _ in tracks.step(f, _frame(300))] == [1, 2]
    assert f.calls == [(1, 150), (1, 300), (2, 300)]


def test_the_same_id_replaces_and_the_oldest_goes_beyond_max_objects() -> None:
    tracks = LiveTracks(max_objects=2, budget_bytes=10_000)
    for oid in (1, 2):
        tracks.start(oid, "", _followed(oid), _frame(100))
    tracks.start(1, "again", _followed(1), _frame(100))  # 1 is now the newest
    tracks.start(3, "", _followed(3), _frame(100))
    assert tracks.ids() == [1, 3]
    assert tracks.dropped == [(2, "more than max_tracked_objects=2")]


def test_memory_over_the_budget_drops_the_oldest() -> None:
    tracks = LiveTracks(max_objects=8, budget_bytes=250)
    tracks.start(1, "", _followed(1, 100), _frame(100))
    tracks.start(2, "", _followed(2, 100), _frame(100))
    assert tracks.held_bytes == 200
    tracks.step(_Follower({}, grow=30), _frame(200))  # 130 + 130 = 260 > 250: object 1 goes
    assert tracks.ids() == [2] and tracks.held_bytes == 130
    assert tracks.dropped[0][0] == 1 and "passed 250 bytes" in tracks.dropped[0][1]


def test_an_object_lost_on_max_lost_frames_in_a_row_is_dropped() -> None:
    tracks = LiveTracks(max_objects=4, budget_bytes=10_000, max_lost=3)
    tracks.start(1, "", _followed(1), _frame(0))
    tracks.start(2, "", _followed(2), _frame(0))
    f = _Follower({1: False, 2: True})
    for stamp in (1, 2):
        assert [t.object_id for t, _ in tracks.step(f, _frame(stamp))] == [2]
    f.found[1] = True  # found again: the count starts over
    tracks.step(f, _frame(3))
    f.found[1] = False
    for stamp in (4, 5):
        tracks.step(f, _frame(stamp))
    assert tracks.ids() == [1, 2]  # two misses since it was last found
    tracks.step(f, _frame(6))
    assert tracks.ids() == [2] and tracks.dropped == [(1, "lost on 3 frames in a row")]


def test_a_follow_refused_drops_that_object_only() -> None:
    tracks = LiveTracks(max_objects=4, budget_bytes=10_000)
    tracks.start(-1, "", _followed(-1), _frame(0))
    tracks.start(2, "", _followed(2), _frame(0))
    assert [t.object_id for t, _ in tracks.step(_Follower({}), _frame(1))] == [2]
    assert tracks.ids() == [2] and tracks.dropped == [(-1, "a frame of another size")]
