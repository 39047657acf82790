"""The node's parameters, declared once as typed groups: names, types, defaults, descriptions and checks.

Each group is a frozen dataclass whose fields are the parameters (nav2's ParameterHandler keeps them in a
typed struct the same way), so the node reads ``params.buffer.ingest_fps`` with its type, not a string key
into an untyped dict. ``PARAMS`` lists the same declarations flat for declaring the ROS parameters and for
the tests that check config/*.yaml, docs and launch files name exactly these parameters. A set request is
validated field by field and as a whole (``NodeParams.replace``) before anything is applied; the node then
swaps in the new ``NodeParams`` and applies what changed. Pure Python, no rclpy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, Field, dataclass, field, fields
from dataclasses import replace as _replace
from typing import Any

from rynnec_ros.core.buffer import BufferLimits
from rynnec_ros.core.checks import Check, anything, in_range, no_control_chars, one_of, positive
from rynnec_ros.core.wire import MAX_NEW_TOKENS, MAX_QUESTION_CHARS
from rynnec_ros.model.spec import CHECKS, DEFAULTS, EngineSpec

ParamValue = bool | int | float | str

# Upper bounds the node relies on beyond validation. The services' and the action's DDS queues hold
# SERVICE_QUEUE_DEPTH requests (keep-last): a burst that large waits there until the executor takes each
# one, and the job queue then accepts it or rejects it with a reason (rclpy's default of 10 silently drops
# what the executor has not taken yet). A request's own max_new_tokens may not exceed MAX_NEW_TOKENS.
MAX_REQUEST_QUEUE = 64
SERVICE_QUEUE_DEPTH = 1000


@dataclass(frozen=True)
class ParamSpec:
    """One parameter. ``check`` returns "" when a value is acceptable, otherwise the reason.

    ``live`` parameters take effect immediately; the others on the next configure (engine) or activate
    (subscriptions, QoS).
    """

    name: str
    default: ParamValue
    description: str
    check: Check
    live: bool = True


def _topic(optional: bool) -> Check:
    def check(v: str) -> str:
        if not v:
            return "" if optional else "must not be empty"
        if any(c.isspace() for c in v) or "//" in v or v.endswith("/"):
            return f"'{v}' is not a valid topic name"
        # rclpy's own rules (a token starting with a digit, '-', ...), checked when the value is set
        # rather than when activate creates the subscription. (The launch files' checks run without it.)
        try:
            from rclpy.exceptions import InvalidTopicNameException
            from rclpy.validate_topic_name import validate_topic_name
        except ImportError:
            return ""
        try:
            validate_topic_name(v)
        except InvalidTopicNameException as exc:
            return f"'{v}' is not a valid topic name: {str(exc).splitlines()[0]}"
        return ""

    return check


def _env_name(v: str) -> str:
    ok = bool(v) and not v[0].isdigit() and all(c.isalnum() or c == "_" for c in v) and v.isascii()
    return "" if ok else f"'{v}' is not an environment variable name (letters, digits, _)"


def _no_secret(v: str) -> str:
    # The value is never echoed: it is the secret.
    return "" if not v else ("must not be set: parameters are readable by every peer on the ROS domain; put "
                             "the token in the file server_token_file names or the variable server_token_env "
                             "names")


def _question(v: str) -> str:
    if not v.strip():
        return "must not be empty"
    if len(v) > MAX_QUESTION_CHARS:
        return f"is longer than {MAX_QUESTION_CHARS} characters"
    return no_control_chars(v)


def _frame_id(v: str) -> str:
    return f"'{v}' is not a valid frame id" if any(c.isspace() for c in v) or v.startswith("/") else ""


_ENGINE = DEFAULTS  # the engine options' defaults (model/spec.py)


def param(default: ParamValue, check: Check, *, doc: str, live: bool = True) -> Any:
    """One parameter's declaration: a dataclass field whose metadata holds its check, description and
    whether a change applies at once (``live``) or on the next configure/activate."""
    return field(default=default, metadata={"check": check, "doc": doc, "live": live})


@dataclass(frozen=True)
class EngineParams:
    """The engine, built on configure: the names, defaults and checks of model/spec.py's EngineSpec, the
    memory check, and where the site server's token is read from."""

    checkpoint: str = param("", CHECKS["checkpoint"], live=False, doc=(
        "RynnEC checkpoint directory (official format, safetensors). Required unless backend is remote."))
    device: str = param(_ENGINE["device"], CHECKS["device"], live=False, doc=(
        "torch device for the engine: cpu, cuda, cuda:N."))
    dtype: str = param(_ENGINE["dtype"], CHECKS["dtype"], live=False, doc="Engine dtype.")
    max_visual_tokens: int = param(_ENGINE["max_visual_tokens"], CHECKS["max_visual_tokens"], live=False,
                                   doc=(
        "Visual token budget of the image processor (all frames together)."))
    cache_mb: int = param(int(_ENGINE["cache_mb"]), CHECKS["cache_mb"], live=False, doc=(
        "Most megabytes the engine's caches (vision features, prompt-prefix K/V, SAM2 features) hold "
        "together, least recently used evicted first; 0 = no reuse across questions. With buffer_max_mb it "
        "bounds the node's memory beyond the model."))
    memory_limit_mb: int = param(0, in_range(-1, 1 << 30), live=False, doc=(
        "Configure refuses, with the numbers, when the weights at dtype (the LLM's linears at weights), the "
        "K/V cache at max_visual_tokens, buffer_max_mb, cache_mb, the measured vision/SAM 2 activations and "
        "a runtime allowance exceed this many megabytes; 0 = the machine's MemAvailable at configure, -1 = "
        "no check."))
    backend: str = param(_ENGINE["backend"], CHECKS["backend"], live=False, doc=(
        "What runs the engine's compute: torch (eager), onnxruntime (exported ONNX graphs, needs onnx_dir), "
        "tensorrt (TensorRT engines, needs engine_dir and a cuda device) or remote (a site server, "
        "`rynnec-ros serve`, at server_url)."))
    onnx_dir: str = param("", CHECKS["onnx_dir"], live=False, doc=(
        "Directory written by `rynnec-ros export onnx` for this checkpoint; required when backend is "
        "onnxruntime."))
    engine_dir: str = param("", CHECKS["engine_dir"], live=False, doc=(
        "Directory written by `rynnec-ros export tensorrt` (engines.json); required when backend is "
        "tensorrt."))
    ort_provider: str = param("", CHECKS["ort_provider"], live=False, doc=(
        "ONNX Runtime execution provider for backend onnxruntime: cpu, cuda or tensorrt; empty = cpu for "
        "device cpu, else cuda. A provider ONNX Runtime cannot give fails configure."))
    weights: str = param(_ENGINE["weights"], CHECKS["weights"], live=False, doc=(
        "Weight-only quantised LLM graphs for backends onnxruntime and tensorrt: int8 or int4 (exported with "
        "`rynnec-ros export onnx --weights`); empty = float32."))
    kv_cache: str = param(_ENGINE["kv_cache"], CHECKS["kv_cache"], live=False, doc=(
        "int8: decode through the export's fused graph with an int8 K/V cache (scales calibrated at export, "
        "`rynnec-ros export onnx --kv-cache int8`; backend onnxruntime on the cpu provider, onnxruntime >= "
        "1.27); a quarter of the float32 cache's bytes, different numerics; empty = float32 cache."))
    server_url: str = param("", CHECKS["server_url"], live=False, doc=(
        "host:port (gRPC) of the site server for backend remote; required then."))
    server_token_file: str = param("", no_control_chars, live=False, doc=(
        "File holding the site server's access token (required by servers off loopback; chmod 600); empty: "
        "the variable server_token_env names."))
    server_token_env: str = param("RYNNEC_SERVER_TOKEN", _env_name, live=False, doc=(
        "Environment variable of the node's process holding the site server's token when server_token_file is"
        " empty."))
    server_token: str = param("", _no_secret, live=False, doc=(
        "Refused when set: parameters are readable by every peer on the ROS domain (ros2 param get), so the "
        "token comes from server_token_file or server_token_env."))
    server_connect_timeout_s: float = param(
        _ENGINE["server_connect_timeout_s"], CHECKS["server_connect_timeout_s"], live=False, doc=(
        "Seconds configure waits for the site server to answer."))
    server_request_timeout_s: float = param(
        _ENGINE["server_request_timeout_s"], CHECKS["server_request_timeout_s"], live=False, doc=(
        "A site-server request not answered within this many seconds fails with the reason (a dead server "
        "never hangs a request)."))


