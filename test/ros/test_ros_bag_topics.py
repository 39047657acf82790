"""``rynnec_ros.ros.replay.bag_topics`` on bags written by the package's own ``gen-scene``, MCAP and sqlite3.

The expected names are those ``gen-scene`` writes (``rynnec_ros/scenes/bagio.py``: COLOR_TOPIC,
DEPTH_TOPIC, INFO_TOPIC, /tf, /tf_static), which are the node's default ``color_topic`` in docs/ros.md
(``/camera/color/image_raw``) and the depth / camera_info topics ``scripts/demo.sh`` gives the node. They are
not realsense-ros' ``/camera/camera/...`` names (the driver's own namespace doubled): a gen-scene bag is a
plain camera namespace. Written out here, not imported, so a rename in gen-scene shows up as a failure.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("rclpy")

EXPECTED = {
    "/camera/color/image_raw": "sensor_msgs/msg/Image",
    "/camera/depth/image_raw": "sensor_msgs/msg/Image",
    "/camera/color/camera_info": "sensor_msgs/msg/CameraInfo",
    "/tf": "tf2_msgs/msg/TFMessage",
    "/tf_static": "tf2_msgs/msg/TFMessage",
}


def _gen_scene(out: Path, storage: str) -> Path:
    """The command a user runs (``rynnec-ros gen-scene``), tiny."""
    res = subprocess.run(
        [sys.executable, "-m", "rynnec_ros.cli", "gen-scene", "--out", str(out), "--seed", "1",
         "--frames", "2", "--width", "64", "--height", "48", "--storage", storage],
        capture_output=True, text=True, timeout=300,
    )
    assert res.returncode == 0, res.stderr
    return out / "bag"


@pytest.fixture(scope="module", params=["mcap", "sqlite3"])
def bag(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    return request.param, _gen_scene(tmp_path_factory.mktemp(f"scene-{request.param}"), request.param)


def test_bag_topics_of_a_gen_scene_bag(bag: tuple[str, Path]) -> None:
    from rynnec_ros.ros.replay import bag_topics

    storage, path = bag
    suffix = {"mcap": ".mcap", "sqlite3": ".db3"}[storage]
    assert [p.suffix for p in path.iterdir() if p.suffix in (".mcap", ".db3")] == [suffix]
    assert bag_topics(path) == EXPECTED
    assert bag_topics(str(path)) == EXPECTED  # launch files pass a string


def test_bag_topics_names_what_it_expected(bag: tuple[str, Path], tmp_path: Path) -> None:
    from rynnec_ros.ros.replay import bag_topics

    _, path = bag
    (storage_file,) = [p for p in path.iterdir() if p.suffix in (".mcap", ".db3")]
    with pytest.raises(ValueError, match=r"is a file, not a rosbag2 bag directory .*the bag's directory"):
        bag_topics(storage_file)  # the bare .mcap / .db3 file
    with pytest.raises(ValueError, match=r"does not exist: expected a rosbag2 bag directory"):
        bag_topics(tmp_path / "no-such-bag")
    with pytest.raises(ValueError, match=r"has no metadata.yaml: expected a rosbag2 bag directory"):
        bag_topics(tmp_path)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "metadata.yaml").write_text("rosbag2_bagfile_information: {version: 8}\n")
    with pytest.raises(ValueError, match=r"cannot read bag .*expected a rosbag2 bag directory"):
        bag_topics(broken)


def test_shift_stamps_moves_headers_and_transforms() -> None:
    from geometry_msgs.msg import TransformStamped
    from sensor_msgs.msg import Image
    from std_msgs.msg import String
    from tf2_msgs.msg import TFMessage

    from rynnec_ros.ros.convert import ns_to_stamp, stamp_to_ns
    from rynnec_ros.ros.replay import shift_stamps

    img = Image()
    img.header.stamp = ns_to_stamp(1_700_000_000_900_000_000)
    assert stamp_to_ns(shift_stamps(img, 200_000_000).header.stamp) == 1_700_000_001_100_000_000
    tf = TFMessage(transforms=[TransformStamped(), TransformStamped()])
    tf.transforms[0].header.stamp = ns_to_stamp(5)
    tf.transforms[1].header.stamp = ns_to_stamp(7)
    assert [stamp_to_ns(t.header.stamp) for t in shift_stamps(tf, 10).transforms] == [15, 17]
    assert shift_stamps(String(data="x"), 10).data == "x"
