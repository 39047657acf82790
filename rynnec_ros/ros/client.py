"""A plain-Python client of the cognition node for planners, the eval harness and benchmarks.

It owns its rclpy context, node and executor thread, so callers use ordinary blocking methods with
numpy arrays and the shared ``Region``/``Answer`` types, and never touch ROS messages themselves.
``ask_async`` and ``segment_async`` send an action goal and return a handle instead (``is_done()``,
``result()``, ``cancel()``, as nav2_simple_commander's tasks), for callers that must not block: a
behaviour tree's tick (``rynnec_ros/ros/behaviours.py``), a planner loop doing other work meanwhile.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import InvalidStateError
from typing import Any, TypeVar

import numpy as np
import rclpy
from action_msgs.msg import GoalStatus
from geometry_msgs.msg import Point
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rclpy.action import ActionClient
from rclpy.clock import Clock, ClockType
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image

from rynnec_ros.action import Ask
from rynnec_ros.action import Segment as SegmentAction
from rynnec_ros.core import masks as rle_codec
from rynnec_ros.core.types import Answer, Region
from rynnec_ros.msg import Region as RegionMsg
from rynnec_ros.msg import RegionMask, RegionPrompt
from rynnec_ros.ros import convert
from rynnec_ros.ros.qos import SERVICE_QOS
from rynnec_ros.srv import AskQuestion, ListFrames, Segment

# Discovery is two one-way matches: a fraction of a second covers the reader's on a loaded machine.
_READER_MATCH_SETTLE_S = 0.5
# A window sent again goes this far (at least) after the newest stamp the node holds or was sent: more
# than a camera's frame period, so the node's ingest_fps thinning keeps the re-sent first frame.
RESEND_GAP_NS = 1_000_000_000
# A query without an answer after this long is sent again (``_call``'s resend_s): far above a reply's
# round trip on a loaded machine, far below the callers' timeouts.
QUERY_RESEND_S = 2.0
# How many stamps a FramesNotBuffered message lists before it summarises.
_LIST_STAMPS = 8
# A goal sent by ``ask_async`` carries the handle's timeout_s plus this as its own timeout_s: the handle's
# cancel, sent when the handle's time is up, is what stops the node, and the node's own deadline only backs
# it up for a cancel that never arrives (a client that died). Without the margin the two stops race and the
# goal ends CANCELED or ABORTED by chance.
CANCEL_GRACE_S = 2.0
# How often the client's timer looks for handles whose own timeout has passed (the deadline's resolution
# when nobody calls is_done()/wait()).
_WATCHDOG_PERIOD_S = 0.2


def _ns(stamp: Any) -> int:
    return convert.stamp_to_ns(stamp)


def describe_stamps(stamps_ns: Sequence[int]) -> str:
    """'3 frames: [a, b, c] ns' for a few stamps, 'N frames, a..b ns' for many; 'no frames' for none."""
    stamps = sorted(int(s) for s in stamps_ns)
    if not stamps:
        return "no frames"
    n = f"{len(stamps)} frame{'s' if len(stamps) != 1 else ''}"
    if len(stamps) <= _LIST_STAMPS:
        return f"{n}: {stamps} ns"
    return f"{n}, {stamps[0]}..{stamps[-1]} ns"


class FramesNotBuffered(RuntimeError):
    """Frames a planner is about to ask about are not in the node's buffer (``missing``, ns), after
    ``waited_s``; ``buffered`` is what the node holds. Raised before any question is sent about them."""

    def __init__(
        self, missing: Sequence[int], buffered: Sequence[int], waited_s: float, hint: str = ""
    ) -> None:
        self.missing = sorted(int(s) for s in missing)
        self.buffered = sorted(int(s) for s in buffered)
        self.waited_s = waited_s
        super().__init__(
            f"the node has not buffered {describe_stamps(self.missing)} after {waited_s:.1f} s; it holds "
            f"{describe_stamps(self.buffered)}{hint}"
        )


class SerialActionClient(ActionClient):  # type: ignore[misc]
    """rclpy's ActionClient with its sends and takes under one lock, as Kilted's rclpy (9.1.2,
    ``rclpy/action/client.py``) holds them. Jazzy's (7.1.6) sends a goal, cancel or result request and
    only then registers its sequence number; an executor thread that takes and executes the reply in
    between finds no such request, logs "Ignoring unexpected goal response", and the request's future
    never completes (CI, 2026-12-04: one goal of a burst under CPU load). Any client that sends from one
    thread while its executor spins in another -- this module's, a planner's -- meets it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Before rclpy's constructor: it adds the client to the node's waitables, and a spinning
        # executor may call take_data at once.
        self._serial = threading.RLock()
        super().__init__(*args, **kwargs)

    def take_data(self) -> Any:
        with self._serial:
            return super().take_data()

    def send_goal_async(self, *args: Any, **kwargs: Any) -> Any:
        with self._serial:
            return super().send_goal_async(*args, **kwargs)

    def _cancel_goal_async(self, *args: Any, **kwargs: Any) -> Any:
        with self._serial:
            return super()._cancel_goal_async(*args, **kwargs)

    def _get_result_async(self, *args: Any, **kwargs: Any) -> Any:
        with self._serial:
            return super()._get_result_async(*args, **kwargs)


