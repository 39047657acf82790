"""Launch files, parameter files, docs and the build agree with the node (``launch`` is not installable here).

The launch files are parsed, not run: every executable they start must be installed by CMakeLists.txt
and exist as an executable script, every parameter file they name must exist, every parameter name
they set must be one the node declares, and every argument passed to an included launch file must be
declared there.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest
import yaml

from rynnec_ros.ros.launch_params import LAUNCH_PARAMETERS, bag_camera_topics
from rynnec_ros.ros.params import PARAM_BY_NAME, PARAMS, validate, validate_all

REPO = Path(__file__).resolve().parents[2]
LAUNCH_FILES = sorted((REPO / "launch").glob("*.launch.py"))
ROS_BUILTIN_PARAMS = {"use_sim_time"}


def _calls(tree: ast.AST, name: str) -> list[ast.Call]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            called = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if called == name:
                out.append(node)
    return out


def _kw(call: ast.Call, key: str) -> ast.AST | None:
    return next((k.value for k in call.keywords if k.arg == key), None)


def _installed_programs() -> set[str]:
    cmake = (REPO / "CMakeLists.txt").read_text()
    programs = re.search(r"install\(PROGRAMS ([^)]*?) DESTINATION lib/\$\{PROJECT_NAME\}\)", cmake)
    assert programs, "CMakeLists.txt installs no executables to lib/rynnec_ros"
    paths = [REPO / p for p in programs.group(1).split()]
    for path in paths:
        assert path.is_file() and os.access(path, os.X_OK), f"{path} is not an executable script"
    return {path.name for path in paths}


def _declared_args(tree: ast.AST) -> set[str]:
    calls = _calls(tree, "DeclareLaunchArgument")
    return {c.args[0].value for c in calls if isinstance(c.args[0], ast.Constant)}


def test_launch_files_exist_and_parse() -> None:
    names = {p.name for p in LAUNCH_FILES}
    assert {"rynnec.launch.py", "replay.launch.py"} <= names
    for path in LAUNCH_FILES:
        tree = ast.parse(path.read_text(), filename=str(path))
        functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        assert "generate_launch_description" in functions, path


def test_launched_executables_are_installed() -> None:
    installed = _installed_programs()
    assert {"rynnec_node", "rynnec_replay"} <= installed
    for path in LAUNCH_FILES:
        tree = ast.parse(path.read_text())
        for call in _calls(tree, "LifecycleNode") + _calls(tree, "Node"):
            pkg, exe = _kw(call, "package"), _kw(call, "executable")
            assert isinstance(pkg, ast.Constant) and pkg.value == "rynnec_ros", path
            assert isinstance(exe, ast.Constant) and exe.value in installed, (path, ast.dump(exe))


def test_launch_parameter_names_and_files_exist() -> None:
    for path in LAUNCH_FILES:
        tree = ast.parse(path.read_text())
        for call in _calls(tree, "PathJoinSubstitution"):
            parts = [e.value for e in call.args[0].elts if isinstance(e, ast.Constant)]
            assert (REPO / Path(*parts)).is_file(), (path, parts)
    # rynnec.launch.py's node parameters are exactly launch_params.LAUNCH_PARAMETERS (resolved there).
    rynnec = (REPO / "launch" / "rynnec.launch.py").read_text()
    assert "node_parameters(" in rynnec and "OpaqueFunction" in rynnec
    for name in LAUNCH_PARAMETERS:
        assert name in PARAM_BY_NAME or name in ROS_BUILTIN_PARAMS, name


def _rynnec_declared() -> set[str]:
    tree = ast.parse((REPO / "launch" / "rynnec.launch.py").read_text())
    return _declared_args(tree) | set(LAUNCH_PARAMETERS)


def test_included_launch_arguments_are_declared() -> None:
    declared = _rynnec_declared()
    replay = ast.parse((REPO / "launch" / "replay.launch.py").read_text())
    forwarded = next(
        n.value for n in replay.body
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "_FORWARDED"
    )
    forwarded_names = {e.value for e in forwarded.elts}
    for call in _calls(replay, "IncludeLaunchDescription"):
        args = _kw(call, "launch_arguments")
        assert isinstance(args, ast.Call)  # {...}.items()
        keys = {k.value for k in args.func.value.keys if k is not None} | forwarded_names
        assert keys <= declared, keys - declared
    replay_declared = _declared_args(replay) | forwarded_names
    for call in _calls(replay, "LaunchConfiguration"):
        if isinstance(call.args[0], ast.Constant):
            assert call.args[0].value in replay_declared, call.args[0].value
    assert {"camera", "color", "depth", "camera_info"} <= _declared_args(replay)


# What realsense-ros >= 4.54 (node ``camera`` in namespace ``camera``) publishes with depth alignment and
# infrared on, as its README's "Published Topics" lists them; a recording of it holds these.
_REALSENSE_BAG = {
    "/camera/camera/color/image_raw": "sensor_msgs/msg/Image",
    "/camera/camera/color/camera_info": "sensor_msgs/msg/CameraInfo",
    "/camera/camera/color/metadata": "realsense2_camera_msgs/msg/Metadata",
    "/camera/camera/depth/image_rect_raw": "sensor_msgs/msg/Image",
    "/camera/camera/depth/camera_info": "sensor_msgs/msg/CameraInfo",
    "/camera/camera/aligned_depth_to_color/image_raw": "sensor_msgs/msg/Image",
    "/camera/camera/aligned_depth_to_color/camera_info": "sensor_msgs/msg/CameraInfo",
    "/camera/camera/infra1/image_rect_raw": "sensor_msgs/msg/Image",
    "/camera/camera/extrinsics/depth_to_color": "realsense2_camera_msgs/msg/Extrinsics",
    "/tf_static": "tf2_msgs/msg/TFMessage",
}


def test_replay_reads_a_realsense_bags_topics() -> None:
    """Topics left unset come from the bag: the colour image, the depth registered to it (the node needs
    colour-aligned depth, not ``depth/image_rect_raw``) and the colour's CameraInfo."""
    assert bag_camera_topics(_REALSENSE_BAG) == {
        "color": "/camera/camera/color/image_raw",
        "depth": "/camera/camera/aligned_depth_to_color/image_raw",
        "camera_info": "/camera/camera/color/camera_info",
    }
    assert bag_camera_topics(_REALSENSE_BAG, namespace="/camera/camera") == bag_camera_topics(_REALSENSE_BAG)
    assert bag_camera_topics(_REALSENSE_BAG, depth="none")["depth"] == ""


