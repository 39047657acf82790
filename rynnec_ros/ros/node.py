"""The cognition LifecycleNode: wiring between ROS and the ROS-free parts.

Camera callbacks hand messages to ``CameraIngest``; service and action callbacks turn messages into a
``Request`` (``messages``) and queue a job (``jobs.JobQueue``) without waiting for it: the worker answers
through a deferred reply, so no executor thread is held per queued request. ``Router`` decides geometry
vs model. Services and the action live as long as the node, so a request arriving in any state, or while
a transition runs, is answered (``rejected: ...`` when not active) and never meets a destroyed service.
No exception from a callback ends the process: it is logged once with its input and counted.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PointStamped
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.parameter import Parameter
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, CompressedImage, Image

from rynnec_ros.action import Ask
from rynnec_ros.action import Segment as SegmentAction
from rynnec_ros.core import wire
from rynnec_ros.core.buffer import FrameBuffer
from rynnec_ros.core.jobs import Job, JobQueue
from rynnec_ros.core.tracks import LiveTracks
from rynnec_ros.core.types import Frame, RequestError
from rynnec_ros.model.spec import EngineSpec
from rynnec_ros.msg import Region as RegionMsg
from rynnec_ros.msg import RegionPrompt
from rynnec_ros.ros import convert, messages
from rynnec_ros.ros.deferred import DeferredService
from rynnec_ros.ros.diagnostics import diagnostics
from rynnec_ros.ros.goals import GoalQueue, failed
from rynnec_ros.ros.guard import CallbackGuard
from rynnec_ros.ros.ingest import CameraIngest
from rynnec_ros.ros.outputs import Outputs
from rynnec_ros.ros.params import GROUP_OF, PARAM_BY_NAME, PARAMS, NodeParams, validate, validate_all
from rynnec_ros.ros.qos import SERVICE_QOS
from rynnec_ros.ros.tf import PoseSource
from rynnec_ros.router import Router
from rynnec_ros.srv import AskQuestion, ListFrames, Segment

WORKER_JOIN_S = 10.0  # how long a transition waits for a running inference to reach its next check
_SEGMENT_KINDS = ("segment", "segment_stream")  # the ~/segment service and action: Segment requests



class CognitionNode(LifecycleNode):
    """RynnEC behind ROS 2 services: region questions (~/ask) and referring segmentation (~/segment), each
    also as an action with streamed text and cancel (~/ask_stream, ~/segment_stream)."""

    def __init__(self, node_name: str = "rynnec", **kwargs: Any) -> None:
        super().__init__(node_name, **kwargs)
        values: dict[str, Any] = {}
        for spec in PARAMS:
            # `-p ingest_fps:=3` and `buffer_max_age_s: 300` in YAML arrive as integers; float parameters
            # are dynamically typed so those do not kill the node at start (_on_set_parameters checks).
            is_float = isinstance(spec.default, float)
            descriptor = ParameterDescriptor(description=spec.description, dynamic_typing=is_float)
            value: Any = self.declare_parameter(spec.name, spec.default, descriptor).value
            if is_float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
                self.set_parameters([Parameter(spec.name, Parameter.Type.DOUBLE, value)])
            values[spec.name] = value
        bad = [f"{n}: {r}" for n, r in ((n, validate(n, v)) for n, v in values.items()) if r]
        if bad:
            raise ValueError("invalid parameters: " + "; ".join(bad))
        self.params = NodeParams.from_values(values)
        """Every parameter, typed and grouped; replaced whole (never mutated) when a set is applied."""
        if hasattr(self, "add_pre_set_parameters_callback"):  # rclpy >= Iron; Humble keeps the int
            self.add_pre_set_parameters_callback(self._as_declared_types)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        if hasattr(self, "add_post_set_parameters_callback"):  # rclpy >= Iron: apply once rclpy has set them
            self.add_post_set_parameters_callback(self._after_set_parameters)

        self._buffer = FrameBuffer(self.params.buffer_limits())
        self._ingest = CameraIngest(self._buffer, lambda: self.params)
        self._jobs = JobQueue(lambda: self.params.requests.request_queue_size, idle=self._idle,
                              on_internal_error=self._log_error)
        self._tracks = LiveTracks(self.params.prompts.max_tracked_objects, self.params.engine.cache_mb << 20)
        self._ready_keys: list[Any] = []  # frame keys of the last window precompute finished
        self._sizes_checked: tuple[int, ...] = ()  # frame size and window bounds _check_block_sizes saw
        self._points_asked = 0  # points received on point_prompt_topic: each one's object_id
        self._router: Router | None = None
        self._pose: PoseSource | None = None
        self._subs: list[Any] = []
        self._outputs: Outputs | None = None
        self._guard = CallbackGuard(self.get_logger())
        self._state = "unconfigured"
        self.finished = threading.Event()  # the shutdown transition ran: the process should exit
        self._ingest_group = MutuallyExclusiveCallbackGroup()
        group = ReentrantCallbackGroup()
        def service(kind: Any, name: str, callback: Callable[[Any, Any], Any]) -> Any:
            guarded = self._guard.service(name, callback)
            return self.create_service(kind, f"~/{name}", guarded, qos_profile=SERVICE_QOS,
                                       callback_group=group)

        self._ask_srv = DeferredService(service(AskQuestion, "ask", self._on_ask), self._log_error)
        self._segment_srv = DeferredService(service(Segment, "segment", self._on_segment), self._log_error)
        service(ListFrames, "list_frames", self._on_list_frames)
        def goals(action_type: Any, kind: str) -> GoalQueue:
            return GoalQueue(
                self, action_type, f"~/{kind}", self._jobs, self._can_take_goal,
                lambda goal: self._refusal(kind, goal),
                lambda goal, finish, stream, cancelled: self._job(kind, goal, finish, stream, cancelled),
                SERVICE_QOS, group)

        self._goals = [goals(Ask, "ask_stream"), goals(SegmentAction, "segment_stream")]
        self._diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        # On the steady clock: under use_sim_time a ROS-clock timer stops with /clock (a replay that
        # ended), and with it /diagnostics and the time-out of queued requests.
        self.create_timer(self.params.process.diagnostics_period_s,
                          self._guard.call("diagnostics timer", self._tick),
                          clock=Clock(clock_type=ClockType.STEADY_TIME))

    # ----------------------------------------------------------------------------------- parameters

    @staticmethod
    def _as_declared_types(params: list[Parameter]) -> list[Parameter]:
        """``ros2 param set /rynnec ingest_fps 2`` sends an integer: store it as the double it is."""
        return [Parameter(p.name, Parameter.Type.DOUBLE, float(p.value))
                if p.name in PARAM_BY_NAME and isinstance(PARAM_BY_NAME[p.name].default, float)
                and p.type_ == Parameter.Type.INTEGER else p
                for p in params]

    def _updates(self, params: list[Any]) -> NodeParams:
        """The node's parameters with ``params`` applied (``ValueError`` with the reason); rclpy's own
        parameters (use_sim_time, ...) are rclpy's to check and apply."""
        if any(not p.name for p in params):
            raise ValueError("a parameter name must not be empty")
        return self.params.replace({p.name: p.value for p in params if p.name in PARAM_BY_NAME})

    def _on_set_parameters(self, params: list[Any]) -> SetParametersResult:
        """Validate a set request as a whole; nothing is applied unless every value is accepted."""
        try:
            new = self._updates(params)
        except ValueError as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        if not hasattr(self, "add_post_set_parameters_callback"):  # Humble: no later callback to apply in
            self._apply(new)
        return SetParametersResult(successful=True)

    def _after_set_parameters(self, params: list[Any]) -> None:
        """rclpy set the values ``_on_set_parameters`` accepted: apply them."""
        self._apply(self._updates(params))

    def _apply(self, new: NodeParams) -> None:
        """Swap in ``new`` and apply what changed: buffer limits and the geometry at once; engine, inputs
        and process parameters on the next configure/activate (said in the log)."""
        changed = new.changed(self.params)
        self.params = new
        if any(GROUP_OF[n] == "buffer" for n in changed):
            self._buffer.set_limits(new.buffer_limits())
        if self._router is not None and {"arm_length_m", "spatial_source", "spatial_confirm"} & set(changed):
            self._router = Router(self._router.engine, self._make_spatial(), new.requests.spatial_source,
                                  new.requests.spatial_confirm)
        deferred = [n for n in changed if not PARAM_BY_NAME[n].live]
        if deferred and self._router is not None:
            self.get_logger().info(f"{', '.join(deferred)} take effect on the next configure/activate")

    # ------------------------------------------------------------------------------------ lifecycle

    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        p = self.params
        reason = validate_all(p.values())
        if reason:
            self.get_logger().error(f"configure failed: {reason}")
            return TransitionCallbackReturn.FAILURE
        try:
            spec = p.engine_spec(self._server_token())
        except ValueError as exc:
            self.get_logger().error(f"configure failed: {exc}")
            return TransitionCallbackReturn.FAILURE
        reason = self._memory_refusal(spec)
        if reason:
            self.get_logger().error(f"configure failed: {reason}")
            return TransitionCallbackReturn.FAILURE
        try:
            from rynnec_ros.model.backends import load_engine

            t0 = time.monotonic()
            engine = load_engine(spec)
        except Exception as exc:
            self.get_logger().error(f"configure failed: cannot load checkpoint '{spec.checkpoint}' on "
                                    f"backend {spec.backend}: {exc}")
            return TransitionCallbackReturn.FAILURE
        by_provider: dict[str, list[str]] = {}
        for graph, provider in sorted(engine.info.graph_providers.items()):  # ONNX Runtime may fall back
            by_provider.setdefault(provider, []).append(graph)
        note = "".join(f"; {prov}: {', '.join(graphs)}" for prov, graphs in by_provider.items())
        self.get_logger().info(f"loaded {spec.checkpoint} on backend {spec.backend} ({spec.device}, "
                               f"{spec.dtype}) in {time.monotonic() - t0:.1f} s{note}")
        try:
            self._router = Router(engine, self._make_spatial(), p.requests.spatial_source,
                                  p.requests.spatial_confirm)
            self._buffer = FrameBuffer(p.buffer_limits())
            self._ingest = CameraIngest(self._buffer, lambda: self.params)
            self._outputs = Outputs(self, lambda: self.params)
        except Exception as exc:
            self.get_logger().error(f"configure failed after loading the engine: {type(exc).__name__}: {exc}")
            self._release()  # drops the engine too: unconfigured means nothing held
            return TransitionCallbackReturn.FAILURE
        self._state = "inactive"
        return TransitionCallbackReturn.SUCCESS

    def _memory_refusal(self, spec: EngineSpec) -> str:
        """Why the configured engine, buffer and caches would not fit in memory ("" when they do, or when
        the estimate cannot be made: then loading reports what is wrong with the checkpoint)."""
        limit_mb = self.params.engine.memory_limit_mb
        if limit_mb < 0 or spec.backend == "remote":
            return ""
        from rynnec_ros.model import budget

        try:
            need = budget.estimate(spec.checkpoint, spec.dtype, spec.max_visual_tokens,
                                   self.params.requests.max_new_tokens, self.params.buffer.buffer_max_mb,
                                   spec.cache_mb, spec.weights, spec.kv_cache)
            limit = float(limit_mb) or budget.available_mb()
        except (OSError, ValueError, KeyError) as exc:
            self.get_logger().warning(f"no memory estimate: {exc}")
            return ""
        what = "memory_limit_mb" if limit_mb else "available on this machine (MemAvailable)"
        reason = budget.refusal(need, limit, what)
        if not reason:
            self.get_logger().info(f"memory budget: {need.describe()} of {limit:.0f} MB")
        return reason

    def _server_token(self) -> str:
        """The site server's token from server_token_file or server_token_env, never a parameter."""
        e = self.params.engine
        if e.backend != "remote":
            return ""
        token, warning = wire.read_token(e.server_token_file, e.server_token_env)
        if warning:
            self.get_logger().warning(warning)
        return token

    def _make_spatial(self) -> Any | None:
        try:
            from rynnec_ros.spatial import SpatialEngine, SpatialParams
        except ImportError as exc:
            self.get_logger().warning(f"geometry answers unavailable: {exc}")
            return None
        return SpatialEngine(SpatialParams(arm_length_m=self.params.requests.arm_length_m))

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        if self._jobs.alive:
            self.get_logger().error("activate failed: the inference running at deactivate has not reached a "
                                    "point where it can stop yet; retry activate when it has finished")
            return TransitionCallbackReturn.FAILURE
        try:
            color_topic = self._subscribe()
        except Exception as exc:  # e.g. a topic parameter rclpy refuses as a name
            self.get_logger().error(f"activate failed: {type(exc).__name__}: {exc}")
            self._unsubscribe()
            return TransitionCallbackReturn.FAILURE
        self._jobs.start()
        self._state = "active"
        self.get_logger().info(f"active: buffering {color_topic}")
        return super().on_activate(state)

    def _subscribe(self) -> str:
        """Subscribe to the camera topics (and TF); returns the colour topic."""
        p = self.params.inputs
        reliability = ReliabilityPolicy.BEST_EFFORT if p.qos_reliability == "best_effort" \
            else ReliabilityPolicy.RELIABLE
        qos = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=p.qos_depth, reliability=reliability)
        compressed = p.color_transport == "compressed"
        color_topic = p.color_topic.rstrip("/") + ("/compressed" if compressed else "")
        colour = self._guard.ingest("colour", self._ingest.on_color)
        topics: list[tuple[Any, str, Callable[[Any], None]]] = [
            (CompressedImage if compressed else Image, color_topic, colour)]
        if p.depth_topic:
            depth_compressed = p.depth_transport == "compressedDepth"
            topics.append((CompressedImage if depth_compressed else Image,
                           p.depth_topic.rstrip("/") + ("/compressedDepth" if depth_compressed else ""),
                           self._guard.ingest("depth", lambda m: self._ingest.on_depth(m))))
        if p.camera_info_topic:
            topics.append((CameraInfo, p.camera_info_topic,
                           self._guard.ingest("camera_info", self._ingest.on_info)))
        for kind, name, callback in topics:
            self._subs.append(self.create_subscription(kind, name, callback, qos,
                                                       callback_group=self._ingest_group))
        point_topic = self.params.prompts.point_prompt_topic
        if point_topic:  # RViz publishes /clicked_point reliable, keep-last
            self._subs.append(self.create_subscription(
                PointStamped, point_topic, self._guard.ingest("point", self._on_point), 10,
                callback_group=self._ingest_group))
        if p.world_frame:
            self._pose = PoseSource(self, tolerance_s=0.1)
        return color_topic

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._stop("the node was deactivated")
        self._state = "inactive"
        return super().on_deactivate(state)

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._stop("the node is being cleaned up")
        self._release()
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._stop("the node is shutting down")
        self._release()
        self.finished.set()
        return TransitionCallbackReturn.SUCCESS

    def _stop(self, why: str) -> None:
        """Stop ingest and the worker; every queued or running request is answered with ``why``."""
        self._state = "stopping"
        self._unsubscribe()
        if not self._jobs.stop(why, WORKER_JOIN_S):
            self.get_logger().warning(f"the running inference did not stop within {WORKER_JOIN_S:.1f} s; it "
                                      "is cancelled and ends at its next check")

    def _unsubscribe(self) -> None:
        for sub in self._subs:
            self.destroy_subscription(sub)
        self._subs = []
        if self._pose is not None:
            self._pose.destroy()
            self._pose = None

    def _release(self) -> None:
        if self._outputs is not None:
            self._outputs.destroy()
            self._outputs = None
        self._router = None
        self._tracks.clear()
        self._buffer.clear()
        self._state = "unconfigured"

    def _log_error(self, message: str) -> None:
        self.get_logger().error(message, throttle_duration_sec=5.0)

    # -------------------------------------------------------------------------------------- ingest

    # ------------------------------------------------------------------------------------ requests

    def _pose_of(self, frame: Frame) -> np.ndarray | None:
        if self._pose is None:
            return None
        try:
            return self._pose.world_T_frame(self.params.inputs.world_frame, frame.frame_id, frame.stamp_ns)
        except (LookupError, ValueError) as exc:
            self.get_logger().warning(f"no camera pose: {exc}", throttle_duration_sec=5.0)
            return None

    def _on_point(self, point: PointStamped) -> str | None:
        """``point_prompt_topic``: ask ``point_prompt_question`` about the object at the point; the answer
        goes out on the answer topics only, so a refusal is logged (there is no caller to tell)."""
        self._points_asked += 1
        n, topic = self._points_asked, self.params.prompts.point_prompt_topic
        req = AskQuestion.Request(question=self.params.prompts.point_prompt_question)
        req.regions = [RegionMsg(object_id=n, label=f"point {n}", prompt=RegionPrompt(point=point))]

        def finish(job: Job, value: Any, error: str) -> None:
            if error:
                self.get_logger().warning(f"point {n} on {topic}: {error}")

        reason = self._refusal("ask", req) or self._jobs.submit(self._job("ask", req, finish))
        return f"point {n} on {topic} not asked: {reason}" if reason else None

    def _locate(self, frame_id: str, stamp_ns: int) -> np.ndarray:
        """world_T_frame for a 3D point prompt; LookupError with the reason when TF cannot say."""
        if self._pose is None:
            raise LookupError("3D point prompts need the world_frame parameter (the frame TF moves them to)")
        return self._pose.world_T_frame(self.params.inputs.world_frame, frame_id, stamp_ns)

    def _job(self, kind: str, msg: Any, finish: Callable[[Job, Any, str], None],
             stream: Callable[[str], None] | None = None,
             cancel_requested: Callable[[], bool] = lambda: False) -> Job:
        return Job(kind, lambda job: self._run(kind, msg, job, stream), finish,
                   timeout_s=messages.request_timeout(msg, self.params.requests.request_timeout_s),
                   cancel_requested=cancel_requested)

    def _submit(self, kind: str, msg: Any, placeholder: Any, service: DeferredService) -> Any:
        reply = service.reply_for(placeholder)
        response_type = type(placeholder)

        def finish(job: Job, value: Any, error: str) -> None:
            reply.send(value if not error else failed(response_type(), error))

        reason = self._refusal(kind, msg) or self._jobs.submit(self._job(kind, msg, finish))
        if reason:
            reply.send(failed(response_type(), reason))
        return placeholder

    def _refusal(self, kind: str, msg: Any) -> str:
        """Why ``msg`` cannot become a Request now ("" when it can), checked before it takes a queue slot.

        A malformed request hears why at once, not after waiting behind a running inference; the worker
        builds the Request again (poses, a window that may have moved on). Only while active: otherwise
        the queue's own refusal names the state."""
        if self._state != "active":
            return ""
        try:
            build = messages.segment_request if kind in _SEGMENT_KINDS else messages.ask_request
            build(msg, self._buffer, messages.limits_from(self.params), lambda frame: None)
        except RequestError as exc:
            return str(exc)
        return ""

    def _idle(self, should_stop: Callable[[], bool]) -> None:
        """Worker idle time: the tracked objects onto the newest frame, then the window precompute."""
        self._follow_tracks()
        if not should_stop():
            self._precompute(should_stop)

    def _follow_tracks(self) -> None:
        """``track_objects``: every followed object onto the newest buffered frame, their masks on
        ~/object_masks; forgotten when the parameter is off."""
        tracks, router, outputs = self._tracks, self._router, self._outputs
        p = self.params
        tracks.max_objects = p.prompts.max_tracked_objects
        tracks.budget_bytes = p.engine.cache_mb << 20  # changes on a reconfigure
        if not p.prompts.track_objects:
            tracks.clear()
            return
        if not len(tracks) or router is None or outputs is None or self._state != "active":
            return
        frame = self._buffer.newest()
        if frame is None:
            return
        found = tracks.step(router.engine, frame)
        for oid, why in tracks.dropped:
            self.get_logger().info(f"stopped following object {oid}: {why}")
        tracks.dropped.clear()
        if found:
            outputs.tracked(frame, [messages.object_mask(frame, mask, t.object_id, t.label, math.nan)
                                    for t, mask in found])

    def _keep_following(self, ans: Any, request: Any, object_id: int, label: str) -> None:
        """``track_objects``: the objects an answer followed over its window are followed on."""
        if not self.params.prompts.track_objects or not request.window:
            return
        last = request.window[-1]
        if ans.followed is not None:
            self._tracks.start(object_id, label, ans.followed, last)
        for region in ans.prompted:
            if region.followed is not None:
                self._tracks.start(int(region.object_id), region.label, region.followed, last)

    def _precompute(self, should_stop: Callable[[], bool]) -> None:
        """Worker idle time: make the live window answer-ready (vision features, prompt prefix), so a
        question about it pays only its own tokens. Stops as soon as a request arrives."""
        router = self._router
        precompute = getattr(router.engine, "precompute", None) if router is not None else None
        if precompute is None or self._state != "active" or not self.params.requests.precompute_window:
            return
        try:  # the window a question without stamps gets
            b = self.params.buffer
            frames = self._buffer.select(fps=b.sample_fps, max_frames=b.max_frames_per_query,
                                         block_frames=b.live_window_block_frames)
        except RequestError:
            return  # nothing buffered yet
        self._check_block_sizes(frames[-1], router)
        keys = [f.key for f in frames]
        if keys != self._ready_keys and precompute(frames, should_stop=should_stop).complete:
            self._ready_keys = keys

    def _check_block_sizes(self, newest: Frame, router: Any) -> None:
        """Warn once per frame size and window bounds when a block window's frames would be resized as
        it grows (the visual-token budget binds): each new frame then re-encodes the whole window."""
        sizes = getattr(router.engine, "resized_sizes", None)
        block, most = self.params.buffer.live_window_block_frames, self.params.buffer.max_frames_per_query
        if not block or sizes is None:
            return
        h, w = newest.rgb.shape[:2]
        fewest = most - min(block, most) + 1
        if (h, w, fewest, most) == self._sizes_checked:
            return
        self._sizes_checked = (h, w, fewest, most)
        if len(sizes(h, w, range(fewest, most + 1))) > 1:
            self.get_logger().warning(
                f"max_visual_tokens binds for {w}x{h} frames in windows of {fewest}-{most} frames: every "
                "frame is resized as the block window grows, so each new frame re-encodes the whole window; "
                "raise max_visual_tokens or set live_window_block_frames to 1")

    def _can_take_goal(self) -> bool:
        return self._state == "active" and len(self._jobs) < self.params.requests.request_queue_size

    def _on_ask(self, request: AskQuestion.Request, response: AskQuestion.Response) -> Any:
        return self._submit("ask", request, response, self._ask_srv)

    def _on_segment(self, request: Segment.Request, response: Segment.Response) -> Any:
        return self._submit("segment", request, response, self._segment_srv)

    def _on_list_frames(self, request: ListFrames.Request, response: ListFrames.Response) -> Any:
        frames = self._buffer.frames()
        response.active = self._state == "active"
        response.stamps = [convert.ns_to_stamp(f.stamp_ns) for f in frames]
        response.has_depth = [f.depth is not None for f in frames]
        response.resets = self._buffer.resets
        return response

    def _run(self, kind: str, msg: Any, job: Job, stream: Callable[[str], None] | None) -> Any:
        """Worker thread: message -> Request -> Answer -> response (success) and topics."""
        router, outputs = self._router, self._outputs
        if router is None or outputs is None:
            raise RequestError("the node is not configured")
        waited = time.monotonic() - job.enqueued
        lim = messages.limits_from(self.params)
        if kind in _SEGMENT_KINDS:
            request = messages.segment_request(msg, self._buffer, lim, self._pose_of)
            ans = router.segment(request, stream, job.should_stop)
            ans.timings = {"queue": waited, **ans.timings}
            res = messages.fill_segment(Segment.Response() if stream is None else SegmentAction.Result(), ans,
                                        request, int(msg.object_id))
            outputs.segmentation(ans, request, res.masks)
            self._keep_following(ans, request, int(msg.object_id), request.question)
        else:
            request = messages.ask_request(msg, self._buffer, lim, self._pose_of, self._locate)
            ans = router.answer(request, stream, job.should_stop)
            ans.timings = {"queue": waited, **ans.timings}
            res = messages.fill_ask(AskQuestion.Response() if stream is None else Ask.Result(), ans, request)
            outputs.answer(ans, request, res.region_masks)
            self._keep_following(ans, request, 0, "")
        res.success = True
        res.message = ""
        return res

    # ------------------------------------------------------------------------------------ diagnostics

    def _tick(self) -> None:
        self._jobs.expire()
        engine = self._router.engine if self._router is not None else None
        msg = diagnostics(self, self._state, self._buffer, self._ingest, self._jobs, self._guard, engine)
        msg.header.stamp = self.get_clock().now().to_msg()
        self._diag_pub.publish(msg)

    @property
    def buffer(self) -> FrameBuffer:
        return self._buffer

    def close(self, why: str) -> None:
        """Answer everything pending with ``why`` before the node is destroyed (process exit)."""
        self._stop(why)

    def pending(self) -> bool:
        """Whether answers or goal results are still on their way out (the executor must spin)."""
        return (any(g.pending() for g in self._goals) or self._ask_srv.waiting()
                or self._segment_srv.waiting())