@dataclass(frozen=True)
class InputParams:
    """Camera inputs: topics, transports and QoS apply on activate; image limits and depth scale at once."""

    color_topic: str = param("/camera/color/image_raw", _topic(False), live=False, doc=(
        "Colour camera topic (sensor_msgs/Image)."))
    color_transport: str = param("raw", one_of("raw", "compressed"), live=False, doc=(
        "raw: sensor_msgs/Image on color_topic; compressed: sensor_msgs/CompressedImage on color_topic + "
        "'/compressed'."))
    depth_topic: str = param("", _topic(True), live=False, doc=(
        "Depth image registered to colour (16UC1 mm or 32FC1 m); empty = no depth."))
    camera_info_topic: str = param("", _topic(True), live=False, doc=(
        "CameraInfo of the colour camera; empty = no intrinsics."))
    depth_transport: str = param("raw", one_of("raw", "compressedDepth"), live=False, doc=(
        "raw: sensor_msgs/Image on depth_topic; compressedDepth: sensor_msgs/CompressedImage "
        "(compressed_depth_image_transport, PNG) on depth_topic + '/compressedDepth'."))
    max_image_pixels: int = param(3840 * 2160, in_range(1, 1 << 28), doc=(
        "Colour/depth images with more pixels (read from the header, before decoding) are dropped and counted"
        " in /diagnostics: a bound on memory per frame and against decompression bombs. Default: 4K UHD."))
    depth_scale: float = param(0.001, in_range(1e-6, 1e3), doc=(
        "Metres per unit of integer (16UC1) depth images."))
    world_frame: str = param("", _frame_id, live=False, doc=(
        "Gravity-aligned fixed frame (z up) for camera poses from TF, e.g. map or odom; empty = no poses."))
    qos_reliability: str = param("best_effort", one_of("best_effort", "reliable"), live=False, doc=(
        "Camera subscription reliability (sensor-data default)."))
    qos_depth: int = param(5, in_range(1, 1000), live=False, doc="Camera subscription queue depth.")


