"""`ros2 launch rynnec_ros replay.launch.py bag:=<bag>` with no topic arguments (issue 20 item 4).

A `rynnec-ros gen-scene` bag records /camera/color/image_raw, /camera/depth/image_raw and
/camera/color/camera_info, not the realsense-ros names the launch defaults to. Issue 20 asks that the
topics then default to what the bag holds; this test expects that (auto-detection): every colour frame is
buffered with its registered depth, as when the topics are given (test_replay_cli.py). Only
`qos_reliability:=reliable` is given, for the reason test_replay_cli.py states. One launch per storage,
each in its own ROS domain.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import Ros2, Scene
from .test_replay_cli import NODE, STORAGES, assert_every_frame_buffered, player_finished

pytestmark = [pytest.mark.cli]


@pytest.mark.parametrize("storage", STORAGES)
def test_topics_default_to_the_bags(storage: str, ros2: Ros2, checkpoint: Path, scenes) -> None:
    scene: Scene = scenes(storage)
    launch = ros2.launch("rynnec_ros", "replay.launch.py", f"bag:={scene.bag}", f"checkpoint:={checkpoint}",
                         "qos_reliability:=reliable")
    ros2.wait_active(NODE, launch)
    player_finished(launch)
    assert_every_frame_buffered(ros2, scene)
