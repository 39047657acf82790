"""The node's parameters: one table of names, defaults, descriptions and checks.

Pure Python so the same table declares the ROS parameters, validates set-parameter requests, and lets
tests check that config/*.yaml, docs and launch files name exactly these parameters.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rynnec_ros.core.wire import MAX_NEW_TOKENS, MAX_QUESTION_CHARS

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
    check: Callable[[Any], str]
    live: bool = True


def _one_of(*choices: str) -> Callable[[Any], str]:
    return lambda v: "" if v in choices else f"must be one of {', '.join(choices)}"


def _range(lo: float, hi: float) -> Callable[[Any], str]:
    def check(v: Any) -> str:
        if isinstance(v, float) and not math.isfinite(v):
            return "must be a finite number"
        return "" if lo <= v <= hi else f"must be in [{lo}, {hi}]"

    return check


def _positive(hi: float) -> Callable[[Any], str]:
    def check(v: Any) -> str:
        if isinstance(v, float) and not math.isfinite(v):
            return "must be a finite number"
        return "" if 0 < v <= hi else f"must be in (0, {hi}]"

    return check


def _topic(optional: bool) -> Callable[[Any], str]:
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


def _any(_: Any) -> str:
    return ""


def _path(v: str) -> str:
    return "must not contain control characters" if any(ord(c) < 32 for c in v) else ""


def _frame_id(v: str) -> str:
    return f"'{v}' is not a valid frame id" if any(c.isspace() for c in v) or v.startswith("/") else ""


PARAMS: tuple[ParamSpec, ...] = (
    # Engine (applied on configure).
    ParamSpec("checkpoint", "", "RynnEC checkpoint directory (official format, safetensors). Required.",
              _any, live=False),
    ParamSpec("device", "cpu", "torch device for the engine: cpu, cuda, cuda:N.",
              lambda v: "" if v == "cpu" or v == "cuda" or (v.startswith("cuda:") and v[5:].isdigit())
              else "must be cpu, cuda or cuda:N", live=False),
    ParamSpec("dtype", "float32", "Engine dtype.", _one_of("float32", "float16", "bfloat16"), live=False),
    ParamSpec("max_visual_tokens", 16384, "Visual token budget of the image processor (all frames together).",
              _range(16, 1 << 20), live=False),
    ParamSpec("cache_mb", 1024, "Most megabytes the engine's caches (vision features, prompt-prefix K/V, "
              "SAM2 features) hold together, least recently used evicted first; 0 = no reuse across "
              "questions. With buffer_max_mb it bounds the node's memory beyond the model.",
              _range(0, 1 << 20), live=False),
    ParamSpec("memory_limit_mb", 0, "Configure refuses, with the numbers, when the weights at dtype, the K/V "
              "cache at max_visual_tokens, buffer_max_mb, cache_mb and an activation allowance exceed this "
              "many megabytes; 0 = the machine's MemAvailable at configure, -1 = no check.",
              _range(-1, 1 << 30), live=False),
    ParamSpec("backend", "torch", "What runs the engine's compute: torch (eager), onnxruntime (exported ONNX "
              "graphs, needs onnx_dir), tensorrt (TensorRT engines, needs engine_dir and a cuda device) or "
              "remote (a site server, `rynnec-ros serve`, at server_url).",
              _one_of("torch", "onnxruntime", "tensorrt", "remote"), live=False),
    ParamSpec("onnx_dir", "", "Directory written by `rynnec-ros export onnx` for this checkpoint; required "
              "when backend is onnxruntime.", _path, live=False),
    ParamSpec("engine_dir", "", "Directory written by `rynnec-ros export tensorrt` (engines.json); required "
              "when backend is tensorrt.", _path, live=False),
    ParamSpec("ort_provider", "", "ONNX Runtime execution provider for backend onnxruntime: cpu, cuda or "
              "tensorrt; empty = cpu for device cpu, else cuda. A provider ONNX Runtime cannot give fails "
              "configure.", _one_of("", "cpu", "cuda", "tensorrt"), live=False),
    ParamSpec("server_url", "", "host:port (gRPC) of the site server for backend remote; required then.",
              _path, live=False),
    ParamSpec("server_token_file", "", "File holding the site server's access token (required by servers "
              "off loopback; chmod 600); empty: the variable server_token_env names.", _path, live=False),
    ParamSpec("server_token_env", "RYNNEC_SERVER_TOKEN", "Environment variable of the node's process holding "
              "the site server's token when server_token_file is empty.", _env_name, live=False),
    ParamSpec("server_token", "", "Refused when set: parameters are readable by every peer on the ROS domain "
              "(ros2 param get), so the token comes from server_token_file or server_token_env.",
              _no_secret, live=False),
    ParamSpec("server_connect_timeout_s", 5.0, "Seconds configure waits for the site server to answer.",
              _positive(600.0), live=False),
    ParamSpec("server_request_timeout_s", 120.0, "A site-server request not answered within this many "
              "seconds fails with the reason (a dead server never hangs a request).", _positive(3600.0),
              live=False),
    # Inputs (applied on activate).
    ParamSpec("color_topic", "/camera/color/image_raw", "Colour camera topic (sensor_msgs/Image).",
              _topic(False), live=False),
    ParamSpec("color_transport", "raw", "raw: sensor_msgs/Image on color_topic; compressed: "
              "sensor_msgs/CompressedImage on color_topic + '/compressed'.", _one_of("raw", "compressed"),
              live=False),
    ParamSpec("depth_topic", "", "Depth image registered to colour (16UC1 mm or 32FC1 m); empty = no depth.",
              _topic(True), live=False),
    ParamSpec("camera_info_topic", "", "CameraInfo of the colour camera; empty = no intrinsics.",
              _topic(True), live=False),
    ParamSpec("depth_transport", "raw", "raw: sensor_msgs/Image on depth_topic; compressedDepth: "
              "sensor_msgs/CompressedImage (compressed_depth_image_transport, PNG) on depth_topic + "
              "'/compressedDepth'.", _one_of("raw", "compressedDepth"), live=False),
    ParamSpec("max_image_pixels", 3840 * 2160, "Colour/depth images with more pixels (read from the header, "
              "before decoding) are dropped and counted in /diagnostics: a bound on memory per frame and "
              "against decompression bombs. Default: 4K UHD.", _range(1, 1 << 28)),
    ParamSpec("depth_scale", 0.001, "Metres per unit of integer (16UC1) depth images.", _range(1e-6, 1e3)),
    ParamSpec("world_frame", "", "Gravity-aligned fixed frame (z up) for camera poses from TF, e.g. map "
              "or odom; empty = no poses.", _frame_id, live=False),
    ParamSpec("qos_reliability", "best_effort", "Camera subscription reliability (sensor-data default).",
              _one_of("best_effort", "reliable"), live=False),
    ParamSpec("qos_depth", 5, "Camera subscription queue depth.", _range(1, 1000), live=False),
    # Buffer and sampling.
    ParamSpec("ingest_fps", 2.0, "Frames per second kept from the camera (0 = every frame); the paper "
              "samples 1 fps, so 2 leaves margin.", _range(0.0, 1000.0)),
    ParamSpec("buffer_max_frames", 600, "Most frames buffered.", _range(1, 100000)),
    ParamSpec("buffer_max_mb", 1024, "Most megabytes of frames (colour + depth) buffered.",
              _range(1, 1 << 20)),
    ParamSpec("buffer_max_age_s", 300.0, "Frames older than the newest by more than this are dropped "
              "(0 = no age bound).", _range(0.0, 1e6)),
    ParamSpec("time_jump_back_s", 1.0, "A stamp this much older than the newest (looping bag, clock reset) "
              "clears the buffer.", _range(0.0, 1e6)),
    ParamSpec("time_jump_forward_s", 0.0, "A stamp this much newer than the newest clears the buffer "
              "(0 = only beyond buffer_max_age_s).", _range(0.0, 1e9)),
    ParamSpec("time_jump_confirm_frames", 3, "Consecutive frames on a new timeline needed before a time jump "
              "resets the buffer; fewer are dropped as badly stamped outliers.", _range(1, 1000)),
    ParamSpec("sample_fps", 1.0, "Frames per second sampled from the window for one query (paper: 1; "
              "0 = every buffered frame).", _range(0.0, 1000.0)),
    ParamSpec("max_frames_per_query", 30, "Most frames per query (paper: 30); mask frames always included.",
              _range(1, 1000)),
    ParamSpec("stamp_tolerance_s", 0.001, "How far a requested stamp may be from a buffered frame's.",
              _range(0.0, 10.0)),
    # Requests.
    ParamSpec("request_queue_size", 4, "Requests waiting for the model beyond the running one (at most "
              f"{MAX_REQUEST_QUEUE}); more are rejected at once with a reason (bursts of up to "
              f"{SERVICE_QUEUE_DEPTH} wait in the service queue until then).", _range(1, MAX_REQUEST_QUEUE)),
    ParamSpec("request_timeout_s", 120.0, "A request not answered within this many seconds (queue wait "
              "included) fails with a timeout.", _range(0.1, 86400.0)),
    ParamSpec("max_new_tokens", 128, "Default most generated tokens per answer (greedy decoding).",
              _range(1, MAX_NEW_TOKENS)),
    ParamSpec("max_question_chars", MAX_QUESTION_CHARS, "Longer questions/expressions are rejected.",
              _range(1, 1 << 20)),
    ParamSpec("precompute_window", True, "Encode the live window (vision features, prompt prefix) in the "
              "worker's idle time, so a question about it pays only its own tokens; a request interrupts it.",
              _any),
    ParamSpec("spatial_source", "auto", "auto: geometry when depth, intrinsics and poses cover the objects, "
              "else the model; geometry: geometry or a failure with the reason; model: always the model.",
              _one_of("auto", "model", "geometry")),
    ParamSpec("arm_length_m", 0.8, "Robot arm reach in metres (> 0) used by the geometry's reachability "
              "questions.",
              _positive(100.0)),
    # Outputs.
    ParamSpec("publish_overlay", True, "Publish ~/overlay (masks drawn on the frame) after segmentations and "
              "region questions, and ~/overlay/compressed (JPEG) while it has subscribers.", _any),
    ParamSpec("overlay_jpeg_quality", 95, "JPEG quality of ~/overlay/compressed, 1-100 (image_transport's "
              "default).", _range(1, 100)),
    ParamSpec("publish_markers", True, "Publish ~/markers (visualization_msgs/MarkerArray) after region "
              "questions: the oriented box and label of each object a geometric answer measured, for RViz.",
              _any),
    ParamSpec("publish_detections", True, "Publish ~/detections_3d (vision_msgs/Detection3DArray: the boxes "
              "a geometric answer measured) and ~/detections_2d (vision_msgs/Detection2DArray: a "
              "segmentation's box on its newest frame), for planners and world models.", _any),
    ParamSpec("diagnostics_period_s", 1.0, "Period of /diagnostics status messages.", _range(0.05, 3600.0),
              live=False),
    ParamSpec("autostart", False, "Configure and activate on start-up (robots without a lifecycle manager).",
              _any, live=False),
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
    """First reason any of ``values`` is invalid, including cross-parameter rules ("" when all are fine).

    The cross-parameter rules are checked here, on configure, not on every set: a planner switching the
    backend sets ``backend`` and ``onnx_dir`` one after the other.
    """
    for name, value in values.items():
        reason = validate(name, value)
        if reason:
            return reason
    backend = values.get("backend", "torch")
    if backend == "onnxruntime" and not values.get("onnx_dir"):
        return "backend onnxruntime needs parameter 'onnx_dir' (make one with `rynnec-ros export onnx`)"
    if backend == "tensorrt":
        if not values.get("engine_dir"):
            return "backend tensorrt needs parameter 'engine_dir' (`rynnec-ros export tensorrt` makes one)"
        if not str(values.get("device", "cpu")).startswith("cuda"):
            return "backend tensorrt needs device cuda or cuda:N"
    if backend == "remote" and not values.get("server_url"):
        return "backend remote needs parameter 'server_url' (host:port of `rynnec-ros serve`)"
    if values.get("ort_provider") and backend != "onnxruntime":
        return f"ort_provider applies to backend onnxruntime only, but backend is {backend}"
    return ""
