"""A bag as a Humble robot with a RealSense camera records it, replayed into the node (nav2 bag-test style).

The fixture is generated here, not committed: a small scene model (one box face in front of a wall, seen by a
still robot) rendered into the streams realsense-ros (4.54+) publishes and written the way Humble's
``ros2 bag record`` writes them. Every expected value below comes from the scene model or the format specs:

- sqlite3 layout: rosbag2 Humble ``sqlite_storage.cpp`` (``initialize``: tables ``schema``, ``metadata``,
  ``topics`` with ``offered_qos_profiles TEXT``, ``messages``; ``kDBSchemaVersion_ = 3``; Humble writes no
  message definitions); ``metadata.yaml``: ``rosbag2_storage/metadata_io.cpp`` (version 5 fields);
- offered QoS: rosbag2_transport Humble ``qos.cpp`` (``convert<Rosbag2QoS>::decode``: history, depth,
  reliability, durability, liveliness as rmw enum integers, durations as sec/nsec), with rmw ``types.h``
  values (KEEP_LAST 1, RELIABLE 1, TRANSIENT_LOCAL 1, VOLATILE 2, AUTOMATIC 1) and tf2_ros'
  ``StaticBroadcasterQoS`` (depth 1, reliable, transient-local) for /tf_static;
- streams: realsense-ros topic names (``/camera/camera/color/image_raw``,
  ``.../aligned_depth_to_color/image_raw`` 16UC1 in millimetres with the colour optical frame id,
  ``.../color/camera_info`` plumb_bob) and its TF (``camera_link`` -> ``camera_color_frame`` ->
  ``camera_color_optical_frame``, optical = rpy(-pi/2, 0, -pi/2));
  image_transport's compressed format string ``"bgr8; jpeg compressed bgr8"``.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import yaml

pytestmark = pytest.mark.ros

NS = 1_000_000_000
RS = "/camera/camera"  # realsense-ros >= 4.54: node "camera" in namespace "camera"
COLOR, DEPTH = f"{RS}/color/image_raw", f"{RS}/aligned_depth_to_color/image_raw"
COMPRESSED, INFO = f"{COLOR}/compressed", f"{RS}/color/camera_info"
OPTICAL = "camera_color_optical_frame"
# The depth imager's own stream (not registered to colour): realsense-ros names and frames.
DEPTH_RAW, DEPTH_OPTICAL = f"{RS}/depth/image_rect_raw", "camera_depth_optical_frame"
BASELINE_M = 0.015  # camera_link (the depth imager) -> camera_color_frame, along camera_link y


@dataclass(frozen=True)
class Scene:
    """A still robot looking along world +x at a box face (the object) in front of a wall.

    The face is fronto-parallel and centred on the optical axis, so its centre is ``face_depth_m`` from the
    camera and its world height is ``face_height_m`` (gravity is world z).
    """

    width: int = 128
    height: int = 96
    fx: float = 100.0
    fy: float = 100.0
    face_depth_m: float = 1.5
    face_width_m: float = 0.4
    face_height_m: float = 0.6
    wall_depth_m: float = 3.0
    camera_in_odom: tuple[float, float, float] = (0.6, 0.2, 0.5)  # odom -> base_link (x, y) + mount height
    frames: int = 6
    period_ns: int = NS // 5  # 5 Hz
    start_ns: int = 1_700_000_000 * NS

    @property
    def cx(self) -> float:
        return (self.width - 1) / 2

    @property
    def cy(self) -> float:
        return (self.height - 1) / 2

    def face_mask(self) -> np.ndarray:
        """Pixels whose ray hits the face: |x| <= w/2 and |y| <= h/2 at depth D (pinhole)."""
        u = np.arange(self.width)[None, :]
        v = np.arange(self.height)[:, None]
        half_u = self.fx * self.face_width_m / 2 / self.face_depth_m
        half_v = self.fy * self.face_height_m / 2 / self.face_depth_m
        return (np.abs(u - self.cx) <= half_u) & (np.abs(v - self.cy) <= half_v)

    def depth_mm(self) -> np.ndarray:
        d = np.full((self.height, self.width), self.wall_depth_m * 1000, dtype=np.uint16)
        d[self.face_mask()] = round(self.face_depth_m * 1000)
        return d

    def unaligned_depth_mm(self) -> np.ndarray:
        """The depth imager's view: BASELINE_M to the colour camera's right (optical -x), so the face sits
        fx * baseline / D pixels further right in its image than in the colour image."""
        shift = round(self.fx * BASELINE_M / self.face_depth_m)
        return np.roll(self.depth_mm(), shift, axis=1)

    def bgr(self) -> np.ndarray:
        img = np.full((self.height, self.width, 3), 128, dtype=np.uint8)
        img[self.face_mask()] = (0, 0, 220)  # red in BGR
        return img

    def stamps(self) -> list[int]:
        return [self.start_ns + i * self.period_ns for i in range(self.frames)]


SCENE = Scene()


# --------------------------------------------------------------------------- writing a Humble bag
def _qos_yaml(static: bool, depth: int) -> str:
    """One offered profile as Humble's recorder stores it (a YAML string of rmw enum integers)."""
    return yaml.safe_dump(
        [
            {
                "history": 1,
                "depth": 1 if static else depth,
                "reliability": 1,
                "durability": 1 if static else 2,
                "deadline": {"sec": 0, "nsec": 0},
                "lifespan": {"sec": 0, "nsec": 0},
                "liveliness": 1,
                "liveliness_lease_duration": {"sec": 0, "nsec": 0},
                "avoid_ros_namespace_conventions": False,
            }
        ]
    )


