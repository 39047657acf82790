"""Publish a rosbag2 bag (sqlite3 or MCAP) through rclpy at its recorded rate, without ``ros2 bag``.

The bag is read with the pure-Python ``rosbags`` library and each record's CDR bytes are published
unchanged (rclpy publishes serialized messages), so no message is decoded and re-encoded on the way.
Looping replays the same stamps again, which is exactly the time jump the node must survive; a replay
with ``stamp_offset_ns`` instead shifts every header stamp (and /tf's transforms), which a planner uses to
send a window again after frames were lost: under new stamps later than everything the node buffered,
never under the old ones (those would be a jump back past ``time_jump_back_s`` that the buffer drops).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from rynnec_ros.core.types import NS_PER_S

# After the last message, how long the player waits for the node to acknowledge every reliable message.
ACK_TIMEOUT_S = 5.0
# Where a publisher cannot report acknowledgements (rclpy before Iron): a pause for the last messages.
_NO_ACK_PAUSE_S = 0.5


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


def bag_topics(path: Path | str) -> dict[str, str]:
    """Topic name -> message type (``sensor_msgs/msg/Image``) of a rosbag2 bag, sqlite3 or MCAP.

    ``path`` is the bag's directory (``metadata.yaml`` beside its ``.db3``/``.mcap`` files), as
    ``ros2 bag record`` writes it. ValueError, saying what was expected, for anything else: a missing
    path, a bare ``.mcap``/``.db3`` file, a directory without ``metadata.yaml``, a ROS 1 bag, a bag the
    reader cannot open, or a topic recorded under two types.
    """
    p = Path(path)
    expected = ("a rosbag2 bag directory (metadata.yaml beside its .mcap or .db3 files, as ros2 bag record "
                "writes)")
    if not p.exists():
        raise ValueError(f"bag {p} does not exist: expected {expected}")
    if not p.is_dir():
        hint = ""
        if p.suffix in (".mcap", ".db3"):
            hint = f"; if it is one file of a bag, give the bag's directory {p.parent}"
        raise ValueError(f"bag {p} is a file, not {expected}{hint}")
    if not (p / "metadata.yaml").is_file():
        raise ValueError(f"bag {p} has no metadata.yaml: expected {expected}")
    try:
        with open_reader(p) as reader:
            if not reader.is2:
                raise ValueError(f"{p} is not a rosbag2 bag (ROS 1 bags are not read)")
            topics: dict[str, str] = {}
            for c in reader.connections:
                if topics.setdefault(c.topic, c.msgtype) != c.msgtype:
                    raise ValueError(
                        f"bag {p} records topic {c.topic} as both {topics[c.topic]} and {c.msgtype}")
    except ValueError:
        raise
    except Exception as exc:  # rosbags' own errors (bad metadata, unreadable storage) say what was wrong
        raise ValueError(f"cannot read bag {p} ({type(exc).__name__}: {exc}): expected {expected}") from exc
    return dict(sorted(topics.items()))


def shift_stamps(msg: Any, offset_ns: int) -> Any:
    """``msg`` with its ``header.stamp`` and, for tf2_msgs/TFMessage, every transform's stamp moved by
    ``offset_ns`` (in place; returned for convenience). Messages without a header are left unchanged."""
    from rynnec_ros.ros import convert

    header = getattr(msg, "header", None)
    if header is not None and hasattr(header, "stamp"):
        header.stamp = convert.ns_to_stamp(convert.stamp_to_ns(header.stamp) + offset_ns)
    for t in getattr(msg, "transforms", None) or []:
        t.header.stamp = convert.ns_to_stamp(convert.stamp_to_ns(t.header.stamp) + offset_ns)
    return msg


def _msg_stamps(msg: Any) -> list[int]:
    from rynnec_ros.ros import convert

    out = []
    header = getattr(msg, "header", None)
    if header is not None and hasattr(header, "stamp"):
        out.append(convert.stamp_to_ns(header.stamp))
    out += [convert.stamp_to_ns(t.header.stamp) for t in getattr(msg, "transforms", None) or []]
    return out


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
            self._classes: dict[str, type] = {}
            offers: dict[str, list[Any]] = {}
            for c in conns:
                offers.setdefault(c.topic, []).extend(getattr(c.ext, "offered_qos_profiles", None) or [])
            self.qos: dict[str, QoSProfile] = {}
            for c in conns:
                if c.topic not in self._pubs:
                    cls = message_class(c.msgtype)
                    self._classes[c.topic] = cls
                    self.qos[c.topic] = recorded_qos(c.topic, offers[c.topic])
                    self._pubs[c.topic] = node.create_publisher(cls, c.topic, self.qos[c.topic])
        self._clock_pub = None
        if clock:
            from rosgraph_msgs.msg import Clock

            self._clock_pub = node.create_publisher(Clock, "/clock", 10)
        self.published = 0
        self.loops = 0
        self.acked: bool | None = None  # after run: every reliable message acknowledged (None: not known)

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

    def run(self, on_message: Callable[[str, int], None] | None = None, stamp_offset_ns: int = 0,
            ack_timeout_s: float = ACK_TIMEOUT_S) -> int:
        """Publish the bag (looping when asked); returns the number of messages published (all runs).

        ``stamp_offset_ns`` shifts every header stamp (see ``shift_stamps``) and /clock; the messages are
        then decoded and encoded again instead of passed through. At the end the player waits, at most
        ``ack_timeout_s``, until every subscriber acknowledged each reliable message (``acked``), so the
        last samples (/tf's among them) are not lost when the process exits right after.
        """
        while not self._stop:
            self._play_once(on_message, int(stamp_offset_ns))
            self.loops += 1
            if not self.loop or (self.max_loops is not None and self.loops >= self.max_loops):
                break
        self.acked = self.wait_for_acked(ack_timeout_s)
        return self.published

    def wait_for_acked(self, timeout_s: float = ACK_TIMEOUT_S) -> bool | None:
        """True once every matched subscriber acknowledged every message of the reliable publishers, False
        when ``timeout_s`` ran out first; None where rclpy cannot tell (no ``wait_for_all_acked``: Humble),
        after a short pause instead. Best-effort publishers are never acknowledged: when the bag has any,
        the same pause lets their last (fragmented) messages arrive before the caller tears down."""
        pubs = [p for t, p in self._pubs.items() if self.qos[t].reliability == ReliabilityPolicy.RELIABLE]
        best_effort = len(pubs) < len(self._pubs)
        if not all(hasattr(p, "wait_for_all_acked") for p in pubs):
            time.sleep(_NO_ACK_PAUSE_S)
            return None
        deadline = time.monotonic() + max(timeout_s, 0.0)
        ok = True
        for pub in pubs:
            left = max(deadline - time.monotonic(), 0.0)
            ok = bool(pub.wait_for_all_acked(Duration(nanoseconds=int(left * NS_PER_S)))) and ok
        if best_effort:
            time.sleep(_NO_ACK_PAUSE_S)
        return ok

    def stamp_range_ns(self) -> tuple[int, int] | None:
        """Oldest and newest header stamp (transforms' included) of the replayed topics, None when no
        message has one; reads and decodes the whole bag."""
        from rclpy.serialization import deserialize_message

        lo: int | None = None
        hi: int | None = None
        with open_reader(self._path) as reader:
            conns = [c for c in reader.connections if c.topic in self._pubs]
            for conn, _t, raw in reader.messages(connections=conns):
                for s in _msg_stamps(deserialize_message(bytes(raw), self._classes[conn.topic])):
                    lo = s if lo is None else min(lo, s)
                    hi = s if hi is None else max(hi, s)
        return None if lo is None or hi is None else (lo, hi)

    def _play_once(self, on_message: Callable[[str, int], None] | None, offset_ns: int = 0) -> None:
        if offset_ns:
            from rclpy.serialization import deserialize_message
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

                    c_ns = t_ns + offset_ns
                    self._clock_pub.publish(Clock(clock=Time(sec=c_ns // NS_PER_S, nanosec=c_ns % NS_PER_S)))
                if offset_ns:
                    msg = shift_stamps(deserialize_message(bytes(raw), self._classes[conn.topic]), offset_ns)
                    self._pubs[conn.topic].publish(msg)
                else:
                    self._pubs[conn.topic].publish(bytes(raw))
                self.published += 1
                if on_message is not None:
                    on_message(conn.topic, t_ns)
