"""FrameBuffer: ordering, bounds, sampling, time jumps and thread safety."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from rynnec_ros.core.buffer import (
    NS_PER_S,
    BufferLimits,
    FrameBuffer,
    frame_nbytes,
    sample_recent,
    sample_stamps,
)
from rynnec_ros.core.types import Frame


def _frame(t_s: float, h: int = 4, w: int = 6, value: int = 0) -> Frame:
    return Frame(rgb=np.full((h, w, 3), value, np.uint8), stamp_ns=round(t_s * NS_PER_S))


def test_buffer_sorts_out_of_order_frames_and_replaces_same_stamp() -> None:
    buf = FrameBuffer()
    for t in (0.3, 0.1, 0.2, 0.1):
        buf.add(_frame(t, value=int(t * 10)))
    assert buf.stamps() == [100_000_000, 200_000_000, 300_000_000]
    assert buf.nbytes == 3 * 4 * 6 * 3


def test_buffer_bounds_frames_bytes_and_age() -> None:
    one = frame_nbytes(_frame(0))
    buf = FrameBuffer(BufferLimits(max_frames=5, max_bytes=3 * one, max_age_s=0))
    for i in range(10):
        buf.add(_frame(i * 0.1))
    assert len(buf) == 3 and buf.nbytes == 3 * one
    assert buf.stamps()[0] == round(0.7 * NS_PER_S)
    aged = FrameBuffer(BufferLimits(max_age_s=1.0, jump_back_s=100))
    for i in range(30):
        aged.add(_frame(i * 0.1))
    assert aged.stamps()[0] == round(1.9 * NS_PER_S) and aged.evicted == 19


def test_oversized_frame_is_not_kept() -> None:
    buf = FrameBuffer(BufferLimits(max_bytes=10))
    buf.add(_frame(0))
    assert len(buf) == 0 and buf.nbytes == 0


def test_time_jump_back_resets_the_buffer_once_confirmed() -> None:
    buf = FrameBuffer(BufferLimits(jump_back_s=1.0, jump_confirm_frames=3))
    for i in range(20):
        assert not buf.add(_frame(i * 0.1))
    assert not buf.add(_frame(1.5))  # late but within the tolerance: sorted in
    # A looping bag restarts: the first two frames of the new loop are held back as possible outliers...
    assert not buf.add(_frame(0.0))
    assert not buf.add(_frame(0.1, value=9))
    assert len(buf) == 20
    # ...and the third consecutive one confirms the jump: only the new timeline remains.
    assert buf.add(_frame(0.2, value=9))
    assert buf.stamps() == [0, 100_000_000, 200_000_000] and buf.resets == 1


def test_one_badly_stamped_frame_costs_only_itself() -> None:
    """The issue's case: one stamp far ahead (or behind) among good ones must not wipe the window."""
    ahead = FrameBuffer(BufferLimits(jump_back_s=1.0, jump_forward_s=5.0))
    for i in range(49):
        ahead.add(_frame(i * 0.1))
    assert not ahead.add(_frame(1e6))  # held back, not a reset
    assert not ahead.add(_frame(4.9))  # the old timeline goes on: the outlier is discarded
    assert len(ahead) == 50 and ahead.resets == 0 and ahead.outliers == 1
    behind = FrameBuffer(BufferLimits(jump_back_s=1.0))
    for i in range(49):
        behind.add(_frame(100 + i * 0.1))
    assert not behind.add(_frame(1.0))
    assert not behind.add(_frame(104.9))
    assert len(behind) == 50 and behind.resets == 0 and 1 * NS_PER_S not in behind.stamps()
    # Forward jumps unbounded (the default): the outlier slips in, and the good frames that follow
    # contradict only it, so only it goes once they confirm their timeline.
    unbounded = FrameBuffer(BufferLimits(jump_back_s=1.0, jump_forward_s=0.0, max_age_s=0.0))
    for i in range(49):
        unbounded.add(_frame(i * 0.1))
    unbounded.add(_frame(1e6))
    for i in range(3):
        unbounded.add(_frame(4.9 + i * 0.1))
    assert unbounded.resets == 0 and len(unbounded) == 52 and max(unbounded.stamps()) < 10 * NS_PER_S


