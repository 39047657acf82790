"""Soak benchmark: does the node's memory stay within what its parameters allow?

A node subprocess (keeping every frame, ``ingest_fps`` 0, so the buffer bound is what limits it)
receives colour + registered depth at ``rate_hz`` for ``duration_s`` while a planner asks a question
every ``question_period_s``. The node's RSS (``/proc/<pid>/status`` VmRSS, with its anonymous and
file-backed parts) and /diagnostics' ``buffered_mb`` and ``engine_cache_mb`` are sampled every second.

Baseline = RSS once the node is active and has answered one question about a whole window of the
stream's frames (``WARM_FRAMES``, colour + depth): the first full-size inference maps the code it runs
and sizes the thread pools and allocator arenas once (reported as ``rss_warmup_mb``), which is the
model's cost, not growth (a one-frame warm-up left part of that after the baseline on a loaded machine),
less what it left in the buffer and the engine's caches (``held_at_baseline_mb``, from /diagnostics: the
bound counts those through ``buffer_max_mb`` and ``cache_mb``).
Growth = peak RSS after that − baseline; the claim checked is growth ≤ ``buffer_max_mb`` + ``cache_mb``
(the two memory parameters) + ``MARGIN_MB``.
"""

from __future__ import annotations

import argparse
import array
import json
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from rynnec_ros.bench.measure import rss_mb
from rynnec_ros.bench.report import not_available
from rynnec_ros.bench.ros_bench import _Diagnostics, _Node, _wait

WARM_FRAMES = 8
"""Frames of the warm-up question: the node's max_frames_per_query here, a whole window."""
MARGIN_MB = 150.0
"""What neither parameter counts: camera messages in flight (DDS queues, the conversion's copies:
40-85 MB plateau to peak at 720p colour + depth, measured with the engine idle) and the running
window's working set (preprocessing of the frames it encodes, activations, K/V: 30-70 MB on the tiny
checkpoint at 720p)."""