def write_humble_bag(
    out: Path, topics: list[tuple[str, str, str]], records: list[tuple[str, int, bytes]]
) -> Path:
    """A rosbag2 directory as Humble writes it: sqlite3 schema 3, metadata version 5, no definitions."""
    out.mkdir(parents=True)
    db_name = f"{out.name}_0.db3"
    con = sqlite3.connect(out / db_name)
    con.executescript(
        "CREATE TABLE schema(schema_version INTEGER PRIMARY KEY, ros_distro TEXT NOT NULL);"
        "CREATE TABLE metadata(id INTEGER PRIMARY KEY, metadata_version INTEGER NOT NULL,"
        " metadata TEXT NOT NULL);"
        "CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL,"
        " serialization_format TEXT NOT NULL, offered_qos_profiles TEXT NOT NULL);"
        "CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL, timestamp INTEGER NOT NULL,"
        " data BLOB NOT NULL);"
        "CREATE INDEX timestamp_idx ON messages (timestamp ASC);"
        "INSERT INTO schema (schema_version, ros_distro) VALUES (3, 'humble');"
    )
    ids = {}
    for i, (name, msgtype, qos) in enumerate(topics, start=1):
        con.execute(
            "INSERT INTO topics (id, name, type, serialization_format, offered_qos_profiles)"
            " VALUES (?, ?, ?, 'cdr', ?)",
            (i, name, msgtype, qos),
        )
        ids[name] = i
    for name, t_ns, data in records:
        con.execute(
            "INSERT INTO messages (timestamp, topic_id, data) VALUES (?, ?, ?)", (t_ns, ids[name], data)
        )
    con.commit()
    con.close()
    stamps = [t for _, t, _ in records]
    start, duration = min(stamps), max(stamps) - min(stamps)
    counts = {name: sum(1 for n, _, _ in records if n == name) for name, _, _ in topics}
    info = {
        "version": 5,
        "storage_identifier": "sqlite3",
        "duration": {"nanoseconds": duration},
        "starting_time": {"nanoseconds_since_epoch": start},
        "message_count": len(records),
        "topics_with_message_count": [
            {
                "topic_metadata": {
                    "name": n,
                    "type": t,
                    "serialization_format": "cdr",
                    "offered_qos_profiles": q,
                },
                "message_count": counts[n],
            }
            for n, t, q in topics
        ],
        "compression_format": "",
        "compression_mode": "",
        "relative_file_paths": [db_name],
        "files": [
            {
                "path": db_name,
                "starting_time": {"nanoseconds_since_epoch": start},
                "duration": {"nanoseconds": duration},
                "message_count": len(records),
            }
        ],
    }
    (out / "metadata.yaml").write_text(yaml.safe_dump({"rosbag2_bagfile_information": info}, sort_keys=False))
    return out