def test_replay_topic_errors_list_the_bag_and_name_the_argument() -> None:
    without_color = {t: m for t, m in _REALSENSE_BAG.items() if "color/image_raw" not in t}
    with pytest.raises(ValueError, match=r"set color:=TOPIC.*/camera/camera/infra1/image_rect_raw"):
        bag_camera_topics(without_color)
    # An older driver's names under camera:= that this bag does not hold.
    with pytest.raises(ValueError, match=r"/camera/color/image_raw is not in the bag; set color:=TOPIC.*"
                       r"/camera/camera/color/image_raw \[sensor_msgs/msg/Image\]"):
        bag_camera_topics(_REALSENSE_BAG, namespace="/camera")


def test_config_yaml_names_exactly_the_declared_parameters_with_valid_defaults() -> None:
    for path in sorted((REPO / "config").glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        values = doc["/**"]["ros__parameters"]
        assert set(values) == set(PARAM_BY_NAME), path
        for name, value in values.items():
            assert validate(name, value) == "" or name == "checkpoint", (name, value)
            assert value == PARAM_BY_NAME[name].default, name


def test_docs_describe_every_parameter() -> None:
    doc = (REPO / "docs" / "ros.md").read_text()
    missing = [p.name for p in PARAMS if f"`{p.name}`" not in doc]
    assert not missing, missing


def test_validation_gives_reasons() -> None:
    assert validate("spatial_source", "auto") == ""
    assert "must be one of" in validate("spatial_source", "x")
    assert "type float" in validate("sample_fps", "1")
    assert validate("sample_fps", 2) == ""  # integers are accepted where a float is declared
    assert "unknown parameter" in validate("nope", 1)
    assert "finite" in validate("request_timeout_s", float("inf"))


def test_cache_mb_is_a_non_negative_whole_number_of_megabytes() -> None:
    # docs/ros.md: "0 = no reuse across questions"; megabytes as an integer like buffer_max_mb
    assert validate("cache_mb", 0) == "" and validate("cache_mb", 1024) == ""
    assert "must be in [0," in validate("cache_mb", -1)
    assert "type int" in validate("cache_mb", 64.5)
    assert PARAM_BY_NAME["cache_mb"].live is False  # the engine is built with it on configure


def test_backend_combinations_are_checked_on_configure_with_reasons() -> None:
    defaults = {p.name: p.default for p in PARAMS}
    assert "checkpoint is empty: backend torch loads a checkpoint directory" in validate_all(defaults)
    assert validate_all({**defaults, "backend": "remote", "server_url": "site:8001"}) == ""
    defaults["checkpoint"] = "/models/RynnEC-2B"
    assert validate_all(defaults) == ""
    assert "must be one of torch, onnxruntime, tensorrt" in validate("backend", "openvino")
    assert "must be one of" in validate("ort_provider", "rocm")
    cases = [
        ({"backend": "onnxruntime"}, "needs onnx_dir"),
        ({"backend": "tensorrt", "device": "cuda"}, "needs engine_dir"),
        ({"backend": "remote"}, "needs server_url"),
        ({"backend": "tensorrt", "engine_dir": "/e"}, "needs device cuda"),
        ({"ort_provider": "cuda"}, "applies to backend onnxruntime only"),
    ]
    for change, reason in cases:
        assert reason in validate_all({**defaults, **change}), change
    ok = [{"backend": "onnxruntime", "onnx_dir": "/o", "ort_provider": "cpu"},
          {"backend": "tensorrt", "engine_dir": "/e", "device": "cuda:1"}]
    for change in ok:
        assert validate_all({**defaults, **change}) == "", change