@dataclass(frozen=True)
class BufferParams:
    """The frame buffer and how a question samples it (live)."""

    ingest_fps: float = param(2.0, in_range(0.0, 1000.0), doc=(
        "Frames per second kept from the camera (0 = every frame); the paper samples 1 fps, so 2 leaves "
        "margin."))
    buffer_max_frames: int = param(600, in_range(1, 100000), doc="Most frames buffered.")
    buffer_max_mb: int = param(1024, in_range(1, 1 << 20), doc=(
        "Most megabytes of frames (colour + depth) buffered."))
    buffer_max_age_s: float = param(300.0, in_range(0.0, 1e6), doc=(
        "Frames older than the newest by more than this are dropped (0 = no age bound)."))
    time_jump_back_s: float = param(1.0, in_range(0.0, 1e6), doc=(
        "A stamp this much older than the newest (looping bag, clock reset) clears the buffer."))
    time_jump_forward_s: float = param(0.0, in_range(0.0, 1e9), doc=(
        "A stamp this much newer than the newest clears the buffer (0 = only beyond buffer_max_age_s)."))
    time_jump_confirm_frames: int = param(3, in_range(1, 1000), doc=(
        "Consecutive frames on a new timeline needed before a time jump resets the buffer; fewer are dropped "
        "as badly stamped outliers."))
    sample_fps: float = param(1.0, in_range(0.0, 1000.0), doc=(
        "Frames per second sampled from the window for one query (paper: 1; 0 = every buffered frame)."))
    max_frames_per_query: int = param(30, in_range(1, 1000), doc=(
        "Most frames per query (paper: 30); mask frames always included."))
    live_window_block_frames: int = param(0, in_range(0, 1000), doc=(
        "0: a question without stamps or window gets the whole buffer sampled the paper's way (sample_fps, "
        "thinned to max_frames_per_query), which changes with every new frame. K > 0: it gets the newest "
        "sampled frames, whose first frame moves on only every K samples, so the idle-time precompute "
        "rebuilds the prompt prefix once per K frames and otherwise extends it (max_frames_per_query - K + 1 "
        "to max_frames_per_query frames, the newest sample always among them)."))
    stamp_tolerance_s: float = param(0.001, in_range(0.0, 10.0), doc=(
        "How far a requested stamp may be from a buffered frame's."))


