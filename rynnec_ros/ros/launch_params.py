"""Parameter logic of ``launch/rynnec.launch.py`` as a pure function (no ``launch`` import needed).

launch_ros turns each entry of a ``Node(parameters=[...])`` list into one ``--params-file`` (a dict is
first written to a temporary ``/**: ros__parameters:`` YAML) in list order, and rcl lets a later file
override an earlier one. A dict of every launch argument placed after the user's ``params_file``
therefore overwrote the user's YAML with the launch defaults. Here a launch argument reaches the node
only when the user set it on the command line; unset ones (the ``UNSET`` default) leave the params file's
value in force, and an argument given empty (``world_frame:=''``) sets the parameter to the empty string.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

# Launch arguments of rynnec.launch.py that set the node parameter of the same name: (type, help).
LAUNCH_PARAMETERS: dict[str, tuple[type, str]] = {
    "checkpoint": (str, "RynnEC checkpoint directory"),
    "device": (str, "cpu, cuda or cuda:N"),
    "dtype": (str, "float32, float16, bfloat16"),
    "backend": (str, "torch, onnxruntime, tensorrt, remote"),
    "onnx_dir": (str, "ONNX export (backend onnxruntime)"),
    "engine_dir": (str, "TensorRT engines (backend tensorrt)"),
    "ort_provider": (str, "cpu, cuda, tensorrt"),
    "color_topic": (str, "colour image topic"),
    "color_transport": (str, "raw or compressed"),
    "depth_topic": (str, "depth registered to colour"),
    "camera_info_topic": (str, "CameraInfo of the colour camera"),
    "world_frame": (str, "e.g. map or odom"),
    "qos_reliability": (str, "camera subscriptions: best_effort or reliable"),
    "qos_depth": (int, "camera subscription queue depth"),
    "point_prompt_topic": (str, "PointStamped topic to ask about, e.g. /clicked_point"),
    "use_sim_time": (bool, "true with a bag publishing /clock"),
}

# The declared default of those launch arguments: "not given, keep the params file's value". Not the
# empty string, which is a value a user sets to clear a file's setting (``world_frame:=''``).
UNSET = "<params_file>"

_TRUE, _FALSE = ("true", "1"), ("false", "0")


def _as_bool(name: str, text: str) -> bool:
    """launch's own truthiness (``IfCondition``): true/false/1/0, case-insensitive."""
    if text.strip().lower() in _TRUE:
        return True
    if text.strip().lower() in _FALSE:
        return False
    raise ValueError(f"launch argument {name}:={text!r} must be true or false")