def test_time_jump_forward_resets_only_when_enabled() -> None:
    buf = FrameBuffer(BufferLimits(jump_forward_s=5.0, jump_confirm_frames=2))
    buf.add(_frame(0))
    assert not buf.add(_frame(4))
    assert not buf.add(_frame(100))
    assert buf.add(_frame(100.5))
    assert len(buf) == 2
    never = FrameBuffer(BufferLimits(jump_forward_s=0, max_age_s=0))
    never.add(_frame(0))
    assert not never.add(_frame(1e6)) and len(never) == 2
    # Forward jumps unbounded but an age bound: one frame that would age the window out is held back.
    aged = FrameBuffer(BufferLimits(jump_forward_s=0, max_age_s=300, jump_confirm_frames=2))
    aged.add(_frame(0))
    assert not aged.add(_frame(1e6)) and len(aged) == 1


def test_sampling_is_one_fps_and_thinned_uniformly_with_newest_kept() -> None:
    stamps = [int(i * NS_PER_S / 30) for i in range(30 * 100)]  # 100 s of 30 fps video
    picked = sample_stamps(stamps, fps=1.0, max_frames=30)
    assert len(picked) == 30
    assert picked[0] == 0 and picked[-1] == 99 * NS_PER_S
    assert all(p % NS_PER_S == 0 for p in picked)
    short = sample_stamps(stamps[:300], fps=1.0, max_frames=30)
    assert short == [i * NS_PER_S for i in range(10)]


def test_sampling_always_keeps_mask_frames() -> None:
    stamps = [int(i * NS_PER_S / 10) for i in range(600)]
    required = [stamps[5], stamps[333]]
    picked = sample_stamps(stamps, fps=1.0, max_frames=8, required=required)
    assert len(picked) == 8 and set(required) <= set(picked) and picked == sorted(picked)
    with pytest.raises(ValueError, match="exceed max_frames"):
        sample_stamps(stamps, 1.0, 1, required=required)