@dataclass(frozen=True)
class RequestParams:
    """Requests: queue, deadline, generation limits, who answers (live)."""

    request_queue_size: int = param(4, in_range(1, MAX_REQUEST_QUEUE), doc=(
        f"Requests waiting for the model beyond the running one (at most {MAX_REQUEST_QUEUE}); more are "
        f"rejected at once with a reason (bursts of up to {SERVICE_QUEUE_DEPTH} wait in the service queue "
        "until then)."))
    request_timeout_s: float = param(120.0, in_range(0.1, 86400.0), doc=(
        "A request not answered within this many seconds (queue wait included) fails with a timeout."))
    max_new_tokens: int = param(128, in_range(1, MAX_NEW_TOKENS), doc=(
        "Default most generated tokens per answer (greedy decoding)."))
    max_question_chars: int = param(MAX_QUESTION_CHARS, in_range(1, 1 << 20), doc=(
        "Longer questions/expressions are rejected."))
    precompute_window: bool = param(True, anything, doc=(
        "Encode the live window (vision features, prompt prefix) in the worker's idle time, so a question "
        "about it pays only its own tokens; a request interrupts it."))
    spatial_source: str = param("auto", one_of("auto", "model", "geometry"), doc=(
        "auto: geometry when depth, intrinsics and poses cover the objects, else the model; geometry: "
        "geometry or a failure with the reason; model: always the model."))
    spatial_confirm: bool = param(False, anything, doc=(
        "Measure a free-text question only when the model, scoring the rules' reading against its neighbours "
        "in the task grammar, reads it the same way (else the model answers, or geometry refuses); needs a "
        "real checkpoint, see docs/spatial.md."))
    arm_length_m: float = param(0.8, positive(100.0), doc=(
        "Robot arm reach in metres (> 0) used by the geometry's reachability questions."))


@dataclass(frozen=True)
class PromptParams:
    """Point prompts and following objects with SAM 2."""

    point_prompt_topic: str = param("", _topic(True), live=False, doc=(
        "geometry_msgs/PointStamped topic (e.g. /clicked_point, RViz's Publish Point tool) whose every point "
        "asks point_prompt_question about the object there (region <object0>, object_id counting up from 1); "
        "answers on ~/spatial_answers, masks on ~/object_masks. Needs world_frame, depth and camera_info. "
        "Empty = off."))
    point_prompt_question: str = param("What is <object0>?", _question, doc=(
        "The question asked about each point on point_prompt_topic."))
    track_window: bool = param(False, anything, doc=(
        "Follow every mask an answer returns (~/segment's, a prompted region's) over every buffered frame "
        "between its first and last frame with SAM 2's video memory, not only over the frames the model read."
        " Needs backend torch and the sam2 package (costs one SAM 2 frame, ~0.2 s on a CPU, per buffered "
        "frame)."))
    track_objects: bool = param(False, anything, doc=(
        "Keep following the object of each segmentation and prompted region (as track_window does over its "
        "window) on every newer buffered frame, in the worker's idle time, publishing their masks on "
        "~/object_masks (expression 'tracking'). An object lost on 10 frames in a row is dropped; at most "
        "max_tracked_objects (newest kept), their memory together at most cache_mb. Needs backend torch and "
        "the sam2 package."))
    max_tracked_objects: int = param(4, in_range(1, 64), doc=(
        "Most objects track_objects follows at once (1-64); a new one drops the oldest."))


