"""The launch files' parameter logic (rynnec_ros/ros/launch_params.py), pure, without ``launch``.

Expected behaviour is launch_ros' and rcl's, read from their Humble/Jazzy sources:
- launch_ros ``actions/node.py`` (``_perform_substitutions``) passes each ``parameters`` entry as one
  ``--params-file`` in list order, a dict first dumped to a temporary ``{'/**': {'ros__parameters': ...}}``
  YAML (``_create_params_file_from_dict``);
- rcl applies parameter files in command-line order, a later value of the same name winning.
So the list this module returns, applied in order, must leave every parameter of the user's file
that no launch argument was given for.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rynnec_ros.ros.launch_params import (
    LAUNCH_PARAMETERS,
    UNSET,
    camera_topics,
    file_parameters,
    node_parameters,
    with_defaults,
)


def _rcl_apply(entries: list) -> dict:
    """Final parameter values the way rcl sees them: each entry one file, later files win."""
    final: dict = {}
    for entry in entries:
        doc = (
            yaml.safe_load(Path(entry).read_text())
            if isinstance(entry, str)
            else {
                "/**": {"ros__parameters": entry}  # launch_ros' dict-to-file wrapping
            }
        )
        final.update(doc["/**"]["ros__parameters"])
    return final


@pytest.fixture
def user_yaml(tmp_path: Path) -> Path:
    path = tmp_path / "robot.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "/**": {
                    "ros__parameters": {
                        "checkpoint": "/models/RynnEC-2B",
                        "depth_topic": "/camera/camera/aligned_depth_to_color/image_raw",
                        "device": "cuda:1",
                        "dtype": "float16",
                        "use_sim_time": True,
                    }
                }
            }
        )
    )
    return path


def test_params_file_wins_over_unset_launch_arguments(user_yaml: Path) -> None:
    unset = dict.fromkeys(LAUNCH_PARAMETERS, UNSET)  # ros2 launch ... params_file:=robot.yaml, nothing else
    entries = node_parameters(str(user_yaml), unset)
    assert entries == [str(user_yaml)]
    final = _rcl_apply(entries)
    assert final["checkpoint"] == "/models/RynnEC-2B" and final["device"] == "cuda:1"
    assert final["depth_topic"].endswith("aligned_depth_to_color/image_raw") and final["use_sim_time"] is True


def test_a_given_launch_argument_overrides_only_its_parameter(user_yaml: Path) -> None:
    values = {**dict.fromkeys(LAUNCH_PARAMETERS, UNSET), "device": "cpu", "use_sim_time": "false"}
    entries = node_parameters(str(user_yaml), values)
    assert entries[0] == str(user_yaml) and entries[1] == {"device": "cpu", "use_sim_time": False}
    final = _rcl_apply(entries)
    assert final["device"] == "cpu" and final["use_sim_time"] is False
    assert final["checkpoint"] == "/models/RynnEC-2B" and final["dtype"] == "float16"


def test_no_params_file_gives_only_the_set_arguments() -> None:
    assert node_parameters("", {"checkpoint": "/m"}) == [{"checkpoint": "/m"}]
    assert node_parameters("", {}) == []


@pytest.mark.parametrize(
    "text,value",
    [("true", True), ("True", True), ("1", True), ("false", False), ("FALSE", False), ("0", False)],
)
def test_booleans_follow_launch_truthiness(text: str, value: bool) -> None:
    assert node_parameters("", {"use_sim_time": text}) == [{"use_sim_time": value}]


def test_bad_input_is_refused_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="is not a file"):
        node_parameters(str(tmp_path / "missing.yaml"), {})
    with pytest.raises(ValueError, match="must be true or false"):
        node_parameters("", {"use_sim_time": "yes please"})
    with pytest.raises(ValueError, match="not node-parameter launch arguments: colour_topic"):
        node_parameters("", {"colour_topic": "/x"})


def test_camera_topics_resolve_like_ros_names() -> None:
    # realsense-ros >= 4.54 namespace, an older driver's, and an absolute override that ignores it.
    assert camera_topics("/camera/camera", "color/image_raw", "", "color/camera_info") == {
        "color": "/camera/camera/color/image_raw",
        "depth": "",
        "camera_info": "/camera/camera/color/camera_info",
    }
    assert (
        camera_topics("/camera", "color/image_raw", "depth/image_rect_raw", "")["depth"]
        == "/camera/depth/image_rect_raw"
    )
    assert camera_topics("/", "image", "/other/depth", "")["color"] == "/image"
    assert camera_topics("/camera", "color/image_raw", "/other/depth", "")["depth"] == "/other/depth"
    with pytest.raises(ValueError, match="not a valid ROS topic name"):
        camera_topics("/camera/", "/bad//name", "", "")
    with pytest.raises(ValueError, match="must not be empty"):
        camera_topics("/camera", "", "", "")


def test_a_quoted_empty_argument_clears_the_files_value(user_yaml: Path) -> None:
    """ros2launch's parse_launch_arguments splits NAME:=VALUE and keeps VALUE verbatim (no unquoting), and
    refuses a bare ``world_frame:=``; the shell passes ``"world_frame:=''"`` as the 2-character ``''``."""
    entries = node_parameters(str(user_yaml), {"depth_topic": "''", "world_frame": '""'})
    assert _rcl_apply(entries)["depth_topic"] == "" and _rcl_apply(entries)["world_frame"] == ""


def test_queue_depth_is_an_integer_parameter() -> None:
    assert node_parameters("", {"qos_depth": "30", "qos_reliability": "reliable"}) == [
        {"qos_depth": 30, "qos_reliability": "reliable"}]
    with pytest.raises(ValueError, match=r"qos_depth:='deep' must be a whole number"):
        node_parameters("", {"qos_depth": "deep"})


def _params_file(tmp_path: Path, doc: dict) -> str:
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def test_file_parameters_match_rcl_node_name_keys(tmp_path: Path) -> None:
    """rcl_yaml_param_parser: a top-level key is a node name, ``/**`` every node, ``/**/NAME`` that name in
    any namespace, ``/NS/NAME`` exactly; keys naming another node do not apply."""
    doc = {
        "/**": {"ros__parameters": {"world_frame": "map"}},
        "/**/rynnec": {"ros__parameters": {"qos_depth": 7}},
        "/robot1/rynnec": {"ros__parameters": {"device": "cuda"}},
        "/other": {"ros__parameters": {"dtype": "float16"}},
    }
    path = _params_file(tmp_path, doc)
    assert file_parameters(path) == {"world_frame": "map", "qos_depth": 7}
    in_robot1 = file_parameters(path, namespace="/robot1")
    assert in_robot1 == {"world_frame": "map", "qos_depth": 7, "device": "cuda"}
    assert file_parameters("") == {}


def test_replay_defaults_never_override_the_users_file(tmp_path: Path) -> None:
    path = _params_file(tmp_path, {"/**": {"ros__parameters": {"qos_reliability": "best_effort"}}})
    defaults = {"qos_reliability": "reliable", "qos_depth": "30"}
    unset = {"qos_reliability": UNSET, "qos_depth": UNSET}
    in_file = file_parameters(path)
    assert with_defaults(in_file, unset, defaults) == {"qos_reliability": UNSET, "qos_depth": "30"}
    assert with_defaults(file_parameters(""), unset, defaults) == defaults
    assert with_defaults(in_file, {"qos_reliability": "reliable", "qos_depth": UNSET}, defaults)[
        "qos_reliability"] == "reliable"
