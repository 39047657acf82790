"""Black-box attacks on the node's requests (issue 11): wrong successes (malformed mono8 masks, DEL/C1
control characters, out-of-range stamps) and bursts of concurrent asks, goals and cancels from several
client processes (every request answered, none lost).

Written from srv/AskQuestion.srv, srv/Segment.srv, action/Ask.action, msg/RegionMask.msg,
builtin_interfaces/Time, docs/ros.md and issue 11 -- not from the node's validation code.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from .peer import Peer, publish_frames_until_listed

pytestmark = pytest.mark.ros

REPO = Path(__file__).resolve().parents[2]
H, W = 24, 32
STAMPS_NS = [3_000_000_000, 3_500_000_000, 4_000_000_000]


def _time(sec: int, nanosec: int = 0):
    from builtin_interfaces.msg import Time

    return Time(sec=int(sec), nanosec=int(nanosec))


def _st(ns: int):
    return _time(ns // 10**9, ns % 10**9)


def _publish_frames(peer: Peer, topic: str, stamps_ns: list[int], node, name: str = "rynnec") -> None:
    why = publish_frames_until_listed(peer, node, name, topic, stamps_ns, H, W)
    if why:
        pytest.fail(f"frames never buffered: {why}\n{node.output()[-3000:]}")


# --------------------------------------------------------------------------------------------------
# 2. Wrong successes
# --------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def target(node_factory, segmenting_checkpoint):
    node = node_factory({"checkpoint": str(segmenting_checkpoint), "qos_reliability": "reliable",
                         "qos_depth": 20, "color_topic": "/req/color", "ingest_fps": 0.0,
                         "max_new_tokens": 1, "max_frames_per_query": 2, "time_jump_back_s": 1e6})
    peer = Peer("attack_requests_peer")
    try:
        _publish_frames(peer, "/req/color", STAMPS_NS, node)
        yield peer, node
    finally:
        peer.close()
    assert node.alive(), node.output()[-3000:]


def _rle_region(stamp_ns: int, label: str = "box"):
    from pycocotools import mask as mask_util
    from rynnec_ros.msg import Region, RegionMask

    m = np.zeros((H, W), np.uint8)
    m[4:12, 6:20] = 1
    rle = mask_util.encode(np.asfortranarray(m))
    return Region(object_id=1, label=label, masks=[RegionMask(stamp=_st(stamp_ns), size=[H, W],
                                                               counts=rle["counts"].decode("ascii"))])


def _mono8_region(stamp_ns: int, data_len: int | None = None, step: int = W):
    from rynnec_ros.msg import Region, RegionMask
    from sensor_msgs.msg import Image

    m = np.zeros((H, W), np.uint8)
    m[4:12, 6:20] = 255
    data = m.tobytes()
    if data_len is not None:
        data = (data + bytes(max(data_len - len(data), 0)))[:data_len]
    img = Image(height=H, width=W, encoding="mono8", step=step)
    img.data = data
    img.header.stamp = _st(stamp_ns)
    return Region(object_id=2, label="box", masks=[RegionMask(stamp=_st(stamp_ns), image=img)])


def _ask(peer, **kw):
    from rynnec_ros.srv import AskQuestion

    kw.setdefault("max_new_tokens", 1)
    return peer.call(AskQuestion, "/rynnec/ask", AskQuestion.Request(**kw), 60.0)


def _segment(peer, **kw):
    from rynnec_ros.srv import Segment

    return peer.call(Segment, "/rynnec/segment", Segment.Request(**kw), 60.0)


def _assert_rejected(res, what: str) -> None:
    assert res is not None, f"{what}: no response"
    assert not res.success, f"{what}: accepted (answer {res.answer!r}, stamps " \
                            f"{[(s.sec, s.nanosec) for s in res.frame_stamps]})"
    assert res.message.strip(), f"{what}: rejected without a reason"
    assert not res.message.startswith("internal error"), f"{what}: {res.message}"


def _assert_stamps_valid(res) -> None:
    # builtin_interfaces/Time: "nanosec ... valid in the range [0, 1e9)"; issue 11: "reported back wrapped to
    # a negative sec".
    bad = [(s.sec, s.nanosec) for s in res.frame_stamps if s.sec < 0 or s.nanosec >= 10**9]
    assert not bad, f"response reports invalid stamps {bad}"


def test_valid_mono8_and_rle_masks_are_accepted(target) -> None:
    """Control for the rejections below: the same request with a well-formed mask succeeds."""
    peer, _ = target
    for region in (_rle_region(STAMPS_NS[0]), _mono8_region(STAMPS_NS[0])):
        res = _ask(peer, question="What is <object0>?", regions=[region], frame_stamps=[_st(STAMPS_NS[0])])
        assert res is not None and res.success, res and res.message
        _assert_stamps_valid(res)


@pytest.mark.parametrize("extra", [1, W, H * W, -1, -H * W])
def test_mono8_mask_whose_data_is_not_step_times_height_is_rejected(target, extra) -> None:
    """msg/RegionMask.msg: "a mono8 image of the frame's size"; sensor_msgs/Image: "data ... size is (step *
    rows)". Issue 11 "Wrong successes": "A mono8 mask whose data is longer than step*height is accepted"."""
    peer, _ = target
    region = _mono8_region(STAMPS_NS[0], data_len=H * W + extra)
    res = _ask(peer, question="What is <object0>?", regions=[region], frame_stamps=[_st(STAMPS_NS[0])])
    _assert_rejected(res, f"mono8 mask with {H * W + extra} bytes for step*height = {H * W}")