@dataclass(frozen=True)
class OutputParams:
    """What the node publishes after an answer (live)."""

    publish_overlay: bool = param(True, anything, doc=(
        "Publish ~/overlay (masks drawn on the frame) after segmentations and region questions, and "
        "~/overlay/compressed (JPEG) while it has subscribers."))
    overlay_jpeg_quality: int = param(95, in_range(1, 100), doc=(
        "JPEG quality of ~/overlay/compressed, 1-100 (image_transport's default)."))
    publish_annotations: bool = param(True, anything, doc=(
        "Publish ~/annotations (foxglove_msgs/ImageAnnotations: the overlay's mask contours, boxes and "
        "labels, stamped as its image) after segmentations and region questions, for Foxglove's Image "
        "panel."))
    publish_markers: bool = param(True, anything, doc=(
        "Publish ~/markers (visualization_msgs/MarkerArray) after region questions: the oriented box and "
        "label of each object a geometric answer measured, for RViz."))
    publish_detections: bool = param(True, anything, doc=(
        "Publish ~/detections_3d (vision_msgs/Detection3DArray: the boxes a geometric answer measured) and "
        "~/detections_2d (vision_msgs/Detection2DArray: a segmentation's box on its newest frame), for "
        "planners and world models."))


@dataclass(frozen=True)
class ProcessParams:
    """The process: read at start-up."""

    diagnostics_period_s: float = param(1.0, in_range(0.05, 3600.0), live=False, doc=(
        "Period of /diagnostics status messages."))
    autostart: bool = param(False, anything, live=False, doc=(
        "Configure and activate on start-up (robots without a lifecycle manager)."))

GROUPS: dict[str, type] = {
    "engine": EngineParams, "inputs": InputParams, "buffer": BufferParams, "requests": RequestParams,
    "prompts": PromptParams, "outputs": OutputParams, "process": ProcessParams,
}
"""The groups in declaration order, by their attribute on ``NodeParams``."""


def _spec(f: Field[Any]) -> ParamSpec:
    assert f.default is not MISSING
    return ParamSpec(f.name, f.default, f.metadata["doc"], f.metadata["check"], f.metadata["live"])


PARAMS: tuple[ParamSpec, ...] = tuple(_spec(f) for group in GROUPS.values() for f in fields(group))
GROUP_OF: dict[str, str] = {f.name: attr for attr, group in GROUPS.items() for f in fields(group)}
"""Which group (its attribute on ``NodeParams``) each parameter belongs to."""