def _realsense_records(scene: Scene) -> tuple[list[tuple[str, str, str]], list[tuple[str, int, bytes]]]:
    import cv2
    from rosbags.typesys import Stores, get_typestore
    from scipy.spatial.transform import Rotation

    ts = get_typestore(Stores.ROS2_HUMBLE)
    T = ts.types

    def header(t: int, frame: str):
        return T["std_msgs/msg/Header"](
            stamp=T["builtin_interfaces/msg/Time"](sec=t // NS, nanosec=t % NS), frame_id=frame
        )

    def tf(t: int, parent: str, child: str, xyz, quat_xyzw):
        return T["geometry_msgs/msg/TransformStamped"](
            header=header(t, parent),
            child_frame_id=child,
            transform=T["geometry_msgs/msg/Transform"](
                translation=T["geometry_msgs/msg/Vector3"](x=xyz[0], y=xyz[1], z=xyz[2]),
                rotation=T["geometry_msgs/msg/Quaternion"](
                    x=quat_xyzw[0], y=quat_xyzw[1], z=quat_xyzw[2], w=quat_xyzw[3]
                ),
            ),
        )

    identity = (0.0, 0.0, 0.0, 1.0)
    optical = tuple(float(q) for q in Rotation.from_euler("xyz", [-np.pi / 2, 0, -np.pi / 2]).as_quat())
    x, y, z = scene.camera_in_odom
    topics = [
        (COLOR, "sensor_msgs/msg/Image", _qos_yaml(False, 5)),
        (COMPRESSED, "sensor_msgs/msg/CompressedImage", _qos_yaml(False, 5)),
        (DEPTH, "sensor_msgs/msg/Image", _qos_yaml(False, 5)),
        (DEPTH_RAW, "sensor_msgs/msg/Image", _qos_yaml(False, 5)),
        (INFO, "sensor_msgs/msg/CameraInfo", _qos_yaml(False, 5)),
        ("/tf", "tf2_msgs/msg/TFMessage", _qos_yaml(False, 100)),
        ("/tf_static", "tf2_msgs/msg/TFMessage", _qos_yaml(True, 1)),
    ]
    t0 = scene.stamps()[0]
    static = T["tf2_msgs/msg/TFMessage"](
        transforms=[
            tf(t0, "base_link", "camera_link", (0.0, 0.0, z), identity),
            tf(t0, "camera_link", "camera_color_frame", (0.0, BASELINE_M, 0.0), identity),
            tf(t0, "camera_color_frame", OPTICAL, (0.0, 0.0, 0.0), optical),
            tf(t0, "camera_link", "camera_depth_frame", (0.0, 0.0, 0.0), identity),
            tf(t0, "camera_depth_frame", DEPTH_OPTICAL, (0.0, 0.0, 0.0), optical),
        ]
    )
    records = [("/tf_static", t0, bytes(ts.serialize_cdr(static, "tf2_msgs/msg/TFMessage")))]
    bgr, depth = scene.bgr(), scene.depth_mm()
    ok, jpeg = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, 95])
    assert ok
    h, w = depth.shape
    K = [scene.fx, 0.0, scene.cx, 0.0, scene.fy, scene.cy, 0.0, 0.0, 1.0]
    for t in scene.stamps():
        odom = T["tf2_msgs/msg/TFMessage"](
            transforms=[tf(t, "odom", "base_link", (x, y - BASELINE_M, 0.0), identity)]
        )
        color = T["sensor_msgs/msg/Image"](
            header=header(t, OPTICAL),
            height=h,
            width=w,
            encoding="bgr8",
            is_bigendian=0,
            step=w * 3,
            data=bgr.reshape(-1),
        )
        comp = T["sensor_msgs/msg/CompressedImage"](
            header=header(t, OPTICAL),
            format="bgr8; jpeg compressed bgr8",
            data=np.asarray(jpeg, dtype=np.uint8).reshape(-1),
        )
        dimg = T["sensor_msgs/msg/Image"](
            header=header(t, OPTICAL),
            height=h,
            width=w,
            encoding="16UC1",
            is_bigendian=0,
            step=w * 2,
            data=depth.astype("<u2").view(np.uint8).reshape(-1),
        )
        raw = T["sensor_msgs/msg/Image"](
            header=header(t, DEPTH_OPTICAL),
            height=h,
            width=w,
            encoding="16UC1",
            is_bigendian=0,
            step=w * 2,
            data=scene.unaligned_depth_mm().astype("<u2").view(np.uint8).reshape(-1),
        )
        info = T["sensor_msgs/msg/CameraInfo"](
            header=header(t, OPTICAL),
            height=h,
            width=w,
            distortion_model="plumb_bob",
            d=np.array([1e-3, -1e-3, 0.0, 0.0, 0.0]),
            k=np.array(K),
            r=np.eye(3).reshape(-1),
            p=np.array([scene.fx, 0.0, scene.cx, 0.0, 0.0, scene.fy, scene.cy, 0.0, 0.0, 0.0, 1.0, 0.0]),
            binning_x=0,
            binning_y=0,
            roi=T["sensor_msgs/msg/RegionOfInterest"](
                x_offset=0, y_offset=0, height=0, width=0, do_rectify=False
            ),
        )
        for topic, msg, typ in (
            ("/tf", odom, "tf2_msgs/msg/TFMessage"),
            (INFO, info, "sensor_msgs/msg/CameraInfo"),
            (DEPTH, dimg, "sensor_msgs/msg/Image"),
            (DEPTH_RAW, raw, "sensor_msgs/msg/Image"),
            (COLOR, color, "sensor_msgs/msg/Image"),
            (COMPRESSED, comp, "sensor_msgs/msg/CompressedImage"),
        ):
            records.append((topic, t, bytes(ts.serialize_cdr(msg, typ))))
    return topics, records


