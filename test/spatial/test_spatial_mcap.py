"""MCAP bags as Jazzy's and Kilted's ``ros2 bag record`` writes them, and both storages end to end.

The recorded-bag fixture follows rosbag2 @ jazzy (0.26.x; Kilted's 0.32 changes only the message sequence
number), read in its sources, since rosbag2 is C++ and not installed here:

- ``rosbag2_storage/src/rosbag2_storage/default_storage_id.cpp``: the default storage is "mcap".
- ``rosbag2_cpp`` ``SequentialWriter::format_storage_uri(base, 0)`` plus ``mcap_storage.cpp``'s ".mcap":
  ``<name>/<name>_0.mcap`` beside ``<name>/metadata.yaml``.
- ``mcap_storage.cpp`` ``open_impl``: ``McapWriterOptions("ros2")`` (profile "ros2") with ``noChunkCRC`` and
  ``compression = None`` unless a preset or a storage config says otherwise. ``SetOptionsForPreset``:
  ``zstd_fast`` = Zstd, ``noChunkCRC``; ``zstd_small`` = Zstd, chunk CRCs, 4 MiB chunks. A
  ``--storage-config-file`` may set ``compression: Lz4``. So a plain ``ros2 bag record`` writes
  *uncompressed* chunks; zstd chunks come from ``--storage-preset-profile zstd_fast|zstd_small``.
- ``create_topic``: one schema per type, name = type, encoding "ros2msg"
  (``local_message_definition_source.cpp``), data = the .msg text with each dependency after a line of
  80 "=" and "MSG: pkg/msg/Type"; one channel per topic, message encoding "cdr", metadata
  ``offered_qos_profiles`` (``serialize_rclcpp_qos_vector``, version 9: policy names as strings) and
  ``topic_type_hash``.
- ``write_lock_free``: log time = receive time, publish time = send time, sequence 0.
- ``update_metadata``: a metadata record "rosbag2" holding the bag's metadata YAML as
  "serialized_metadata".
- ``bag_metadata.hpp`` ``version = 9`` and ``yaml.hpp``'s encoding: version 9 stores
  ``offered_qos_profiles`` as a YAML list. ``ros2 bag record --compression-mode file --compression-format
  zstd`` compresses the whole file to ``<name>_0.mcap.zstd`` (message mode is refused for MCAP).

The MCAP files are written with the ``mcap`` library (foxglove/mcap, whose C++ libmcap rosbag2 vendors as
mcap_vendor), not with ``rosbags``, the reader under test; the CDR payloads and .msg texts come from rosbags'
Humble type store. Expected frames are the hand-made scene below, not a read-back of what was written.
"""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy.spatial.transform import Rotation

from rynnec_ros.cli import main
from rynnec_ros.scenes import bagio
from rynnec_ros.scenes.bagio import COLOR_TOPIC, DEPTH_TOPIC, INFO_TOPIC, OPTICAL_FRAME, read_frames

# ------------------------------------------------------------------------------- the recorded scene
W, H = 8, 6
T0 = 1_720_000_000_123_000_000
STAMPS = [T0 + i * 100_000_000 for i in range(3)]  # 10 Hz camera
SQUARE = (slice(2, 4), slice(3, 5))  # rows 2-3, columns 3-4
HOLE = (5, 0)  # one pixel with no depth return
WALL_MM, SQUARE_MM = 2000, 1234
BGR_WALL, BGR_SQUARE = (10, 20, 200), (0, 255, 0)
FX, FY, CX, CY = 5.0, 5.5, 3.5, 2.5
BASE_X = [0.0, 0.1, 0.2]  # odom -> base_link translation along x at each stamp, no rotation
LINK_IN_BASE = (0.2, 0.0, 1.0)  # base_link -> camera_link (static)
# camera_link -> optical frame: URDF rpy (-pi/2, 0, -pi/2), i.e. fixed-axis x then z (realsense2_description)
OPTICAL_Q = Rotation.from_euler("xyz", [-np.pi / 2, 0.0, -np.pi / 2]).as_quat()
RECV_DELAY_NS, SEND_DELAY_NS = 5_000_000, 1_000_000

