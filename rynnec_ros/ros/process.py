"""The node's process: ``ros2 run rynnec_ros rynnec_node`` (and ``rynnec-ros node``).

Owns what belongs to the process rather than to the node: the allocator setting, signal handling, the
executor, the lifecycle autostart, draining the last answers, and a prompt exit (SIGINT, SIGTERM and
the shutdown transition each exit 0).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from typing import NoReturn

import rclpy
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.lifecycle import TransitionCallbackReturn
from rclpy.signals import SignalHandlerOptions

from rynnec_ros.ros.node import CognitionNode

EXECUTOR_THREADS = 4  # ingest, services/action bookkeeping, timers, the one running goal's result
DRAIN_S = 1.5  # how long shutdown keeps spinning so the last answers leave before the node goes


def _return_freed_frames_to_the_os() -> None:
    """glibc raises its mmap threshold after each large free, up to 32 MiB, so multi-MB camera frames soon
    come from the heap, and a buffer that keeps evicting them leaves the process holding the holes. A
    fixed threshold keeps every frame-sized block mmapped, returned to the OS when freed (bench soak,
    720p at 30 Hz, 200 MB buffer: RSS growth 725 MB over 180 s without it, 580 MB over 150 s at 1 MiB).
    128 KiB (glibc's starting value) also maps the engine's cached feature tensors, whose evictions
    left ~60 MB of free holes in the heap at 1 MiB (ten-minute soak peak growth 439 -> 400 MB; see
    docs/acceleration.md). No-op off glibc."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    m_mmap_threshold = -3  # malloc.h
    libc.mallopt(m_mmap_threshold, 128 << 10)


def run(args: list[str] | None = None, autostart: bool | None = None) -> NoReturn:
    """Run the node until SIGINT/SIGTERM or the shutdown transition, then exit the process with 0."""
    _return_freed_frames_to_the_os()
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    node = CognitionNode()
    executor = MultiThreadedExecutor(num_threads=EXECUTOR_THREADS)
    executor.add_node(node)
    start = node.params.process.autostart if autostart is None else autostart
    try:
        if start:
            if node.trigger_configure() != TransitionCallbackReturn.SUCCESS:
                node.get_logger().error("autostart: configure failed; staying unconfigured")
            elif node.trigger_activate() != TransitionCallbackReturn.SUCCESS:
                node.get_logger().error("autostart: activate failed")
        while not stop.is_set() and not node.finished.is_set() and rclpy.ok():
            executor.spin_once(timeout_sec=0.1)
        node.close("the node is shutting down")
        deadline = time.monotonic() + DRAIN_S
        while node.pending() and time.monotonic() < deadline and rclpy.ok():  # the last answers leave
            executor.spin_once(timeout_sec=0.05)
    except ExternalShutdownException:
        pass
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
    # Everything that needed closing is closed; interpreter finalisation (torch, transformers, the DDS
    # participant's threads) would take seconds more, and a supervisor waits for the exit.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def main() -> None:
    """Entry point of ``ros2 run rynnec_ros rynnec_node`` (arguments are ROS arguments)."""
    run(sys.argv)
