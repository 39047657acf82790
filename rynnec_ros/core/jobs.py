"""The inference worker: one thread, one bounded queue, exactly one completion per accepted job.

ROS-free so its guarantees are tested without DDS. A caller submits a ``Job``; the queue either refuses
it at once with a reason (stopped, full) or promises that ``job.finish`` is called exactly once: with the
value ``job.work`` returned, or with an error message when the work raised, was cancelled, timed out
while queued or was still waiting when the worker stopped. Nothing here blocks the submitter, so a ROS
executor needs no thread per waiting request. Between jobs, an ``idle`` callback may use the engine (to
encode the live window ahead of questions); it is asked to stop as soon as a job arrives.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rynnec_ros.core.types import Cancelled, RequestError


@dataclass(eq=False)
class Job:
    """One request. ``work(job)`` runs on the worker thread; ``finish(job, value, error)`` exactly once.

    ``cancel_requested`` is polled by ``should_stop`` (the engine checks it between layers and tokens),
    so a caller's cancel or the node stopping ends a long inference early.
    """

    kind: str
    work: Callable[[Job], Any]
    finish: Callable[[Job, Any, str], None]
    timeout_s: float
    cancel_requested: Callable[[], bool] = lambda: False
    enqueued: float = field(default_factory=time.monotonic)
    started: float | None = None
    _stop_reason: str = ""
    _done: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def deadline(self) -> float:
        return self.enqueued + self.timeout_s

    def stop(self, reason: str) -> None:
        """Ask the running work to stop at its next check; ``reason`` becomes the error."""
        self._stop_reason = self._stop_reason or reason

    def should_stop(self) -> bool:
        if not self._stop_reason and time.monotonic() > self.deadline:
            self._stop_reason = (f"timed out after {self.timeout_s:.1f} s "
                                 "(its timeout_s or the node's request_timeout_s, incl. queue wait)")
        return bool(self._stop_reason) or self.cancel_requested()

    def complete(self, value: Any = None, error: str = "") -> bool:
        """Call ``finish`` unless that already happened; True when this call did it."""
        with self._lock:
            if self._done:
                return False
            self._done = True
        self.finish(self, value, error)
        return True


@dataclass
class QueueStats:
    accepted: int = 0
    rejected: int = 0
    answered: int = 0
    failed: int = 0
    cancelled: int = 0
    timed_out: int = 0
    last_inference_s: float = 0.0
    last_error: str = ""


class JobQueue:
    """Single worker thread over a FIFO whose capacity is read on every submit (a live parameter)."""

    def __init__(self, capacity: Callable[[], int], idle: Callable[[Callable[[], bool]], None] | None = None,
                 on_internal_error: Callable[[str], None] | None = None) -> None:
        self._capacity = capacity
        self._idle = idle
        self._on_internal_error = on_internal_error
        self._queue: deque[Job] = deque()
        self._cv = threading.Condition()
        self._running: Job | None = None
        self._thread: threading.Thread | None = None
        self._closed = "not activated yet"
        self.stats = QueueStats()

    # --------------------------------------------------------------------------------- control

    def start(self) -> None:
        """Start accepting jobs (a new worker thread; the previous one must have ended)."""
        if self._thread is not None and self._thread.is_alive():
            raise RuntimeError("the previous worker is still running its last job")
        with self._cv:
            self._closed = ""
        self._thread = threading.Thread(target=self._loop, name="rynnec-worker", daemon=True)
        self._thread.start()

    def stop(self, reason: str, join_s: float) -> bool:
        """Refuse new jobs, fail the waiting ones and stop the running one with ``reason``.

        Returns True when the worker thread ended within ``join_s`` (a running step that cannot be
        interrupted keeps it alive a little longer; its job is completed all the same).
        """
        with self._cv:
            self._closed = reason
            waiting = list(self._queue)
            self._queue.clear()
            if self._running is not None:
                self._running.stop(reason)
            self._cv.notify_all()
        for job in waiting:
            self._fail(job, f"rejected: {reason}")
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout=join_s)
        if thread.is_alive():
            return False
        self._thread = None
        return True

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def __len__(self) -> int:
        with self._cv:
            return len(self._queue)

    # ----------------------------------------------------------------------------------- jobs

    def submit(self, job: Job) -> str:
        """Queue ``job``; returns "" when accepted, else the reason it was refused (finish not called)."""
        with self._cv:
            if self._closed:
                reason = f"rejected: the node is not active ({self._closed})"
            elif len(self._queue) >= self._capacity():
                reason = (f"rejected: request queue full ({len(self._queue)} waiting, request_queue_size="
                          f"{self._capacity()}); retry later")
            else:
                self._queue.append(job)
                self.stats.accepted += 1
                self._cv.notify_all()
                return ""
        self.stats.rejected += 1
        return reason

    def expire(self) -> None:
        """Fail queued jobs whose deadline passed (called periodically: nothing else would answer them)."""
        now = time.monotonic()
        with self._cv:
            expired = [j for j in self._queue if j.deadline < now]
            for job in expired:
                self._queue.remove(job)
        for job in expired:
            self.stats.timed_out += 1
            self._fail(job, f"timed out after {job.timeout_s:.1f} s waiting in the queue (its timeout_s or "
                                 "the node's request_timeout_s)")

    def cancel_waiting(self, job: Job, reason: str) -> bool:
        """Fail ``job`` now if it is still queued (a cancelled goal); False when it already started."""
        with self._cv:
            if job not in self._queue:
                return False
            self._queue.remove(job)
        self.stats.cancelled += 1
        self._fail(job, reason)
        return True

    def _fail(self, job: Job, error: str) -> None:
        try:
            job.complete(None, error)
        except Exception as exc:  # a finish callback must not kill the worker or the caller
            self._report(f"completing a {job.kind} job failed: {type(exc).__name__}: {exc}")

    def _report(self, message: str) -> None:
        self.stats.last_error = message
        if self._on_internal_error is not None:
            self._on_internal_error(message)

    def _next(self) -> Job | None:
        with self._cv:
            while not self._queue and not self._closed:
                if self._idle is None:
                    self._cv.wait(0.5)
                    continue
                self._cv.release()
                try:
                    self._idle(lambda: bool(self._queue) or bool(self._closed))
                except Exception as exc:
                    self._report(f"idle work failed: {type(exc).__name__}: {exc}")
                finally:
                    self._cv.acquire()
                if not self._queue and not self._closed:
                    self._cv.wait(0.5)
            if self._closed:
                return None
            job = self._queue.popleft()
            self._running = job
            return job

    def _loop(self) -> None:
        while True:
            job = self._next()
            if job is None:
                return
            job.started = time.monotonic()
            value, error = None, ""
            try:
                if job.should_stop():
                    raise Cancelled()
                value = job.work(job)
                self.stats.answered += 1
            except Cancelled:
                self.stats.cancelled += 1
                error = job._stop_reason or "cancelled (the caller's cancel request)"
                if error.startswith("timed out"):
                    self.stats.timed_out += 1
            except RequestError as exc:  # what the client sent or asked for; not a bug
                self.stats.failed += 1
                error = str(exc)
            except Exception as exc:  # an engine bug must not take the worker down
                self.stats.failed += 1
                error = f"internal error: {type(exc).__name__}: {exc}"
                self._report(f"{job.kind} failed: {type(exc).__name__}: {exc}")
            finally:
                self.stats.last_inference_s = time.monotonic() - job.started
                with self._cv:
                    self._running = None
            if error:
                self._fail(job, error)
            else:
                try:
                    job.complete(value, "")
                except Exception as exc:
                    self._report(f"completing a {job.kind} job failed: {type(exc).__name__}: {exc}")