QOS_SENSOR = {"history": "keep_last", "depth": 10, "reliability": "reliable", "durability": "volatile"}
QOS_STATIC = {"history": "keep_last", "depth": 1, "reliability": "reliable", "durability": "transient_local"}

# preset -> (chunk compression, chunk CRC, whole-file zstd)
PRESETS = {
    "default": ("none", False, False),
    "zstd_fast": ("zstd", False, False),
    "zstd_small": ("zstd", True, False),
    "config_lz4": ("lz4", False, False),
    "file_zstd": ("none", False, True),
}


def _qos_v9(policy: dict) -> dict:
    """One profile as rosbag2 (qos.cpp ``convert<rclcpp::QoS>::encode``, version 9) writes it."""
    zero = {"sec": 0, "nsec": 0}
    return {
        "history": policy["history"],
        "depth": policy["depth"],
        "reliability": policy["reliability"],
        "durability": policy["durability"],
        "deadline": zero,
        "lifespan": zero,
        "liveliness": "automatic",
        "liveliness_lease_duration": zero,
        "avoid_ros_namespace_conventions": False,
    }


def _messages(ts) -> list[tuple[str, str, int, object]]:
    """(topic, type, stamp, message) of the scene, in recording order."""
    T = ts.types

    def header(stamp: int, frame: str):
        return T["std_msgs/msg/Header"](
            stamp=T["builtin_interfaces/msg/Time"](sec=stamp // 10**9, nanosec=stamp % 10**9), frame_id=frame
        )

    def tf(stamp: int, parent: str, child: str, xyz, q):
        return T["geometry_msgs/msg/TransformStamped"](
            header=header(stamp, parent),
            child_frame_id=child,
            transform=T["geometry_msgs/msg/Transform"](
                translation=T["geometry_msgs/msg/Vector3"](x=xyz[0], y=xyz[1], z=xyz[2]),
                rotation=T["geometry_msgs/msg/Quaternion"](x=q[0], y=q[1], z=q[2], w=q[3]),
            ),
        )

    bgr = np.empty((H, W, 3), np.uint8)
    bgr[:] = BGR_WALL
    bgr[SQUARE] = BGR_SQUARE
    mm = np.full((H, W), WALL_MM, "<u2")
    mm[SQUARE] = SQUARE_MM
    mm[HOLE] = 0
    out: list[tuple[str, str, int, object]] = []
    static = T["tf2_msgs/msg/TFMessage"](
        transforms=[
            tf(STAMPS[0], "base_link", "camera_link", LINK_IN_BASE, (0.0, 0.0, 0.0, 1.0)),
            tf(STAMPS[0], "camera_link", OPTICAL_FRAME, (0.0, 0.0, 0.0), OPTICAL_Q),
        ]
    )
    out.append(("/tf_static", "tf2_msgs/msg/TFMessage", STAMPS[0], static))
    for stamp, x in zip(STAMPS, BASE_X, strict=True):
        moving = tf(stamp, "odom", "base_link", (x, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))
        out.append(("/tf", "tf2_msgs/msg/TFMessage", stamp, T["tf2_msgs/msg/TFMessage"](transforms=[moving])))
        image = T["sensor_msgs/msg/Image"](
            header=header(stamp, OPTICAL_FRAME), height=H, width=W, encoding="bgr8", is_bigendian=0,
            step=W * 3, data=bgr.reshape(-1),
        )
        out.append((COLOR_TOPIC, "sensor_msgs/msg/Image", stamp, image))
        depth = T["sensor_msgs/msg/Image"](
            header=header(stamp, OPTICAL_FRAME), height=H, width=W, encoding="16UC1", is_bigendian=0,
            step=W * 2, data=mm.view(np.uint8).reshape(-1),
        )
        out.append((DEPTH_TOPIC, "sensor_msgs/msg/Image", stamp, depth))
        info = T["sensor_msgs/msg/CameraInfo"](
            header=header(stamp, OPTICAL_FRAME), height=H, width=W, distortion_model="plumb_bob",
            d=np.zeros(5), k=np.array([FX, 0, CX, 0, FY, CY, 0, 0, 1], float), r=np.eye(3).reshape(-1),
            p=np.array([FX, 0, CX, 0, 0, FY, CY, 0, 0, 0, 1, 0], float), binning_x=0, binning_y=0,
            roi=T["sensor_msgs/msg/RegionOfInterest"](
                x_offset=0, y_offset=0, height=0, width=0, do_rectify=False
            ),
        )
        out.append((INFO_TOPIC, "sensor_msgs/msg/CameraInfo", stamp, info))
    return out


def record_like_jazzy(bag: Path, preset: str) -> Path:
    """``ros2 bag record -o BAG`` on Jazzy with ``preset`` (see PRESETS and the module docstring)."""
    import zstandard
    from mcap.writer import CompressionType, Writer
    from rosbags.typesys import Stores, get_typestore

    compression, chunk_crc, file_zstd = PRESETS[preset]
    ts = get_typestore(Stores.ROS2_HUMBLE)
    messages = _messages(ts)
    bag.mkdir()
    name = f"{bag.name}_0.mcap"
    topics: dict[str, dict] = {}
    for topic, msgtype, _, _ in messages:
        topics.setdefault(topic, {"type": msgtype, "count": 0})["count"] += 1
    for topic, info in topics.items():
        info["qos"] = [_qos_v9(QOS_STATIC if topic == "/tf_static" else QOS_SENSOR)]
        info["hash"] = ts.hash_rihs01(info["type"])
    start = min(s for _, _, s, _ in messages) + RECV_DELAY_NS
    end = max(s for _, _, s, _ in messages) + RECV_DELAY_NS
    info_yaml = {
        "version": 9,
        "storage_identifier": "mcap",
        "duration": {"nanoseconds": end - start},
        "starting_time": {"nanoseconds_since_epoch": start},
        "message_count": len(messages),
        "topics_with_message_count": [
            {
                "topic_metadata": {
                    "name": topic,
                    "type": info["type"],
                    "serialization_format": "cdr",
                    "offered_qos_profiles": info["qos"],
                    "type_description_hash": info["hash"],
                },
                "message_count": info["count"],
            }
            for topic, info in topics.items()
        ],
        "compression_format": "zstd" if file_zstd else "",
        "compression_mode": "file" if file_zstd else "",
        "relative_file_paths": [name + (".zstd" if file_zstd else "")],
        "files": [
            {
                "path": name + (".zstd" if file_zstd else ""),
                "starting_time": {"nanoseconds_since_epoch": start},
                "duration": {"nanoseconds": end - start},
                "message_count": len(messages),
            }
        ],
        "custom_data": {},
        "ros_distro": "jazzy",
    }
    kinds = {"none": CompressionType.NONE, "zstd": CompressionType.ZSTD, "lz4": CompressionType.LZ4}
    with (bag / name).open("wb") as fh:
        # 2 KiB chunks so that these tiny frames span several chunks, as 768 KiB ones do in a recording
        writer = Writer(fh, chunk_size=2048, compression=kinds[compression], enable_crcs=chunk_crc)
        writer.start(profile="ros2", library="libmcap 1.4.0")
        schemas: dict[str, int] = {}
        channels: dict[str, int] = {}
        for topic, info in topics.items():
            if info["type"] not in schemas:
                text, _ = ts.generate_msgdef(info["type"], ros_version=2)
                schemas[info["type"]] = writer.register_schema(info["type"], "ros2msg", text.encode())
            channels[topic] = writer.register_channel(
                topic,
                "cdr",
                schemas[info["type"]],
                {"offered_qos_profiles": yaml.safe_dump(info["qos"]), "topic_type_hash": info["hash"]},
            )
        for topic, msgtype, stamp, msg in messages:
            writer.add_message(
                channels[topic],
                log_time=stamp + RECV_DELAY_NS,
                data=bytes(ts.serialize_cdr(msg, msgtype)),
                publish_time=stamp + SEND_DELAY_NS,
            )
        writer.add_metadata("rosbag2", {"serialized_metadata": yaml.safe_dump(info_yaml)})
        writer.finish()
    if file_zstd:
        (bag / (name + ".zstd")).write_bytes(zstandard.compress((bag / name).read_bytes()))
        (bag / name).unlink()
    (bag / "metadata.yaml").write_text(yaml.safe_dump({"rosbag2_bagfile_information": info_yaml}))
    return bag


def _mcap_summary(path: Path):
    from mcap.reader import make_reader

    with path.open("rb") as fh:
        reader = make_reader(fh)
        return reader.get_header(), reader.get_summary()


def _chunk_crc(path: Path, chunk) -> int:
    """The uncompressed-data CRC a chunk record stores (0: not computed). MCAP spec, "Chunk (op=0x06)":
    opcode (1), record length (8), message start and end time and uncompressed size (3 x 8), then the CRC."""
    at = chunk.chunk_start_offset + 1 + 8 + 24
    with path.open("rb") as fh:
        fh.seek(at)
        return int.from_bytes(fh.read(4), "little")


def _expected_optical_position(i: int) -> np.ndarray:
    return np.array([BASE_X[i] + LINK_IN_BASE[0], LINK_IN_BASE[1], LINK_IN_BASE[2]])


# ------------------------------------------------------------------------------ recorded MCAP bags
@pytest.mark.parametrize("preset", list(PRESETS))
def test_reads_mcap_as_ros2_bag_record_writes_it(tmp_path: Path, preset: str) -> None:
    bag = record_like_jazzy(tmp_path / "rec", preset)
    compression, chunk_crc, file_zstd = PRESETS[preset]
    if not file_zstd:  # the fixture is what it claims: chunk compression and CRCs as the preset sets them
        path = bag / "rec_0.mcap"
        header, summary = _mcap_summary(path)
        assert header.profile == "ros2" and len(summary.chunk_indexes) > 1
        want = "" if compression == "none" else compression
        assert {c.compression for c in summary.chunk_indexes} == {want}
        assert {_chunk_crc(path, c) != 0 for c in summary.chunk_indexes} == {chunk_crc}
        assert {s.encoding for s in summary.schemas.values()} == {"ros2msg"}
        assert {c.message_encoding for c in summary.channels.values()} == {"cdr"}
    frames = read_frames(bag, world_frame="odom")
    assert [f.stamp_ns for f in frames] == STAMPS
    for i, f in enumerate(frames):
        assert f.frame_id == OPTICAL_FRAME and f.rgb.shape == (H, W, 3)
        assert tuple(f.rgb[0, 0]) == BGR_WALL[::-1] and tuple(f.rgb[2, 3]) == BGR_SQUARE[::-1]  # bgr8 -> RGB
        assert f.depth is not None and f.depth.dtype == np.float32
        # 16UC1 millimetres x 0.001 m (REP 118); 0 is no return
        np.testing.assert_allclose(f.depth[0, 0], 2.0, rtol=1e-6)
        np.testing.assert_allclose(f.depth[SQUARE], 1.234, rtol=1e-6)
        assert np.isnan(f.depth[HOLE]) and np.isfinite(f.depth).sum() == W * H - 1
        np.testing.assert_array_equal(f.K, [[FX, 0, CX], [0, FY, CY], [0, 0, 1]])
        M = f.world_T_camera
        assert M is not None
        np.testing.assert_allclose(M[:3, 3], _expected_optical_position(i), atol=1e-12)
        # REP 103 optical frame: z forward (odom +x), x right (odom -y), y down (odom -z)
        np.testing.assert_allclose(M[:3, :3], [[0, 0, 1], [-1, 0, 0], [0, -1, 0]], atol=1e-12)


def test_zstd_small_chunks_carry_crcs_that_are_checked(tmp_path: Path) -> None:
    """zstd_small keeps libmcap's chunk CRC (crc32 of the uncompressed chunk). A wrong CRC, or a flipped
    byte in a chunk's compressed data, is a clear error naming the bag, not a traceback or a wrong frame."""
    bag = record_like_jazzy(tmp_path / "rec", "zstd_small")
    path = bag / "rec_0.mcap"
    _, summary = _mcap_summary(path)
    assert all(c.compression == "zstd" for c in summary.chunk_indexes)
    chunk = summary.chunk_indexes[1]
    good = path.read_bytes()
    assert _chunk_crc(path, chunk) != 0
    # after the CRC (4): the compression string (4 + len), the compressed size (8), the compressed bytes
    crc_at = chunk.chunk_start_offset + 1 + 8 + 24
    payload = crc_at + 4 + 4 + len("zstd") + 8
    for at, why in ((crc_at, "checksum"), (payload + chunk.compressed_size // 2, "")):
        data = bytearray(good)
        data[at] ^= 0xFF
        path.write_bytes(bytes(data))
        with pytest.raises(ValueError, match=f"cannot read bag {re.escape(str(bag))}: .*{why}"):
            read_frames(bag)


def test_depth_scale_comes_from_the_caller(tmp_path: Path) -> None:
    """16UC1 units times ``depth_scale`` (a 0.1 mm camera: 0.0001); 32FC1 is metres whatever the scale."""
    bag = record_like_jazzy(tmp_path / "rec", "default")
    f = read_frames(bag, depth_scale=0.0001)[0]
    assert f.depth is not None
    np.testing.assert_allclose(f.depth[0, 0], 0.2, rtol=1e-6)
    np.testing.assert_allclose(f.depth[SQUARE], 0.1234, rtol=1e-6)
    assert np.isnan(f.depth[HOLE])
    for bad in (0.0, -0.001, float("nan")):
        with pytest.raises(ValueError, match="depth_scale"):
            read_frames(bag, depth_scale=bad)
    scene = tmp_path / "scene"
    assert main(["gen-scene", "--out", str(scene), *SMALL]) == 0
    metres = read_frames(scene / "bag")[0].depth
    scaled = read_frames(scene / "bag", depth_scale=0.5)[0].depth
    assert metres is not None and scaled is not None
    np.testing.assert_array_equal(metres, scaled)


def test_storage_file_instead_of_bag_directory_is_a_clear_error(tmp_path: Path) -> None:
    bag = record_like_jazzy(tmp_path / "rec", "default")
    with pytest.raises(ValueError, match="bag directory"):
        read_frames(bag / "rec_0.mcap")
    (bag / "metadata.yaml").unlink()
    with pytest.raises(ValueError, match=r"cannot read bag .*metadata"):
        read_frames(bag)


# --------------------------------------------------------------- gen-scene, both storages, end to end
SMALL = ["--seed", "4", "--frames", "5", "--width", "96", "--height", "72", "--per-task", "1"]
VARIANTS = {
    "mcap": ["--storage", "mcap"],
    "mcap_zstd": ["--storage", "mcap", "--chunk-compression", "zstd"],
    "sqlite3": ["--storage", "sqlite3"],
}


@pytest.fixture(scope="module")
def scenes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("storages")
    out = {}
    for name, args in VARIANTS.items():
        assert main(["gen-scene", "--out", str(root / name), *SMALL, *args]) == 0
        out[name] = root / name
    return out


def test_gen_scene_defaults_to_mcap(tmp_path: Path) -> None:
    assert main(["gen-scene", "--out", str(tmp_path / "s"), *SMALL]) == 0
    meta = yaml.safe_load((tmp_path / "s" / "bag" / "metadata.yaml").read_text())
    meta = meta["rosbag2_bagfile_information"]
    assert meta["storage_identifier"] == "mcap" and meta["version"] == 8
    (path,) = [tmp_path / "s" / "bag" / p for p in meta["relative_file_paths"]]
    assert path.read_bytes()[:8] == b"\x89MCAP0\r\n"  # MCAP spec magic, format version "0"
    header, summary = _mcap_summary(path)
    assert header.profile == "ros2"
    assert {c.compression for c in summary.chunk_indexes} == {""}  # as a plain ros2 bag record


def test_gen_scene_writes_each_storage(scenes: dict[str, Path]) -> None:
    for name, scene in scenes.items():
        meta = yaml.safe_load((scene / "bag" / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
        assert meta["storage_identifier"] == ("sqlite3" if name == "sqlite3" else "mcap")
        # chunk compression is inside the MCAP file: rosbag2 leaves the bag-level fields empty
        assert (meta["compression_mode"], meta["compression_format"]) == ("", "")
        (path,) = [scene / "bag" / p for p in meta["relative_file_paths"]]
        if name == "sqlite3":
            assert path.read_bytes()[:16] == b"SQLite format 3\x00"
            continue
        header, summary = _mcap_summary(path)
        assert header.profile == "ros2"
        assert {c.compression for c in summary.chunk_indexes} == {"zstd" if name == "mcap_zstd" else ""}
        topics = {c.topic: c for c in summary.channels.values()}
        assert set(topics) == {COLOR_TOPIC, DEPTH_TOPIC, INFO_TOPIC, "/tf", "/tf_static"}
        (static_qos,) = yaml.safe_load(topics["/tf_static"].metadata["offered_qos_profiles"])
        assert static_qos["durability"] == 1  # rmw TRANSIENT_LOCAL, metadata version 8 integers


def test_both_storages_read_back_the_scene(scenes: dict[str, Path]) -> None:
    """Every storage gives the same frames, and the poses are the scene model's (scene.json)."""
    read = {name: read_frames(scene / "bag") for name, scene in scenes.items()}
    cams = json.loads((scenes["sqlite3"] / "scene.json").read_text())["camera"]
    for name, frames in read.items():
        assert [f.stamp_ns for f in frames] == [c["stamp_ns"] for c in cams], name
        for f, ref, cam in zip(frames, read["sqlite3"], cams, strict=True):
            np.testing.assert_array_equal(f.rgb, ref.rgb)
            assert f.depth is not None and ref.depth is not None
            np.testing.assert_array_equal(f.depth, ref.depth)
            np.testing.assert_allclose(f.world_T_camera, cam["world_T_camera"], atol=1e-5)


def test_gen_spatial_qa_on_each_storage(scenes: dict[str, Path], tmp_path: Path) -> None:
    """gen-spatial-qa reads the bag of either storage; the same scene gives the same questions."""
    questions = {}
    runs = [(name, scene, []) for name, scene in scenes.items()]
    runs.append(("mcap_scaled", scenes["mcap"], ["--depth-scale", "0.5"]))  # 32FC1 metres: scale unused
    for name, scene, extra in runs:
        out = tmp_path / f"{name}.json"
        rc = main(["gen-spatial-qa", "--bag", str(scene / "bag"), "--masks", str(scene / "masks.json"),
                   "--out", str(out), "--per-task", "1", *extra])
        assert rc == 0, name
        questions[name] = json.loads(out.read_text())["questions"]
        assert len(questions[name]) >= 10, name
    assert questions["mcap"] == questions["sqlite3"] == questions["mcap_zstd"] == questions["mcap_scaled"]


def test_bad_storage_options_are_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["gen-scene", "--out", str(tmp_path / "x"), *SMALL, "--storage", "sqlite3",
               "--chunk-compression", "zstd"])
    assert rc == 2 and "chunk compression" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["gen-scene", "--out", str(tmp_path / "y"), *SMALL, "--storage", "rosbag1"])
    assert not (tmp_path / "x").exists()


def test_cli_choices_are_bagios() -> None:
    """spatial/cli.py spells bagio's choices out (see its comment); they must not drift apart."""
    from rynnec_ros.spatial import cli

    assert cli._STORAGES == bagio.STORAGES and cli._CHUNK_COMPRESSIONS == bagio.CHUNK_COMPRESSIONS
    assert cli._DEPTH_SCALE == bagio.DEFAULT_DEPTH_SCALE


# ------------------------------------------------------------------- the replay tool reads them too
def _replay(bag: Path, monkeypatch: pytest.MonkeyPatch):
    """Replay ``bag`` with ros/replay.py's ``BagReplayer`` into a subscription of the same process.

    Returns the replayer, the (topic, time) of every published message and the depth images received.
    Discovery is off: the process's own publishers and subscription still match; nothing else sees them.
    """
    rclpy = pytest.importorskip("rclpy")
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import Image

    from rynnec_ros.ros.replay import BagReplayer

    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "OFF")
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node("mcap_replay_test", context=context)
        replayer = BagReplayer(node, bag, rate=50.0)
        depths: list[Image] = []
        node.create_subscription(Image, DEPTH_TOPIC, depths.append, replayer.qos[DEPTH_TOPIC])
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        assert replayer.wait_for_subscribers(DEPTH_TOPIC, 10.0)
        spin = threading.Thread(target=executor.spin, daemon=True)
        spin.start()
        seen: list[tuple[str, int]] = []
        assert replayer.run(on_message=lambda topic, t: seen.append((topic, t))) == len(seen)
        # The player returns once reliable messages are acknowledged, i.e. in the reader's queue; this
        # process's executor may not have run the callback for the last ones yet.
        published = sum(topic == DEPTH_TOPIC for topic, _ in seen)
        deadline = time.monotonic() + 10.0
        while len(depths) < published and time.monotonic() < deadline:
            time.sleep(0.02)
        executor.shutdown()
        spin.join(5)
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
    return replayer, seen, depths


@pytest.mark.ros
@pytest.mark.parametrize("preset", ["default", "zstd_small"])
def test_replay_publishes_recorded_mcap(tmp_path: Path, preset: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``rynnec-ros replay``'s reader on the recorded MCAP bag: the recorded QoS (version-9 strings in the
    channel metadata) is offered, /tf_static latched, every message published at its recorded receive time,
    and the depth the node's decoder makes of the replayed bytes is the scene's."""
    from rclpy.qos import DurabilityPolicy, ReliabilityPolicy

    from rynnec_ros.core.images import image_to_depth

    replayer, seen, depths = _replay(record_like_jazzy(tmp_path / "rec", preset), monkeypatch)
    assert replayer.topics == sorted({COLOR_TOPIC, DEPTH_TOPIC, INFO_TOPIC, "/tf", "/tf_static"})
    static = replayer.qos["/tf_static"]
    assert static.durability == DurabilityPolicy.TRANSIENT_LOCAL
    assert static.reliability == ReliabilityPolicy.RELIABLE
    assert replayer.qos[DEPTH_TOPIC].durability == DurabilityPolicy.VOLATILE
    assert len(seen) == 1 + 4 * len(STAMPS)  # /tf_static once; /tf, colour, depth, camera_info per frame
    assert [t for topic, t in seen if topic == DEPTH_TOPIC] == [s + RECV_DELAY_NS for s in STAMPS]
    assert len(depths) == len(STAMPS)
    d = image_to_depth(depths[0], 0.001)
    np.testing.assert_allclose(d[0, 0], 2.0, rtol=1e-6)
    np.testing.assert_allclose(d[SQUARE], 1.234, rtol=1e-6)
    assert np.isnan(d[HOLE])


@pytest.mark.ros
def test_replay_publishes_gen_scene_zstd_mcap(
    scenes: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The zstd-chunked MCAP bag gen-scene writes replays whole; the depth arriving is the bag's."""
    from rynnec_ros.core.images import image_to_depth

    scene = scenes["mcap_zstd"]
    _, seen, depths = _replay(scene / "bag", monkeypatch)
    frames = read_frames(scene / "bag")
    assert len(seen) == 1 + 4 * len(frames)  # bagio.write_bag: /tf_static once, 4 messages per frame
    assert len(depths) == len(frames)
    for msg, f in zip(depths, frames, strict=True):
        np.testing.assert_array_equal(image_to_depth(msg), f.depth)
