"""Stamp-keyed frame buffer and the paper's frame sampling.

Camera callbacks add frames from one thread while the inference worker reads windows from another, so
every method takes one lock. Frames are kept sorted by stamp (bags and multi-camera drivers deliver out
of order), bounded by count, bytes and age, and a stamp far behind the newest one (a looping bag, a
restarted simulator) clears the buffer instead of mixing two timelines — but only on evidence: a frame
that jumps is held back until ``jump_confirm_frames`` consecutive frames agree on the new timeline, so one
badly stamped message from a misbehaving driver costs nothing but itself. Every insertion gets a fresh
``Frame.key``, so a stamp seen again after a reset or a re-sent frame never shares a feature-cache key
with the pixels it replaced. Readers get copies: the request that holds a frame can attach a pose to it
while ingest replaces or evicts the buffered one. Pure Python/numpy: no ROS here.
"""

from __future__ import annotations

import bisect
import itertools
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from rynnec_ros.core.types import NS_PER_S, Frame, RequestError

# Process-wide: buffers are recreated on configure while an engine may keep its caches.
_KEYS = itertools.count(1)


@dataclass(frozen=True)
class BufferLimits:
    """Memory and time bounds; every one is enforced on each ``add``.

    ``max_frames``/``max_bytes``: the oldest frames are evicted first. ``max_age_s``: frames older than
    the newest by more than this are evicted (0 = no age bound). ``jump_back_s``: a stamp older than the
    newest by more than this is a time jump (bag loop, clock reset) and resets the buffer.
    ``jump_forward_s``: a stamp newer than the newest by more than this also resets (0 = only when it is
    beyond ``max_age_s``, which would otherwise age the whole window out on one frame).
    ``jump_confirm_frames``: consecutive frames on the new timeline needed before a jump is believed;
    until then they are held back, and a frame on the old timeline discards them as outliers. A stream
    that simply stops on the new timeline is believed after ``jump_confirm_s`` seconds (wall clock)
    without a frame on the old one.
    """

    max_frames: int = 600
    max_bytes: int = 1 << 30
    max_age_s: float = 300.0
    jump_back_s: float = 1.0
    jump_forward_s: float = 0.0
    jump_confirm_frames: int = 3
    jump_confirm_s: float = 2.0

    def __post_init__(self) -> None:
        if self.max_frames < 1:
            raise ValueError(f"max_frames must be >= 1, got {self.max_frames}")
        if self.max_bytes < 1:
            raise ValueError(f"max_bytes must be >= 1, got {self.max_bytes}")
        if self.jump_confirm_frames < 1:
            raise ValueError(f"jump_confirm_frames must be >= 1, got {self.jump_confirm_frames}")
        for name in ("max_age_s", "jump_back_s", "jump_forward_s"):
            value = getattr(self, name)
            if not np.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {value}")


def frame_nbytes(frame: Frame) -> int:
    """Bytes held by a frame's arrays (what the byte bound counts)."""
    total = frame.rgb.nbytes
    for extra in (frame.depth, frame.K, frame.world_T_camera):
        if extra is not None:
            total += extra.nbytes
    return total


