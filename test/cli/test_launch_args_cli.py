"""rynnec.launch.py's arguments as a user types them: namespace, params file, overrides, Ctrl-C.

One launch (own ROS domain) for the module:

    ros2 launch rynnec_ros rynnec.launch.py namespace:=robot1 params_file:=my.yaml \
        color_topic:=/cli/color "world_frame:=''"

with my.yaml setting checkpoint, color_topic, world_frame, buffer_max_frames and qos_depth. Expected, from
README.md ("Launch arguments left unset keep the value of `params_file`"), the launch file's docstring
("a launch argument given on the command line overrides that parameter") and issue 20 item 8 (an argument
given as empty clears the file's value): the override wins, the file's other values are kept, the empty
argument gives "". (Jazzy's `ros2 launch` refuses a bare `world_frame:=` — what bash makes of
`world_frame:=''` — as "malformed launch argument", so the empty value is given as YAML's empty string
`''`, quoted for the shell.) docs/ros.md: node `rynnec` in the launch namespace, its services under
it; on SIGINT the node answers what is pending and exits with code 0. The Ctrl-C test runs last: it
ends the launch.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import Launch, Ros2, Workspace, ros2_domain

pytestmark = [pytest.mark.cli]

NODE = "/robot1/rynnec"


@dataclass
class Robot:
    ros: Ros2
    launch: Launch
    checkpoint: Path


@pytest.fixture(scope="module")
def robot(workspace: Workspace, checkpoint: Path, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[Robot]:
    params = tmp_path_factory.mktemp("params") / "my_params.yaml"
    params.write_text(
        "/**:\n"
        "  ros__parameters:\n"
        f"    checkpoint: \"{checkpoint}\"\n"
        "    color_topic: \"/file/color\"\n"
        "    world_frame: \"map\"\n"
        "    buffer_max_frames: 77\n"
        "    qos_depth: 7\n"
    )
    with ros2_domain(workspace) as ros:
        launch = ros.launch("rynnec_ros", "rynnec.launch.py", "namespace:=robot1", f"params_file:={params}",
                            "color_topic:=/cli/color", "world_frame:=''")
        ros.wait_active(NODE, launch)
        yield Robot(ros, launch, checkpoint)


def test_namespace_puts_interfaces_under_it(robot: Robot) -> None:
    """`namespace:=robot1`: /robot1/rynnec with ~/ask, ~/segment, ~/list_frames, ~/ask_stream and
    ~/segment_stream."""
    services = robot.ros.run("service", "list").stdout.split()
    for name in ("ask", "segment", "list_frames"):
        assert f"{NODE}/{name}" in services, services
    actions = robot.ros.run("action", "list").stdout.split()
    assert {f"{NODE}/ask_stream", f"{NODE}/segment_stream"} <= set(actions), actions
    reply = robot.ros.service_call(f"{NODE}/list_frames", "rynnec_ros/srv/ListFrames")
    assert reply["active"] is True


def test_params_file_values_kept(robot: Robot) -> None:
    """Values only the params file sets are the node's (the checkpoint it activated with, too)."""
    assert robot.ros.param_get(NODE, "checkpoint") == f"String value is: {robot.checkpoint}"
    assert robot.ros.param_get(NODE, "buffer_max_frames") == "Integer value is: 77"
    assert robot.ros.param_get(NODE, "qos_depth") == "Integer value is: 7"


def test_launch_argument_overrides_params_file(robot: Robot) -> None:
    assert robot.ros.param_get(NODE, "color_topic") == "String value is: /cli/color"


def test_empty_launch_argument_clears_file_value(robot: Robot) -> None:
    """`"world_frame:=''"` (issue 20 item 8): the file's "map" is replaced by "" (no poses)."""
    assert robot.ros.param_get(NODE, "world_frame") == "String value is:"


def test_ctrl_c_exits_zero_and_leaves_no_process(robot: Robot) -> None:
    """Ctrl-C (SIGINT to the launch's process group, as a terminal sends it): `ros2 launch` exits 0, the
    node process exits 0 (launch reports "process has finished cleanly") and nothing it started is left."""
    before = robot.launch.processes()
    nodes = [p for p in before if "rynnec_node" in " ".join(p.cmdline())]
    assert nodes, f"no rynnec_node process under the launch: {[p.cmdline() for p in before]}"
    rc = robot.launch.ctrl_c(timeout=60)
    out = robot.launch.output()
    assert rc == 0, f"ros2 launch exited {rc}:\n{out[-6000:]}"
    assert "rynnec_node-1]: process has finished cleanly" in out, out[-6000:]
    left = [p for p in before if p.is_running() and p.status() != "zombie"]
    assert not left, f"left running after Ctrl-C: {[p.cmdline() for p in left]}"
