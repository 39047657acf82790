"""rosbag2 I/O for RGB-D + TF recordings with the pure-Python ``rosbags`` library (no rclpy).

Both rosbag2 storages are written and read: MCAP, what ``ros2 bag record`` writes by default since
rosbag2 0.19 (Iron, Jazzy, Kilted: ``rosbag2_storage`` ``get_default_storage_id()`` returns "mcap"), and
sqlite3 (Humble's default). Reading takes MCAP with uncompressed, zstd- or lz4-compressed chunks, with or
without chunk CRCs, and whole-file zstd compression (``ros2 bag record --compression-mode file``).

Reading turns colour, registered depth, CameraInfo and the TF tree into ``Frame``s whose
``world_T_camera`` is the colour optical frame's pose in ``world_frame`` (z up) at the image stamp.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from rynnec_ros.core.images import image_to_depth, image_to_rgb
from rynnec_ros.core.transforms import TransformStore
from rynnec_ros.core.types import Frame

COLOR_TOPIC = "/camera/color/image_raw"
DEPTH_TOPIC = "/camera/depth/image_raw"
INFO_TOPIC = "/camera/color/camera_info"
OPTICAL_FRAME = "camera_color_optical_frame"
STORAGES = ("mcap", "sqlite3")
CHUNK_COMPRESSIONS = ("none", "zstd")
DEFAULT_DEPTH_SCALE = 0.001  # metres per unit of 16UC1 depth: millimetres, REP 118
# Reading a bag keeps every transform (the node keeps tf_cache_s): a history longer than any recording.
BAG_TF_HISTORY_S = 1e6
TF_TOLERANCE_NS = 100_000_000  # a frame this close to the first/last transform still takes it


def _typestore():
    from rosbags.typesys import Stores, get_typestore

    return get_typestore(Stores.ROS2_HUMBLE)


def offered_qos(static: bool, depth: int):
    """The QoS a recorder stores for a publisher: tf2's static broadcaster QoS or a sensor stream's.

    ``ros2 bag play`` offers each topic with the recorded QoS and falls back to reliable + volatile when
    none was recorded, which tf2's transient-local static listener never receives. tf2_ros'
    ``StaticBroadcasterQoS`` is depth 1, reliable, transient-local; other topics here are reliable,
    volatile, keep-last ``depth``. Durations of 0 s are rmw's "unspecified" (no deadline/lifespan).
    """
    from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime

    zero = QosTime(sec=0, nsec=0)
    return Qos(
        history=QosHistory.KEEP_LAST,
        depth=1 if static else depth,
        reliability=QosReliability.RELIABLE,
        durability=QosDurability.TRANSIENT_LOCAL if static else QosDurability.VOLATILE,
        deadline=zero,
        lifespan=zero,
        liveliness=QosLiveliness.AUTOMATIC,
        liveliness_lease_duration=zero,
        avoid_ros_namespace_conventions=False,
    )


def _header(ts, stamp_ns: int, frame_id: str):
    T = ts.types
    return T["std_msgs/msg/Header"](
        stamp=T["builtin_interfaces/msg/Time"](
            sec=int(stamp_ns // 1_000_000_000), nanosec=int(stamp_ns % 1_000_000_000)
        ),
        frame_id=frame_id,
    )


def _transform_stamped(ts, stamp_ns: int, parent: str, child: str, M: np.ndarray):
    T = ts.types
    q = [float(v) for v in Rotation.from_matrix(M[:3, :3]).as_quat()]  # x, y, z, w
    t = [float(v) for v in M[:3, 3]]
    return T["geometry_msgs/msg/TransformStamped"](
        header=_header(ts, stamp_ns, parent),
        child_frame_id=child,
        transform=T["geometry_msgs/msg/Transform"](
            translation=T["geometry_msgs/msg/Vector3"](x=t[0], y=t[1], z=t[2]),
            rotation=T["geometry_msgs/msg/Quaternion"](x=q[0], y=q[1], z=q[2], w=q[3]),
        ),
    )


def check_storage(storage: str, chunk_compression: str) -> None:
    """ValueError unless ``write_bag`` can write this storage with this chunk compression."""
    if storage not in STORAGES:
        raise ValueError(f"storage must be one of {', '.join(STORAGES)}, got {storage!r}")
    if chunk_compression not in CHUNK_COMPRESSIONS:
        raise ValueError(
            f"chunk compression must be one of {', '.join(CHUNK_COMPRESSIONS)}, got {chunk_compression!r}"
        )
    if chunk_compression != "none" and storage != "mcap":
        raise ValueError(f"chunk compression is an MCAP option; storage {storage} has no chunks")


@dataclass
class BagFrame:
    """One recorded view for ``write_bag``: images plus the dynamic transforms at its stamp."""

    stamp_ns: int
    rgb: np.ndarray
    depth: np.ndarray
    transforms: list[tuple[str, str, np.ndarray]]  # (parent, child, parent_T_child)


def write_bag(
    out_dir: Path | str,
    frames: list[BagFrame],
    K: np.ndarray,
    static_transforms: list[tuple[str, str, np.ndarray]],
    storage: str = "mcap",
    chunk_compression: str = "none",
) -> Path:
    """Write colour (rgb8), depth (32FC1 metres), CameraInfo, /tf and /tf_static to a rosbag2 bag.

    ``storage`` "mcap" (``ros2 bag record``'s default on Jazzy and Kilted) or "sqlite3". MCAP chunks are
    uncompressed by default, as rosbag2_storage_mcap writes them (``mcap_storage.cpp`` ``open_impl``:
    ``compression = None``, ``noChunkCRC``); "zstd" compresses them, as its ``zstd_fast``/``zstd_small``
    storage presets do. Chunk compression lives inside the MCAP file, so metadata.yaml's
    ``compression_mode``/``compression_format`` stay empty, as rosbag2 leaves them.

    Metadata version 8 (QoS profiles as a YAML string) is the newest Humble's rosbag2 reads (Jazzy and
    Kilted write 9 and read both); every topic records its offered QoS so ``ros2 bag play`` latches
    /tf_static.
    """
    from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin, Writer

    check_storage(storage, chunk_compression)
    ts = _typestore()
    T = ts.types
    out = Path(out_dir)
    if out.exists():
        raise ValueError(f"bag directory {out} already exists")
    writer = Writer(out, version=8, storage_plugin=StoragePlugin[storage.upper()])
    if chunk_compression == "zstd":
        writer.set_compression(CompressionMode.STORAGE, CompressionFormat.ZSTD)
    with writer:
        sensor, dynamic = [offered_qos(False, 5)], [offered_qos(False, 100)]
        static_qos = [offered_qos(True, 1)]
        c_rgb = writer.add_connection(COLOR_TOPIC, "sensor_msgs/msg/Image", typestore=ts,
                                      offered_qos_profiles=sensor)
        c_depth = writer.add_connection(DEPTH_TOPIC, "sensor_msgs/msg/Image", typestore=ts,
                                        offered_qos_profiles=sensor)
        c_info = writer.add_connection(INFO_TOPIC, "sensor_msgs/msg/CameraInfo", typestore=ts,
                                       offered_qos_profiles=sensor)
        c_tf = writer.add_connection("/tf", "tf2_msgs/msg/TFMessage", typestore=ts,
                                     offered_qos_profiles=dynamic)
        c_static = writer.add_connection("/tf_static", "tf2_msgs/msg/TFMessage", typestore=ts,
                                         offered_qos_profiles=static_qos)
        t0 = frames[0].stamp_ns if frames else 0
        static = T["tf2_msgs/msg/TFMessage"](
            transforms=[_transform_stamped(ts, t0, p, c, M) for p, c, M in static_transforms]
        )
        writer.write(c_static, t0, ts.serialize_cdr(static, "tf2_msgs/msg/TFMessage"))
        for f in frames:
            h, w = f.depth.shape
            tf = T["tf2_msgs/msg/TFMessage"](
                transforms=[_transform_stamped(ts, f.stamp_ns, p, c, M) for p, c, M in f.transforms]
            )
            writer.write(c_tf, f.stamp_ns, ts.serialize_cdr(tf, "tf2_msgs/msg/TFMessage"))
            rgb = np.ascontiguousarray(f.rgb, dtype=np.uint8)
            img = T["sensor_msgs/msg/Image"](
                header=_header(ts, f.stamp_ns, OPTICAL_FRAME),
                height=h,
                width=w,
                encoding="rgb8",
                is_bigendian=0,
                step=w * 3,
                data=rgb.reshape(-1),
            )
            writer.write(c_rgb, f.stamp_ns, ts.serialize_cdr(img, "sensor_msgs/msg/Image"))
            depth = np.ascontiguousarray(f.depth, dtype="<f4")
            dimg = T["sensor_msgs/msg/Image"](
                header=_header(ts, f.stamp_ns, OPTICAL_FRAME),
                height=h,
                width=w,
                encoding="32FC1",
                is_bigendian=0,
                step=w * 4,
                data=depth.view(np.uint8).reshape(-1),
            )
            writer.write(c_depth, f.stamp_ns, ts.serialize_cdr(dimg, "sensor_msgs/msg/Image"))
            P = np.zeros((3, 4))
            P[:, :3] = K
            info = T["sensor_msgs/msg/CameraInfo"](
                header=_header(ts, f.stamp_ns, OPTICAL_FRAME),
                height=h,
                width=w,
                distortion_model="plumb_bob",
                d=np.zeros(5),
                k=np.asarray(K, float).reshape(-1),
                r=np.eye(3).reshape(-1),
                p=P.reshape(-1),
                binning_x=0,
                binning_y=0,
                roi=T["sensor_msgs/msg/RegionOfInterest"](
                    x_offset=0, y_offset=0, height=0, width=0, do_rectify=False
                ),
            )
            writer.write(c_info, f.stamp_ns, ts.serialize_cdr(info, "sensor_msgs/msg/CameraInfo"))
    return out


# --------------------------------------------------------------------------------------- reading
def _stamp(header) -> int:
    return int(header.stamp.sec) * 1_000_000_000 + int(header.stamp.nanosec)


def add_tf_message(store: TransformStore, msg, static: bool) -> int:
    """A TFMessage into ``store``; returns how many transforms were refused (non-unit quaternion,
    absurd translation, a frame its own parent): skipped as the node's TF listener skips them."""
    refused = 0
    for t in msg.transforms:
        try:
            store.set_stamped(t, _stamp(t.header), static)
        except ValueError:
            refused += 1
    return refused


