"""Node-side sections: ingest cost and service overhead, measured against the real node in a subprocess.

ingest: the node and a bare rclpy subscriber (same topic, same QoS) receive the same 1080p rgb8 frames;
each process's CPU time (``/proc/<pid>/stat``) over the publishing period, minus its idle rate measured
just before, divided by the frames it received, gives CPU per frame. The node keeps every frame
(``ingest_fps`` 0), so this is the worst case; its ``/diagnostics`` give buffer bytes vs frame bytes.

service: 30 frames are buffered, then the same question is asked repeatedly through ``CognitionClient``;
overhead = end-to-end latency − the engine's own ``total`` time reported in the response.

cancel: goals on ``~/ask_stream`` and ``~/segment_stream`` cancelled while the model decodes (and right
after acceptance); the time from the client's cancel to the CANCELED result (``cancel``'s docstring).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from rynnec_ros.bench.measure import Stats, percentile, ratio
from rynnec_ros.bench.report import not_available

_BARE_SUBSCRIBER = """
import sys, time, rclpy
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image
topic, stop_file = sys.argv[1], sys.argv[2]
rclpy.init()
node = rclpy.create_node("bare_subscriber")
count = [0]
def on_image(msg):
    count[0] += 1
qos = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=5, reliability=ReliabilityPolicy.RELIABLE)
node.create_subscription(Image, topic, on_image, qos)
import os
while not os.path.exists(stop_file):
    rclpy.spin_once(node, timeout_sec=0.05)