CONTROLS = {
    "C0 SOH (baseline)": "\x01",
    "C0 ESC CSI (baseline)": "\x1b[31m",
    "DEL": "\x7f",
    "C1 CSI": "\x9b31m",
    "C1 NEL": "\x85",
    "C1 0x80": "\x80",
    "C1 0x9f": "\x9f",
}


@pytest.mark.parametrize("field", ["question", "option", "label", "task", "expression"])
@pytest.mark.parametrize("ctrl", list(CONTROLS), ids=list(CONTROLS))
def test_control_characters_in_request_strings_are_rejected(target, field, ctrl) -> None:
    """Issue 11: "Questions containing DEL (0x7f) or C1 control characters (0x80-0x9f, e.g. CSI escape
    sequences that rewrite a terminal that logs them) are accepted while C0 controls are refused" and
    "one text sanitiser for all request strings"; docs/ros.md lists question, options, labels, task,
    expression among the strings whose control characters are rejected."""
    peer, _ = target
    bad = f"red{CONTROLS[ctrl]}cup"
    stamp = [_st(STAMPS_NS[0])]
    if field == "question":
        res = _ask(peer, question=f"What is the {bad}?", frame_stamps=stamp)
    elif field == "option":
        res = _ask(peer, question="Which one?", options=["a plate", bad], frame_stamps=stamp)
    elif field == "label":
        res = _ask(peer, question="What is <object0>?", regions=[_rle_region(STAMPS_NS[0], label=bad)],
                   frame_stamps=stamp)
    elif field == "task":
        res = _ask(peer, question="How far is it?", task=bad, frame_stamps=stamp)
    else:
        res = _segment(peer, expression=f"the {bad}", frame_stamps=stamp)
    _assert_rejected(res, f"{ctrl} in {field}")


BAD_STAMPS = {
    "int32/uint32 max": (2**31 - 1, 2**32 - 1),
    "nanosec == 1e9 (== a buffered stamp if normalised)": (3, 10**9),
    "nanosec uint32 max": (3, 2**32 - 1),
}


@pytest.mark.parametrize("where", ["frame_stamps", "window_start", "window_end", "region_stamp",
                                   "segment_frame_stamps", "segment_window_end"])