class FrameBuffer:
    """Thread-safe, sorted, bounded store of frames keyed by their stamp in nanoseconds."""

    def __init__(self, limits: BufferLimits | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._limits = limits or BufferLimits()
        self._lock = threading.Lock()
        self._stamps: list[int] = []
        self._frames: dict[int, Frame] = {}
        self._serial_of: dict[int, int] = {}
        self._suspects: list[Frame] = []
        self._suspect_since = 0.0
        self._clock = clock
        self._bytes = 0
        self._passed = 0  # frames evicted from the oldest end since the last reset: the oldest one's ordinal
        self.resets = 0
        self.evicted = 0
        self.outliers = 0  # frames dropped as one-off bad stamps

    @property
    def limits(self) -> BufferLimits:
        return self._limits

    def set_limits(self, limits: BufferLimits) -> None:
        """Apply new bounds now (parameter changes), evicting what no longer fits."""
        with self._lock:
            self._limits = limits
            self._evict()

    def add(self, frame: Frame) -> bool:
        """Insert ``frame``; returns True when a confirmed time jump reset the buffer first.

        A frame with the stamp of a buffered one replaces it (a re-sent frame). A frame that jumps away
        from the newest buffered stamp is held back (see ``BufferLimits.jump_confirm_frames``): when
        enough consecutive frames agree, the buffer restarts on the new timeline — unless the frames they
        contradict are fewer than that and arrived last (an outlier stamped far ahead that slipped in
        because forward jumps are not bounded), in which case only those are dropped.
        """
        if frame.rgb.ndim != 3 or frame.rgb.shape[2] != 3 or frame.rgb.dtype != np.uint8:
            raise ValueError(f"frame.rgb must be HxWx3 uint8, got {frame.rgb.shape} {frame.rgb.dtype}")
        frame = replace(frame, stamp_ns=int(frame.stamp_ns), key=None)
        with self._lock:
            resets = self.resets
            self._settle()
            if not self._stamps or not self._is_jump(frame.stamp_ns, self._stamps[-1]):
                self.outliers += len(self._suspects)
                self._suspects = []
                self._insert(frame)
            elif self._suspects and not self._is_jump(frame.stamp_ns, self._suspects[-1].stamp_ns):
                self._suspects.append(frame)
            else:
                self.outliers += len(self._suspects)
                self._suspects = [frame]
                self._suspect_since = self._clock()
            if len(self._suspects) >= self._limits.jump_confirm_frames:
                self._confirm()
            return self.resets != resets

    def _settle(self) -> None:
        """Believe held-back frames once the old timeline has been silent for ``jump_confirm_s``."""
        if self._suspects and self._clock() - self._suspect_since >= self._limits.jump_confirm_s:
            self._confirm()

    def _confirm(self) -> None:
        suspects, self._suspects = self._suspects, []
        newest = max(f.stamp_ns for f in suspects)
        above = [s for s in self._stamps if s > newest]
        below = [s for s in self._stamps if s <= newest]
        contradicted_last = bool(above) and (
            not below or min(self._serial_of[s] for s in above) > max(self._serial_of[s] for s in below)
        )
        if len(above) < self._limits.jump_confirm_frames and contradicted_last:
            self.outliers += len(above)
            for s in above:
                self._stamps.remove(s)
                self._drop(s)
        elif self._stamps:
            self._clear()
            self.resets += 1
        for f in suspects:
            self._insert(f)

    def _insert(self, frame: Frame) -> None:
        stamp = frame.stamp_ns
        old = self._frames.get(stamp)
        if old is not None:
            self._bytes -= frame_nbytes(old)
        else:
            bisect.insort(self._stamps, stamp)
        frame.key = next(_KEYS)
        self._frames[stamp] = frame
        self._serial_of[stamp] = frame.key
        self._bytes += frame_nbytes(frame)
        self._evict()

    def _is_jump(self, stamp: int, newest: int) -> bool:
        if newest - stamp > self._limits.jump_back_s * NS_PER_S:
            return True
        # Unbounded forward jumps are still held back when taking them would age out the whole window.
        forward = self._limits.jump_forward_s or self._limits.max_age_s
        return forward > 0 and stamp - newest > forward * NS_PER_S

    def _evict(self) -> None:
        lim = self._limits
        newest = self._stamps[-1] if self._stamps else 0
        min_stamp = newest - int(lim.max_age_s * NS_PER_S) if lim.max_age_s > 0 else None
        while self._stamps and (
            len(self._stamps) > lim.max_frames
            or (self._bytes > lim.max_bytes and len(self._stamps) > 1)
            or (min_stamp is not None and self._stamps[0] < min_stamp)
        ):
            self._drop(self._stamps.pop(0))
            self._passed += 1
        if self._bytes > lim.max_bytes and self._stamps:
            # A single frame larger than the whole budget is not kept either.
            self._drop(self._stamps.pop())

    def _drop(self, stamp: int) -> None:
        self._bytes -= frame_nbytes(self._frames.pop(stamp))
        del self._serial_of[stamp]
        self.evicted += 1

    def clear(self) -> None:
        with self._lock:
            self._clear()

    def _clear(self) -> None:
        self._suspects = []
        self._passed = 0
        self._stamps.clear()
        self._frames.clear()
        self._serial_of.clear()
        self._bytes = 0

    def __len__(self) -> int:
        with self._lock:
            self._settle()
            return len(self._stamps)

    @property
    def nbytes(self) -> int:
        with self._lock:
            return self._bytes

    def stamps(self) -> list[int]:
        with self._lock:
            self._settle()
            return list(self._stamps)

    def frames(self) -> list[Frame]:
        """Copies of all buffered frames, oldest first (arrays shared, never written)."""
        with self._lock:
            self._settle()
            return [replace(self._frames[s]) for s in self._stamps]

    def between(self, start_ns: int, end_ns: int) -> list[Frame]:
        """Copies of the buffered frames stamped in [start_ns, end_ns], oldest first."""
        with self._lock:
            self._settle()
            lo = bisect.bisect_left(self._stamps, int(start_ns))
            hi = bisect.bisect_right(self._stamps, int(end_ns))
            return [replace(self._frames[s]) for s in self._stamps[lo:hi]]

    def newest(self) -> Frame | None:
        with self._lock:
            self._settle()
            return replace(self._frames[self._stamps[-1]]) if self._stamps else None

    def get(self, stamp_ns: int, tolerance_ns: int = 0) -> Frame | None:
        """A copy of the buffered frame nearest to ``stamp_ns`` within ``tolerance_ns``, else None."""
        with self._lock:
            self._settle()
            key = self._nearest(int(stamp_ns), int(tolerance_ns))
            return None if key is None else replace(self._frames[key])

    def update(self, stamp_ns: int, **fields: object) -> bool:
        """Attach data to a buffered frame (depth arriving late); False when no frame has that exact stamp.

        The stored frame is replaced, never written, so copies already handed out stay as they were.
        """
        with self._lock:
            frame = self._frames.get(int(stamp_ns))
            if frame is None:
                return False
            new = replace(frame, **fields)  # type: ignore[arg-type]
            self._bytes += frame_nbytes(new) - frame_nbytes(frame)
            self._frames[frame.stamp_ns] = new
            self._evict()
            return True

    def _nearest(self, stamp: int, tolerance: int) -> int | None:
        i = bisect.bisect_left(self._stamps, stamp)
        best = None
        for j in (i - 1, i):
            if 0 <= j < len(self._stamps):
                d = abs(self._stamps[j] - stamp)
                if d <= tolerance and (best is None or d < abs(best - stamp)):
                    best = self._stamps[j]
        return best

    def select(
        self,
        stamps_ns: Sequence[int] | None = None,
        start_ns: int | None = None,
        end_ns: int | None = None,
        fps: float = 1.0,
        max_frames: int = 30,
        required_ns: Iterable[int] = (),
        tolerance_ns: int = 0,
        block_frames: int = 0,
    ) -> list[Frame]:
        """Frames for one query, oldest first.

        With ``stamps_ns`` exactly those frames (each must be buffered). Otherwise the frames in
        [start_ns, end_ns] sampled at ``fps`` and, when more than ``max_frames`` remain, thinned uniformly
        (the way RynnEC loads videos: 1 fps, then ``linspace``), or with ``block_frames`` > 0 the recent
        window of ``sample_recent``. Frames in ``required_ns`` (the ones that carry a query's masks) are
        always kept. Raises ValueError naming what is missing.
        """
        if max_frames < 1:
            raise RequestError(f"max_frames must be >= 1, got {max_frames}")
        if block_frames < 0:
            raise RequestError(f"block_frames must be >= 0, got {block_frames}")
        if not np.isfinite(fps) or fps < 0:
            raise RequestError(f"fps must be a finite number >= 0, got {fps}")
        with self._lock:
            self._settle()
            if not self._stamps:
                raise RequestError("the frame buffer is empty: no camera frames received yet")
            required = self._resolve(required_ns, tolerance_ns, "mask")
            if stamps_ns:
                chosen = sorted(set(self._resolve(stamps_ns, tolerance_ns, "requested")) | set(required))
                if len(chosen) > max_frames:
                    raise RequestError(f"{len(chosen)} frames requested, more than max_frames={max_frames}")
                return [replace(self._frames[s]) for s in chosen]
            lo = bisect.bisect_left(self._stamps, start_ns) if start_ns else 0
            hi = bisect.bisect_right(self._stamps, end_ns) if end_ns else len(self._stamps)
            window = self._stamps[lo:hi]
            first_ordinal = self._passed + lo
            frames = {s: self._frames[s] for s in window}
            frames.update({s: self._frames[s] for s in required})
        if not window and not required:
            raise RequestError(
                f"no buffered frame in the window [{start_ns}, {end_ns}] ns "
                f"(buffer holds {self._describe_range()})"
            )
        if len(set(required)) > max_frames:
            raise RequestError(f"masks are on {len(set(required))} frames, more than max_frames={max_frames}")
        if block_frames:
            chosen = sample_recent(window, fps, max_frames, block_frames, first_ordinal, required)
        else:
            chosen = sample_stamps(window, fps, max_frames, required)
        return [replace(frames[s]) for s in chosen]

    def _resolve(self, stamps: Iterable[int], tolerance_ns: int, what: str) -> list[int]:
        out = []
        for s in stamps:
            key = self._nearest(int(s), int(tolerance_ns))
            if key is None:
                raise RequestError(
                    f"{what} frame stamp {int(s)} ns is not in the buffer "
                    f"(holds {len(self._stamps)} frames, {self._stamps[0]}..{self._stamps[-1]} ns)"
                )
            out.append(key)
        return out

    def _describe_range(self) -> str:
        with self._lock:
            if not self._stamps:
                return "no frames"
            return f"{len(self._stamps)} frames, {self._stamps[0]}..{self._stamps[-1]} ns"


def sample_stamps(
    stamps: Sequence[int], fps: float, max_frames: int, required: Iterable[int] = ()
) -> list[int]:
    """Sorted stamps picked at ``fps`` (0 = every frame), at most ``max_frames``, always incl. ``required``.

    The 1 fps pass keeps a frame when at least 1/fps has passed since the last kept one (the first frame
    is kept), like ffmpeg's ``fps`` filter rounding down; a uniform ``linspace`` thinning then keeps
    ``max_frames - len(required)`` of the rest, always including the newest so answers see the present.
    """
    req = sorted(set(int(s) for s in required))
    if len(req) > max_frames:
        raise RequestError(f"{len(req)} required frames exceed max_frames={max_frames}")
    ordered = sorted(set(int(s) for s in stamps))
    if fps > 0 and ordered:
        period = NS_PER_S / fps
        kept = [ordered[0]]
        for s in ordered[1:]:
            if s - kept[-1] >= period - 1:
                kept.append(s)
        ordered = kept
    req_set = set(req)
    rest = [s for s in ordered if s not in req_set]
    room = max_frames - len(req)
    if len(rest) > room:
        if room <= 0:
            rest = []
        elif room == 1:
            rest = [rest[-1]]
        else:
            idx = np.linspace(0, len(rest) - 1, room).round().astype(int)
            rest = [rest[i] for i in sorted(set(idx.tolist()))]
    return sorted(req_set | set(rest))


def sample_recent(
    stamps: Sequence[int],
    fps: float,
    max_frames: int,
    block: int,
    first_ordinal: int = 0,
    required: Iterable[int] = (),
) -> list[int]:
    """The live window: the newest sampled frames, whose first one moves only every ``block`` samples.

    Each sample period of 1/``fps`` seconds counted from stamp 0 (not from the oldest buffered frame)
    contributes its first frame; with ``fps`` 0 every frame is a sample, numbered from ``first_ordinal``
    (the oldest frame's ordinal: how many frames were evicted before it). So a frame's sample number
    never changes while it is buffered, and evicting the oldest frame never reshuffles the rest
    (``sample_stamps`` does both: its 1 fps pass is anchored on the oldest frame, its ``linspace`` on
    the count). The window holds the samples numbered from ``start`` to the newest one ``n``, where
    ``start`` is the lowest multiple of ``k = min(block, max_frames)`` with ``n - start < max_frames``:
    it grows by one sample per period, and every ``k`` periods its start moves on by ``k``. A steady
    stream therefore gives between ``max_frames - k + 1`` and ``max_frames`` frames, always including
    the newest sample; a window that only grew keeps its prompt prefix, so the engine rebuilds the
    prefix once per ``k`` samples instead of once per frame. Frames in ``required`` are added, and the
    oldest other frames dropped while more than ``max_frames`` remain.
    """
    if block < 1:
        raise ValueError(f"block must be >= 1, got {block}")
    req = sorted(set(int(s) for s in required))
    if len(req) > max_frames:
        raise RequestError(f"{len(req)} required frames exceed max_frames={max_frames}")
    ordered = sorted(set(int(s) for s in stamps))
    samples: dict[int, int] = {}  # sample number -> stamp
    if fps > 0:
        num, den = float(fps).as_integer_ratio()  # exact: the sample number is floor(s · fps / 1e9)
        for s in ordered:
            samples.setdefault(s * num // (den * NS_PER_S), s)
    else:
        samples = {first_ordinal + i: s for i, s in enumerate(ordered)}
    chosen = set(req)
    if samples:
        newest = max(samples)
        k = min(block, max_frames)
        start = -(-(newest - max_frames + 1) // k) * k
        chosen.update(s for n, s in samples.items() if n >= start)
    out = sorted(chosen)
    req_set = set(req)
    while len(out) > max_frames:
        out.remove(next(s for s in out if s not in req_set))
    return out