print(count[0], flush=True)
"""


def ros_missing() -> str | None:
    """Why the ROS sections cannot run here, or None when they can."""
    for module in ("rclpy", "rynnec_ros.ros", "rynnec_ros.msg", "rynnec_ros.srv", "diagnostic_msgs.msg"):
        try:
            importlib.import_module(module)
        except ImportError as exc:
            return f"{module} is not importable ({exc}); source the ROS environment (scripts/env.sh)"
    return None


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (Linux ``/proc``)."""
    with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _Node:
    """The cognition node (``rynnec-ros node``) as a subprocess with the given parameters."""

    def __init__(self, name: str, params: dict[str, Any], log: Path) -> None:
        cmd = [sys.executable, "-m", "rynnec_ros.cli", "node", "--name", name]
        for k, v in params.items():
            cmd += ["-p", f"{k}:={v}"]
        self.log = log.open("w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)

    def check(self) -> None:
        """RuntimeError with the end of its log when the node process has exited."""
        if self.proc.poll() is not None:
            self.log.flush()
            tail = Path(self.log.name).read_text(errors="replace").strip().splitlines()[-3:]
            raise RuntimeError(f"the node exited with code {self.proc.returncode}: {' | '.join(tail)}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


class _Diagnostics:
    """Latest key/values of one node's /diagnostics status."""

    def __init__(self, node: Any, name_part: str) -> None:
        from diagnostic_msgs.msg import DiagnosticArray

        self.values: dict[str, str] = {}
        self.lock = threading.Lock()

        def on_msg(msg: Any) -> None:
            for status in msg.status:
                if name_part in status.name:
                    with self.lock:
                        self.values = {kv.key: kv.value for kv in status.values}

        self.sub = node.create_subscription(DiagnosticArray, "/diagnostics", on_msg, 10)

    def get(self) -> dict[str, str]:
        with self.lock:
            return dict(self.values)


def _wait(cond: Any, timeout_s: float, what: str, node: _Node) -> None:
    deadline = time.monotonic() + timeout_s
    while not cond():
        node.check()
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(0.1)


def ingest(checkpoint: Path, workdir: Path, frames_n: int = 30, rate_hz: float = 5.0) -> dict[str, Any]:
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import Image

    from rynnec_ros.ros import convert

    topic = "/rynnec_bench/ingest/image_raw"
    frame = np.random.default_rng(0).integers(0, 256, size=(1080, 1920, 3), dtype=np.uint8)
    node = _Node(
        "rynnec_bench_ingest",
        {
            "checkpoint": checkpoint,
            "color_topic": topic,
            "ingest_fps": 0.0,
            "qos_reliability": "reliable",
            "buffer_max_frames": frames_n + 10,
            "buffer_max_mb": 4096,
            "diagnostics_period_s": 0.2,
            "autostart": True,
        },
        workdir / "ingest_node.log",
    )
    stop_file = workdir / "bare.stop"
    bare = subprocess.Popen(
        [sys.executable, "-c", _BARE_SUBSCRIBER, topic, str(stop_file)], stdout=subprocess.PIPE, text=True
    )
    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    pub_node = rclpy.create_node("rynnec_bench_publisher", context=ctx)
    executor = SingleThreadedExecutor(context=ctx)
    executor.add_node(pub_node)
    spin = threading.Thread(target=executor.spin, daemon=True)
    spin.start()
    try:
        diag = _Diagnostics(pub_node, "rynnec_bench_ingest")
        pub = pub_node.create_publisher(
            Image, topic, QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        )
        _wait(
            lambda: pub.get_subscription_count() >= 2,
            180,
            "the node and the bare subscriber to subscribe",
            node,
        )
        _wait(lambda: "frames_in" in diag.get(), 30, "the node's diagnostics", node)
        time.sleep(1.0)
        pids = {"node": node.proc.pid, "bare": bare.pid}
        idle_s = 3.0
        c0 = {k: cpu_seconds(p) for k, p in pids.items()}
        time.sleep(idle_s)
        idle_rate = {k: (cpu_seconds(p) - c0[k]) / idle_s for k, p in pids.items()}
        msgs = [convert.rgb_to_image(frame, 1_000_000_000 * (i + 1), "camera") for i in range(frames_n)]
        c1 = {k: cpu_seconds(p) for k, p in pids.items()}
        t1 = time.monotonic()
        for msg in msgs:
            pub.publish(msg)
            time.sleep(1.0 / rate_hz)
        time.sleep(1.5)  # let both drain their queues
        span = time.monotonic() - t1
        busy = {k: cpu_seconds(p) - c1[k] - idle_rate[k] * span for k, p in pids.items()}
        time.sleep(0.5)
        values = diag.get()
        stop_file.touch()
        bare_count = int((bare.communicate(timeout=30)[0] or "0").split()[-1])
        node_count = int(values.get("frames_in", "0"))
        frame_mb = frame.nbytes / (1 << 20)
        if min(node_count, bare_count) < 0.8 * frames_n:
            raise RuntimeError(
                f"frames were lost (node got {node_count}, bare subscriber {bare_count} of "
                f"{frames_n}); the per-frame CPU would be meaningless"
            )
        per_frame = {"node": busy["node"] / node_count, "bare": busy["bare"] / bare_count}
        return {
            "available": True,
            "frame": f"1920x1080 rgb8 ({frame_mb:.2f} MB)",
            "published": frames_n,
            "rate_hz": rate_hz,
            "received": {"node": node_count, "bare": bare_count},
            "cpu_s_per_frame": per_frame,
            "idle_cpu_fraction": idle_rate,
            "ratio_node_vs_bare": ratio(per_frame["node"], per_frame["bare"]),
            "target_ratio": 1.5,
            "buffer": {
                "frames": int(values.get("buffered_frames", "0")),
                "mb": float(values.get("buffered_mb", "0")),
                "frames_x_frame_mb": int(values.get("buffered_frames", "0")) * frame_mb,
            },
            "method": "process CPU time (/proc utime+stime, 10 ms ticks) during publishing minus the idle "
            "rate measured just before; node keeps every frame (ingest_fps 0); reliable QoS on both",
        }
    finally:
        stop_file.touch()
        if bare.poll() is None:
            bare.kill()
        node.stop()
        executor.shutdown()
        pub_node.destroy_node()
        rclpy.shutdown(context=ctx)


@contextlib.contextmanager
def _served(name: str, checkpoint: Path, workdir: Path, frames: list[np.ndarray],
            params: dict[str, Any] | None = None) -> Iterator[tuple[Any, list[int]]]:
    """The node (subprocess) holding ``frames``, and a ``CognitionClient`` of it: (client, stamps)."""
    from rynnec_ros.ros.client import CognitionClient

    topic = f"/{name}/image_raw"
    node = _Node(
        name,
        {
            "checkpoint": checkpoint,
            "color_topic": topic,
            "ingest_fps": 0.0,
            "qos_reliability": "reliable",
            "max_frames_per_query": len(frames),
            "sample_fps": 1.0,
            "autostart": True,
            **(params or {}),
        },
        workdir / f"{name}_node.log",
    )
    try:
        with CognitionClient(node_name=name, color_topic=topic, client_name=f"{name}_client") as client:
            _wait(lambda: client.wait_for_node(0.5), 180, "the node's services", node)
            stamps = client.send_frames(frames, [1_000_000_000 * (i + 1) for i in range(len(frames))],
                                        rate_hz=20.0)
            yield client, stamps
    finally:
        node.stop()


def service(
    checkpoint: Path, workdir: Path, frames: list[np.ndarray], question: str, new_tokens: int, repeat: int
) -> dict[str, Any]:
    with _served("rynnec_bench_service", checkpoint, workdir, frames) as (client, stamps):
        client.ask(question, frame_stamps_ns=stamps, max_new_tokens=new_tokens)  # warm-up
        e2e, engine, overhead = [], [], []
        for _ in range(repeat):
            t0 = time.perf_counter()
            ans = client.ask(question, frame_stamps_ns=stamps, max_new_tokens=new_tokens)
            wall = time.perf_counter() - t0
            if "total" not in ans.timings:
                return not_available(f"the node's response has no engine 'total' timing: {ans.timings}")
            e2e.append(wall)
            engine.append(ans.timings["total"])
            overhead.append(wall - ans.timings["total"])
        assert client.last_response is not None
        used = len(client.last_response.frame_stamps)
    return {
        "available": True,
        "frames_in_window": len(frames),
        "frames_used": used,
        "frame_size_wh": [int(frames[0].shape[1]), int(frames[0].shape[0])],
        "end_to_end": Stats.of(e2e),
        "engine_total": Stats.of(engine),
        "overhead_p50_ms": 1e3 * percentile(overhead, 50),
        "overhead_p95_ms": 1e3 * percentile(overhead, 95),
        "target_overhead_p50_ms": 10.0,
        "method": "CognitionClient.ask round trip (perf_counter) minus the engine 'total' in the response; "
        "node in a subprocess on this machine",
    }


# Tokens a cancelled request may generate: far more than it runs before its cancel.
_CANCEL_TOKENS = 4096


def _cancel_once(send: Callable[[], Any], ready: Callable[[Any], bool]) -> dict[str, Any] | None:
    """One goal cancelled once ``ready(handle)``: seconds from the cancel to its result, the feedback
    pieces that came after it, and the final status; None when the goal ended before the cancel."""
    from action_msgs.msg import GoalStatus

    handle = send()
    deadline = time.monotonic() + 120.0
    while not ready(handle) and not handle.is_done():
        if time.monotonic() > deadline:
            raise TimeoutError("a goal of the cancel section never got going")
        time.sleep(0.001)
    if handle.is_done():
        return None  # finished (or failed) before it could be cancelled
    pieces = handle.pieces
    t0 = time.perf_counter()
    handle.cancel()
    if not handle.wait(60.0):
        raise TimeoutError("a cancelled goal got no result within 60 s")
    seconds = time.perf_counter() - t0
    if handle.status != GoalStatus.STATUS_CANCELED:
        return None  # it ended on its own between the check and the cancel
    return {"seconds": seconds, "pieces_after": handle.pieces - pieces}


def cancel(checkpoint: Path, workdir: Path, frames: list[np.ndarray], question: str,
           samples: int) -> dict[str, Any]:
    """Cancel latency: a goal cancelled → its CANCELED result at the client, per phase of the request.

    The node sends a cancelled goal's result only when its worker has returned from the engine (the
    job's completion runs after the engine's ``should_stop`` check ended the inference), so the result's
    arrival bounds "worker idle" from above; the next request's ``queue`` timing confirms the worker was
    free.
    """
    with _served("rynnec_bench_cancel", checkpoint, workdir, frames,
                 {"max_new_tokens": _CANCEL_TOKENS, "precompute_window": False}) as (client, stamps):
        client.ask(question, frame_stamps_ns=stamps, max_new_tokens=2)  # warm-up

        def ask() -> Any:
            return client.ask_async(question, frame_stamps_ns=stamps, max_new_tokens=_CANCEL_TOKENS,
                                    timeout_s=120.0)

        def segment() -> Any:
            return client.segment_async("the red object", frame_stamps_ns=stamps, timeout_s=120.0)

        phases: dict[str, tuple[Callable[[], Any], Callable[[Any], bool]]] = {
            "ask_during_decode": (ask, lambda h: h.pieces >= 2),
            "ask_at_acceptance": (ask, lambda h: h.goal_id is not None),
            "segment_during_decode": (segment, lambda h: h.pieces >= 2),
        }
        out: dict[str, Any] = {}
        for phase, (send, ready) in phases.items():
            runs = [r for r in (_cancel_once(send, ready) for _ in range(samples)) if r is not None]
            if not runs:
                out[phase] = not_available(f"every {phase} goal ended before its cancel")
                continue
            latency = [r["seconds"] for r in runs]
            after = [float(r["pieces_after"]) for r in runs]
            out[phase] = {
                "available": True,
                "cancelled": len(runs),
                "ended_before_cancel": samples - len(runs),
                "latency": Stats.of(latency),
                "p50_ms": 1e3 * percentile(latency, 50),
                "p95_ms": 1e3 * percentile(latency, 95),
                "pieces_after_cancel": Stats.of(after, unit="pieces"),
            }
        queue = client.ask(question, frame_stamps_ns=stamps, max_new_tokens=1).timings.get("queue", math.nan)
    return {
        "available": True,
        "frames_in_window": len(frames),
        "frame_size_wh": [int(frames[0].shape[1]), int(frames[0].shape[0])],
        "samples_per_phase": samples,
        "phases": out,
        "next_request_queue_ms": 1e3 * queue,
        "method": "CognitionClient.ask_async / segment_async goals on the node's actions, cancelled from the "
        "client (decode: after the 2nd feedback piece; acceptance: as soon as the goal is accepted); latency "
        "= perf_counter from cancel_goal_async to the CANCELED result; node in a subprocess on this machine",
    }


def ros_section(
    name: str, args: argparse.Namespace, workdir: Path, width: int, height: int
) -> dict[str, Any]:
    why = ros_missing()
    if why is not None:
        return not_available(why)
    from rynnec_ros.bench.workload import resolve_checkpoint, synthetic_window

    checkpoint = resolve_checkpoint(args.checkpoint, workdir)
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        try:
            if name == "ingest":
                return ingest(checkpoint, Path(tmp))
            if name == "cancel":
                frames = synthetic_window(args.frames, width, height)
                return cancel(checkpoint, Path(tmp), frames, args.question, max(args.repeat, 10))
            frames = synthetic_window(30, width, height)
            return service(checkpoint, Path(tmp), frames, args.question, args.new_tokens, max(args.repeat, 5))
        except (TimeoutError, RuntimeError) as exc:
            return not_available(f"{name} measurement failed: {exc}")