def _quote(text: str, limit: int = 60) -> str:
    """``text`` quoted for a message, shortened past ``limit`` characters."""
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


class RequestHandle:
    """One goal in flight on one of the node's actions, polled without blocking: ``is_done()``,
    ``result()``, ``cancel()`` (nav2_simple_commander's ``isTaskComplete``/``getResult``/``cancelTask``);
    made by ``ask_async`` (``AskHandle``) and ``segment_async`` (``SegmentHandle``).

    It is done when the node's result has arrived, when the node rejected the goal, or when the handle's
    own ``timeout_s`` (counted from sending) has passed: then ``result()`` raises TimeoutError and the
    handle sends the action's cancel itself, so the node stops working on what nobody waits for. The
    deadline is checked on every ``is_done()``/``wait()`` call and by the client's timer every
    ``_WATCHDOG_PERIOD_S`` (on its executor thread), so it takes effect also for a caller that stopped
    polling. ``cancel()`` sends the cancel request (once; to a goal not accepted yet, as soon as it is);
    the handle is then done when the node's result arrives (``success=false``, "cancelled", status
    CANCELED) or at its own timeout, whichever is first. ``feedback_text`` is all text generated so far,
    ``pieces`` the number of feedback messages; ``status`` the goal's action_msgs/GoalStatus as last
    reported (STATUS_UNKNOWN before acceptance; the terminal one from the node's result, also when that
    came after the timeout). Callbacks run on the client's executor thread; every method is safe from
    any thread.
    """

    def __init__(self, what: str, action: Any, goal: Any, timeout_s: float, convert: Callable[[Any], Answer],
                 on_text: Callable[[str], None] | None = None,
                 cancel_after_pieces: int | None = None) -> None:
        self.what = what
        self.timeout_s = float(timeout_s)
        self.deadline = time.monotonic() + self.timeout_s
        self._convert = convert
        self._lock = threading.RLock()
        self._done = threading.Event()
        self._error: tuple[type[Exception], str] | None = None
        self._cancelled = False
        self.response: Any | None = None
        """The node's raw action result once it came, also when it came after the handle's own timeout or
        cancel (for a look at what the node did)."""
        self.feedback_text = ""
        self.pieces = 0
        self._on_text = on_text
        self._cancel_after = cancel_after_pieces
        self._goal: Any | None = None  # rclpy's ClientGoalHandle once the node accepted the goal
        self._final_status: int | None = None
        if not action.server_is_ready():
            self._fail(RuntimeError, f"action {action._action_name} is not available (wait_for_node first)")
            return
        sent = action.send_goal_async(goal, feedback_callback=self._on_feedback)
        sent.add_done_callback(self._on_goal_reply)

    def is_done(self) -> bool:
        """True once ``result()`` answers without waiting (result, rejection, own timeout)."""
        if not self._done.is_set() and time.monotonic() >= self.deadline:
            self._expire()
        return self._done.is_set()

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block until done or ``timeout_s`` (None: until done, at most the handle's own timeout)."""
        end = math.inf if timeout_s is None else time.monotonic() + timeout_s
        while not self.is_done():
            now = time.monotonic()
            if now >= end:
                return False
            self._done.wait(min(self.deadline, end) - now + 0.001)
        return True

    def result(self) -> Answer:
        """The answer. InvalidStateError while not done; TimeoutError after the handle's own timeout;
        RuntimeError with the node's reason when it rejected or failed the goal (or it was cancelled)."""
        if not self.is_done():
            raise InvalidStateError(f"{self.what} is still in flight; poll is_done() first")
        if self._error is not None:
            kind, message = self._error
            raise kind(message)
        return self._convert(self.response)

    def cancel(self) -> None:
        """Cancel the goal (idempotent; a no-op once answered)."""
        with self._lock:
            if self._cancelled or (self._done.is_set() and self._error is None):
                return  # already cancelled or answered (after its own timeout the cancel went already)
            self._cancelled = True
            goal = self._goal
        if goal is not None:
            goal.cancel_goal_async()

    @property
    def frame_stamps_ns(self) -> list[int]:
        """Stamps of the frames the node used (from its result; empty before it or when it failed)."""
        return [] if self.response is None else [_ns(s) for s in self.response.frame_stamps]

    @property
    def goal_id(self) -> bytes | None:
        """The goal's UUID once the node accepted it (as on the action's status topic and in its logs)."""
        goal = self._goal
        return None if goal is None else bytes(goal.goal_id.uuid)

    @property
    def status(self) -> int:
        if self._final_status is not None:
            return self._final_status
        goal = self._goal
        return GoalStatus.STATUS_UNKNOWN if goal is None else int(goal.status)

    def _fail(self, kind: type[Exception], message: str) -> None:
        with self._lock:
            if not self._done.is_set():
                self._error = (kind, message)
                self._done.set()

    def _expire(self) -> None:
        self._fail(TimeoutError, f"no answer to {self.what} within its timeout of {self.timeout_s:g} s")
        self.cancel()  # the node need not finish what nobody waits for any more

    def _on_goal_reply(self, future: Any) -> None:
        goal = future.result()
        if not goal.accepted:
            self._fail(RuntimeError, "the node rejected the goal (not active, or its request queue is full)")
            return
        with self._lock:
            self._goal = goal
            cancel = self._cancelled  # cancelled (or timed out) before the acceptance came
        if cancel:
            goal.cancel_goal_async()
        goal.get_result_async().add_done_callback(self._on_result)

    def _on_result(self, future: Any) -> None:
        reply = future.result()
        self._final_status = int(reply.status)
        with self._lock:  # after the handle's own timeout: kept as `response`, result() still TimeoutError
            self.response = reply.result
            self._done.set()

    def _on_feedback(self, msg: Any) -> None:
        self.feedback_text, self.pieces = msg.feedback.text, int(msg.feedback.pieces)
        if self._on_text is not None:
            self._on_text(msg.feedback.delta)
        if self._cancel_after is not None and self.pieces >= self._cancel_after:
            self.cancel()


class AskHandle(RequestHandle):
    """A question on the ``~/ask_stream`` action (``CognitionClient.ask_async``)."""

    def __init__(self, action: Any, goal: Any, timeout_s: float, convert: Callable[[Any], Answer],
                 on_text: Callable[[str], None] | None = None,
                 cancel_after_pieces: int | None = None) -> None:
        super().__init__(f"the question {_quote(goal.question)}", action, goal, timeout_s, convert, on_text,
                         cancel_after_pieces)


class SegmentHandle(RequestHandle):
    """A referring segmentation on the ``~/segment_stream`` action (``CognitionClient.segment_async``)."""

    def __init__(self, action: Any, goal: Any, timeout_s: float, convert: Callable[[Any], Answer],
                 on_text: Callable[[str], None] | None = None) -> None:
        super().__init__(f"the segmentation {_quote(goal.expression)}", action, goal, timeout_s, convert,
                         on_text)


_H = TypeVar("_H", bound=RequestHandle)


class CognitionClient:
    """Blocking access to ``<ns>/rynnec/ask`` and ``<ns>/rynnec/segment`` (and frame publishing), and
    non-blocking handles on the actions ``~/ask_stream`` and ``~/segment_stream`` (``ask_async``,
    ``segment_async``).

    ``node_namespace`` is the namespace the node runs in; ``node_name`` its name. ``last_response``
    keeps the raw service response of the latest call (stamps of the frames used, per-mask headers).
    """

    def __init__(
        self,
        node_namespace: str = "",
        node_name: str = "rynnec",
        color_topic: str = "/camera/color/image_raw",
        client_name: str = "rynnec_client",
    ) -> None:
        self._context = rclpy.Context()
        rclpy.init(context=self._context)
        self.node = rclpy.create_node(client_name, context=self._context)
        base = f"{node_namespace.rstrip('/')}/{node_name}"
        if not base.startswith("/"):
            base = "/" + base
        # As deep as the node's own service queues: responses to a burst of calls are not dropped here.
        qos = SERVICE_QOS
        self._ask: Any = self.node.create_client(AskQuestion, f"{base}/ask", qos_profile=qos)
        self._segment: Any = self.node.create_client(Segment, f"{base}/segment", qos_profile=qos)
        self._set_params: Any = self.node.create_client(SetParameters, f"{base}/set_parameters")
        self._ask_stream: Any = SerialActionClient(
            self.node, Ask, f"{base}/ask_stream", goal_service_qos_profile=qos,
            result_service_qos_profile=qos, cancel_service_qos_profile=qos)
        self._segment_stream: Any = SerialActionClient(
            self.node, SegmentAction, f"{base}/segment_stream", goal_service_qos_profile=qos,
            result_service_qos_profile=qos, cancel_service_qos_profile=qos)
        self._list_frames: Any = self.node.create_client(ListFrames, f"{base}/list_frames", qos_profile=qos)
        self._color_topic = color_topic
        self._image_pub: Any | None = None
        self._image_pub_settled = False
        # Handles not done yet; the timer enforces their own timeouts (before the executor sees the node).
        self._live: set[RequestHandle] = set()
        self._live_lock = threading.Lock()
        self._watchdog = self.node.create_timer(_WATCHDOG_PERIOD_S, self._check_deadlines,
                                                clock=Clock(clock_type=ClockType.STEADY_TIME))
        self._executor = SingleThreadedExecutor(context=self._context)
        self._executor.add_node(self.node)
        self._spin = threading.Thread(target=self._executor.spin, daemon=True)
        self._spin.start()
        self.last_response: Any | None = None

    def _track(self, handle: _H) -> _H:
        if not handle.is_done():
            with self._live_lock:
                self._live.add(handle)
        return handle

    def _check_deadlines(self) -> None:
        """The watchdog timer: each live handle checks its own deadline (an AskHandle cancels there)."""
        with self._live_lock:
            live = list(self._live)
        finished = [h for h in live if h.is_done()]
        if finished:
            with self._live_lock:
                self._live.difference_update(finished)

    def close(self) -> None:
        self._executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self._context)
        self._spin.join(timeout=5.0)

    def __enter__(self) -> CognitionClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def wait_for_node(self, timeout_s: float = 60.0, active: bool = True) -> bool:
        """True once the services are available and, with ``active``, the node is active.

        The node's services exist in every lifecycle state (and answer "not active" until it is), so
        a planner that wants to send camera frames or questions waits for the active state itself.
        """
        deadline = time.monotonic() + timeout_s
        for cli in (self._ask, self._segment, self._list_frames):
            if not cli.wait_for_service(timeout_sec=max(deadline - time.monotonic(), 0.0)):
                return False
        for action in (self._ask_stream, self._segment_stream):  # for ask_async / segment_async
            if not action.wait_for_server(timeout_sec=max(deadline - time.monotonic(), 0.0)):
                return False
        while active:
            left = deadline - time.monotonic()
            try:
                if self._call(self._list_frames, ListFrames.Request(), max(left, 0.5), QUERY_RESEND_S).active:
                    return True
            except (TimeoutError, RuntimeError):
                pass
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)
        return True

    def publish_frames(
        self,
        frames: list[np.ndarray],
        stamps_ns: list[int],
        frame_id: str = "camera_color_optical_frame",
        rate_hz: float = 50.0,
        wait_subscriber_s: float = 10.0,
        wait_buffered_s: float = 0.0,
    ) -> None:
        """Publish RGB frames (rgb8) on the colour topic with the given stamps, paced at ``rate_hz``.

        ``wait_buffered_s > 0`` then waits (that long at most) until the node has buffered the newest one.
        """
        if len(frames) != len(stamps_ns):
            raise ValueError(f"{len(frames)} frames but {len(stamps_ns)} stamps")
        if self._image_pub is None:
            self._image_pub = self.node.create_publisher(
                Image, self._color_topic, QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
            )
        deadline = time.monotonic() + wait_subscriber_s
        while self._image_pub.get_subscription_count() == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        if not self._image_pub_settled and self._image_pub.get_subscription_count() > 0:
            # The count says our writer matched the node's reader; the reader matches our writer on its
            # own discovery message, and until it has, it discards what we send (Jazzy CI lost a new
            # client's first frame so). Nothing on this side observes the reader's match: wait once.
            time.sleep(_READER_MATCH_SETTLE_S)
            self._image_pub_settled = True
        for rgb, stamp in zip(frames, stamps_ns, strict=True):
            self._image_pub.publish(convert.rgb_to_image(rgb, stamp, frame_id))
            time.sleep(1.0 / rate_hz)
        if wait_buffered_s > 0 and stamps_ns:
            self.wait_for_frames([max(stamps_ns)], wait_buffered_s)

    def send_frames(
        self,
        frames: list[np.ndarray],
        stamps_ns: list[int],
        timeout_s: float = 10.0,
        resends: int = 2,
        **publish_kw: Any,
    ) -> list[int]:
        """``publish_frames`` and check delivery: the stamps under which the node buffered every frame.

        A frame not buffered within ``timeout_s`` was lost on the way (a new publisher's first messages
        while the node's reader is still matching it; a full subscription queue on a loaded machine).
        The whole window is then sent again, at most ``resends`` times, under new stamps with the same
        spacing (at least 1 s) after the newest stamp the node holds or was sent: never under its own,
        since a stamp more than ``time_jump_back_s`` older than the newest buffered is a jump back that
        the node's buffer drops however often it comes. Ask with the returned stamps.
        FramesNotBuffered (naming the missing stamps and what the node holds) when the last try fails;
        stamps closer together than 1/``ingest_fps`` are thinned by the node and never all buffered.
        """
        stamps = [int(s) for s in stamps_ns]
        if not stamps:
            return []
        highest = max(stamps)
        for attempt in range(resends + 1):
            self.publish_frames(frames, stamps, **publish_kw)
            missing, buffered = self._await_frames(stamps, timeout_s)
            if not missing:
                return stamps
            if attempt == resends:
                raise FramesNotBuffered(
                    missing, buffered, timeout_s,
                    f" (sent {resends + 1} times, the last under {describe_stamps(stamps)}; frames "
                    "closer together than 1/ingest_fps are thinned by the node)")
            ordered = sorted(stamps)
            gaps = [b - a for a, b in itertools.pairwise(ordered) if b > a]
            step = max(min(gaps, default=RESEND_GAP_NS), RESEND_GAP_NS)
            highest = max([highest, *buffered])
            shift = highest + step - ordered[0]
            stamps = [s + shift for s in stamps]
            highest = max(stamps)
        raise AssertionError("unreachable")

    def buffered_stamps(self, timeout_s: float = 10.0) -> list[int]:
        """Stamps (ns) of the frames in the node's buffer, oldest first."""
        res = self._call(self._list_frames, ListFrames.Request(), timeout_s, QUERY_RESEND_S)
        return [_ns(s) for s in res.stamps]

    def missing_frames(self, stamps_ns: Sequence[int], timeout_s: float = 10.0) -> list[int]:
        """The stamps of ``stamps_ns`` the node does not buffer now (one ~/list_frames call), sorted."""
        have = set(self.buffered_stamps(timeout_s))
        return sorted({int(s) for s in stamps_ns} - have)

    def _await_frames(self, stamps_ns: Sequence[int], timeout_s: float) -> tuple[list[int], list[int]]:
        """(missing, buffered) once nothing is missing or ``timeout_s`` has passed (polls ~/list_frames)."""
        deadline = time.monotonic() + timeout_s
        want = {int(s) for s in stamps_ns}
        while True:
            have = self.buffered_stamps(max(deadline - time.monotonic(), 1.0))
            missing = sorted(want - set(have))
            if not missing or time.monotonic() > deadline:
                return missing, have
            time.sleep(0.05)

    def wait_for_frames(self, stamps_ns: Sequence[int], timeout_s: float = 10.0) -> bool:
        """True once every stamp in ``stamps_ns`` is buffered by the node (polls ~/list_frames)."""
        return not self._await_frames(stamps_ns, timeout_s)[0]

    def require_frames(self, stamps_ns: Sequence[int], timeout_s: float = 10.0) -> None:
        """Wait like ``wait_for_frames``; FramesNotBuffered naming the missing stamps and what the node
        holds when they do not all arrive. A planner calls this before asking about exact stamps (or
        passes ``wait_frames_s`` to ``ask``/``ask_stream``/``segment``), so it never asks about a frame
        the node has not buffered and learns which ones were lost instead of one "not a buffered frame"."""
        missing, buffered = self._await_frames(stamps_ns, timeout_s)
        if missing:
            raise FramesNotBuffered(missing, buffered, timeout_s)

    def _check_frames(self, wait_frames_s: float, frame_stamps_ns: Sequence[int] | None,
                      regions: Sequence[Region] | None = None) -> None:
        """``require_frames`` on the stamps a request names (its frames; region mask keys are stamps
        when it names none), when ``wait_frames_s > 0``."""
        if wait_frames_s <= 0:
            return
        if frame_stamps_ns is not None:
            named = [int(s) for s in frame_stamps_ns]
        else:
            # without a frame list, a region's dict keys are frame stamps (ns), as _region_msgs sends them
            named = sorted({int(k) for r in regions or [] if isinstance(r.masks, dict) for k in r.masks})
        if named:
            self.require_frames(named, wait_frames_s)

    def _call(self, client: Any, request: Any, timeout_s: float, resend_s: float = 0.0) -> Any:
        """One service call, answered within ``timeout_s`` or TimeoutError.

        ``resend_s > 0``, for requests that may be answered twice (queries): without an answer after
        ``resend_s`` the request goes out again. ``wait_for_service`` only sees the service's request
        reader; rmw_fastrtps then waits 100 ms (its reply writer's max_blocking_time) for the service
        to match this client's *reply* reader and otherwise drops the reply ("client will not receive
        response", rmw_response.cpp), which a freshly created client on a loaded machine can hit."""
        deadline = time.monotonic() + timeout_s
        if not client.wait_for_service(timeout_sec=min(timeout_s, 30.0)):
            raise TimeoutError(f"service {client.srv_name} is not available")
        done = threading.Event()
        futures = []
        while True:
            futures.append(client.call_async(request))
            futures[-1].add_done_callback(lambda _: done.set())
            left = deadline - time.monotonic()
            if done.wait(max(0.0, min(left, resend_s) if resend_s > 0 else left)):
                break
            if time.monotonic() >= deadline:
                for f in futures:
                    client.remove_pending_request(f)
                raise TimeoutError(f"no answer from {client.srv_name} within {timeout_s} s")
        answered = next(f for f in futures if f.done())
        for f in futures:
            if f is not answered:
                client.remove_pending_request(f)
        self.last_response = answered.result()
        return self.last_response

    @staticmethod
    def _region_msgs(regions: Sequence[Region], frame_stamps_ns: Sequence[int] | None) -> list[RegionMsg]:
        """Regions as messages: masks (keys index ``frame_stamps_ns``, or are stamps when it is None),
        else the region's one pixel prompt (its ``frame`` likewise) or its 3D ``point``."""

        def stamp_of(region: Region, key: int) -> Any:
            if frame_stamps_ns is None:
                return convert.ns_to_stamp(key)  # without a frame list, keys are frame stamps in ns
            if not 0 <= key < len(frame_stamps_ns):
                raise ValueError(f"region {region.object_id}: frame index {key} is not in frame_stamps_ns")
            return convert.ns_to_stamp(frame_stamps_ns[key])

        out = []
        for region in regions:
            msg = RegionMsg(object_id=int(region.object_id), label=region.label)
            out.append(msg)
            if region.unresolved or (region.point is not None and not region.masks):
                if len(region.prompts) > 1:
                    raise ValueError(f"region {region.object_id}: the node takes one pixel prompt per region")
                msg.prompt = RegionPrompt()
                if region.point is not None:
                    msg.prompt.point.header.frame_id = region.point.frame_id
                    msg.prompt.point.header.stamp = convert.ns_to_stamp(region.point.stamp_ns)
                    msg.prompt.point.point = Point(x=float(region.point.xyz[0]), y=float(region.point.xyz[1]),
                                                   z=float(region.point.xyz[2]))
                    continue
                (prompt,) = region.prompts
                msg.prompt.stamp = stamp_of(region, int(prompt.frame))
                msg.prompt.points = [Point(x=float(x), y=float(y)) for x, y in prompt.points]
                msg.prompt.labels = [int(v) for v in prompt.labels]
                msg.prompt.box = [float(v) for v in prompt.box or ()]
                continue
            n = len(frame_stamps_ns) if frame_stamps_ns is not None else len(region.masks)
            for key, mask in sorted(region.frame_masks(n).items()):
                rle = rle_codec.encode(np.asarray(mask, dtype=bool))
                msg.masks.append(RegionMask(stamp=stamp_of(region, key), size=rle["size"],
                                            counts=rle["counts"]))
        return out

    def _ask_request(
        self,
        req: Any,
        question: str,
        regions: list[Region] | None,
        options: Sequence[str] | None,
        task: str | None,
        frame_stamps_ns: Sequence[int] | None,
        window_ns: tuple[int, int] | None,
        max_new_tokens: int,
        max_frames: int,
    ) -> Any:
        req.question, req.options, req.task = question, list(options or []), task or ""
        req.regions = self._region_msgs(regions or [], frame_stamps_ns)
        req.frame_stamps = [convert.ns_to_stamp(s) for s in frame_stamps_ns or []]
        if window_ns is not None:
            req.window_start, req.window_end = (convert.ns_to_stamp(s) for s in window_ns)
        req.max_new_tokens, req.max_frames = int(max_new_tokens), int(max_frames)
        return req

    @staticmethod
    def _to_answer(res: Any, regions: list[Region] | None) -> Answer:
        if not res.success:
            raise RuntimeError(res.message)
        return Answer(
            text=res.answer,
            value=res.value if res.has_value else None,
            unit=res.unit or None,
            option_index=None if res.option_index < 0 else int(res.option_index),
            option_probabilities=list(res.option_probabilities),
            mean_token_logprob=None if math.isnan(res.mean_token_logprob) else float(res.mean_token_logprob),
            min_token_logprob=None if math.isnan(res.min_token_logprob) else float(res.min_token_logprob),
            uncertainty=None if math.isnan(res.uncertainty) else float(res.uncertainty),
            uncertainty_unit=res.uncertainty_unit,
            margin_m=None if math.isnan(res.margin_m) else float(res.margin_m),
            source=res.source,
            task=res.task or None,
            reading=res.reading,
            object_ids=[r.object_id for r in regions or []],
            frame_indices=list(range(len(res.frame_stamps))),
            timings={t.stage: t.seconds for t in res.timings},
            reason=res.reason,
            prompted=_prompted(res, regions or []),
        )

    def ask(
        self,
        question: str,
        regions: list[Region] | None = None,
        options: Sequence[str] | None = None,
        task: str | None = None,
        frame_stamps_ns: Sequence[int] | None = None,
        timeout_s: float = 120.0,
        window_ns: tuple[int, int] | None = None,
        max_new_tokens: int = 0,
        max_frames: int = 0,
        wait_frames_s: float = 0.0,
    ) -> Answer:
        """Ask the node; ``Region.masks`` keys index ``frame_stamps_ns`` (or are stamps when it is None).

        Raises RuntimeError with the node's reason when it answers ``success=false``. ``wait_frames_s > 0``
        first waits that long for the named frames to be buffered and raises FramesNotBuffered (a
        RuntimeError) instead of asking when they are not (see ``require_frames``).
        """
        self._check_frames(wait_frames_s, frame_stamps_ns, regions)
        req = self._ask_request(AskQuestion.Request(), question, regions, options, task, frame_stamps_ns,
                                window_ns, max_new_tokens, max_frames)
        req.timeout_s = float(timeout_s)  # the node gives up when we do, and stops working on it
        return self._to_answer(self._call(self._ask, req, timeout_s), regions)

    def ask_stream(
        self,
        question: str,
        on_text: Callable[[str], None],
        regions: list[Region] | None = None,
        options: Sequence[str] | None = None,
        task: str | None = None,
        frame_stamps_ns: Sequence[int] | None = None,
        timeout_s: float = 120.0,
        window_ns: tuple[int, int] | None = None,
        max_new_tokens: int = 0,
        max_frames: int = 0,
        cancel_after_pieces: int | None = None,
        wait_frames_s: float = 0.0,
    ) -> Answer:
        """Like ``ask`` over the ``~/ask_stream`` action: ``on_text`` gets each generated piece as it comes.

        ``cancel_after_pieces`` cancels the goal after that many pieces (a planner that has heard
        enough); the node then answers ``success=false`` with "cancelled". ``wait_frames_s`` as in ``ask``.
        TimeoutError after ``timeout_s``, by when the goal has been cancelled (this waits on ``ask_async``).
        """
        self._check_frames(wait_frames_s, frame_stamps_ns, regions)
        if not self._ask_stream.wait_for_server(timeout_sec=min(timeout_s, 30.0)):
            raise TimeoutError("action ask_stream is not available")
        handle = self.ask_async(question, regions, options, task, frame_stamps_ns, timeout_s, window_ns,
                                max_new_tokens, max_frames, on_text=on_text,
                                cancel_after_pieces=cancel_after_pieces)
        handle.wait()
        if handle.response is not None:
            self.last_response = handle.response
        return handle.result()

    def ask_async(
        self,
        question: str,
        regions: list[Region] | None = None,
        options: Sequence[str] | None = None,
        task: str | None = None,
        frame_stamps_ns: Sequence[int] | None = None,
        timeout_s: float = 120.0,
        window_ns: tuple[int, int] | None = None,
        max_new_tokens: int = 0,
        max_frames: int = 0,
        *,
        on_text: Callable[[str], None] | None = None,
        cancel_after_pieces: int | None = None,
    ) -> AskHandle:
        """Send the question on ``~/ask_stream`` and return at once with its ``AskHandle``.

        Arguments as in ``ask_stream``, without the blocking ones (``wait_frames_s``: call
        ``require_frames`` first; the action server is not waited for: ``wait_for_node`` first, or the
        handle is done at once with "not available"). ``on_text`` and ``cancel_after_pieces`` run on the
        client's executor thread. When ``timeout_s`` passes the handle cancels the goal itself (on its
        next ``is_done()``/``wait()`` or the client's timer, whichever is first); the goal carries
        ``timeout_s + CANCEL_GRACE_S`` so that the node's own deadline only backs that cancel up. A region
        mask key outside ``frame_stamps_ns`` raises ValueError here, before anything is sent.
        """
        goal = self._ask_request(Ask.Goal(), question, regions, options, task, frame_stamps_ns, window_ns,
                                 max_new_tokens, max_frames)
        goal.timeout_s = float(timeout_s) + CANCEL_GRACE_S
        return self._track(AskHandle(self._ask_stream, goal, timeout_s,
                                     lambda res: self._to_answer(res, regions), on_text, cancel_after_pieces))

    @staticmethod
    def _wait(future: Any, deadline: float, what: str) -> Any:
        done = threading.Event()
        future.add_done_callback(lambda _: done.set())
        if not done.wait(max(deadline - time.monotonic(), 0.0)):
            raise TimeoutError(f"no {what} before the timeout")
        return future.result()

    def segment(
        self,
        expression: str,
        frame_stamps_ns: Sequence[int] | None = None,
        timeout_s: float = 120.0,
        window_ns: tuple[int, int] | None = None,
        object_id: int = 0,
        max_frames: int = 0,
        wait_frames_s: float = 0.0,
    ) -> Answer:
        """Referring segmentation on ``~/segment``; ``Answer.masks`` has one mask (or None) per frame used,
        in order. ``wait_frames_s`` as in ``ask`` (for ``frame_stamps_ns``)."""
        self._check_frames(wait_frames_s, frame_stamps_ns)
        req = self._segment_request(Segment.Request(), expression, frame_stamps_ns, window_ns, object_id,
                                    max_frames)
        req.timeout_s = float(timeout_s)  # the node gives up when we do, and stops working on it
        return self._to_segment_answer(self._call(self._segment, req, timeout_s), int(object_id))

    def segment_async(
        self,
        expression: str,
        frame_stamps_ns: Sequence[int] | None = None,
        timeout_s: float = 120.0,
        window_ns: tuple[int, int] | None = None,
        object_id: int = 0,
        max_frames: int = 0,
        *,
        on_text: Callable[[str], None] | None = None,
    ) -> SegmentHandle:
        """Send the segmentation on ``~/segment_stream`` and return at once with its ``SegmentHandle``.

        Arguments as in ``segment`` without ``wait_frames_s``; ``on_text`` gets the model's text pieces.
        Cancel and the handle's own timeout cancel the goal, as for ``ask_async`` (the goal carries
        ``timeout_s + CANCEL_GRACE_S``).
        """
        goal = self._segment_request(SegmentAction.Goal(), expression, frame_stamps_ns, window_ns, object_id,
                                     max_frames)
        goal.timeout_s = float(timeout_s) + CANCEL_GRACE_S
        return self._track(SegmentHandle(self._segment_stream, goal, timeout_s,
                                         lambda res: self._to_segment_answer(res, int(object_id)), on_text))

    @staticmethod
    def _segment_request(req: Any, expression: str, frame_stamps_ns: Sequence[int] | None,
                         window_ns: tuple[int, int] | None, object_id: int, max_frames: int) -> Any:
        req.expression, req.object_id, req.max_frames = expression, int(object_id), int(max_frames)
        req.frame_stamps = [convert.ns_to_stamp(s) for s in frame_stamps_ns or []]
        if window_ns is not None:
            req.window_start, req.window_end = (convert.ns_to_stamp(s) for s in window_ns)
        return req

    @staticmethod
    def _to_segment_answer(res: Any, object_id: int) -> Answer:
        if not res.success:
            raise RuntimeError(res.message)
        used = [_ns(s) for s in res.frame_stamps]
        by_stamp = {_ns(m.header.stamp): m for m in res.masks}
        masks: list[np.ndarray | None] = []
        scores: list[float] = []
        for stamp in used:
            m = by_stamp.get(stamp)
            masks.append(None if m is None else rle_codec.decode({"size": list(m.size), "counts": m.counts}))
            scores.append(float("nan") if m is None else float(m.score))
        return Answer(
            text=res.answer,
            masks=masks,
            mask_scores=scores,
            object_ids=[object_id],
            frame_indices=list(range(len(used))),
            timings={t.stage: t.seconds for t in res.timings},
        )

    def set_parameters(
        self, values: dict[str, bool | int | float | str], timeout_s: float = 10.0
    ) -> list[str]:
        """Set node parameters (e.g. spatial_source); returns one reason per value, "" when accepted."""
        params = []
        for name, v in values.items():
            pv = ParameterValue()
            if isinstance(v, bool):
                pv.type, pv.bool_value = ParameterType.PARAMETER_BOOL, v
            elif isinstance(v, int):
                pv.type, pv.integer_value = ParameterType.PARAMETER_INTEGER, v
            elif isinstance(v, float):
                pv.type, pv.double_value = ParameterType.PARAMETER_DOUBLE, v
            else:
                pv.type, pv.string_value = ParameterType.PARAMETER_STRING, str(v)
            params.append(Parameter(name=name, value=pv))
        res = self._call(self._set_params, SetParameters.Request(parameters=params), timeout_s)
        return ["" if r.successful else (r.reason or "rejected") for r in res.results]

    @property
    def last_frame_stamps_ns(self) -> list[int]:
        """Stamps of the frames the latest answer was computed on."""
        return [] if self.last_response is None else [_ns(s) for s in self.last_response.frame_stamps]


def _prompted(res: Any, regions: Sequence[Region]) -> list[Region]:
    """The answer's ``region_masks`` as the prompted regions they belong to, masks keyed by the index of
    their frame in the response's ``frame_stamps`` (the request's frames, oldest first)."""
    index = {convert.stamp_to_ns(s): i for i, s in enumerate(res.frame_stamps)}
    out: list[Region] = []
    for region in regions:
        masks = {index[convert.stamp_to_ns(m.header.stamp)]: rle_codec.decode(
            {"size": list(m.size), "counts": m.counts}) for m in res.region_masks
            if m.object_id == region.object_id and convert.stamp_to_ns(m.header.stamp) in index}
        if masks and (region.prompts or region.point is not None):
            out.append(Region(region.object_id, masks, region.label, region.prompts, region.point))
    return out