@pytest.fixture(scope="module")
def humble_bag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    topics, records = _realsense_records(SCENE)
    return write_humble_bag(tmp_path_factory.mktemp("recorded") / "realsense_humble", topics, records)


# --------------------------------------------------------------------------- tests
def test_fixture_is_in_humbles_format(humble_bag: Path) -> None:
    con = sqlite3.connect(humble_bag / "realsense_humble_0.db3")
    assert con.execute("SELECT schema_version, ros_distro FROM schema").fetchall() == [(3, "humble")]
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables == {"schema", "metadata", "topics", "messages"}  # no message_definitions table
    meta = yaml.safe_load((humble_bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert meta["version"] == 5


def test_bag_reader_decodes_the_recorded_streams(humble_bag: Path) -> None:
    """bgr8 -> RGB, 16UC1 millimetres -> metres, TF chain to the optical frame (rosbags, no rclpy)."""
    from rynnec_ros.scenes.bagio import read_frames

    frames = read_frames(
        humble_bag, world_frame="odom", color_topic=COLOR, depth_topic=DEPTH, info_topic=INFO
    )
    assert [f.stamp_ns for f in frames] == SCENE.stamps()
    f = frames[0]
    mask = SCENE.face_mask()
    assert tuple(f.rgb[mask][0]) == (220, 0, 0)  # the face is red once bgr8 is turned into RGB
    assert np.allclose(f.depth[mask], SCENE.face_depth_m) and np.allclose(f.depth[~mask], SCENE.wall_depth_m)
    assert f.K[0, 0] == SCENE.fx and f.K[1, 2] == SCENE.cy
    x, y, z = SCENE.camera_in_odom
    assert np.allclose(f.world_T_camera[:3, 3], [x, y, z], atol=1e-9)
    assert np.allclose(f.world_T_camera[:3, 2], [1, 0, 0], atol=1e-9)  # optical z looks along odom +x
    assert np.allclose(f.world_T_camera[:3, 1], [0, 0, -1], atol=1e-9)  # optical y points down


def _installed(executable: str) -> Path:
    from ament_index_python.packages import get_package_prefix

    path = Path(get_package_prefix("rynnec_ros")) / "lib" / "rynnec_ros" / executable
    assert os.access(path, os.X_OK), f"{path} is not installed (colcon build)"
    return path


def test_replay_latches_tf_static_for_a_transient_local_listener(humble_bag: Path, ros_domain: int) -> None:
    """tf2's static listener subscribes reliable + transient-local: it only matches a transient-local offer,
    which is what the bag recorded for /tf_static. Run as launch_ros runs ``rynnec_replay``."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import Image
    from tf2_msgs.msg import TFMessage

    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("static_listener", context=context)
    got: dict[str, list] = {"static": [], "image": []}
    latched = QoSProfile(
        depth=100, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE
    )
    node.create_subscription(TFMessage, "/tf_static", got["static"].append, latched)
    node.create_subscription(Image, "/remapped/color", got["image"].append, 50)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        # launch_ros: executable, its arguments, '--ros-args', '-r', '__node:=NAME', '-r', '__ns:=/', remaps.
        player = subprocess.run(
            [
                str(_installed("rynnec_replay")),
                str(humble_bag),
                "--rate",
                "4",
                "--wait-for",
                "/tf_static",
                "--wait-s",
                "20",
                "--ros-args",
                "-r",
                "__node:=rynnec_replay",
                "-r",
                "__ns:=/",
                "-r",
                f"{COLOR}:=/remapped/color",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert player.returncode == 0, player.stdout + player.stderr
        deadline = time.monotonic() + 10
        while (not got["static"] or len(got["image"]) < SCENE.frames) and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        executor.shutdown()
        spinner.join(5)
        node.destroy_node()
        rclpy.try_shutdown(context=context)
    assert got["static"], "a transient-local /tf_static listener received nothing"
    children = {t.child_frame_id for t in got["static"][0].transforms}
    assert children == {"camera_link", "camera_color_frame", OPTICAL, "camera_depth_frame", DEPTH_OPTICAL}
    assert len(got["image"]) == SCENE.frames  # the remapping on the command line was applied
    assert got["image"][0].encoding == "bgr8"


@pytest.fixture(scope="module")
def answered(node_factory, segmenting_checkpoint, humble_bag, ros_domain):
    """The node configured for the RealSense topics, the Humble bag replayed into it, then questions."""
    from rynnec_ros.ros.client import CognitionClient

    node = node_factory(
        {
            "checkpoint": str(segmenting_checkpoint),
            "qos_reliability": "reliable",
            "qos_depth": 50,
            "color_topic": COLOR,
            "depth_topic": DEPTH,
            "camera_info_topic": INFO,
            "world_frame": "odom",
            "max_new_tokens": 2,
            "ingest_fps": 0.0,
        }
    )
    with CognitionClient(client_name="test_recorded_client") as client:
        assert client.wait_for_node(60.0), node.output()
        player = subprocess.run(
            [
                sys.executable,
                "-m",
                "rynnec_ros.cli",
                "replay",
                str(humble_bag),
                "--rate",
                "2",
                "--wait-for",
                COLOR,
                DEPTH,
                INFO,
                "/tf",
                "/tf_static",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert player.returncode == 0, player.stdout + player.stderr
        time.sleep(1.0)
        yield client
    assert node.alive(), node.output()


def _ask(client, question: str):
    from rynnec_ros.core.types import Region

    stamps = SCENE.stamps()[-3:]
    region = Region(object_id=0, label="box", masks={i: SCENE.face_mask() for i in range(len(stamps))})
    return client.ask(question, [region], frame_stamps_ns=stamps, timeout_s=60)


def test_distance_from_recorded_depth_and_tf(answered) -> None:
    ans = _ask(answered, "How far is <object0> from you?")
    assert (ans.source, ans.task, ans.unit) == ("geometry", "distance_to_camera", "m"), ans.reason
    assert ans.value == pytest.approx(SCENE.face_depth_m, rel=0.1)


def _render_markers(markers: list, camera_xyz: tuple[float, float, float], path: Path) -> None:
    """Draw a MarkerArray as RViz would show it from above (odom x-y) and from the side (x-z): each CUBE
    as its pose-centred, yaw-rotated rectangle, each TEXT_VIEW_FACING at its position, the camera as a
    dot. The PNG is what issue 23's closing note shows; set RYNNEC_TEST_ARTIFACTS to keep a copy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle
    from matplotlib.transforms import Affine2D
    from visualization_msgs.msg import Marker

    fig, axes = plt.subplots(1, 2, figsize=(9, 4))
    views = ((axes[0], (0, 1), "top view (odom x, y)"), (axes[1], (0, 2), "side view (odom x, z)"))
    for ax, (i, j), title in views:
        ax.plot(camera_xyz[i], camera_xyz[j], "k^", label="camera")
        for m in markers:
            pos = (m.pose.position.x, m.pose.position.y, m.pose.position.z)
            if m.type == Marker.CUBE:
                size = (m.scale.x, m.scale.y, m.scale.z)
                q = m.pose.orientation
                yaw = float(np.arctan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y**2 + q.z**2)))
                if j == 2:  # seen from the side: the yawed box's extent along odom x, upright
                    size = (abs(np.cos(yaw)) * size[0] + abs(np.sin(yaw)) * size[1], size[1], size[2])
                rect = Rectangle((pos[i] - size[i] / 2, pos[j] - size[j] / 2), size[i], size[j],
                                 color=(m.color.r, m.color.g, m.color.b), alpha=max(m.color.a, 0.3))
                turn = Affine2D().rotate_around(pos[i], pos[j], yaw if j == 1 else 0.0)
                rect.set_transform(turn + ax.transData)
                ax.add_patch(rect)
            elif m.type == Marker.TEXT_VIEW_FACING:
                ax.annotate(m.text, (pos[i], pos[j]), fontsize=8, ha="right")
        ax.set_title(title)
        ax.set_aspect("equal")
        ax.autoscale_view()
        ax.grid(True, linewidth=0.3)
    axes[0].legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    keep = os.environ.get("RYNNEC_TEST_ARTIFACTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / path.name)


def test_markers_and_detections_put_the_measured_face_in_odom(answered, tmp_path: Path) -> None:
    """~/markers after a geometric answer, as RViz would get it, and ~/detections_3d as a planner would.
    The scene model puts the face's centre straight ahead of the colour camera, face_depth_m along odom
    x: base_link at camera_in_odom (x, y), camera_link at mount height z, camera_color_frame BASELINE_M
    along y, so (2.1, 0.215, 0.5) in odom; the face is face_height_m tall along odom z. The marker topic
    is the one config/rynnec.rviz displays."""
    import yaml
    from vision_msgs.msg import Detection3DArray
    from visualization_msgs.msg import Marker, MarkerArray

    rviz = yaml.safe_load((Path(__file__).parents[2] / "config" / "rynnec.rviz").read_text())
    (topic,) = [d["Topic"]["Value"] for d in rviz["Visualization Manager"]["Displays"]
                if d["Class"] == "rviz_default_plugins/MarkerArray"]
    got: list[MarkerArray] = []
    detected: list[Detection3DArray] = []
    subs = [answered.node.create_subscription(MarkerArray, topic, got.append, 10),
            answered.node.create_subscription(Detection3DArray, "/rynnec/detections_3d", detected.append, 10)]
    try:
        deadline = time.monotonic() + 10.0
        while time.monotonic() < deadline and not all(
                answered.node.count_publishers(t) for t in (topic, "/rynnec/detections_3d")):
            time.sleep(0.05)
        ans = _ask(answered, "How far is <object0> from you?")
        assert ans.source == "geometry", ans.reason
        while not (got and detected) and time.monotonic() < deadline + 10.0:
            time.sleep(0.05)
    finally:
        for sub in subs:
            answered.node.destroy_subscription(sub)
    assert got and detected, f"{len(got)} MarkerArray on {topic}, {len(detected)} Detection3DArray"
    x, y, z = SCENE.camera_in_odom
    face = (x + SCENE.face_depth_m, y + BASELINE_M, z)
    markers = got[-1].markers
    assert markers[0].action == Marker.DELETEALL
    cube = next(m for m in markers if m.type == Marker.CUBE)
    p = cube.pose.position
    assert cube.header.frame_id == "odom"
    assert cube.header.stamp.sec * NS + cube.header.stamp.nanosec == SCENE.stamps()[-1]
    assert (p.x, p.y, p.z) == pytest.approx(face, abs=0.05)
    assert cube.scale.z == pytest.approx(SCENE.face_height_m, rel=0.15)
    label = next(m for m in markers if m.type == Marker.TEXT_VIEW_FACING)
    assert label.text.startswith("box: ") and label.text.endswith(" m")
    png = tmp_path / "markers.png"
    _render_markers(list(markers), (x, y, z), png)
    from matplotlib.image import imread

    assert imread(png).shape[:2] == (400, 900)  # drawn: 9x4 inches at 100 dpi
    (det,) = detected[-1].detections
    c = det.bbox.center.position
    assert (det.header.frame_id, det.id, det.results[0].hypothesis.class_id) == ("odom", "0", "box")
    assert det.header.stamp.sec * NS + det.header.stamp.nanosec == SCENE.stamps()[-1]
    assert (c.x, c.y, c.z) == pytest.approx(face, abs=0.05)
    assert det.bbox.size.z == pytest.approx(SCENE.face_height_m, rel=0.15)


def test_overlay_also_comes_compressed_as_image_transport_writes_it(answered) -> None:
    """~/overlay/compressed as image_transport's `compressed` plugin publishes a raw rgb8 topic's JPEG
    (compressed_image_transport/src/compressed_publisher.cpp: `format` = the raw encoding +
    "; jpeg compressed bgr8", the data a JPEG file of the BGR image, the raw message's header). Decoded
    here with PIL (not the node's OpenCV), it is the raw overlay up to JPEG's loss; the header is the
    raw one's."""
    import io

    import numpy as np
    from PIL import Image as PILImage
    from sensor_msgs.msg import CompressedImage, Image

    raw: list[Image] = []
    jpeg: list[CompressedImage] = []
    subs = [answered.node.create_subscription(Image, "/rynnec/overlay", raw.append, 10),
            answered.node.create_subscription(CompressedImage, "/rynnec/overlay/compressed", jpeg.append, 10)]
    try:
        deadline = time.monotonic() + 10.0
        while time.monotonic() < deadline and not all(
                answered.node.count_publishers(t) for t in ("/rynnec/overlay", "/rynnec/overlay/compressed")):
            time.sleep(0.05)
        time.sleep(0.5)  # the node encodes JPEG only for subscribers: let it match this one
        _ask(answered, "What is <object0>?")
        while (not raw or not jpeg) and time.monotonic() < deadline + 20.0:
            time.sleep(0.05)
    finally:
        for sub in subs:
            answered.node.destroy_subscription(sub)
    assert raw and jpeg, f"overlay: {len(raw)} raw, {len(jpeg)} compressed"
    r, c = raw[-1], jpeg[-1]
    assert c.format == "rgb8; jpeg compressed bgr8"
    assert (c.header.stamp, c.header.frame_id) == (r.header.stamp, r.header.frame_id)
    decoded = np.asarray(PILImage.open(io.BytesIO(bytes(c.data))).convert("RGB"), dtype=np.int16)
    expected = np.frombuffer(bytes(r.data), np.uint8).reshape(r.height, r.width, 3).astype(np.int16)
    assert decoded.shape == expected.shape
    # quality 95 (the node's default, image_transport's too): a mean error of about 1 grey level
    assert float(np.abs(decoded - expected).mean()) < 3.0
    assert len(c.data) < len(r.data) / 4


def test_height_needs_the_latched_static_transforms(answered) -> None:
    """Height is measured along gravity (odom z): without /tf_static there is no camera pose to give it."""
    ans = _ask(answered, "How tall is <object0>?")
    assert (ans.source, ans.task, ans.unit) == ("geometry", "object_height", "m"), ans.reason
    assert ans.value == pytest.approx(SCENE.face_height_m, rel=0.15)


@pytest.fixture(scope="module")
def unaligned(node_factory, segmenting_checkpoint, humble_bag, ros_domain):
    """The node given the depth imager's own stream (frame camera_depth_optical_frame) as depth_topic."""
    from rynnec_ros.ros.client import CognitionClient

    node = node_factory(
        {
            "checkpoint": str(segmenting_checkpoint),
            "qos_reliability": "reliable",
            "qos_depth": 50,
            "color_topic": COLOR,
            "depth_topic": DEPTH_RAW,
            "camera_info_topic": INFO,
            "world_frame": "odom",
            "max_new_tokens": 2,
            "ingest_fps": 0.0,
        },
        name="rynnec_unaligned",
    )
    with CognitionClient(client_name="test_unaligned_client", node_name="rynnec_unaligned") as client:
        assert client.wait_for_node(60.0), node.output()
        player = subprocess.run(
            [
                sys.executable,
                "-m",
                "rynnec_ros.cli",
                "replay",
                str(humble_bag),
                "--rate",
                "2",
                "--wait-for",
                COLOR,
                DEPTH_RAW,
                INFO,
                "/tf",
                "/tf_static",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert player.returncode == 0, player.stdout + player.stderr
        time.sleep(1.0)
        yield client
    assert node.alive(), node.output()


def test_unregistered_depth_of_the_same_size_is_not_used(unaligned) -> None:
    """realsense-ros' depth/image_rect_raw is in camera_depth_optical_frame, not registered to colour: a
    colour pixel's depth cannot be read from it. Geometry must then not measure: it declines (no value, a
    reason), the request fails, or (spatial_source auto, docs/ros.md) the model answers instead."""
    try:
        ans = _ask(unaligned, "How far is <object0> from you?")
    except RuntimeError:
        return
    assert ans.source == "model" or (ans.value is None and ans.reason), ans
