"""Parameter logic of ``launch/rynnec.launch.py`` as a pure function (no ``launch`` import needed).

launch_ros turns each entry of a ``Node(parameters=[...])`` list into one ``--params-file`` (a dict is
first written to a temporary ``/**: ros__parameters:`` YAML) in list order, and rcl lets a later file
override an earlier one. A dict of every launch argument placed after the user's ``params_file``
therefore overwrote the user's YAML with the launch defaults. Here a launch argument reaches the node
only when the user set it on the command line; unset ones (the empty default) leave the params file's
value in force.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

# Launch arguments of rynnec.launch.py that set the node parameter of the same name: (type, help).
LAUNCH_PARAMETERS: dict[str, tuple[type, str]] = {
    "checkpoint": (str, "RynnEC checkpoint directory"),
    "device": (str, "cpu, cuda or cuda:N"),
    "dtype": (str, "float32, float16, bfloat16"),
    "backend": (str, "torch, onnxruntime, tensorrt"),
    "onnx_dir": (str, "ONNX export (backend onnxruntime)"),
    "engine_dir": (str, "TensorRT engines (backend tensorrt)"),
    "ort_provider": (str, "cpu, cuda, tensorrt"),
    "color_topic": (str, "colour image topic"),
    "color_transport": (str, "raw or compressed"),
    "depth_topic": (str, "depth registered to colour"),
    "camera_info_topic": (str, "CameraInfo of the colour camera"),
    "world_frame": (str, "e.g. map or odom"),
    "use_sim_time": (bool, "true with a bag publishing /clock"),
}

# The declared default of those launch arguments: "not given, keep the params file's value".
UNSET = ""

_TRUE, _FALSE = ("true", "1"), ("false", "0")


def _as_bool(name: str, text: str) -> bool:
    """launch's own truthiness (``IfCondition``): true/false/1/0, case-insensitive."""
    if text.strip().lower() in _TRUE:
        return True
    if text.strip().lower() in _FALSE:
        return False
    raise ValueError(f"launch argument {name}:={text!r} must be true or false")


def launch_overrides(launch_values: Mapping[str, str]) -> dict[str, str | bool]:
    """The node parameters the user set as launch arguments (unset ones left out), typed."""
    unknown = sorted(set(launch_values) - set(LAUNCH_PARAMETERS))
    if unknown:
        raise ValueError(f"not node-parameter launch arguments: {', '.join(unknown)}")
    out: dict[str, str | bool] = {}
    for name, text in launch_values.items():
        if text == UNSET:
            continue
        out[name] = _as_bool(name, text) if LAUNCH_PARAMETERS[name][0] is bool else text
    return out


def node_parameters(params_file: str, launch_values: Mapping[str, str]) -> list[str | dict[str, str | bool]]:
    """``Node(parameters=...)`` for the cognition node: the params file, then the set launch arguments.

    ``params_file`` empty means none; a named file that does not exist is an error here rather than
    launch_ros' warning-and-skip, so a typo does not silently start the node on defaults.
    """
    entries: list[str | dict[str, str | bool]] = []
    if params_file:
        if not Path(params_file).is_file():
            raise ValueError(f"params_file {params_file} is not a file")
        entries.append(params_file)
    overrides = launch_overrides(launch_values)
    if overrides:
        entries.append(overrides)
    return entries


def _join(namespace: str, name: str) -> str:
    """ROS name resolution of ``name`` in ``namespace``: an absolute name stays, a relative one is joined."""
    if not name or name.startswith("/"):
        return name
    return namespace.rstrip("/") + "/" + name if namespace.strip("/") else "/" + name


def camera_topics(namespace: str, color: str, depth: str, camera_info: str) -> dict[str, str]:
    """Absolute colour/depth/camera_info topics of a camera driver running in ``namespace``.

    realsense-ros 4.54 and later publish under ``/camera/camera/`` (namespace and node name both
    ``camera``), older releases under ``/camera/``; so the namespace is an argument and the per-stream
    names (``color/image_raw``, ``aligned_depth_to_color/image_raw``, ``color/camera_info``) stay
    relative. An empty ``depth`` means no depth stream.
    """
    if not color:
        raise ValueError("the colour topic must not be empty")
    out = {
        "color": _join(namespace, color),
        "depth": _join(namespace, depth),
        "camera_info": _join(namespace, camera_info),
    }
    for key, topic in out.items():
        if topic and ("//" in topic or any(c.isspace() for c in topic) or topic.endswith("/")):
            raise ValueError(f"{key} topic {topic!r} is not a valid ROS topic name")
    return out