@pytest.mark.parametrize("stamp", list(BAD_STAMPS), ids=list(BAD_STAMPS))
def test_out_of_range_request_stamps_are_rejected_with_a_reason(target, where, stamp) -> None:
    """builtin_interfaces/Time: "nanosec ... valid in the range [0, 1e9)". Issue 11 "Stamps":
    "{sec: 2147483647, nanosec: 4294967295} is accepted and reported back wrapped to a negative sec;
    nanosec >= 10^9 is not rejected"."""
    peer, _ = target
    bad = _time(*BAD_STAMPS[stamp])
    good = [_st(STAMPS_NS[-1])]
    if where == "frame_stamps":
        res = _ask(peer, question="What is here?", frame_stamps=[bad])
    elif where == "window_start":
        res = _ask(peer, question="What is here?", window_start=bad)
    elif where == "window_end":
        res = _ask(peer, question="What is here?", window_end=bad)
    elif where == "region_stamp":
        region = _rle_region(STAMPS_NS[-1])
        region.masks[0].stamp = bad
        res = _ask(peer, question="What is <object0>?", regions=[region], frame_stamps=good)
    elif where == "segment_frame_stamps":
        res = _segment(peer, expression="the box", frame_stamps=[bad])
    else:
        res = _segment(peer, expression="the box", window_end=bad)
    if res is not None:
        _assert_stamps_valid(res)
    _assert_rejected(res, f"stamp {BAD_STAMPS[stamp]} in {where}")


def test_node_alive_and_answering_after_the_bad_requests(target) -> None:
    peer, node = target
    assert node.alive(), node.output()[-3000:]
    res = _ask(peer, question="Still there?", frame_stamps=[_st(STAMPS_NS[1])])
    assert res is not None and res.success, res and res.message


