"""JobQueue: every accepted job is completed exactly once, whatever happens to it (ROS-free).

The contract comes from issue 11 ("every accepted request gets exactly one answer", "a request we cannot
take must be rejected, not dropped"): these tests count completions per job rather than trusting a flag.
"""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest

from rynnec_ros.core.jobs import Job, JobQueue
from rynnec_ros.core.types import Cancelled, RequestError


class Recorder:
    def __init__(self) -> None:
        self.calls: Counter[int] = Counter()
        self.results: dict[int, tuple[object, str]] = {}
        self.lock = threading.Lock()

    def finish(self, job: Job, value: object, error: str) -> None:
        with self.lock:
            self.calls[id(job)] += 1
            self.results[id(job)] = (value, error)


def _job(rec: Recorder, work=lambda job: "ok", timeout_s: float = 30.0, **kw) -> Job:
    return Job("ask", work, rec.finish, timeout_s=timeout_s, **kw)


def _wait(cond, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not cond():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_flood_from_many_threads_every_job_answered_once_or_rejected() -> None:
    rec = Recorder()
    gate = threading.Event()
    q = JobQueue(lambda: 4)
    q.start()
    blocker = _job(rec, work=lambda job: gate.wait(10) and "first")
    assert q.submit(blocker) == ""
    _wait(lambda: q._running is blocker)
    jobs: list[Job] = [_job(rec) for _ in range(200)]
    refused: dict[int, str] = {}

    def send(chunk: list[Job]) -> None:
        for j in chunk:
            reason = q.submit(j)
            if reason:
                refused[id(j)] = reason

    threads = [threading.Thread(target=send, args=(jobs[i::8],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    gate.set()
    accepted = [j for j in jobs if id(j) not in refused]
    assert len(accepted) == 4  # the queue holds 4 while the first runs
    assert all("request queue full" in r for r in refused.values())
    _wait(lambda: sum(rec.calls.values()) == 5)
    assert all(rec.calls[id(j)] == 1 for j in [blocker, *accepted])
    assert all(rec.calls[id(j)] == 0 for j in jobs if id(j) in refused)  # the submitter answers those
    assert q.stop("done", 5)


def test_stop_fails_waiting_and_running_jobs_with_the_reason() -> None:
    rec = Recorder()
    q = JobQueue(lambda: 10)
    q.start()

    def long_work(job: Job) -> str:
        while not job.should_stop():
            time.sleep(0.01)
        raise Cancelled()

    running, waiting = _job(rec, work=long_work), _job(rec)
    q.submit(running)
    _wait(lambda: q._running is running)
    q.submit(waiting)
    assert q.stop("the node was deactivated", 5)
    assert rec.results[id(running)] == (None, "the node was deactivated")
    assert rec.results[id(waiting)] == (None, "rejected: the node was deactivated")
    assert "not active" in q.submit(_job(rec))


def test_errors_timeouts_and_cancels_each_give_one_reasoned_answer() -> None:
    rec = Recorder()
    q = JobQueue(lambda: 10)
    q.start()

    def boom(job: Job) -> str:
        raise KeyError("engine bug")

    def bad_input(job: Job) -> str:
        raise RequestError("question is empty")

    def slow(job: Job) -> str:
        while not job.should_stop():
            time.sleep(0.01)
        raise Cancelled()

    cancel = threading.Event()
    jobs = [_job(rec, work=boom), _job(rec, work=bad_input), _job(rec, work=slow, timeout_s=0.2),
            _job(rec, work=slow, cancel_requested=cancel.is_set)]
    for j in jobs:
        assert q.submit(j) == ""
    _wait(lambda: q._running is jobs[3])
    cancel.set()
    _wait(lambda: sum(rec.calls.values()) == 4)
    errors = [rec.results[id(j)][1] for j in jobs]
    assert errors[0].startswith("internal error: KeyError")
    assert errors[1] == "question is empty"
    assert errors[2].startswith("timed out after 0.2 s")
    assert errors[3].startswith("cancelled")
    assert q.stats.failed == 2 and q.stats.timed_out == 1
    assert q.stop("done", 5)


def test_a_caller_mistake_is_its_reason_and_any_other_error_is_ours() -> None:
    """Issue 21: a RequestError (what the caller sent) goes back as its message and is not reported; a
    plain ValueError from inside the engine (a shape mismatch, a bug) is an internal error, reported once
    for the log, and still the one answer the job gets."""
    rec = Recorder()
    reported: list[str] = []
    q = JobQueue(lambda: 10, on_internal_error=reported.append)
    q.start()

    def mistake(job: Job) -> str:
        raise RequestError("region 0 mask on frame 1 is empty")

    def bug(job: Job) -> str:
        raise ValueError("operands could not be broadcast together")

    jobs = [_job(rec, work=mistake), _job(rec, work=bug)]
    for j in jobs:
        assert q.submit(j) == ""
    _wait(lambda: sum(rec.calls.values()) == 2)
    assert rec.results[id(jobs[0])][1] == "region 0 mask on frame 1 is empty"
    bug_error = rec.results[id(jobs[1])][1]
    assert bug_error == "internal error: ValueError: operands could not be broadcast together"
    assert len(reported) == 1 and "operands could not be broadcast" in reported[0]
    assert q.stop("done", 5)


def test_expire_and_cancel_waiting_answer_queued_jobs_without_the_worker() -> None:
    rec = Recorder()
    q = JobQueue(lambda: 10)  # never started: nothing but expire/cancel can answer
    q._closed = ""
    stale, cancelled, fresh = _job(rec, timeout_s=0.0), _job(rec), _job(rec)
    for j in (stale, cancelled, fresh):
        assert q.submit(j) == ""
    time.sleep(0.01)
    q.expire()
    assert rec.results[id(stale)][1].startswith("timed out")
    assert q.cancel_waiting(cancelled, "cancelled before inference started")
    assert not q.cancel_waiting(cancelled, "again")
    assert rec.calls[id(cancelled)] == 1 and rec.calls[id(fresh)] == 0
    assert len(q) == 1


def test_a_job_completes_once_even_if_two_paths_race() -> None:
    rec = Recorder()
    job = _job(rec)
    results = []
    threads = [threading.Thread(target=lambda: results.append(job.complete("v", ""))) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count(True) == 1 and rec.calls[id(job)] == 1


def test_restart_needs_the_old_worker_gone() -> None:
    rec = Recorder()
    gate = threading.Event()
    q = JobQueue(lambda: 1)
    q.start()
    q.submit(_job(rec, work=lambda job: gate.wait(10)))
    _wait(lambda: q._running is not None)
    assert not q.stop("deactivated", 0.1)  # the step cannot be interrupted: the thread lives on
    with pytest.raises(RuntimeError, match="still running"):
        q.start()
    gate.set()
    _wait(lambda: not q.alive)
    q.start()
    assert q.stop("done", 5)