def _as_int(name: str, text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ValueError(f"launch argument {name}:={text!r} must be a whole number") from None


def launch_overrides(launch_values: Mapping[str, str]) -> dict[str, str | bool | int]:
    """The node parameters the user set as launch arguments (unset ones left out), typed."""
    unknown = sorted(set(launch_values) - set(LAUNCH_PARAMETERS))
    if unknown:
        raise ValueError(f"not node-parameter launch arguments: {', '.join(unknown)}")
    out: dict[str, str | bool | int] = {}
    for name, text in launch_values.items():
        if text == UNSET:
            continue
        kind = LAUNCH_PARAMETERS[name][0]
        if kind is bool:
            out[name] = _as_bool(name, text)
        elif kind is int:
            out[name] = _as_int(name, text)
        else:
            # ros2 launch hands `world_frame:=''` over with its quotes (it does not unquote; a bare
            # `world_frame:=` is refused as malformed), so a quoted empty value is how a user clears one.
            out[name] = "" if text in ("''", '""') else text
    return out


def file_parameters(params_file: str, node_name: str = "rynnec", namespace: str = "") -> dict[str, Any]:
    """The parameters ``params_file`` gives the node ``namespace/node_name``, as rcl would apply them.

    rcl's YAML keys are node names with wildcards: ``/**`` (every node), ``/**/rynnec``, ``rynnec``,
    ``/ns/rynnec``; later keys in the file win. Only those forms are matched (``*`` inside a name is not).
    """
    if not params_file:
        return {}
    doc = yaml.safe_load(Path(params_file).read_text()) or {}
    full = "/" + "/".join(p for p in (namespace.strip("/"), node_name) if p)
    out: dict[str, Any] = {}
    for key, body in doc.items() if isinstance(doc, dict) else ():
        key = str(key)
        matches = key in ("/**", "**", f"/**/{node_name}", full) or key.lstrip("/") == full.lstrip("/")
        if matches and isinstance(body, dict) and isinstance(body.get("ros__parameters"), dict):
            out.update(body["ros__parameters"])
    return out


def with_defaults(in_file: Mapping[str, Any], launch_values: Mapping[str, str],
                  defaults: Mapping[str, str]) -> dict[str, str]:
    """``launch_values`` with a launch file's own ``defaults`` for arguments the user left unset.

    replay.launch.py wants reliable camera QoS for a local bag, but a launch file never overrides the
    user's parameter file: a default applies only where neither the command line nor the file (its
    parameters for the node, ``in_file``: ``file_parameters``) sets that parameter.
    """
    values = dict(launch_values)
    for name, text in defaults.items():
        if values.get(name, UNSET) == UNSET and name not in in_file:
            values[name] = text
    return values


def node_parameters(params_file: str,
                    launch_values: Mapping[str, str]) -> list[str | dict[str, str | bool | int]]:
    """``Node(parameters=...)`` for the cognition node: the params file, then the set launch arguments.

    ``params_file`` empty means none; a named file that does not exist is an error here rather than
    launch_ros' warning-and-skip, so a typo does not silently start the node on defaults.
    """
    entries: list[str | dict[str, str | bool | int]] = []
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


_IMAGE_TYPES = ("sensor_msgs/msg/Image",)
_INFO_TYPE = "sensor_msgs/msg/CameraInfo"
NO_DEPTH = "none"  # replay.launch.py's depth:=none: the bag's depth stream is not used


def _one(kind: str, candidates: list[str], argument: str, listing: str) -> str:
    if len(candidates) == 1:
        return candidates[0]
    found = f"several: {', '.join(candidates)}" if candidates else "none"
    raise ValueError(f"cannot tell the bag's {kind} topic ({found}); set {argument}:=TOPIC. {listing}")


def _listing(bag: Mapping[str, str]) -> str:
    return "The bag holds: " + ", ".join(f"{t} [{m}]" for t, m in sorted(bag.items()))


def bag_camera_topics(bag: Mapping[str, str], namespace: str = "", color: str = "", depth: str = "",
                      camera_info: str = "") -> dict[str, str]:
    """Colour/depth/camera_info topics for replaying a bag whose topics (name -> type) are ``bag``.

    Arguments left empty are read from the bag: its one raw colour ``Image`` topic (names with "depth"
    are depth, "infra" infrared; "color" or "rgb" in the name preferred), its depth ``Image`` topic
    (``aligned_depth_to_color`` preferred: registered to colour, as the node needs), and the
    ``CameraInfo`` beside the colour topic. With ``namespace`` given, empty ones
    take realsense-ros' relative names (``camera_topics``). ``depth`` ``none`` uses no depth. Every topic
    chosen must be in the bag; otherwise the error lists the bag's topics and the argument to set.
    """
    listing = _listing(bag)
    if namespace:
        out = camera_topics(namespace, color or "color/image_raw",
                            "" if depth == NO_DEPTH else depth or "aligned_depth_to_color/image_raw",
                            camera_info or "color/camera_info")
    else:
        images = sorted(t for t, m in bag.items() if m in _IMAGE_TYPES)
        depths = [t for t in images if "depth" in t.lower()]
        if not color:
            # A realsense bag with infrared streams enabled also holds infra1/infra2 Images (mono).
            others = [t for t in images if t not in depths and "infra" not in t.lower()]
            named = [t for t in others if any(w in t.lower() for w in ("color", "colour", "rgb"))]
            color = _one("colour image", named or others, "color", listing)
        if not depth:
            aligned = [t for t in depths if "aligned_depth_to_color" in t]
            depth = _one("depth image", aligned or depths, "depth", listing) if depths else NO_DEPTH
        if not camera_info:
            infos = sorted(t for t, m in bag.items() if m == _INFO_TYPE)
            beside = [t for t in infos if t.rsplit("/", 1)[0] == color.rsplit("/", 1)[0]]
            camera_info = _one("camera_info", beside or infos, "camera_info", listing) if infos else ""
        out = camera_topics("", color, "" if depth == NO_DEPTH else depth, camera_info)
    for key, argument in (("color", "color"), ("depth", "depth"), ("camera_info", "camera_info")):
        if out[key] and out[key] not in bag:
            raise ValueError(f"{key} topic {out[key]} is not in the bag; set {argument}:=TOPIC (and camera:= "
                             f"for a driver namespace). {listing}")
    return out