@dataclass(frozen=True)
class NodeParams:
    """Every parameter of the node, typed and grouped; replaced whole when a set request is accepted, so a
    reader never sees half of an update."""

    engine: EngineParams = field(default_factory=EngineParams)
    inputs: InputParams = field(default_factory=InputParams)
    buffer: BufferParams = field(default_factory=BufferParams)
    requests: RequestParams = field(default_factory=RequestParams)
    prompts: PromptParams = field(default_factory=PromptParams)
    outputs: OutputParams = field(default_factory=OutputParams)
    process: ProcessParams = field(default_factory=ProcessParams)

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> NodeParams:
        """The parameters ``values`` names (the others at their defaults); ``ValueError`` with the first
        reason a value is refused."""
        return cls().replace(values)

    def replace(self, updates: Mapping[str, Any]) -> NodeParams:
        """These parameters with ``updates`` applied, each value checked (``validate``); ``ValueError`` with
        the reason, and nothing changed, otherwise. Combinations (the engine options) are checked on
        configure (``validate_all``): a planner switching the backend sets ``backend`` and ``onnx_dir`` one
        after the other."""
        by_group: dict[str, dict[str, Any]] = {}
        for name, value in updates.items():
            reason = validate(name, value)
            if reason:
                raise ValueError(reason)
            spec = PARAM_BY_NAME[name]
            if isinstance(spec.default, float) and not isinstance(value, bool):
                value = float(value)  # `ingest_fps: 2` in YAML is the double 2.0
            by_group.setdefault(GROUP_OF[name], {})[name] = value
        return _replace(self, **{g: _replace(getattr(self, g), **v) for g, v in by_group.items()})

    def values(self) -> dict[str, ParamValue]:
        """Every parameter by name (flat, as ROS declares them)."""
        return {f.name: getattr(getattr(self, attr), f.name) for attr, group in GROUPS.items()
                for f in fields(group)}

    def changed(self, other: NodeParams) -> list[str]:
        """Names of the parameters whose values differ from ``other``'s."""
        mine, theirs = self.values(), other.values()
        return [n for n in mine if mine[n] != theirs[n]]

    def engine_spec(self, server_token: str = "") -> EngineSpec:
        """The engine these parameters describe (``ValueError`` with the reason when they cannot)."""
        return engine_spec(self.values(), server_token)

    def buffer_limits(self) -> BufferLimits:
        b = self.buffer
        return BufferLimits(
            max_frames=b.buffer_max_frames, max_bytes=b.buffer_max_mb * (1 << 20),
            max_age_s=b.buffer_max_age_s, jump_back_s=b.time_jump_back_s,
            jump_forward_s=b.time_jump_forward_s, jump_confirm_frames=b.time_jump_confirm_frames,
        )


PARAM_BY_NAME: dict[str, ParamSpec] = {p.name: p for p in PARAMS}


def validate(name: str, value: Any) -> str:
    """Reason why ``value`` is not acceptable for ``name`` ("" when it is)."""
    spec = PARAM_BY_NAME.get(name)
    if spec is None:
        return f"unknown parameter '{name}'"
    want = type(spec.default)
    if want is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if type(value) is not want:
        return f"{name} must be of type {want.__name__}, got {type(value).__name__}"
    reason = spec.check(value)
    return f"{name} {reason}" if reason else ""


def validate_all(values: Mapping[str, Any]) -> str:
    """First reason any of ``values`` is invalid, including the engine options' combinations ("" when all
    are fine).

    The combinations are checked here, on configure, not on every set: a planner switching the backend
    sets ``backend`` and ``onnx_dir`` one after the other.
    """
    for name, value in values.items():
        reason = validate(name, value)
        if reason:
            return reason
    try:
        spec = engine_spec(values)
    except ValueError as exc:
        return str(exc)
    for name in ("track_window", "track_objects"):
        if values.get(name) and spec.backend != "torch":
            return (f"{name} needs backend torch (SAM 2's video memory runs in the local engine), not "
                    f"{spec.backend}")
    return ""


# The engine options the node does not offer as parameters: the token is read from a file or the
# environment (server_token, the parameter, must stay empty); threads, reuse and the cache entry counts
# (sized for one robot's window) keep the spec's defaults.
_NOT_PARAMS = {"server_token", "threads", "reuse", "cache_frames", "cache_windows"}
ENGINE_PARAMS = tuple(f.name for f in fields(EngineSpec) if f.name not in _NOT_PARAMS)


def engine_spec(values: Mapping[str, Any], server_token: str = "") -> EngineSpec:
    """The engine the node's parameters describe (``ValueError`` with the reason when they cannot)."""
    return EngineSpec(**{n: values[n] for n in ENGINE_PARAMS if n in values}, server_token=server_token)
