"""Publish a rosbag2 bag (sqlite3 or MCAP) through rclpy at its recorded rate, without ``ros2 bag``.

The bag is read with the pure-Python ``rosbags`` library and each record's CDR bytes are published
unchanged (rclpy publishes serialized messages), so no message is decoded and re-encoded on the way.
Looping replays the same stamps again, which is exactly the time jump the node must survive.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from rynnec_ros.core.types import NS_PER_S


def message_class(msgtype: str) -> type:
    """'sensor_msgs/msg/Image' -> the rclpy message class; ValueError when it is not installed."""
    parts = msgtype.split("/")
    if len(parts) != 3 or parts[1] != "msg":
        raise ValueError(f"unsupported message type name '{msgtype}'")
    try:
        return getattr(importlib.import_module(f"{parts[0]}.msg"), parts[2])
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"message type {msgtype} is not available in this ROS installation") from exc


def _fallback_qos(topic: str) -> QoSProfile:
    """QoS for a topic whose bag recorded no offered profiles (bags written before QoS was recorded).

    ``ros2 bag play`` would offer reliable + volatile here; /tf_static is offered transient-local instead
    because tf2's static listener subscribes transient-local and never receives a volatile publication.
    """
    if topic == "/tf_static":
        return QoSProfile(depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                          reliability=ReliabilityPolicy.RELIABLE)
    return QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)


def recorded_qos(topic: str, offered: Sequence[Any]) -> QoSProfile:
    """The QoS ``ros2 bag play`` offers for ``topic`` given the bag's recorded offers (rosbags ``Qos``).

    Mirrors rosbag2_transport's ``Rosbag2QoS::adapt_offer_to_recorded_offers`` (Humble/Jazzy): reliable
    only when every recorded publisher offered reliable, transient-local only when every one offered it;
    otherwise best effort / volatile, so the replay matches every subscriber the recording matched.
    """
    if not offered:
        return _fallback_qos(topic)
    reliable = all(q.reliability.name == "RELIABLE" for q in offered)
    latched = all(q.durability.name == "TRANSIENT_LOCAL" for q in offered)
    return QoSProfile(
        depth=max([10, *(int(q.depth) for q in offered)]),
        reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE,
    )


def open_reader(path: Path) -> Any:
    """An ``AnyReader`` that also opens bags recorded without message definitions.

    Humble's rosbag2 (sqlite3 schema 3, metadata version 5) stores no message definitions; rosbags then
    needs a default typestore or raises "Bag contains no type definitions". Humble's message set is the
    oldest a robot records with, and bags that do carry definitions keep using their own.
    """
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    return AnyReader([path], default_typestore=get_typestore(Stores.ROS2_HUMBLE))


class BagReplayer:
    """Replays one bag on ``node``; ``run`` blocks until done (or ``stop`` is called)."""

    def __init__(
        self,
        node: Node,
        bag: Path | str,
        rate: float = 1.0,
        loop: bool = False,
        clock: bool = False,
        topics: Sequence[str] | None = None,
        max_loops: int | None = None,
    ) -> None:
        if not rate > 0:
            raise ValueError(f"rate must be > 0, got {rate}")
        self._node = node
        self._path = Path(bag)
        if not self._path.exists():
            raise ValueError(f"bag {self._path} does not exist")
        self.rate, self.loop, self.clock = rate, loop, clock
        self.max_loops = max_loops
        self._stop = False
        with open_reader(self._path) as reader:
            if not reader.is2:
                raise ValueError(f"{self._path} is not a rosbag2 bag (ROS 1 bags are not replayed)")
            conns = [c for c in reader.connections if topics is None or c.topic in topics]
            if not conns:
                raise ValueError(f"no topic of {list(topics or [])} in {self._path}")
            self.topics = sorted({c.topic for c in conns})
            self._pubs: dict[str, Any] = {}
            offers: dict[str, list[Any]] = {}
            for c in conns:
                offers.setdefault(c.topic, []).extend(getattr(c.ext, "offered_qos_profiles", None) or [])
            self.qos: dict[str, QoSProfile] = {}
            for c in conns:
                if c.topic not in self._pubs:
                    cls = message_class(c.msgtype)
                    self.qos[c.topic] = recorded_qos(c.topic, offers[c.topic])
                    self._pubs[c.topic] = node.create_publisher(cls, c.topic, self.qos[c.topic])
        self._clock_pub = None
        if clock:
            from rosgraph_msgs.msg import Clock

            self._clock_pub = node.create_publisher(Clock, "/clock", 10)
        self.published = 0
        self.loops = 0

    def wait_for_subscribers(self, topics: str | Sequence[str], timeout_s: float) -> bool:
        """Block until each of ``topics`` has a subscriber (the node started first), at most ``timeout_s``.

        Matching is seen on the publisher side first; a short pause then lets the subscriber side finish
        discovery too, so the first recorded messages are not published into the void.
        """
        names = [topics] if isinstance(topics, str) else list(topics)
        missing = [t for t in names if t not in self._pubs]
        if missing:
            raise ValueError(f"topics {missing} are not in the bag")
        deadline = time.monotonic() + timeout_s
        while any(self._pubs[t].get_subscription_count() == 0 for t in names):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        time.sleep(0.5)
        return True

    def stop(self) -> None:
        self._stop = True

    def run(self, on_message: Callable[[str, int], None] | None = None) -> int:
        """Publish the bag (looping when asked); returns the number of messages published."""
        while not self._stop:
            self._play_once(on_message)
            self.loops += 1
            if not self.loop or (self.max_loops is not None and self.loops >= self.max_loops):
                break
        time.sleep(0.5)  # let DDS deliver the last (fragmented) messages before the caller tears down
        return self.published

    def _play_once(self, on_message: Callable[[str, int], None] | None) -> None:
        with open_reader(self._path) as reader:
            conns = [c for c in reader.connections if c.topic in self._pubs]
            start_wall = time.monotonic()
            t0: int | None = None
            for conn, t_ns, raw in reader.messages(connections=conns):
                if self._stop:
                    return
                if t0 is None:
                    t0 = t_ns
                delay = start_wall + (t_ns - t0) / NS_PER_S / self.rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                if self._clock_pub is not None:
                    from builtin_interfaces.msg import Time
                    from rosgraph_msgs.msg import Clock

                    self._clock_pub.publish(Clock(clock=Time(sec=t_ns // NS_PER_S, nanosec=t_ns % NS_PER_S)))
                self._pubs[conn.topic].publish(bytes(raw))
                self.published += 1
                if on_message is not None:
                    on_message(conn.topic, t_ns)