def test_select_window_stamps_and_errors() -> None:
    buf = FrameBuffer(BufferLimits(jump_back_s=100))
    with pytest.raises(ValueError, match="empty"):
        buf.select()
    for i in range(50):
        buf.add(_frame(i * 0.5))
    frames = buf.select(start_ns=5 * NS_PER_S, end_ns=10 * NS_PER_S, fps=1.0, max_frames=30)
    assert [f.stamp_ns for f in frames] == [i * NS_PER_S for i in range(5, 11)]
    exact = buf.select(stamps_ns=[NS_PER_S // 2, 2 * NS_PER_S + 3], tolerance_ns=10)
    assert [f.stamp_ns for f in exact] == [NS_PER_S // 2, 2 * NS_PER_S]
    with pytest.raises(ValueError, match="not in the buffer"):
        buf.select(stamps_ns=[123])
    with pytest.raises(ValueError, match="no buffered frame in the window"):
        buf.select(start_ns=1000 * NS_PER_S)
    with_mask = buf.select(fps=1.0, max_frames=3, required_ns=[int(7.5 * NS_PER_S)])
    assert int(7.5 * NS_PER_S) in [f.stamp_ns for f in with_mask] and len(with_mask) == 3


def _s(*seconds: float) -> list[int]:
    return [round(t * NS_PER_S) for t in seconds]


def test_recent_window_grows_and_its_start_moves_in_blocks() -> None:
    """Hand-worked: 2 fps frames at 0, 0.5, ... s; 1 fps samples are the first frame of each second
    (sample n = n s). max_frames 4, block 2: start = lowest multiple of 2 with newest - start < 4."""
    stamps = _s(*(i * 0.5 for i in range(20)))  # 0 .. 9.5 s: newest sample 9
    windows = []
    for last in (9.5, 10.0, 10.5, 11.0, 12.0, 13.0, 14.0):
        stamps += _s(last) if last > 9.5 else []
        windows.append(sample_recent(stamps, fps=1.0, max_frames=4, block=2))
    assert windows == [
        _s(6, 7, 8, 9),  # newest 9: start ceil(6/2)*2 = 6
        _s(8, 9, 10),  # newest 10: start ceil(7/2)*2 = 8
        _s(8, 9, 10),  # 10.5 s is sample 10's second frame: nothing changes
        _s(8, 9, 10, 11),  # grew: the prefix of [8, 9, 10] is kept
        _s(10, 11, 12),  # newest 12: start 10
        _s(10, 11, 12, 13),
        _s(12, 13, 14),
    ]
    # block 1: the newest 4 samples, a new start with every sample
    assert sample_recent(stamps, 1.0, 4, block=1) == _s(11, 12, 13, 14)
    # a block longer than max_frames acts as max_frames: start = multiple of 4 with 14 - start < 4
    assert sample_recent(stamps, 1.0, 4, block=9) == _s(12, 13, 14)


def test_recent_window_is_not_reshuffled_by_eviction() -> None:
    """Frames at 0.3, 0.8, ... s in a 20-frame buffer. The paper's sampling is anchored on the oldest
    frame, so evicting it changes every sampled frame; the recent window (samples = each second's
    first frame) is unchanged while the frames it holds stay buffered."""
    buf = FrameBuffer(BufferLimits(max_frames=20, jump_back_s=100))
    for i in range(20):
        buf.add(_frame(0.3 + 0.5 * i))  # 0.3 .. 9.8 s

    def picks(block: int) -> list[int]:
        return [f.stamp_ns for f in buf.select(fps=1.0, max_frames=4, block_frames=block)]

    # the 1 fps chain from 0.3 s gives 0.3, 1.3, ..., 9.3 (10 frames); linspace(0, 9, 4) -> 0, 3, 6, 9
    assert picks(0) == _s(0.3, 3.3, 6.3, 9.3)
    assert picks(2) == _s(6.3, 7.3, 8.3, 9.3)  # samples 6..9
    buf.add(_frame(10.3))  # evicts 0.3 s: the chain now starts at 0.8 and 10.3 is 0.5 s after 9.8
    assert picks(0) == _s(0.8, 3.8, 6.8, 9.8)
    assert picks(2) == _s(8.3, 9.3, 10.3)  # newest sample 10: start 8
    buf.add(_frame(10.8))  # evicts 0.8 s
    assert picks(2) == _s(8.3, 9.3, 10.3)


def test_recent_window_every_frame_counts_ordinals_across_eviction() -> None:
    """fps 0: every frame is a sample, numbered by its ordinal (frames evicted before it + position)."""
    buf = FrameBuffer(BufferLimits(max_frames=5, jump_back_s=100))
    seen = []
    for t in range(1, 9):  # 1 .. 8 s; from 6 s on the oldest is evicted each time
        buf.add(_frame(t))
        if t >= 5:
            seen.append([f.stamp_ns for f in buf.select(fps=0, max_frames=3, block_frames=2)])
    assert seen == [
        _s(3, 4, 5),  # ordinals 0..4, newest 4: start ceil(2/2)*2 = 2
        _s(5, 6),  # 1 s evicted: ordinals 1..5, newest 5: start ceil(3/2)*2 = 4
        _s(5, 6, 7),  # newest 6: start 4
        _s(7, 8),  # newest 7: start 6
    ]


def test_recent_window_periods_are_exact_at_epoch_stamps() -> None:
    """fps 0.5: 2 s periods counted from stamp 0, so at T = 1.7e9 s (even) frames T + 0..9 s pair up as
    (0, 1), (2, 3), ... and each pair's first is the sample; block 1 keeps the newest 3."""
    t = 1_700_000_000
    stamps = _s(*(t + i for i in range(10)))
    assert sample_recent(stamps, 0.5, 3, block=1) == _s(t + 4, t + 6, t + 8)
    assert sample_recent(stamps[1:], 0.5, 10, block=1) == _s(t + 1, t + 2, t + 4, t + 6, t + 8)


def test_recent_window_keeps_mask_frames_and_drops_the_oldest_others() -> None:
    stamps = _s(*range(10))
    assert sample_recent(stamps, 1.0, 4, 2, required=_s(2)) == _s(2, 7, 8, 9)  # [6, 7, 8, 9] + 2 - 6
    assert sample_recent(stamps, 1.0, 4, 2, required=_s(7)) == _s(6, 7, 8, 9)  # already in it
    assert sample_recent([], 1.0, 4, 2, required=_s(3)) == _s(3)
    with pytest.raises(ValueError, match="exceed max_frames"):
        sample_recent(stamps, 1.0, 1, 1, required=_s(1, 2))
    with pytest.raises(ValueError, match="block"):
        sample_recent(stamps, 1.0, 4, 0)
    buf = FrameBuffer()
    buf.add(_frame(1.0))
    with pytest.raises(ValueError, match="block_frames"):
        buf.select(block_frames=-1)


def test_update_attaches_depth_and_recounts_bytes() -> None:
    buf = FrameBuffer()
    buf.add(_frame(1.0))
    depth = np.ones((4, 6), np.float32)
    assert buf.update(NS_PER_S, depth=depth)
    assert not buf.update(2 * NS_PER_S, depth=depth)
    assert buf.nbytes == 4 * 6 * 3 + depth.nbytes
    assert buf.get(NS_PER_S + 5, tolerance_ns=10).depth is depth
    assert buf.get(NS_PER_S + 50, tolerance_ns=10) is None


def test_bad_limits_and_frames_are_rejected() -> None:
    with pytest.raises(ValueError, match="max_frames"):
        BufferLimits(max_frames=0)
    with pytest.raises(ValueError, match="jump_back_s"):
        BufferLimits(jump_back_s=float("nan"))
    with pytest.raises(ValueError, match="HxWx3 uint8"):
        FrameBuffer().add(Frame(rgb=np.zeros((4, 4), np.uint8)))


def test_concurrent_add_and_select_stay_consistent() -> None:
    buf = FrameBuffer(BufferLimits(max_frames=50, jump_back_s=1e6))
    errors: list[BaseException] = []

    def writer(offset: int) -> None:
        for i in range(500):
            buf.add(_frame(i * 0.01 + offset * 1e-4))

    def reader() -> None:
        for _ in range(300):
            try:
                frames = buf.select(fps=0, max_frames=30)
                stamps = [f.stamp_ns for f in frames]
                assert stamps == sorted(stamps)
            except ValueError:
                pass
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(3)]
    threads.append(threading.Thread(target=reader))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(buf) == 50 and buf.stamps() == sorted(buf.stamps())
    assert buf.nbytes == 50 * 4 * 6 * 3


def test_frame_keys_change_when_a_stamp_holds_new_pixels() -> None:
    buf = FrameBuffer(BufferLimits(max_frames=3, jump_back_s=1.0, jump_confirm_frames=1))
    buf.add(_frame(10, value=1))
    buf.add(_frame(11, value=2))
    a, b = buf.frames()
    assert [f.key for f in buf.frames()] == [a.key, b.key]  # stable while the frames stay buffered
    assert a.key is not None and a.key != b.key
    buf.add(_frame(10, value=3))  # re-sent stamp, other pixels
    replaced = buf.get(a.stamp_ns)
    assert replaced is not None and replaced.key not in (a.key, b.key)
    assert buf.get(b.stamp_ns).key == b.key
    # A time jump back and the same stamp again: a key never seen before.
    seen = {a.key, b.key, replaced.key}
    assert buf.add(_frame(5))
    buf.add(_frame(10, value=4))
    assert buf.get(10 * NS_PER_S).key not in seen


def test_readers_get_copies_so_a_request_can_annotate_its_frames() -> None:
    """A request attaches poses to the frames it holds while ingest keeps replacing buffered ones."""
    buf = FrameBuffer()
    buf.add(_frame(1.0))
    mine = buf.select(max_frames=1)[0]
    mine.world_T_camera = np.eye(4)
    assert buf.get(1 * NS_PER_S).world_T_camera is None
    buf.update(1 * NS_PER_S, depth=np.ones((4, 6), np.float32))
    assert mine.depth is None and buf.get(1 * NS_PER_S).depth is not None


def test_a_stream_that_stops_on_a_new_timeline_is_believed_after_a_quiet_while() -> None:
    """Two frames on a new timeline and then silence (a sim restarted and paused): no third frame comes
    to confirm, so once the old timeline has said nothing for jump_confirm_s they are taken."""
    now = [0.0]
    buf = FrameBuffer(BufferLimits(jump_back_s=1.0, jump_confirm_frames=3, jump_confirm_s=2.0),
                      clock=lambda: now[0])
    for i in range(5):
        buf.add(_frame(100.0 + i * 0.1))
    buf.add(_frame(1.0))
    buf.add(_frame(1.1))
    now[0] = 1.9
    assert len(buf) == 5
    now[0] = 2.0
    assert buf.stamps() == [1 * NS_PER_S, 1_100_000_000] and buf.resets == 1


def test_between_is_every_buffered_frame_in_the_closed_span() -> None:
    """``between(a, b)``: the frames stamped a..b inclusive, oldest first, copies (bounds by hand)."""
    buf = FrameBuffer()
    for s in (10, 20, 30, 40):
        buf.add(Frame(np.zeros((4, 4, 3), np.uint8), stamp_ns=s))
    assert [f.stamp_ns for f in buf.between(20, 40)] == [20, 30, 40]
    assert [f.stamp_ns for f in buf.between(11, 29)] == [20]
    assert buf.between(41, 50) == []
    got = buf.between(10, 10)[0]
    got.frame_id = "changed"
    assert buf.get(10).frame_id == ""
