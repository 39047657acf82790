"""Ingest CPU cost per camera frame: the cognition node versus a bare rclpy subscriber.

Each subscriber runs in its own process and reports its own process CPU time between the first and
the last received frame, so the publisher's cost is not counted. ``measure_ingest`` returns a dict
ready for a JSON benchmark report (the benchmark helper wraps it); nothing here asserts a speed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

NS_PER_S = 1_000_000_000


def _subscriber(mode: str, count: int, width: int, height: int, checkpoint: str) -> dict[str, Any]:
    """Child process body: receive ``count`` frames, report CPU seconds between first and last."""
    import rclpy
    from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import Image

    rclpy.init()
    marks: list[tuple[float, float]] = []
    if mode == "bare":
        node = rclpy.create_node("bench_bare_subscriber")
        qos = QoSProfile(depth=5, reliability=ReliabilityPolicy.RELIABLE)
        node.create_subscription(Image, "/bench/image", lambda _: marks.append((time.process_time(), 0)), qos)
        executor: Any = SingleThreadedExecutor()
        executor.add_node(node)
        received = lambda: len(marks)  # noqa: E731
    else:
        from rynnec_ros.ros.node import CognitionNode

        ingest_fps = "0.0" if mode == "node" else "2.0"
        rclpy.shutdown()
        params = [f"checkpoint:={checkpoint}", "color_topic:=/bench/image", "qos_reliability:=reliable",
                  f"ingest_fps:={ingest_fps}"]
        rclpy.init(args=["bench", "--ros-args", *[a for p in params for a in ("-p", p)]])
        node = CognitionNode()
        node.trigger_configure()
        node.trigger_activate()
        executor = MultiThreadedExecutor(num_threads=node._p["request_queue_size"] + 6)
        executor.add_node(node)
        stats = node._stats

        def received() -> int:
            n = stats.frames_in
            if n > len(marks):
                marks.append((time.process_time(), 0))
            return n

    print("READY", flush=True)
    deadline = time.monotonic() + 120
    first_cpu = None
    while received() < count and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.05)
        if first_cpu is None and marks:
            first_cpu = (time.process_time(), time.monotonic())
    end_cpu, end_wall = time.process_time(), time.monotonic()
    n = received()
    kept = node.buffer.stamps() if mode != "bare" else []
    executor.shutdown()
    node.destroy_node()
    rclpy.try_shutdown()
    if first_cpu is None or n < 2:
        return {"mode": mode, "received": n, "error": "too few frames received"}
    return {
        "mode": mode,
        "received": n,
        "buffered": len(kept),
        "cpu_ms_per_frame": 1000 * (end_cpu - first_cpu[0]) / (n - 1),
        "wall_s": end_wall - first_cpu[1],
    }


def measure_callback(frames: int = 50, width: int = 1920, height: int = 1080) -> dict[str, float]:
    """CPU ms of the node's colour callback alone (convert + buffer insert), in-process, no DDS.

    Isolates what the node adds on top of rclpy's deserialisation: every frame kept (ingest_fps 0) for
    rgb8 and bgr8 (which needs a colour conversion), and thinned at the default 2 fps.
    """
    import numpy as np
    import rclpy

    from rynnec_ros.ros.convert import rgb_to_image
    from rynnec_ros.ros.node import CognitionNode

    rgb = np.random.default_rng(0).integers(0, 256, (height, width, 3), dtype=np.uint8)
    out: dict[str, float] = {}
    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    try:
        for label, encoding, fps in (("rgb8_every_frame", "rgb8", 0.0), ("bgr8_every_frame", "bgr8", 0.0),
                                     ("rgb8_ingest_fps_2_at_30hz", "rgb8", 2.0)):
            node = CognitionNode(f"bench_{label}", context=ctx, parameter_overrides=[
                rclpy.parameter.Parameter("ingest_fps", value=fps),
            ])
            msg = rgb_to_image(rgb, 0, "bench")
            msg.encoding = encoding
            t0 = time.process_time()
            for i in range(frames):
                stamp = (i + 1) * NS_PER_S // 30
                msg.header.stamp.sec, msg.header.stamp.nanosec = stamp // NS_PER_S, stamp % NS_PER_S
                node._on_color(msg)
            out[label] = 1000 * (time.process_time() - t0) / frames
            node.destroy_node()
    finally:
        rclpy.shutdown(context=ctx)
    return out


def measure_ingest(
    frames: int = 40,
    width: int = 1920,
    height: int = 1080,
    rate_hz: float = 10.0,
    checkpoint: str | None = None,
) -> dict[str, Any]:
    """CPU ms per ``width``×``height`` rgb8 frame for a bare subscriber and the node (every frame / 2 fps)."""
    import numpy as np
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import Image

    from rynnec_ros.ros.convert import rgb_to_image

    with tempfile.TemporaryDirectory() as tmp:
        if checkpoint is None:
            from rynnec_ros.model.tiny import make_checkpoint

            checkpoint = str(make_checkpoint(os.path.join(tmp, "ckpt")))
        results: dict[str, Any] = {"frame": f"{width}x{height} rgb8", "frames": frames, "rate_hz": rate_hz}
        rgb = np.random.default_rng(0).integers(0, 256, (height, width, 3), dtype=np.uint8)
        msg = rgb_to_image(rgb, 0, "bench")
        ctx = rclpy.Context()
        rclpy.init(context=ctx)
        pub_node = rclpy.create_node("bench_publisher", context=ctx)
        qos = QoSProfile(depth=5, reliability=ReliabilityPolicy.RELIABLE)
        pub = pub_node.create_publisher(Image, "/bench/image", qos)
        try:
            for mode in ("bare", "node", "node_thinned"):
                child = subprocess.Popen(
                    [sys.executable, "-m", "rynnec_ros.ros.bench", mode, str(frames), str(width), str(height),
                     checkpoint],
                    stdout=subprocess.PIPE, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"),
                )
                assert child.stdout is not None
                child.stdout.readline()  # READY
                deadline = time.monotonic() + 30
                while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
                    time.sleep(0.05)
                time.sleep(0.5)
                for i in range(frames + 5):
                    stamp = (i + 1) * NS_PER_S // int(rate_hz)
                    msg.header.stamp.sec, msg.header.stamp.nanosec = stamp // NS_PER_S, stamp % NS_PER_S
                    pub.publish(msg)
                    time.sleep(1.0 / rate_hz)
                out, _ = child.communicate(timeout=180)
                lines = out.strip().splitlines()
                failed = {"error": f"subscriber exited with {child.returncode}"}
                results[mode] = json.loads(lines[-1]) if lines else failed
        finally:
            pub_node.destroy_node()
            rclpy.shutdown(context=ctx)
    results["node_callback_cpu_ms_per_frame"] = measure_callback(frames, width, height)
    bare = results["bare"].get("cpu_ms_per_frame")
    node = results["node"].get("cpu_ms_per_frame")
    if bare is not None and node is not None:
        results["node_overhead_ms_per_frame"] = node - bare
    return results


if __name__ == "__main__":
    mode_, count_, w_, h_, ckpt_ = sys.argv[1:6]
    print(json.dumps(_subscriber(mode_, int(count_), int(w_), int(h_), ckpt_)), flush=True)