def world_pose(store: TransformStore, world: str, frame: str, stamp_ns: int) -> np.ndarray | None:
    try:
        return store.lookup(world, frame, stamp_ns, TF_TOLERANCE_NS)
    except LookupError:
        return None


def _check_bag_path(path: Path) -> None:
    """A clear error for paths ``rosbags`` cannot open as a rosbag2 directory."""
    if not path.exists():
        raise ValueError(f"bag {path} does not exist")
    if path.is_file() and path.suffix in (".mcap", ".db3"):
        raise ValueError(
            f"{path} is a rosbag2 storage file; give the bag directory that holds it and its metadata.yaml "
            "(`ros2 bag reindex DIR` writes a lost metadata.yaml again)"
        )


def read_frames(
    bag_dir: Path | str,
    world_frame: str = "odom",
    color_topic: str = COLOR_TOPIC,
    depth_topic: str = DEPTH_TOPIC,
    info_topic: str = INFO_TOPIC,
    max_depth_dt_ns: int = 20_000_000,
    depth_scale: float = DEFAULT_DEPTH_SCALE,
) -> list[Frame]:
    """Frames (one per colour image, in stamp order) with nearest depth, K and TF pose.

    ``bag_dir`` is a rosbag2 directory of either storage (MCAP or sqlite3); ``depth_scale`` is the metres
    per unit of 16UC1 depth (the node's ``depth_scale`` parameter), unused for 32FC1 metres.
    """
    from rosbags.highlevel import AnyReader

    if not (np.isfinite(depth_scale) and depth_scale > 0):
        raise ValueError(f"depth_scale must be a positive number of metres per unit, got {depth_scale}")
    path = Path(bag_dir)
    _check_bag_path(path)
    tf = TransformStore(cache_s=BAG_TF_HISTORY_S)
    colors: list[tuple[int, str, np.ndarray]] = []
    depths: list[tuple[int, np.ndarray]] = []
    K: np.ndarray | None = None
    try:
        with AnyReader([path], default_typestore=_typestore()) as reader:
            wanted = {color_topic, depth_topic, info_topic, "/tf", "/tf_static"}
            conns = [c for c in reader.connections if c.topic in wanted]
            if not any(c.topic == color_topic for c in conns):
                raise ValueError(f"bag {path} has no topic {color_topic}")
            for conn, _, raw in reader.messages(connections=conns):
                msg = reader.deserialize(raw, conn.msgtype)
                if conn.topic == color_topic:
                    colors.append((_stamp(msg.header), msg.header.frame_id, image_to_rgb(msg)))
                elif conn.topic == depth_topic:
                    depths.append((_stamp(msg.header), image_to_depth(msg, depth_scale)))
                elif conn.topic == info_topic and K is None:
                    K = np.asarray(msg.k, dtype=np.float64).reshape(3, 3)
                elif conn.topic in ("/tf", "/tf_static"):
                    add_tf_message(tf, msg, static=conn.topic == "/tf_static")
    except ValueError:
        raise
    except Exception as exc:  # rosbags, zstd, lz4 and the file system each raise their own classes
        raise ValueError(f"cannot read bag {path}: {type(exc).__name__}: {exc}") from exc
    colors.sort(key=lambda c: c[0])
    depth_stamps = np.array([d[0] for d in depths], dtype=np.int64)
    frames: list[Frame] = []
    for stamp, frame_id, rgb in colors:
        depth = None
        if depth_stamps.size:
            j = int(np.argmin(np.abs(depth_stamps - stamp)))
            if abs(int(depth_stamps[j]) - stamp) <= max_depth_dt_ns and depths[j][1].shape == rgb.shape[:2]:
                depth = depths[j][1]
        pose = world_pose(tf, world_frame, frame_id or OPTICAL_FRAME, stamp)
        frames.append(
            Frame(rgb=rgb, stamp_ns=stamp, frame_id=frame_id, depth=depth, K=K, world_T_camera=pose)
        )
    return frames
