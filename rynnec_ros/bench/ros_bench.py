"""Node-side sections: ingest cost and service overhead, measured against the real node in a subprocess.

ingest: the node and a bare rclpy subscriber (same topic, same QoS) receive the same 1080p rgb8 frames;
each process's CPU time (``/proc/<pid>/stat``) over the publishing period, minus its idle rate measured
just before, divided by the frames it received, gives CPU per frame. The node keeps every frame
(``ingest_fps`` 0), so this is the worst case; its ``/diagnostics`` give buffer bytes vs frame bytes.

service: 30 frames are buffered, then the same question is asked repeatedly through ``CognitionClient``;
overhead = end-to-end latency − the engine's own ``total`` time reported in the response.
"""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
import tempfile
import threading
import time
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


def service(
    checkpoint: Path, workdir: Path, frames: list[np.ndarray], question: str, new_tokens: int, repeat: int
) -> dict[str, Any]:
    from rynnec_ros.ros.client import CognitionClient

    name, topic = "rynnec_bench_service", "/rynnec_bench/service/image_raw"
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
        },
        workdir / "service_node.log",
    )
    try:
        with CognitionClient(node_name=name, color_topic=topic, client_name="rynnec_bench_client") as client:
            _wait(lambda: client.wait_for_node(0.5), 180, "the node's services", node)
            stamps = [1_000_000_000 * (i + 1) for i in range(len(frames))]
            client.publish_frames(frames, stamps, rate_hz=20.0)
            time.sleep(1.0)
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
    finally:
        node.stop()
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
            frames = synthetic_window(30, width, height)
            return service(checkpoint, Path(tmp), frames, args.question, args.new_tokens, max(args.repeat, 5))
        except (TimeoutError, RuntimeError) as exc:
            return not_available(f"{name} measurement failed: {exc}")