def soak(checkpoint: Path, workdir: Path, duration_s: float = 600.0, rate_hz: float = 30.0,
         width: int = 1280, height: int = 720, buffer_max_mb: int = 200,
         question_period_s: float = 5.0, precompute: bool = True, cache_mb: int = 64) -> dict[str, Any]:
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import Image

    from rynnec_ros.ros import convert
    from rynnec_ros.ros.client import CognitionClient

    name, topic, depth_topic = "rynnec_soak", "/rynnec_soak/color/image_raw", "/rynnec_soak/depth/image_raw"
    node = _Node(name, {
        "checkpoint": checkpoint, "color_topic": topic, "depth_topic": depth_topic, "ingest_fps": 0.0,
        "qos_reliability": "reliable", "buffer_max_mb": buffer_max_mb, "buffer_max_age_s": 0.0,
        "max_frames_per_query": WARM_FRAMES, "max_new_tokens": 4, "autostart": True,
        "precompute_window": precompute, "cache_mb": cache_mb,
    }, workdir / "soak_node.log")
    rng = np.random.default_rng(0)
    colour = [rng.integers(0, 256, (height, width, 3), dtype=np.uint8) for _ in range(4)]
    depth = (rng.integers(500, 4000, (height, width))).astype(np.uint16)
    timeline: list[list[float]] = []
    answered = failed = published = 0
    try:
        with CognitionClient(node_name=name, color_topic=topic, client_name="rynnec_soak_client") as client:
            _wait(lambda: client.wait_for_node(0.5), 300, "the node to become active", node)
            diag = _Diagnostics(client.node, name)
            qos = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=5, reliability=ReliabilityPolicy.RELIABLE)
            pub_c = client.node.create_publisher(Image, topic, qos)
            pub_d = client.node.create_publisher(Image, depth_topic, qos)
            _wait(lambda: pub_c.get_subscription_count() > 0, 30, "the node's colour subscription", node)
            active = rss_mb(node.proc.pid)

            def frame_pair(i: int, stamp: int) -> tuple[Image, Image]:
                c = convert.rgb_to_image(colour[i % len(colour)], stamp, "soak_optical")
                d = Image(height=height, width=width, encoding="16UC1", step=width * 2,
                          data=array.array("B", depth.tobytes()))
                d.header = c.header
                return c, d

            # Warm-up: one question about a whole window of the stream's frames (colour + depth, 1 s apart
            # so that sample_fps 1 takes them all), so the baseline holds what the first full-size window
            # maps once (code, thread pools, allocator arenas) and not only what a one-frame question does.
            for i in range(WARM_FRAMES):
                c, d = frame_pair(i, (i + 1) * 1_000_000_000)
                pub_d.publish(d)
                pub_c.publish(c)
                time.sleep(0.2)
            _wait(lambda: int(diag.get().get("frames_kept", "0")) >= WARM_FRAMES, 60,
                  "the warm-up frames to be buffered", node)
            client.ask("What is in front of the robot?", max_new_tokens=4, timeout_s=300)
            time.sleep(1.5)  # one more /diagnostics period, so its figures include the warm-up's
            warm = diag.get()
            # What the warm-up left in the buffer and the caches is part of what their parameters bound
            # (counted in the bound below), so it is not the model's fixed cost.
            held_at_baseline = float(warm.get("buffered_mb", 0.0)) + float(warm.get("engine_cache_mb", 0.0))
            baseline = rss_mb(node.proc.pid) - held_at_baseline
            stop = threading.Event()

            def ask_loop() -> None:
                nonlocal answered, failed
                while not stop.wait(question_period_s):
                    try:
                        client.ask("What is in front of the robot?", max_new_tokens=4, timeout_s=60)
                        answered += 1
                    except (RuntimeError, TimeoutError):
                        failed += 1

            asker = threading.Thread(target=ask_loop, daemon=True)
            asker.start()
            t0 = time.monotonic()
            next_sample = t0
            period = 1.0 / rate_hz
            while (now := time.monotonic()) - t0 < duration_s:
                stamp = int((now - t0) * 1e9) + (WARM_FRAMES + 1) * 1_000_000_000
                c, d = frame_pair(published, stamp)
                pub_d.publish(d)
                pub_c.publish(c)
                published += 1
                if now >= next_sample:
                    node.check()
                    values = diag.get()
                    rss = [round(rss_mb(node.proc.pid, f), 1) for f in ("VmRSS", "RssAnon", "RssFile")]
                    timeline.append([round(now - t0, 1), *rss, float(values.get("buffered_mb", "nan")),
                                     float(values.get("engine_cache_mb", "nan"))])
                    next_sample += 1.0
                time.sleep(max(0.0, t0 + published * period - time.monotonic()))
            stop.set()
            asker.join(timeout=70)
            elapsed = time.monotonic() - t0
            values = diag.get()
            client.node.destroy_publisher(pub_c)
            client.node.destroy_publisher(pub_d)
    except (TimeoutError, RuntimeError) as exc:
        return not_available(f"soak failed: {exc}")
    finally:
        node.stop()
    peak = max(row[1] for row in timeline)
    growth = peak - baseline
    bound = buffer_max_mb + cache_mb + MARGIN_MB
    return {
        "available": True,
        "duration_s": round(elapsed, 1),
        "frame_size_wh": [width, height],
        "frames_published": published,
        "publish_rate_hz": round(published / elapsed, 2),
        "frames_kept": int(values.get("frames_kept", 0)),
        "questions_answered": answered,
        "questions_failed": failed,
        "buffer_max_mb": buffer_max_mb,
        "precompute_window": precompute,
        "cache_mb": cache_mb,
        "rss_active_mb": round(active, 1),
        "rss_warmup_mb": round(baseline - active, 1),
        "rss_baseline_mb": round(baseline, 1),
        "held_at_baseline_mb": round(held_at_baseline, 1),
        "rss_peak_mb": round(peak, 1),
        "rss_growth_mb": round(growth, 1),
        "rss_growth_over_buffer_budget": round(growth / buffer_max_mb, 3),
        "buffered_mb_peak": max(row[4] for row in timeline),
        "engine_cache_mb_peak": max(row[5] for row in timeline),
        "margin_mb": MARGIN_MB,
        "bound_mb": bound,
        "rss_growth_over_bound": round(growth / bound, 3),
        "within_bound": growth <= bound,
        "timeline_columns": ["t_s", "rss_mb", "rss_anon_mb", "rss_file_mb", "buffered_mb", "engine_cache_mb"],
        "timeline": timeline,
        "method": "node subprocess keeping every frame; RSS from /proc/<pid>/status each second; baseline "
        "when active and warmed up by one question about a whole window (WARM_FRAMES frames of the stream's "
        "size and depth) before streaming, less the buffered frames and cached features it left (their "
        "parameters bound them); bound = buffer_max_mb + cache_mb + margin_mb",
    }


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("soak", help="node RSS over a long colour + depth stream with questions (needs ROS)")
    p.add_argument("--checkpoint", default="tiny", help="checkpoint dir, or tiny|small for a random one")
    p.add_argument("--duration-s", type=float, default=600.0)
    p.add_argument("--rate-hz", type=float, default=30.0)
    p.add_argument("--size", default="1280x720", help="frame size WxH")
    p.add_argument("--buffer-max-mb", type=int, default=200)
    p.add_argument("--question-period-s", type=float, default=5.0)
    p.add_argument("--no-precompute", action="store_true", help="precompute_window false on the node")
    p.add_argument("--cache-mb", type=int, default=64, help="the node's cache_mb (engine cache budget)")
    p.add_argument("--out", required=True, help="JSON report path")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from rynnec_ros.bench.ros_bench import ros_missing
    from rynnec_ros.bench.workload import resolve_checkpoint, scratch_dir

    why = ros_missing()
    width, height = (int(v) for v in args.size.lower().split("x"))
    with scratch_dir() as tmp:
        result = not_available(why) if why else soak(
            resolve_checkpoint(args.checkpoint, Path(tmp)), Path(tmp), args.duration_s, args.rate_hz, width,
            height, args.buffer_max_mb, args.question_period_s, not args.no_precompute, args.cache_mb)
    Path(args.out).write_text(json.dumps(result, indent=1))
    if result.get("available"):
        print(f"wrote {args.out}: RSS growth {result['rss_growth_mb']} MB for a {result['buffer_max_mb']} MB "
              f"buffer ({result['rss_growth_over_buffer_budget']}x) and {result['cache_mb']} MB of engine "
              f"caches; bound {result['bound_mb']} MB, within bound: {result['within_bound']}")
    else:
        print(f"wrote {args.out}: not available: {result['reason']}")
    return 0