# --------------------------------------------------------------------------------------------------
# 3. Bursts from several client processes
# --------------------------------------------------------------------------------------------------
# Each worker: its own process and rclpy context; a warm-up call (so discovery is complete), then
# "READY"; on "GO" it fires all its calls at once and prints one JSON line with what came back.
WORKER = r"""
import json, sys, threading, time
import rclpy
from rclpy.action import ActionClient
from rclpy.executors import MultiThreadedExecutor
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from rynnec_ros.action import Ask
from rynnec_ros.srv import AskQuestion

cfg = json.loads(sys.argv[1])
ctx = rclpy.Context()
rclpy.init(context=ctx)
node = rclpy.create_node(cfg["name"], context=ctx)
ex = MultiThreadedExecutor(num_threads=2, context=ctx)
ex.add_node(node)
threading.Thread(target=ex.spin, daemon=True).start()


def wait(fut, t):
    ev = threading.Event()
    fut.add_done_callback(lambda _: ev.set())
    return ev.wait(t)


def warm_up(send, t=12.0, tries=5):
    # Set-up only: DDS can drop the reply to a call made while the client's reply reader is still being
    # matched (wait_for_service does not cover it), so the warm-up is sent again; the flood never is.
    for _ in range(tries):
        fut = send()
        if wait(fut, t):
            return fut
    return None


def wait_all(futs, deadline):
    while time.monotonic() < deadline and not all(f.done() for f in futs):
        time.sleep(0.02)


n, tokens, timeout = cfg["n"], cfg["tokens"], cfg["timeout"]
# The client side keeps every response (rclpy's default service QoS keeps only the last 10), so a
# response lost here can only have been lost by the node.
deep = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1000, reliability=ReliabilityPolicy.RELIABLE)
out = {}
if cfg["mode"] == "ask":
    cli = node.create_client(AskQuestion, cfg["srv"], qos_profile=deep)
    assert cli.wait_for_service(timeout_sec=60)
    warm = warm_up(lambda: cli.call_async(AskQuestion.Request(question="warm\x01up")))  # rejected at once
    assert warm is not None, "warm-up ask got no response in 5 tries"
    print("READY", flush=True)
    sys.stdin.readline()
    t0 = time.monotonic()
    futs = [cli.call_async(AskQuestion.Request(question=f"Burst question {i}?", max_new_tokens=tokens))
            for i in range(n)]
    wait_all(futs, t0 + timeout)
    res = [f.result() if f.done() else None for f in futs]
    out = {"sent": n, "lost": sum(r is None for r in res),
           "ok": sum(1 for r in res if r is not None and r.success),
           "rejected": sorted({r.message for r in res if r is not None and not r.success}),
           "no_reason": sum(1 for r in res if r is not None and not r.success and not r.message.strip()),
           "seconds": round(time.monotonic() - t0, 2)}
else:
    ac = ActionClient(node, Ask, cfg["action"], goal_service_qos_profile=deep,
                      result_service_qos_profile=deep, cancel_service_qos_profile=deep)
    assert ac.wait_for_server(timeout_sec=60)
    warm = warm_up(lambda: ac.send_goal_async(Ask.Goal(question="warm\x01up")))
    assert warm is not None, "warm-up goal got no reply in 5 tries"
    if warm.result().accepted:
        assert wait(warm.result().get_result_async(), 30), "warm-up goal got no result"
    print("READY", flush=True)
    sys.stdin.readline()
    t0 = time.monotonic()
    deadline = t0 + timeout
    sent = [ac.send_goal_async(Ask.Goal(question=f"Burst goal {i}?", max_new_tokens=tokens))
            for i in range(n)]
    results, cancels = {}, []
    while time.monotonic() < deadline:
        for i, f in enumerate(sent):
            if f.done() and i not in results:
                h = f.result()
                if h.accepted:
                    results[i] = h.get_result_async()
                    if i % 2 == 0:  # cancel every other accepted goal, twice
                        cancels += [h.cancel_goal_async(), h.cancel_goal_async()]
                else:
                    results[i] = None
        if len(results) == n and all(r is None or r.done() for r in results.values()) \
                and all(c.done() for c in cancels):
            break
        time.sleep(0.02)
    done = [r.result().result for r in results.values() if r is not None and r.done()]
    out = {"sent": n, "goal_no_reply": sum(not f.done() for f in sent),
           "accepted": sum(r is not None for r in results.values()),
           "rejected_goals": sum(r is None for r in results.values()),
           "result_no_reply": sum(1 for r in results.values() if r is not None and not r.done()),
           "ok": sum(1 for r in done if r.success),
           "failed": sorted({r.message for r in done if not r.success}),
           "no_reason": sum(1 for r in done if not r.success and not r.message.strip()),
           "cancels": len(cancels), "cancel_no_reply": sum(not c.done() for c in cancels),
           "seconds": round(time.monotonic() - t0, 2)}
print("RESULT " + json.dumps(out), flush=True)
ex.shutdown(timeout_sec=2)
"""


