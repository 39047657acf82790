"""The node's parameters: one table of names, defaults, descriptions and checks.

Pure Python so the same table declares the ROS parameters, validates set-parameter requests, and lets
tests check that config/*.yaml, docs and launch files name exactly these parameters.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

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

PARAMS: tuple[ParamSpec, ...] = (
    # Engine (applied on configure): the names, defaults and checks of model/spec.py's EngineSpec.
    ParamSpec("checkpoint", "", "RynnEC checkpoint directory (official format, safetensors). Required "
              "unless backend is remote.", CHECKS["checkpoint"], live=False),
    ParamSpec("device", _ENGINE["device"], "torch device for the engine: cpu, cuda, cuda:N.",
              CHECKS["device"], live=False),
    ParamSpec("dtype", _ENGINE["dtype"], "Engine dtype.", CHECKS["dtype"], live=False),
    ParamSpec("max_visual_tokens", _ENGINE["max_visual_tokens"], "Visual token budget of the image processor "
              "(all frames together).", CHECKS["max_visual_tokens"], live=False),
    ParamSpec("cache_mb", int(_ENGINE["cache_mb"]), "Most megabytes the engine's caches (vision features, "
              "prompt-prefix K/V, SAM2 features) hold together, least recently used evicted first; 0 = no "
              "reuse across questions. With buffer_max_mb it bounds the node's memory beyond the model.",
              CHECKS["cache_mb"], live=False),
    ParamSpec("memory_limit_mb", 0, "Configure refuses, with the numbers, when the weights at dtype (the "
              "LLM's linears at weights), the K/V cache at max_visual_tokens, buffer_max_mb, cache_mb, the "
              "measured vision/SAM 2 activations and a runtime allowance exceed this many megabytes; 0 = "
              "the machine's MemAvailable at configure, -1 = no check.",
              in_range(-1, 1 << 30), live=False),
    ParamSpec("backend", _ENGINE["backend"], "What runs the engine's compute: torch (eager), onnxruntime "
              "(exported ONNX graphs, needs onnx_dir), tensorrt (TensorRT engines, needs engine_dir and a "
              "cuda device) or remote (a site server, `rynnec-ros serve`, at server_url).", CHECKS["backend"],
              live=False),
    ParamSpec("onnx_dir", "", "Directory written by `rynnec-ros export onnx` for this checkpoint; required "
              "when backend is onnxruntime.", CHECKS["onnx_dir"], live=False),
    ParamSpec("engine_dir", "", "Directory written by `rynnec-ros export tensorrt` (engines.json); required "
              "when backend is tensorrt.", CHECKS["engine_dir"], live=False),
    ParamSpec("ort_provider", "", "ONNX Runtime execution provider for backend onnxruntime: cpu, cuda or "
              "tensorrt; empty = cpu for device cpu, else cuda. A provider ONNX Runtime cannot give fails "
              "configure.", CHECKS["ort_provider"], live=False),
    ParamSpec("weights", _ENGINE["weights"], "Weight-only quantised LLM graphs for backends onnxruntime and "
              "tensorrt: int8 or int4 (exported with `rynnec-ros export onnx --weights`); empty = float32.",
              CHECKS["weights"], live=False),
    ParamSpec("server_url", "", "host:port (gRPC) of the site server for backend remote; required then.",
              CHECKS["server_url"], live=False),
    ParamSpec("server_token_file", "", "File holding the site server's access token (required by servers "
              "off loopback; chmod 600); empty: the variable server_token_env names.", no_control_chars,
              live=False),
    ParamSpec("server_token_env", "RYNNEC_SERVER_TOKEN", "Environment variable of the node's process holding "
              "the site server's token when server_token_file is empty.", _env_name, live=False),
    ParamSpec("server_token", "", "Refused when set: parameters are readable by every peer on the ROS domain "
              "(ros2 param get), so the token comes from server_token_file or server_token_env.",
              _no_secret, live=False),
    ParamSpec("server_connect_timeout_s", _ENGINE["server_connect_timeout_s"], "Seconds configure waits for "
              "the site server to answer.", CHECKS["server_connect_timeout_s"], live=False),
    ParamSpec("server_request_timeout_s", _ENGINE["server_request_timeout_s"], "A site-server request not "
              "answered within this many seconds fails with the reason (a dead server never hangs a "
              "request).", CHECKS["server_request_timeout_s"], live=False),
    # Inputs (applied on activate).
    ParamSpec("color_topic", "/camera/color/image_raw", "Colour camera topic (sensor_msgs/Image).",
              _topic(False), live=False),
    ParamSpec("color_transport", "raw", "raw: sensor_msgs/Image on color_topic; compressed: "
              "sensor_msgs/CompressedImage on color_topic + '/compressed'.", one_of("raw", "compressed"),
              live=False),
    ParamSpec("depth_topic", "", "Depth image registered to colour (16UC1 mm or 32FC1 m); empty = no depth.",
              _topic(True), live=False),
    ParamSpec("camera_info_topic", "", "CameraInfo of the colour camera; empty = no intrinsics.",
              _topic(True), live=False),
    ParamSpec("depth_transport", "raw", "raw: sensor_msgs/Image on depth_topic; compressedDepth: "
              "sensor_msgs/CompressedImage (compressed_depth_image_transport, PNG) on depth_topic + "
              "'/compressedDepth'.", one_of("raw", "compressedDepth"), live=False),
    ParamSpec("max_image_pixels", 3840 * 2160, "Colour/depth images with more pixels (read from the header, "
              "before decoding) are dropped and counted in /diagnostics: a bound on memory per frame and "
              "against decompression bombs. Default: 4K UHD.", in_range(1, 1 << 28)),
    ParamSpec("depth_scale", 0.001, "Metres per unit of integer (16UC1) depth images.", in_range(1e-6, 1e3)),
    ParamSpec("world_frame", "", "Gravity-aligned fixed frame (z up) for camera poses from TF, e.g. map "
              "or odom; empty = no poses.", _frame_id, live=False),
    ParamSpec("qos_reliability", "best_effort", "Camera subscription reliability (sensor-data default).",
              one_of("best_effort", "reliable"), live=False),
    ParamSpec("qos_depth", 5, "Camera subscription queue depth.", in_range(1, 1000), live=False),
    # Buffer and sampling.
    ParamSpec("ingest_fps", 2.0, "Frames per second kept from the camera (0 = every frame); the paper "
              "samples 1 fps, so 2 leaves margin.", in_range(0.0, 1000.0)),
    ParamSpec("buffer_max_frames", 600, "Most frames buffered.", in_range(1, 100000)),
    ParamSpec("buffer_max_mb", 1024, "Most megabytes of frames (colour + depth) buffered.",
              in_range(1, 1 << 20)),
    ParamSpec("buffer_max_age_s", 300.0, "Frames older than the newest by more than this are dropped "
              "(0 = no age bound).", in_range(0.0, 1e6)),
    ParamSpec("time_jump_back_s", 1.0, "A stamp this much older than the newest (looping bag, clock reset) "
              "clears the buffer.", in_range(0.0, 1e6)),
    ParamSpec("time_jump_forward_s", 0.0, "A stamp this much newer than the newest clears the buffer "
              "(0 = only beyond buffer_max_age_s).", in_range(0.0, 1e9)),
    ParamSpec("time_jump_confirm_frames", 3, "Consecutive frames on a new timeline needed before a time jump "
              "resets the buffer; fewer are dropped as badly stamped outliers.", in_range(1, 1000)),
    ParamSpec("sample_fps", 1.0, "Frames per second sampled from the window for one query (paper: 1; "
              "0 = every buffered frame).", in_range(0.0, 1000.0)),
    ParamSpec("max_frames_per_query", 30, "Most frames per query (paper: 30); mask frames always included.",
              in_range(1, 1000)),
    ParamSpec("stamp_tolerance_s", 0.001, "How far a requested stamp may be from a buffered frame's.",
              in_range(0.0, 10.0)),
    # Requests.
    ParamSpec("request_queue_size", 4, "Requests waiting for the model beyond the running one (at most "
              f"{MAX_REQUEST_QUEUE}); more are rejected at once with a reason (bursts of up to "
              f"{SERVICE_QUEUE_DEPTH} wait in the service queue until then).",
              in_range(1, MAX_REQUEST_QUEUE)),
    ParamSpec("request_timeout_s", 120.0, "A request not answered within this many seconds (queue wait "
              "included) fails with a timeout.", in_range(0.1, 86400.0)),
    ParamSpec("max_new_tokens", 128, "Default most generated tokens per answer (greedy decoding).",
              in_range(1, MAX_NEW_TOKENS)),
    ParamSpec("max_question_chars", MAX_QUESTION_CHARS, "Longer questions/expressions are rejected.",
              in_range(1, 1 << 20)),
    ParamSpec("precompute_window", True, "Encode the live window (vision features, prompt prefix) in the "
              "worker's idle time, so a question about it pays only its own tokens; a request interrupts it.",
              anything),
    ParamSpec("spatial_source", "auto", "auto: geometry when depth, intrinsics and poses cover the objects, "
              "else the model; geometry: geometry or a failure with the reason; model: always the model.",
              one_of("auto", "model", "geometry")),
    ParamSpec("arm_length_m", 0.8, "Robot arm reach in metres (> 0) used by the geometry's reachability "
              "questions.",
              positive(100.0)),
    ParamSpec("point_prompt_topic", "", "geometry_msgs/PointStamped topic (e.g. /clicked_point, RViz's "
              "Publish Point tool) whose every point asks point_prompt_question about the object there "
              "(region <object0>, object_id counting up from 1); answers on ~/spatial_answers, masks on "
              "~/object_masks. Needs world_frame, depth and camera_info. Empty = off.", _topic(True),
              live=False),
    ParamSpec("point_prompt_question", "What is <object0>?", "The question asked about each point on "
              "point_prompt_topic.", _question),
    ParamSpec("track_window", False, "Follow every mask an answer returns (~/segment's, a prompted region's) "
              "over every buffered frame between its first and last frame with SAM 2's video memory, not "
              "only over the frames the model read. Needs backend torch and the sam2 package (costs one "
              "SAM 2 frame, ~0.2 s on a CPU, per buffered frame).", anything),
    ParamSpec("track_objects", False, "Keep following the object of each segmentation and prompted region "
              "(as track_window does over its window) on every newer buffered frame, in the worker's idle "
              "time, publishing their masks on ~/object_masks (expression 'tracking'). An object lost on "
              "10 frames in a row is dropped; at most max_tracked_objects (newest kept), their memory "
              "together at most cache_mb. Needs backend torch and the sam2 package.", anything),
    ParamSpec("max_tracked_objects", 4, "Most objects track_objects follows at once (1-64); a new one "
              "drops the oldest.", in_range(1, 64)),
    # Outputs.
    ParamSpec("publish_overlay", True, "Publish ~/overlay (masks drawn on the frame) after segmentations and "
              "region questions, and ~/overlay/compressed (JPEG) while it has subscribers.", anything),
    ParamSpec("overlay_jpeg_quality", 95, "JPEG quality of ~/overlay/compressed, 1-100 (image_transport's "
              "default).", in_range(1, 100)),
    ParamSpec("publish_markers", True, "Publish ~/markers (visualization_msgs/MarkerArray) after region "
              "questions: the oriented box and label of each object a geometric answer measured, for RViz.",
              anything),
    ParamSpec("publish_detections", True, "Publish ~/detections_3d (vision_msgs/Detection3DArray: the boxes "
              "a geometric answer measured) and ~/detections_2d (vision_msgs/Detection2DArray: a "
              "segmentation's box on its newest frame), for planners and world models.", anything),
    ParamSpec("diagnostics_period_s", 1.0, "Period of /diagnostics status messages.", in_range(0.05, 3600.0),
              live=False),
    ParamSpec("autostart", False, "Configure and activate on start-up (robots without a lifecycle manager).",
              anything, live=False),
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
