"""A raw rclpy peer for the black-box attack tests: own context, node and executor thread; every wait
bounded. Built from rclpy's public API only, so the attacks test what any client can send."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any


def wait(fut: Any, timeout: float) -> bool:
    """Whether ``fut`` completed within ``timeout`` seconds."""
    ev = threading.Event()
    fut.add_done_callback(lambda _: ev.set())
    return ev.wait(timeout)


class Peer:
    def __init__(self, name: str) -> None:
        import rclpy
        from rclpy.executors import MultiThreadedExecutor

        self.ctx = rclpy.Context()
        rclpy.init(context=self.ctx)
        self.node = rclpy.create_node(name, context=self.ctx)
        self.ex = MultiThreadedExecutor(num_threads=4, context=self.ctx)
        self.ex.add_node(self.node)
        self.th = threading.Thread(target=self.ex.spin, daemon=True)
        self.th.start()
        self._clients: dict[tuple, Any] = {}
        self._pubs: dict[tuple, Any] = {}

    def close(self) -> None:
        import rclpy

        self.ex.shutdown(timeout_sec=5)
        self.node.destroy_node()
        rclpy.shutdown(context=self.ctx)
        self.th.join(5)

    def __enter__(self) -> Peer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def client(self, kind: Any, name: str) -> Any:
        key = (kind, name)
        if key not in self._clients:
            # As deep as the node's service queues (docs/ros.md): only the node can lose a response.
            from rclpy.qos import QoSProfile, ReliabilityPolicy

            qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
            self._clients[key] = self.node.create_client(kind, name, qos_profile=qos)
        return self._clients[key]

    def action_client(self, kind: Any, name: str, **kwargs: Any) -> Any:
        """An ActionClient made while the executor does not see this node: rclpy's ActionClient adds
        itself to the node's waitables before it has its ``_lock``, and a spinning executor that reaches
        it then dies with AttributeError (seen in CI, 2026-12-03), leaving every later reply unheard.
        It is the package's SerialActionClient (rclpy's, with Kilted's locking on Jazzy too), so that the
        tests' sending thread and the executor's threads cannot lose a reply between them."""
        self.ex.remove_node(self.node)
        try:
            from rynnec_ros.ros.client import SerialActionClient

            return SerialActionClient(self.node, kind, name, **kwargs)
        finally:
            self.ex.add_node(self.node)

    def forget(self, kind: Any, name: str) -> None:
        """Destroy the cached client of ``name``: the next call makes a fresh one (its own reply path)."""
        cli = self._clients.pop((kind, name), None)
        if cli is not None:
            self.node.destroy_client(cli)

    def spinning(self) -> bool:
        """Whether the executor thread is still alive (a callback that raised would have ended it)."""
        return self.th.is_alive()

    def call_async(self, kind: Any, name: str, req: Any) -> Any:
        cli = self.client(kind, name)
        assert cli.wait_for_service(timeout_sec=60.0), f"{name} not available"
        return cli.call_async(req)

    def call(self, kind: Any, name: str, req: Any, timeout: float = 30.0) -> Any:
        """The response, or None when the service is absent or no response came within ``timeout``."""
        cli = self.client(kind, name)
        if not cli.wait_for_service(timeout_sec=min(timeout, 30.0)):
            return None
        fut = cli.call_async(req)
        if not wait(fut, timeout):
            cli.remove_pending_request(fut)
            return None
        return fut.result()

    def pub(self, kind: Any, topic: str, latched: bool = False) -> Any:
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

        key = (kind, topic)
        if key not in self._pubs:
            durability = DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE
            qos = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE, durability=durability)
            self._pubs[key] = self.node.create_publisher(kind, topic, qos)
        return self._pubs[key]


def publish_until_listed(peer: Peer, node: Any, name: str, topic: str, publish: Callable[[], None],
                         listed: Callable[[Any], bool], timeout: float = 120.0) -> str | None:
    """Set-up, not an attack: once node ``name`` subscribes to ``topic`` (within 90 s), ``publish()``
    until ``listed(ListFrames response)`` holds.

    A ListFrames call that gets no reply (DDS can drop a reply sent before the client's reply path is
    matched) is retried on a fresh client, so a lost set-up reply cannot fail a test; the attacks' own
    calls are never retried. Returns None once listed, else why not (for the test's failure message).
    """
    from rynnec_ros.srv import ListFrames

    deadline = time.monotonic() + 90
    while not any(i.node_name == name for i in peer.node.get_subscriptions_info_by_topic(topic)):
        if not node.alive() or time.monotonic() > deadline:
            return f"the node never subscribed to {topic}"
        time.sleep(0.1)
    service, empty, unanswered = f"/{name}/list_frames", 0, 0
    deadline = time.monotonic() + timeout
    while True:
        publish()
        res = peer.call(ListFrames, service, ListFrames.Request(), 5)
        if res is not None and listed(res):
            return None
        if res is None:
            unanswered += 1
            peer.forget(ListFrames, service)
        else:
            empty += 1
        if time.monotonic() > deadline or not node.alive():
            return (f"{empty} replies without the frames, {unanswered} calls unanswered, "
                    f"peer spinning: {peer.spinning()}")
        time.sleep(0.25)


def publish_frames_until_listed(peer: Peer, node: Any, name: str, topic: str, stamps_ns: list[int],
                                height: int, width: int) -> str | None:
    """Set-up: random rgb8 frames of ``height`` x ``width`` under ``stamps_ns`` on ``topic`` until node
    ``name`` lists them all (``publish_until_listed``); None once listed, else why not."""
    import numpy as np
    from builtin_interfaces.msg import Time
    from sensor_msgs.msg import Image

    pub = peer.pub(Image, topic)
    rng = np.random.default_rng(0)

    def publish() -> None:
        for ns in stamps_ns:
            img = Image(height=height, width=width, encoding="rgb8", step=width * 3)
            img.data = rng.integers(0, 256, (height, width, 3), dtype=np.uint8).tobytes()
            img.header.stamp = Time(sec=ns // 10**9, nanosec=ns % 10**9)
            img.header.frame_id = "cam"
            pub.publish(img)
            time.sleep(0.02)

    def listed(res: Any) -> bool:
        return set(stamps_ns) <= {s.sec * 10**9 + s.nanosec for s in res.stamps}

    return publish_until_listed(peer, node, name, topic, publish, listed)