class _Worker:
    def __init__(self, cfg: dict) -> None:
        env = dict(os.environ, PYTHONPATH=f"{REPO}:{os.environ.get('PYTHONPATH', '')}", OMP_NUM_THREADS="1")
        self.proc = subprocess.Popen([sys.executable, "-c", WORKER, json.dumps(cfg)], cwd=REPO, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, start_new_session=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.log: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.log.append(line)
            self.lines.put(line)

    def expect(self, prefix: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                log = "".join(self.log)[-2000:]
                raise AssertionError(f"worker: no {prefix!r} within {timeout} s:\n{log}") from None
            if line.startswith(prefix):
                return line[len(prefix):].strip()

    def go(self) -> None:
        self.proc.stdin.write("GO\n")
        self.proc.stdin.flush()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(5)


def _burst(cfgs: list[dict], timeout: float) -> list[dict]:
    workers = [_Worker(c) for c in cfgs]
    try:
        for w in workers:
            w.expect("READY", 90)
        for w in workers:
            w.go()
        return [json.loads(w.expect("RESULT ", timeout + 30)) for w in workers]
    finally:
        for w in workers:
            w.stop()


@pytest.fixture(scope="module")
def burst_node(node_factory, endless_checkpoint):
    node = node_factory({"checkpoint": str(endless_checkpoint), "qos_reliability": "reliable",
                         "qos_depth": 20, "color_topic": "/burst/color", "ingest_fps": 0.0,
                         "max_new_tokens": 1, "max_frames_per_query": 1, "request_queue_size": 4,
                         "request_timeout_s": 60.0, "time_jump_back_s": 1e6}, name="rynnec_b")
    peer = Peer("attack_burst_peer")
    try:
        _publish_frames(peer, "/burst/color", STAMPS_NS, node, name="rynnec_b")
        yield peer, node
    finally:
        peer.close()


def _set(peer, name: str, value: int) -> None:
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters

    pv = ParameterValue(type=ParameterType.PARAMETER_INTEGER, integer_value=value)
    res = peer.call(SetParameters, "/rynnec_b/set_parameters",
                    SetParameters.Request(parameters=[Parameter(name=name, value=pv)]), 10)
    assert res is not None and res.results[0].successful, res


@pytest.mark.parametrize("queue_size,tokens", [(4, 150), (64, 8)])
def test_100_concurrent_asks_from_4_processes_are_all_answered(burst_node, queue_size, tokens) -> None:
    """Issue 11: "50 ~/ask calls sent at once ... 33 never got any response in 30 s; with the queue at 64,
    37 of 50 got no response"; "Every accepted request gets exactly one answer has to hold for bursts too,
    and a request we cannot take must be rejected, not dropped" (docs/ros.md: more than
    request_queue_size waiting "are rejected at once ('request queue full')")."""
    peer, node = burst_node
    _set(peer, "request_queue_size", queue_size)
    cfgs = [{"mode": "ask", "name": f"burst_ask_{queue_size}_{i}", "srv": "/rynnec_b/ask", "n": 25,
             "tokens": tokens, "timeout": 30.0} for i in range(4)]
    results = _burst(cfgs, 30.0)
    lost = sum(r["lost"] for r in results)
    answered = sum(r["ok"] for r in results)
    summary = f"queue {queue_size}: {results}"
    assert node.alive(), node.output()[-3000:]
    assert lost == 0, f"{lost} of 100 asks got no response; {summary}"
    assert sum(r["no_reason"] for r in results) == 0, summary
    assert answered >= 1, summary
    if queue_size == 4:  # 100 at once against 1 running + 4 waiting: most must be rejected (with a reason)
        assert answered < 100, summary


def test_50_concurrent_goals_and_their_cancels_are_all_answered(burst_node) -> None:
    """Issue 11: "20 action goals at once: 9 send_goal calls got no reply; of 106 cancel requests, 74 got
    none"; "the same for goals and cancels". Each goal is accepted and then gets a result, or is
    rejected explicitly; every cancel request gets a reply."""
    peer, node = burst_node
    _set(peer, "request_queue_size", 4)
    cfgs = [{"mode": "goal", "name": f"burst_goal_{i}", "action": "/rynnec_b/ask_stream", "n": 25,
             "tokens": 150, "timeout": 30.0} for i in range(2)]
    results = _burst(cfgs, 30.0)
    summary = str(results)
    assert node.alive(), node.output()[-3000:]
    assert sum(r["goal_no_reply"] for r in results) == 0, f"send_goal without a reply: {summary}"
    assert sum(r["result_no_reply"] for r in results) == 0, f"accepted goals without a result: {summary}"
    assert sum(r["cancel_no_reply"] for r in results) == 0, f"cancel requests without a reply: {summary}"
    assert sum(r["no_reason"] for r in results) == 0, summary
    # Cancels go to accepted goals only, and with request_queue_size 4 most goals are rejected at once:
    # how many are accepted depends on timing (6-12 seen), so require that cancels were exercised at all.
    assert sum(r["cancels"] for r in results) >= 4, summary


def test_burst_node_still_answers_normally(burst_node) -> None:
    from rynnec_ros.srv import AskQuestion

    peer, node = burst_node
    req = AskQuestion.Request(question="Hello?", max_new_tokens=2)
    res = peer.call(AskQuestion, "/rynnec_b/ask", req, 60)
    assert res is not None and res.success, res and res.message
    assert "Traceback" not in node.output(), node.output()[-3000:]
