"""The cognition LifecycleNode: camera frames in, answers and masks out.

configure loads the engine named by the parameters, activate subscribes to the camera. Camera callbacks
only convert and insert into the FrameBuffer; service callbacks only validate and enqueue; one worker
thread runs the model, so parameter services, lifecycle services and frame ingestion stay responsive
while an inference runs. Every request ends in a response: bad input, a full queue, a timeout or an
engine error come back as ``success=false`` with the reason, and the node keeps running.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.parameter import Parameter
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, CompressedImage, Image
from std_msgs.msg import Header

import rynnec_ros.ros  # noqa: F401  (makes rynnec_ros.msg / rynnec_ros.srv importable in a checkout)
from rynnec_ros.action import Ask
from rynnec_ros.buffer import NS_PER_S, BufferLimits, FrameBuffer
from rynnec_ros.msg import ObjectMask, ObjectMasks, SpatialAnswer, StageTiming
from rynnec_ros.ros import convert
from rynnec_ros.ros.params import (
    MAX_NEW_TOKENS,
    MAX_REQUEST_QUEUE,
    PARAM_BY_NAME,
    PARAMS,
    validate,
    validate_all,
)
from rynnec_ros.ros.tf import PoseSource
from rynnec_ros.srv import AskQuestion, ListFrames, Segment
from rynnec_ros.types import Answer, Frame, Region, Request

MAX_OPTIONS = 64
MAX_REGIONS = 64
MAX_MASKS_PER_REGION = 64
# Executor threads besides the blocked service callbacks (one per queued or running request): camera
# ingest, parameter/lifecycle/list_frames services, the diagnostics timer, action bookkeeping.
SPARE_EXECUTOR_THREADS = 6
WORKER_JOIN_S = 10.0  # how long deactivate waits for a running inference to reach its next token


class _Cancelled(Exception):
    """Raised from the token callback when the caller gave up on a request (timeout)."""


@dataclass
class _Job:
    kind: str  # "ask" or "segment"
    request: Any
    response: Any
    enqueued: float = field(default_factory=time.monotonic)
    done: threading.Event = field(default_factory=threading.Event)
    cancelled: bool = False
    stream: Callable[[str], None] | None = None  # receives each generated piece of text (action feedback)
    cancel_requested: Callable[[], bool] | None = None


@dataclass
class _Stats:
    frames_in: int = 0
    frames_kept: int = 0
    frames_bad: int = 0
    requests: int = 0
    answered: int = 0
    failed: int = 0
    rejected: int = 0
    timed_out: int = 0
    last_inference_s: float = 0.0
    last_frame_wall: float = 0.0
    last_error: str = ""


def _fail(response: Any, message: str) -> Any:
    response.success = False
    response.message = message
    return response


def _timings(timings: dict[str, float]) -> list[StageTiming]:
    return [StageTiming(stage=k, seconds=float(v)) for k, v in timings.items()]


def _providers_note(engine: Any) -> str:
    """What the graphs really run on (ONNX Runtime may fall back silently), grouped by provider."""
    providers: dict[str, str] = getattr(engine, "graph_providers", None) or {}
    by_provider: dict[str, list[str]] = {}
    for graph, provider in sorted(providers.items()):
        by_provider.setdefault(provider, []).append(graph)
    return "".join(f"; {prov}: {', '.join(graphs)}" for prov, graphs in by_provider.items())


class CognitionNode(LifecycleNode):
    """RynnEC behind ROS 2 services: region questions (~/ask) and referring segmentation (~/segment)."""

    def __init__(self, node_name: str = "rynnec", **kwargs: Any) -> None:
        super().__init__(node_name, **kwargs)
        self._p: dict[str, Any] = {}
        for spec in PARAMS:
            is_float = isinstance(spec.default, float)
            # `-p ingest_fps:=3` and `buffer_max_age_s: 300` in YAML arrive as integers; a statically
            # typed double would refuse them and kill the node at start. Float parameters are declared
            # dynamically typed instead; _on_set_parameters still rejects anything but numbers.
            descriptor = ParameterDescriptor(description=spec.description, dynamic_typing=is_float)
            value = self.declare_parameter(spec.name, spec.default, descriptor).value
            if is_float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
                self.set_parameters([Parameter(spec.name, Parameter.Type.DOUBLE, value)])
            self._p[spec.name] = value
        bad = [f"{n}: {r}" for n, r in ((n, validate(n, v)) for n, v in self._p.items()) if r]
        if bad:
            raise ValueError("invalid parameters: " + "; ".join(bad))
        self.add_on_set_parameters_callback(self._on_set_parameters)

        self._engine: Any | None = None
        self._spatial: Any | None = None
        self._buffer = FrameBuffer(self._limits())
        self._stats = _Stats()
        self._active = False
        self._camera_k: np.ndarray | None = None
        self._pending_depth: dict[int, np.ndarray] = {}
        self._last_kept_ns: int | None = None
        self._queue: deque[_Job] = deque()
        self._queue_cv = threading.Condition()
        self._worker: threading.Thread | None = None
        self._stop = threading.Event()  # the current worker's; each worker gets its own
        self._join_timeout_s = WORKER_JOIN_S
        self._running: _Job | None = None
        self._subs: list[Any] = []
        self._pose: PoseSource | None = None
        self._pubs: dict[str, Any] = {}
        self._srvs: list[Any] = []
        self._action: ActionServer | None = None
        self._diag_timer: Any | None = None
        self._ingest_group = MutuallyExclusiveCallbackGroup()
        self._service_group = ReentrantCallbackGroup()

    # ----------------------------------------------------------------------------------- parameters

    def _limits(self) -> BufferLimits:
        p = self._p
        return BufferLimits(
            max_frames=p["buffer_max_frames"],
            max_bytes=p["buffer_max_mb"] * (1 << 20),
            max_age_s=p["buffer_max_age_s"],
            jump_back_s=p["time_jump_back_s"],
            jump_forward_s=p["time_jump_forward_s"],
        )

    def _on_set_parameters(self, params: list[Any]) -> SetParametersResult:
        updates: dict[str, Any] = {}
        for param in params:
            spec = PARAM_BY_NAME.get(param.name)
            if spec is None:
                continue  # rclpy's own parameters (use_sim_time, ...): rclpy checks and applies them
            value = param.value
            if isinstance(spec.default, float) and type(value) is int:
                value = float(value)
            reason = validate(param.name, value)
            if reason:
                return SetParametersResult(successful=False, reason=reason)
            updates[param.name] = value
        self._p.update(updates)
        if any(n.startswith(("buffer_", "time_jump")) for n in updates):
            self._buffer.set_limits(self._limits())
        if "arm_length_m" in updates and self._spatial is not None:
            self._spatial = self._make_spatial()
        deferred = [n for n in updates if not PARAM_BY_NAME[n].live]
        if deferred and self._engine is not None:
            self.get_logger().info(f"{', '.join(deferred)} take effect on the next configure/activate")
        return SetParametersResult(successful=True)

    # ------------------------------------------------------------------------------------ lifecycle

    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        p = self._p
        if not p["checkpoint"]:
            self.get_logger().error("configure failed: parameter 'checkpoint' is empty")
            return TransitionCallbackReturn.FAILURE
        reason = validate_all(p)
        if reason:
            self.get_logger().error(f"configure failed: {reason}")
            return TransitionCallbackReturn.FAILURE
        try:
            from rynnec_ros.model.backends import load_engine

            t0 = time.monotonic()
            self._engine = load_engine(
                p["checkpoint"],
                backend=p["backend"],
                device=p["device"],
                dtype=p["dtype"],
                onnx_dir=p["onnx_dir"] or None,
                engine_dir=p["engine_dir"] or None,
                provider=p["ort_provider"] or None,
                max_visual_tokens=p["max_visual_tokens"],
            )
        except Exception as exc:
            self.get_logger().error(
                f"configure failed: cannot load checkpoint '{p['checkpoint']}' on backend "
                f"{p['backend']}: {exc}"
            )
            return TransitionCallbackReturn.FAILURE
        self.get_logger().info(
            f"loaded {p['checkpoint']} on backend {p['backend']} ({p['device']}, {p['dtype']}) in "
            f"{time.monotonic() - t0:.1f} s{_providers_note(self._engine)}"
        )
        try:
            self._open_interfaces()
        except Exception as exc:
            self.get_logger().error(f"configure failed after loading the engine: {type(exc).__name__}: {exc}")
            self._release()  # drops the engine too: unconfigured means nothing held
            return TransitionCallbackReturn.FAILURE
        return TransitionCallbackReturn.SUCCESS

    def _open_interfaces(self) -> None:
        p = self._p
        self._spatial = self._make_spatial()
        self._buffer = FrameBuffer(self._limits())
        self._pubs = {
            "masks": self.create_publisher(ObjectMasks, "~/object_masks", 10),
            "spatial": self.create_publisher(SpatialAnswer, "~/spatial_answers", 10),
            "overlay": self.create_publisher(Image, "~/overlay", 2),
            "diag": self.create_publisher(DiagnosticArray, "/diagnostics", 10),
        }
        self._srvs = [
            self.create_service(AskQuestion, "~/ask", self._on_ask, callback_group=self._service_group),
            self.create_service(Segment, "~/segment", self._on_segment, callback_group=self._service_group),
            self.create_service(ListFrames, "~/list_frames", self._on_list_frames,
                                callback_group=self._service_group),
        ]
        self._action = ActionServer(
            self, Ask, "~/ask_stream", self._on_ask_goal,
            goal_callback=lambda _: GoalResponse.ACCEPT,
            cancel_callback=lambda _: CancelResponse.ACCEPT,
            callback_group=self._service_group,
        )
        self._diag_timer = self.create_timer(p["diagnostics_period_s"], self._publish_diagnostics)

    def _make_spatial(self) -> Any | None:
        try:
            from rynnec_ros.spatial import SpatialEngine, SpatialParams
        except ImportError as exc:
            self.get_logger().warning(f"geometry answers unavailable: {exc}")
            return None
        return SpatialEngine(SpatialParams(arm_length_m=self._p["arm_length_m"]))

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        p = self._p
        if self._worker is not None:
            if self._worker.is_alive():
                self.get_logger().error(
                    "activate failed: the inference running at deactivate has not reached a point where it "
                    "can stop yet (long prefill); retry activate when it has finished"
                )
                return TransitionCallbackReturn.FAILURE
            self._worker = None
        qos = QoSProfile(
            history=HistoryPolicy.KEEP_LAST,
            depth=p["qos_depth"],
            reliability=ReliabilityPolicy.BEST_EFFORT
            if p["qos_reliability"] == "best_effort"
            else ReliabilityPolicy.RELIABLE,
        )
        group = self._ingest_group
        if p["color_transport"] == "compressed":
            topic = p["color_topic"].rstrip("/") + "/compressed"
            self._subs.append(
                self.create_subscription(CompressedImage, topic, self._on_color, qos, callback_group=group)
            )
        else:
            self._subs.append(
                self.create_subscription(Image, p["color_topic"], self._on_color, qos, callback_group=group)
            )
        if p["depth_topic"]:
            self._subs.append(
                self.create_subscription(Image, p["depth_topic"], self._on_depth, qos, callback_group=group)
            )
        if p["camera_info_topic"]:
            self._subs.append(
                self.create_subscription(CameraInfo, p["camera_info_topic"], self._on_info, qos,
                                         callback_group=group)
            )
        if p["world_frame"]:
            self._pose = PoseSource(self, tolerance_s=0.1)
        self._stop = threading.Event()
        self._worker = threading.Thread(target=self._work, args=(self._stop,), name="rynnec-worker",
                                        daemon=True)
        self._worker.start()
        self._active = True
        self.get_logger().info(f"active: buffering {p['color_topic']} ({p['color_transport']})")
        return super().on_activate(state)

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._active = False
        for sub in self._subs:
            self.destroy_subscription(sub)
        self._subs = []
        if self._pose is not None:
            self._pose.destroy()
            self._pose = None
        self._stop_worker("the node was deactivated")
        return super().on_deactivate(state)

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._release()
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._active = False
        for sub in self._subs:
            self.destroy_subscription(sub)
        self._subs = []
        self._stop_worker("the node is shutting down")
        self._release()
        return TransitionCallbackReturn.SUCCESS

    def _release(self) -> None:
        for srv in self._srvs:
            self.destroy_service(srv)
        self._srvs = []
        if self._action is not None:
            self._action.destroy()
            self._action = None
        for pub in self._pubs.values():
            self.destroy_publisher(pub)
        self._pubs = {}
        if self._diag_timer is not None:
            self.destroy_timer(self._diag_timer)
            self._diag_timer = None
        self._engine = None
        self._spatial = None
        self._buffer.clear()

    def _stop_worker(self, why: str) -> None:
        self._stop.set()
        with self._queue_cv:
            while self._queue:
                job = self._queue.popleft()
                _fail(job.response, f"rejected: {why}")
                job.done.set()
            if self._running is not None:
                self._running.cancelled = True
            self._queue_cv.notify_all()
        if self._worker is not None:
            # The running job is cancelled: the worker leaves at the engine's next token. A worker still
            # inside a long step stays referenced, so activate refuses to start a second one.
            self._worker.join(timeout=self._join_timeout_s)
            if self._worker.is_alive():
                self.get_logger().warning(
                    f"the running inference did not stop within {self._join_timeout_s:.1f} s; it is "
                    "cancelled and ends at its next token"
                )
            else:
                self._worker = None

    # -------------------------------------------------------------------------------------- ingest

    def _on_color(self, msg: Image | CompressedImage) -> None:
        self._stats.frames_in += 1
        stamp = convert.stamp_to_ns(msg.header.stamp)
        fps = self._p["ingest_fps"]
        last = self._last_kept_ns
        if fps > 0 and last is not None and 0 <= stamp - last < NS_PER_S / fps - 1:
            return  # thinned before decoding: a dropped frame costs only the deserialisation
        try:
            rgb = convert.image_to_rgb(msg) if isinstance(msg, Image) else convert.compressed_to_rgb(msg)
        except ValueError as exc:
            self._stats.frames_bad += 1
            self.get_logger().warning(f"dropping colour frame: {exc}", throttle_duration_sec=5.0)
            return
        depth = self._pending_depth.pop(stamp, None)
        if depth is not None and depth.shape != rgb.shape[:2]:
            depth = None
        frame = Frame(rgb=rgb, stamp_ns=stamp, frame_id=msg.header.frame_id, depth=depth, K=self._camera_k)
        if self._buffer.get(stamp) is not None:
            # Legal (a driver re-sending), but a camera or bag that repeats stamps for new images makes
            # exact-stamp questions ambiguous; the buffer keeps the newest and its features are recomputed.
            self.get_logger().warning(
                f"colour frame stamp {stamp} ns is already buffered: replacing that frame",
                throttle_duration_sec=5.0,
            )
        if self._buffer.add(frame):
            self.get_logger().info("camera stamps jumped (looping bag or clock reset): buffer reset")
            self._pending_depth.clear()
            if self._pose is not None:
                self._pose.reset()
        self._last_kept_ns = stamp
        self._stats.frames_kept += 1
        self._stats.last_frame_wall = time.monotonic()

    def _on_depth(self, msg: Image) -> None:
        try:
            depth = convert.image_to_depth(msg, self._p["depth_scale"])
        except ValueError as exc:
            self.get_logger().warning(f"dropping depth frame: {exc}", throttle_duration_sec=5.0)
            return
        stamp = convert.stamp_to_ns(msg.header.stamp)
        frame = self._buffer.get(stamp)
        if frame is not None:
            if frame.rgb.shape[:2] == depth.shape:
                self._buffer.update(stamp, depth=depth)
            else:
                self.get_logger().warning(
                    f"depth {depth.shape} is not registered to colour {frame.rgb.shape[:2]}; ignored",
                    throttle_duration_sec=5.0,
                )
            return
        self._pending_depth[stamp] = depth
        while len(self._pending_depth) > 8:
            self._pending_depth.pop(min(self._pending_depth))

    def _on_info(self, msg: CameraInfo) -> None:
        try:
            self._camera_k = convert.camera_info_k(msg)
        except ValueError as exc:
            self._camera_k = None
            self.get_logger().warning(str(exc), throttle_duration_sec=5.0)

    # ------------------------------------------------------------------------------------ requests

    def _on_ask(self, request: AskQuestion.Request, response: AskQuestion.Response) -> Any:
        return self._submit("ask", request, response)

    def _on_segment(self, request: Segment.Request, response: Segment.Response) -> Any:
        return self._submit("segment", request, response)

    def _on_list_frames(self, request: ListFrames.Request, response: ListFrames.Response) -> Any:
        frames = self._buffer.frames()
        response.active = self._active
        response.stamps = [convert.ns_to_stamp(f.stamp_ns) for f in frames]
        response.has_depth = [f.depth is not None for f in frames]
        response.resets = self._buffer.resets
        return response

    def _on_ask_goal(self, goal_handle: Any) -> Any:
        """Action ~/ask_stream: the ~/ask job with every generated piece sent as feedback."""
        text: list[str] = []

        def stream(piece: str) -> None:
            text.append(piece)
            goal_handle.publish_feedback(Ask.Feedback(text="".join(text), delta=piece, pieces=len(text)))

        result = self._submit(
            "ask", goal_handle.request, Ask.Result(), stream=stream,
            cancel_requested=lambda: goal_handle.is_cancel_requested,
        )
        if goal_handle.is_cancel_requested:
            goal_handle.canceled()
        elif result.success:
            goal_handle.succeed()
        else:
            goal_handle.abort()
        return result

    def _submit(
        self,
        kind: str,
        request: Any,
        response: Any,
        stream: Callable[[str], None] | None = None,
        cancel_requested: Callable[[], bool] | None = None,
    ) -> Any:
        self._stats.requests += 1
        if not self._active:
            self._stats.rejected += 1
            return _fail(response, f"rejected: the node is not active (state {self._state_label()})")
        job = _Job(kind, request, type(response)(), stream=stream, cancel_requested=cancel_requested)
        with self._queue_cv:
            if len(self._queue) >= self._p["request_queue_size"]:
                self._stats.rejected += 1
                return _fail(
                    response,
                    f"rejected: request queue full ({len(self._queue)} waiting, request_queue_size="
                    f"{self._p['request_queue_size']}); retry later",
                )
            self._queue.append(job)
            self._queue_cv.notify()
        timeout = self._p["request_timeout_s"]
        if not job.done.wait(timeout):
            job.cancelled = True
            with self._queue_cv, contextlib.suppress(ValueError):
                self._queue.remove(job)
            self._stats.timed_out += 1
            return _fail(response, f"timed out after {timeout:.1f} s (request_timeout_s, incl. queue wait)")
        return job.response

    def _state_label(self) -> str:
        return "configured" if self._engine is not None else "unconfigured"

    def _work(self, stop: threading.Event) -> None:
        while True:
            with self._queue_cv:
                while not self._queue and not stop.is_set():
                    self._queue_cv.wait(0.5)
                if stop.is_set():
                    return
                job = self._queue.popleft()
                self._running = job
            t0 = time.monotonic()
            try:
                if job.cancelled or (job.cancel_requested is not None and job.cancel_requested()):
                    _fail(job.response, "cancelled before inference started")
                    continue
                if job.kind == "ask":
                    self._answer(job)
                else:
                    self._segment(job)
                job.response.success = True
                job.response.message = ""
                self._stats.answered += 1
            except _Cancelled:
                _fail(job.response, "cancelled during inference (caller's timeout or cancel request)")
            except (ValueError, LookupError) as exc:
                self._stats.failed += 1
                _fail(job.response, str(exc))
            except Exception as exc:  # an engine bug must not take the node down
                self._stats.failed += 1
                self._stats.last_error = f"{type(exc).__name__}: {exc}"
                self.get_logger().error(f"{job.kind} failed: {self._stats.last_error}")
                _fail(job.response, f"internal error: {type(exc).__name__}: {exc}")
            finally:
                self._stats.last_inference_s = time.monotonic() - t0
                with self._queue_cv:
                    self._running = None
                job.done.set()

    def _token_guard(self, job: _Job) -> Callable[[str], None]:
        def on_token(piece: str) -> None:
            if job.cancelled or (job.cancel_requested and job.cancel_requested()):
                raise _Cancelled()
            if job.stream is not None:
                job.stream(piece)

        return on_token

    def _check_text(self, text: str, what: str, optional: bool = False) -> str:
        text = text.strip()
        if not text:
            if optional:
                return ""
            raise ValueError(f"{what} is empty")
        limit = self._p["max_question_chars"]
        if len(text) > limit:
            raise ValueError(f"{what} has {len(text)} characters, more than max_question_chars={limit}")
        if any(ord(c) < 32 and c not in "\n\t" for c in text):
            raise ValueError(f"{what} contains control characters")
        return text

    def _window(self, request: Any, required: list[int]) -> list[Frame]:
        max_frames = int(request.max_frames) or self._p["max_frames_per_query"]
        start = convert.stamp_to_ns(request.window_start) or None
        end = convert.stamp_to_ns(request.window_end) or None
        if start and end and start > end:
            raise ValueError(f"window_start {start} ns is after window_end {end} ns")
        frames = self._buffer.select(
            stamps_ns=[convert.stamp_to_ns(s) for s in request.frame_stamps],
            start_ns=start,
            end_ns=end,
            fps=self._p["sample_fps"],
            max_frames=max_frames,
            required_ns=required,
            tolerance_ns=int(self._p["stamp_tolerance_s"] * NS_PER_S),
        )
        if self._pose is not None:
            for f in frames:
                try:
                    world = self._p["world_frame"]
                    f.world_T_camera = self._pose.world_T_frame(world, f.frame_id, f.stamp_ns)
                except (LookupError, ValueError) as exc:
                    self.get_logger().warning(f"no camera pose: {exc}", throttle_duration_sec=5.0)
        return frames

    def _decode_regions(self, regions: Any) -> list[list[tuple[int, np.ndarray]]]:
        if len(regions) > MAX_REGIONS:
            raise ValueError(f"{len(regions)} regions, at most {MAX_REGIONS} are accepted")
        tol = int(self._p["stamp_tolerance_s"] * NS_PER_S)
        decoded: list[list[tuple[int, np.ndarray]]] = []
        for k, region in enumerate(regions):
            if not region.masks:
                raise ValueError(f"region {k} (object_id {region.object_id}) has no masks")
            if len(region.masks) > MAX_MASKS_PER_REGION:
                raise ValueError(f"region {k} has {len(region.masks)} masks, at most {MAX_MASKS_PER_REGION}")
            masks = []
            for j, rm in enumerate(region.masks):
                where = f"region {k} mask {j}"
                stamp = convert.stamp_to_ns(rm.stamp)
                frame = self._buffer.get(stamp, tol)
                if frame is None:
                    raise ValueError(f"{where}: stamp {stamp} ns is not a buffered frame")
                try:
                    if rm.counts:
                        mask = convert.rle_to_mask(rm.size, rm.counts)
                    elif len(rm.image.data):
                        mask = convert.mono8_to_mask(rm.image)
                    else:
                        raise ValueError("has neither RLE counts nor a mono8 image")
                except ValueError as exc:
                    raise ValueError(f"{where}: {exc}") from exc
                if mask.shape != frame.rgb.shape[:2]:
                    raise ValueError(
                        f"{where}: mask is {mask.shape[1]}x{mask.shape[0]} but the frame at {stamp} ns is "
                        f"{frame.rgb.shape[1]}x{frame.rgb.shape[0]}"
                    )
                if not mask.any():
                    raise ValueError(f"{where}: mask is empty")
                masks.append((frame.stamp_ns, mask))
            decoded.append(masks)
        return decoded

    def _answer(self, job: _Job) -> None:
        req, res = job.request, job.response
        question = self._check_text(req.question, "question")
        if len(req.options) > MAX_OPTIONS:
            raise ValueError(f"{len(req.options)} options, at most {MAX_OPTIONS} are accepted")
        options = [self._check_text(o, f"option {i}") for i, o in enumerate(req.options)] or None
        labels = [self._check_text(r.label, f"region {k} label", optional=True)
                  for k, r in enumerate(req.regions)]
        task = self._check_text(req.task, "task", optional=True) or None
        if req.max_new_tokens > MAX_NEW_TOKENS:
            raise ValueError(f"max_new_tokens {req.max_new_tokens} is more than the limit {MAX_NEW_TOKENS}")
        decoded = self._decode_regions(req.regions)
        required = sorted({s for masks in decoded for s, _ in masks})
        frames = self._window(req, required)
        index = {f.stamp_ns: i for i, f in enumerate(frames)}
        for s, mask in (sm for masks in decoded for sm in masks):
            # A camera callback may reset or evict the buffer between decoding the masks and picking
            # the window; the masks then refer to a frame the window no longer has.
            if s not in index or frames[index[s]].rgb.shape[:2] != mask.shape:
                raise ValueError(f"the frame at {s} ns carrying a region mask left the buffer while the "
                                 "request was prepared (time jump or eviction); send the request again")
        regions = [
            Region(object_id=int(r.object_id), label=label, masks={index[s]: m for s, m in masks})
            for r, label, masks in zip(req.regions, labels, decoded, strict=True)
        ]
        max_new = int(req.max_new_tokens) or self._p["max_new_tokens"]
        request = Request(question, frames, regions, options, task, max_new)
        t_wait = time.monotonic() - job.enqueued
        ans = self._route(request, job)
        ans.timings = {"queue": t_wait, **ans.timings}
        res.answer = ans.text
        res.has_value = ans.value is not None and math.isfinite(ans.value)
        res.value = float(ans.value) if res.has_value else math.nan
        res.unit = ans.unit or ""
        res.option_index = -1 if ans.option_index is None else int(ans.option_index)
        res.source = ans.source
        res.task = ans.task or ""
        res.reason = ans.reason
        res.frame_stamps = [convert.ns_to_stamp(f.stamp_ns) for f in frames]
        res.timings = _timings(ans.timings)
        self._publish_answer(question, ans, frames, regions)

    def _route(self, request: Request, job: _Job) -> Answer:
        source = self._p["spatial_source"]
        spatial = self._spatial
        task = request.task
        if spatial is not None and source != "model":
            task = spatial.recognise(request)  # validates a structured task, else reads the question
        if task is not None and source != "model":
            if spatial is None:
                if source == "geometry":
                    raise ValueError("spatial_source=geometry but the geometry module is unavailable")
            else:
                request.task = task
                ok, why = spatial.can_answer(request)
                if ok:
                    t0 = time.monotonic()
                    ans = spatial.answer(request)
                    ans.timings.setdefault("geometry", time.monotonic() - t0)
                    return ans
                if source == "geometry":
                    raise ValueError(f"geometry cannot answer this {task} question: {why}")
        return self._model_answer(request, job, task)

    def _model_answer(self, request: Request, job: _Job, task: str | None) -> Answer:
        assert self._engine is not None
        masks, mask_frames, mask_objects = [], [], []
        for k, region in enumerate(request.regions):
            for fi, mask in sorted(region.masks.items()):
                masks.append(mask)
                mask_frames.append(fi)
                mask_objects.append(k)
        ans = self._engine.answer(
            [f.rgb for f in request.frames],
            request.question,
            masks=masks or None,
            mask_frame_indices=mask_frames or None,
            max_new_tokens=request.max_new_tokens,
            options=request.options,
            mask_object_ids=mask_objects or None,
            on_token=self._token_guard(job),
            frame_keys=self._buffer.cache_keys(request.frames),
        )
        ans.source = "model"
        ans.task = ans.task or task
        ans.object_ids = [r.object_id for r in request.regions]
        return ans

    def _segment(self, job: _Job) -> None:
        assert self._engine is not None
        req, res = job.request, job.response
        expression = self._check_text(req.expression, "expression")
        frames = self._window(req, [])
        t_wait = time.monotonic() - job.enqueued
        ans = self._engine.segment(
            [f.rgb for f in frames],
            expression,
            max_new_tokens=self._p["max_new_tokens"],
            on_token=self._token_guard(job),
            frame_keys=self._buffer.cache_keys(frames),
        )
        res.answer = ans.text
        res.frame_stamps = [convert.ns_to_stamp(f.stamp_ns) for f in frames]
        res.timings = _timings({"queue": t_wait, **ans.timings})
        if not ans.masks:
            raise ValueError(f"no mask: {ans.reason or 'the model did not segment anything'} "
                             f"(model text: {ans.text!r})")
        scores = ans.mask_scores or []
        out: list[ObjectMask] = []
        for i, (frame, mask) in enumerate(zip(frames, ans.masks, strict=False)):
            if mask is None:
                continue
            if mask.shape != frame.rgb.shape[:2]:
                raise RuntimeError(f"engine returned a {mask.shape} mask for a {frame.rgb.shape[:2]} frame")
            size, counts = convert.mask_to_rle(mask)
            out.append(
                ObjectMask(
                    header=Header(stamp=convert.ns_to_stamp(frame.stamp_ns), frame_id=frame.frame_id),
                    object_id=int(req.object_id),
                    label=expression,
                    size=size,
                    counts=counts,
                    bbox=convert.mask_bbox(mask),
                    score=float(scores[i]) if i < len(scores) else math.nan,
                )
            )
        res.masks = out
        if self._active and "masks" in self._pubs:
            self._pubs["masks"].publish(
                ObjectMasks(header=out[-1].header if out else Header(), expression=expression, masks=out)
            )
        last = max((i for i, m in enumerate(ans.masks) if m is not None), default=None)
        if last is not None:
            self._publish_overlay(frames[last], [ans.masks[last]], [expression])

    # ------------------------------------------------------------------------------------- outputs

    def _publish_answer(self, question: str, ans: Answer, frames: list[Frame], regions: list[Region]) -> None:
        if not self._active or "spatial" not in self._pubs:
            return
        newest = frames[-1]
        self._pubs["spatial"].publish(
            SpatialAnswer(
                header=Header(stamp=convert.ns_to_stamp(newest.stamp_ns), frame_id=newest.frame_id),
                question=question,
                answer=ans.text,
                task=ans.task or "",
                value=float(ans.value) if ans.value is not None else math.nan,
                unit=ans.unit or "",
                object_ids=[int(r.object_id) for r in regions],
                source=ans.source,
                reason=ans.reason,
            )
        )
        with_masks = [i for i in range(len(frames)) if any(i in r.masks for r in regions)]
        if with_masks:
            fi = with_masks[-1]
            drawn = [(r.masks[fi], r.label or f"object {r.object_id}") for r in regions if fi in r.masks]
            self._publish_overlay(frames[fi], [m for m, _ in drawn], [lab for _, lab in drawn])

    def _publish_overlay(self, frame: Frame, masks: list[np.ndarray], labels: list[str]) -> None:
        if not self._p["publish_overlay"] or "overlay" not in self._pubs:
            return
        img = convert.draw_overlay(frame.rgb, masks, labels)
        self._pubs["overlay"].publish(convert.rgb_to_image(img, frame.stamp_ns, frame.frame_id))

    def _publish_diagnostics(self) -> None:
        if "diag" not in self._pubs:
            return
        s = self._stats
        level, message = DiagnosticStatus.OK, "ok"
        if not self._active:
            level, message = DiagnosticStatus.WARN, "inactive"
        elif s.last_frame_wall == 0 or time.monotonic() - s.last_frame_wall > 5.0:
            level, message = DiagnosticStatus.WARN, "no camera frames in the last 5 s"
        elif len(self._queue) >= self._p["request_queue_size"]:
            level, message = DiagnosticStatus.WARN, "request queue full"
        values = {
            "buffered_frames": len(self._buffer),
            "buffered_mb": round(self._buffer.nbytes / (1 << 20), 2),
            "buffer_resets": self._buffer.resets,
            "frames_in": s.frames_in,
            "frames_kept": s.frames_kept,
            "frames_bad": s.frames_bad,
            "queue_length": len(self._queue),
            "requests": s.requests,
            "answered": s.answered,
            "failed": s.failed,
            "rejected": s.rejected,
            "timed_out": s.timed_out,
            "last_inference_s": round(s.last_inference_s, 3),
            "last_error": s.last_error,
            "checkpoint": self._p["checkpoint"],
            "backend": getattr(self._engine, "backend", "none"),  # what was loaded, not what is set
        }
        status = DiagnosticStatus(
            level=level,
            name=f"rynnec_ros: {self.get_fully_qualified_name()}",
            message=message,
            hardware_id=self._p["device"],
            values=[KeyValue(key=k, value=str(v)) for k, v in values.items()],
        )
        msg = DiagnosticArray(status=[status])
        msg.header.stamp = self.get_clock().now().to_msg()
        self._pubs["diag"].publish(msg)

    # ---------------------------------------------------------------------------------------- stats

    @property
    def buffer(self) -> FrameBuffer:
        return self._buffer


def run(args: list[str] | None = None, autostart: bool | None = None) -> int:
    """Run the node until shutdown; ``autostart`` overrides the parameter (robots without a manager)."""
    rclpy.init(args=args)
    node = CognitionNode()
    # A queued request holds an executor thread until answered, and request_queue_size is live: size for
    # its upper bound (threads are only started when needed) so a larger queue never starves the other
    # callbacks.
    executor = MultiThreadedExecutor(num_threads=MAX_REQUEST_QUEUE + 1 + SPARE_EXECUTOR_THREADS)
    executor.add_node(node)
    start = node._p["autostart"] if autostart is None else autostart
    try:
        if start:
            if node.trigger_configure() != TransitionCallbackReturn.SUCCESS:
                node.get_logger().error("autostart: configure failed; staying unconfigured")
            elif node.trigger_activate() != TransitionCallbackReturn.SUCCESS:
                node.get_logger().error("autostart: activate failed")
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node._stop_worker("the node is shutting down")
        executor.shutdown()
        node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
    return 0


def main() -> None:
    """Entry point of ``ros2 run rynnec_ros rynnec_node`` (arguments are ROS arguments)."""
    import sys

    sys.exit(run(sys.argv))
