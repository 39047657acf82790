"""Viewer outputs and the point behaviour against the real node on a replayed generated scene (issue 23).

The node (its own process, the endless checkpoint: short or long answers on demand, and SAM 2 masks) reads
a gen-scene bag (colour, depth, camera_info, /tf, /tf_static) replayed like ``ros2 bag play``. Expected
values come from:

- the scene model (``make_scene`` / ``render`` with the fixture's gen-scene options), not the bag the node
  read: an object's instance mask, its box, where a surface point projects;
- the masks the node itself returned (``ObjectMask`` RLE, decoded with the RLE codec), for the contours
  of masks a random-weight SAM 2 made;
- Foxglove's image coordinates (PointsAnnotation: origin at the top-left corner of the top-left pixel);
- the panels' accepted schemas: Foxglove Studio's Image panel annotation datatypes
  (``normalizeAnnotations.ts`` ``ANNOTATION_DATATYPES``, ROS 2 names), RViz's default plugins' message
  types (``MarkerArray``, ``Image``; the PublishPoint tool publishes ``geometry_msgs/PointStamped``);
- action_msgs/GoalStatus as the node's action server publishes it (STATUS_CANCELED after a client's
  cancel).

Rendered pictures go under each test's tmp dir; with ``RYNNEC_TEST_ARTIFACTS=DIR`` a copy is kept there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from .test_ros_behaviours import LONG, StatusWatch, _example, _generating, _tick
from .test_ros_replay import _surface_point

pytestmark = pytest.mark.ros

REPO = Path(__file__).resolve().parents[2]
NAME = "rynnec"
TOPICS = ("/camera/color/image_raw", "/camera/depth/image_raw", "/camera/color/camera_info", "/tf",
          "/tf_static")
# Foxglove Studio's Image panel (packages/studio-base/src/panels/Image/lib/normalizeAnnotations.ts,
# ANNOTATION_DATATYPES): the ROS 2 annotation schemas it draws over an image.
FOXGLOVE_ANNOTATION_TYPES = {"visualization_msgs/msg/ImageMarker", "foxglove_msgs/msg/ImageMarkerArray",
                             "visualization_msgs/msg/ImageMarkerArray", "foxglove_msgs/msg/ImageAnnotations"}
IMAGE_TYPES = {"sensor_msgs/msg/Image", "sensor_msgs/msg/CompressedImage"}


@pytest.fixture(scope="module")
def node(node_factory, endless_checkpoint, scene, ros_domain):
    n = node_factory({"checkpoint": str(endless_checkpoint), "qos_reliability": "reliable", "qos_depth": 50,
                      "depth_topic": TOPICS[1], "camera_info_topic": TOPICS[2], "world_frame": "odom",
                      "max_new_tokens": 4, "ingest_fps": 0.0, "request_timeout_s": 300.0,
                      "point_prompt_topic": "/clicked_point"}, name=NAME)
    yield n
    assert n.alive(), n.output()[-3000:]


@pytest.fixture(scope="module")
def client(node, scene):
    from rynnec_ros.ros.client import CognitionClient

    with CognitionClient(node_name=NAME, client_name="viz_test_client") as c:
        assert c.wait_for_node(60.0), node.output()[-3000:]
        player = subprocess.run(
            [sys.executable, "-m", "rynnec_ros.cli", "replay", str(scene / "bag"), "--rate", "4",
             "--wait-for", *TOPICS[:4]],
            capture_output=True, text=True, timeout=120)
        assert player.returncode == 0, player.stdout + player.stderr
        stamps = [int(s["stamp_ns"]) for s in json.loads((scene / "scene.json").read_text())["camera"]]
        c.require_frames(stamps, timeout_s=30.0)
        yield c


@pytest.fixture(scope="module")
def watch(client):
    return StatusWatch(client, "ask_stream", node_name=NAME)


@pytest.fixture(autouse=True)
def clean_blackboard():
    import py_trees

    yield
    py_trees.blackboard.Blackboard.clear()


class Received:
    """The messages of some of the node's topics while a test runs (on the client's node and thread)."""

    def __init__(self, client: Any, topics: dict[str, Any]) -> None:
        self._node = client.node
        self.got: dict[str, list] = {t: [] for t in topics}
        self._subs = [self._node.create_subscription(kind, t, self.got[t].append, 10)
                      for t, kind in topics.items()]
        deadline = time.monotonic() + 20.0
        while time.monotonic() < deadline and not all(self._node.count_publishers(t) for t in topics):
            time.sleep(0.05)
        time.sleep(0.5)  # matched both ways before the request goes out

    def wait(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not all(self.got.values()):
            time.sleep(0.05)
        assert all(self.got.values()), {t: len(v) for t, v in self.got.items()}

    def close(self) -> None:
        for sub in self._subs:
            self._node.destroy_subscription(sub)


def _ns(stamp: Any) -> int:
    return int(stamp.sec) * 10**9 + int(stamp.nanosec)


def _decode(mask_msg: Any) -> np.ndarray:
    from rynnec_ros.core import masks as rle_codec

    return rle_codec.decode({"size": list(mask_msg.size), "counts": mask_msg.counts})


def _overlay_grey(img: Any) -> np.ndarray:
    rgb = np.frombuffer(bytes(img.data), np.uint8).reshape(img.height, img.width, 3)
    return np.repeat(rgb.mean(axis=2, keepdims=True).astype(np.uint8), 3, axis=2)


SCALE = 6  # PNG pixels per image pixel in the rendered check


def _render(ann: Any, background: np.ndarray, path: Path) -> np.ndarray:
    """Draw received ImageAnnotations as Foxglove's Image panel does, over ``background`` (grey, so no
    pixel of it has an outline's saturated colour): each LINE_LOOP closed, filled with ``fill_color``, its
    outline ``thickness`` pixels wide with round joins (a sharp corner's mitre would reach past it); each
    text with its bottom-left corner at ``position``, on its background colour. The axes fill the figure
    and the image spans (0, W) x (H, 0) in data units, so image coordinate (x, y) is PNG pixel
    (x, y) * SCALE. Antialiasing is off so an outline is drawn in its exact colour. Returns the PNG's RGB
    pixels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from foxglove_msgs.msg import PointsAnnotation
    from matplotlib.image import imread
    from matplotlib.patches import Polygon

    def rgba(c: Any) -> tuple[float, float, float, float]:
        return (c.r, c.g, c.b, c.a)

    h, w = background.shape[:2]
    fig = plt.figure(figsize=(w * SCALE / 100, h * SCALE / 100), dpi=100)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.imshow(background, extent=(0, w, h, 0), interpolation="nearest")
    ax.set_xlim(0, w)
    ax.set_ylim(h, 0)
    ax.axis("off")
    for a in ann.points:
        assert a.type == PointsAnnotation.LINE_LOOP
        pts = [(p.x, p.y) for p in a.points]
        if a.fill_color.a > 0:
            ax.add_patch(Polygon(pts, closed=True, facecolor=rgba(a.fill_color), edgecolor="none",
                                 antialiased=False))
        width_pt = a.thickness * SCALE * 72 / 100  # the outline's width in image pixels, in points at 100 dpi
        ax.add_patch(Polygon(pts, closed=True, fill=False, edgecolor=rgba(a.outline_color),
                             linewidth=width_pt, joinstyle="round", antialiased=False))
    for t in ann.texts:
        ax.text(t.position.x, t.position.y, t.text, color=rgba(t.text_color), va="bottom", ha="left",
                fontsize=t.font_size * SCALE * 72 / 100,
                bbox={"facecolor": rgba(t.background_color), "pad": 1, "linewidth": 0})
    fig.savefig(path, dpi=100)
    plt.close(fig)
    keep = os.environ.get("RYNNEC_TEST_ARTIFACTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / path.name)
    return (imread(path)[:, :, :3] * 255).round().astype(np.uint8)


def _check_traces(ann: Any, mask: np.ndarray) -> Any:
    """The annotations of one object trace ``mask``: every contour vertex is a boundary pixel of it (a
    mask pixel with a 4-neighbour outside it or on the image's edge), the contours enclose every mask
    pixel, and the one unfilled loop is the box of pixel edges around it (from numpy here). Returns the
    box."""
    import cv2

    padded = np.pad(mask, 1)
    inner = padded[:-2, 1:-1] & padded[2:, 1:-1] & padded[1:-1, :-2] & padded[1:-1, 2:]
    boundary = mask & ~inner
    contours = [a for a in ann.points if a.fill_color.a > 0]
    (box,) = [a for a in ann.points if a.fill_color.a == 0]
    enclosed = np.zeros(mask.shape, np.uint8)
    for a in contours:
        px = np.array([(p.x - 0.5, p.y - 0.5) for p in a.points])
        assert np.all(px == np.round(px)), "vertices are not pixel centres"
        cols, rows = px[:, 0].astype(int), px[:, 1].astype(int)
        assert boundary[rows, cols].all(), "a contour vertex is not on the mask's boundary"
        cv2.fillPoly(enclosed, [px.astype(np.int32).reshape(-1, 1, 2)], 1)
        cv2.polylines(enclosed, [px.astype(np.int32).reshape(-1, 1, 2)], True, 1)
    assert not (mask & (enclosed == 0)).any(), "mask pixels outside every contour"
    rows, cols = np.nonzero(mask)
    edges = (float(cols.min()), float(rows.min()), float(cols.max() + 1), float(rows.max() + 1))
    x0, y0, x1, y1 = edges
    assert [(p.x, p.y) for p in box.points] == [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    return box


def _drawn_extent(png: np.ndarray, colour: Any) -> tuple[float, float, float, float]:
    """The extent (image coordinates) of the PNG pixels drawn in exactly ``colour``."""
    want = np.array([round(colour.r * 255), round(colour.g * 255), round(colour.b * 255)])
    rows, cols = np.nonzero(np.all(png.astype(int) == want, axis=2))
    assert rows.size, f"nothing drawn in {want.tolist()}"
    return (cols.min() / SCALE, rows.min() / SCALE, (cols.max() + 1) / SCALE, (rows.max() + 1) / SCALE)


def test_annotations_box_the_scene_models_object_of_a_region_question(client, scene, tmp_path) -> None:
    """A region question with the scene model's instance mask of the object covering most of a frame:
    ~/annotations carries its contour and box on that frame, stamped and framed as ~/overlay's image,
    labelled with the region's label and the answer. Rendered as Foxglove draws it, the box's outline
    lies on the scene model's box (pixel edges, to within the line's width)."""
    from foxglove_msgs.msg import ImageAnnotations
    from sensor_msgs.msg import Image

    from rynnec_ros.core.types import Region
    from rynnec_ros.ros.markers import answer_words
    from rynnec_ros.scenes.scene import make_scene, render

    frame = 2
    model = make_scene(3, 8, 128, 96)
    stamps = [int(s["stamp_ns"]) for s in json.loads((scene / "scene.json").read_text())["camera"]]
    ids = render(model, model.world_T_camera(frame)).ids
    present, counts = np.unique(ids[ids > 0], return_counts=True)
    oid = int(present[np.argmax(counts)])
    mask = ids == oid
    rx = Received(client, {"/rynnec/annotations": ImageAnnotations, "/rynnec/overlay": Image})
    try:
        ans = client.ask("What is <object0>?", [Region(oid, {0: mask}, "target")],
                         frame_stamps_ns=[stamps[frame]], max_new_tokens=2, timeout_s=60)
        rx.wait()
    finally:
        rx.close()
    ann = rx.got["/rynnec/annotations"][-1]
    overlay = rx.got["/rynnec/overlay"][-1]
    assert ann.points and all(a.timestamp == overlay.header.stamp for a in [*ann.points, *ann.texts])
    assert _ns(overlay.header.stamp) == stamps[frame]
    assert overlay.header.frame_id == "camera_color_optical_frame"  # gen-scene's colour frame
    (label,) = ann.texts
    assert label.text == f"target: {answer_words(ans)}", ans.text
    box = _check_traces(ann, mask)
    assert (label.position.x, label.position.y) == (box.points[0].x, box.points[0].y)  # above the box
    png = _render(ann, _overlay_grey(overlay), tmp_path / "annotations_region.png")
    assert png.shape[:2] == (96 * SCALE, 128 * SCALE)
    # the scene model's box, in pixel edges (numpy on the instance mask, as _check_traces found it)
    rows, cols = np.nonzero(mask)
    model_box = (cols.min(), rows.min(), cols.max() + 1, rows.max() + 1)
    got = _drawn_extent(png, box.outline_color)
    # the outline straddles the box's edges: half its width (box.thickness pixels) either side
    assert got == pytest.approx(model_box, abs=box.thickness), (got, model_box)


def test_annotations_trace_the_mask_a_segmentation_returned(client, scene, tmp_path) -> None:
    """A referring segmentation on two frames: ~/annotations traces the newest frame's mask (the one
    ~/overlay draws, the last ObjectMask the node returned), labelled with the expression; the PNG is
    what issue 23's closing note shows."""
    from foxglove_msgs.msg import ImageAnnotations
    from sensor_msgs.msg import Image

    stamps = [int(s["stamp_ns"]) for s in json.loads((scene / "scene.json").read_text())["camera"]]
    rx = Received(client, {"/rynnec/annotations": ImageAnnotations, "/rynnec/overlay": Image})
    try:
        seg = client.segment("the biggest object", frame_stamps_ns=[stamps[0], stamps[4]], timeout_s=60)
        reply = client.last_response
        assert reply.masks and any(m is not None and m.any() for m in seg.masks or []), reply.message
        rx.wait()
    finally:
        rx.close()
    newest = reply.masks[-1]
    ann = rx.got["/rynnec/annotations"][-1]
    overlay = rx.got["/rynnec/overlay"][-1]
    assert newest.header == overlay.header
    assert all(a.timestamp == newest.header.stamp for a in [*ann.points, *ann.texts])
    assert [t.text for t in ann.texts] == ["the biggest object"]
    box = _check_traces(ann, _decode(newest))
    png = _render(ann, _overlay_grey(overlay), tmp_path / "annotations_segmentation.png")
    got = _drawn_extent(png, box.outline_color)
    expected = (box.points[0].x, box.points[0].y, box.points[2].x, box.points[2].y)
    assert got == pytest.approx(expected, abs=box.thickness)


def test_annotations_follow_the_parameter(client, scene) -> None:
    """``publish_annotations:=false`` (live): the next answer publishes its overlay but no annotations."""
    from foxglove_msgs.msg import ImageAnnotations
    from sensor_msgs.msg import Image

    stamps = [int(s["stamp_ns"]) for s in json.loads((scene / "scene.json").read_text())["camera"]]
    rx = Received(client, {"/rynnec/annotations": ImageAnnotations, "/rynnec/overlay": Image})
    assert client.set_parameters({"publish_annotations": False}) == [""]
    try:
        client.segment("the object", frame_stamps_ns=[stamps[1]], timeout_s=60)
        deadline = time.monotonic() + 30.0
        while time.monotonic() < deadline and not rx.got["/rynnec/overlay"]:
            time.sleep(0.05)
        time.sleep(1.0)  # the annotations would have been published right after the overlay
    finally:
        rx.close()
        assert client.set_parameters({"publish_annotations": True}) == [""]
    assert rx.got["/rynnec/overlay"] and not rx.got["/rynnec/annotations"]


def _config_topics() -> dict[str, set[str]]:
    """Every topic config/rynnec.rviz and config/rynnec.foxglove.json name, by where (RViz display
    class or tool, Foxglove panel and setting)."""
    import yaml

    rviz = yaml.safe_load((REPO / "config" / "rynnec.rviz").read_text())["Visualization Manager"]
    named: dict[str, set[str]] = {}
    for d in rviz["Displays"] + rviz["Tools"]:
        topic = d.get("Topic", {}).get("Value")
        if topic:
            named.setdefault(topic, set()).add(d["Class"])
    fox = json.loads((REPO / "config" / "rynnec.foxglove.json").read_text())["configById"]
    for panel_id, cfg in fox.items():
        panel = panel_id.split("!")[0]
        for topic in cfg.get("topics", {}):
            named.setdefault(topic, set()).add(f"{panel}.topics")
        if cfg.get("publish", {}).get("pointTopic"):
            named.setdefault(cfg["publish"]["pointTopic"], set()).add(f"{panel}.publish")
        image = cfg.get("imageMode", {})
        if image.get("imageTopic"):
            named.setdefault(image["imageTopic"], set()).add(f"{panel}.imageTopic")
        for topic in image.get("annotations", {}):
            named.setdefault(topic, set()).add(f"{panel}.annotations")
        if cfg.get("topicPath"):
            named.setdefault(cfg["topicPath"].split(".")[0], set()).add(f"{panel}.topicPath")
    return named


def test_every_topic_the_viewer_configs_name_is_the_running_nodes(client, node) -> None:
    """config/rynnec.rviz and config/rynnec.foxglove.json name only topics the running node publishes
    (what the panels show) or subscribes (what the publish-point tools send), each of a type the panel
    showing it takes; and the Foxglove layout shows the outputs issue 23 lists."""
    names_types = client.node.get_publisher_names_and_types_by_node(NAME, "/")
    published = {t: set(types) for t, types in names_types}
    subscribed = {t: set(types) for t, types in client.node.get_subscriber_names_and_types_by_node(NAME, "/")}
    named = _config_topics()
    for topic, where in named.items():
        types = published.get(topic) or subscribed.get(topic)
        assert types, f"{topic} ({sorted(where)}) is neither published nor subscribed by the node"
        for w in where:
            if w in ("rviz_default_plugins/PublishPoint", "3D.publish"):
                assert subscribed.get(topic) == {"geometry_msgs/msg/PointStamped"}, (topic, w)
            elif w == "rviz_default_plugins/MarkerArray":
                assert published[topic] == {"visualization_msgs/msg/MarkerArray"}, (topic, w)
            elif w in ("rviz_default_plugins/Image", "Image.imageTopic"):
                assert published[topic] <= IMAGE_TYPES, (topic, w)
            elif w == "Image.annotations":
                assert published[topic] <= FOXGLOVE_ANNOTATION_TYPES, (topic, w)
            else:
                assert topic in published, (topic, w)
    shown = set(named)
    assert {"/rynnec/markers", "/rynnec/detections_3d", "/rynnec/annotations", "/rynnec/spatial_answers",
            "/rynnec/overlay/compressed"} <= shown, sorted(shown)


def test_the_viewer_configs_are_installed_with_the_package() -> None:
    """CMakeLists.txt installs config/ to share/rynnec_ros: both viewer files are where docs/ros.md
    tells users to load them from (`ros2 pkg prefix rynnec_ros`/share/rynnec_ros/config), unchanged."""
    from ament_index_python.packages import get_package_share_directory

    share = Path(get_package_share_directory("rynnec_ros")) / "config"
    for name in ("rynnec.rviz", "rynnec.foxglove.json"):
        assert (share / name).read_bytes() == (REPO / "config" / name).read_bytes(), name


def _point_tree(client: Any, ask: Any) -> Any:
    import py_trees

    return py_trees.trees.BehaviourTree(py_trees.composites.Sequence("plan", memory=True, children=[ask]))


def test_ask_about_a_3d_point_succeeds_with_masks_where_the_scene_model_sees_it(client, scene) -> None:
    """AskAboutPoint with a surface point of the scene model (world frame odom): SUCCESS with the answer;
    the node clicked it on frames where the model's instance mask holds the point's pixel."""
    from action_msgs.msg import GoalStatus
    from py_trees.common import Status

    from rynnec_ros.core.types import WorldPoint
    from rynnec_ros.ros.behaviours import AskAboutPoint

    oid, _, _, xyz, stamps, in_mask = _surface_point(scene, 0)
    ask = AskAboutPoint("ask about it", client, "What is <object0>?", point=WorldPoint(tuple(xyz), "odom"),
                        object_id=oid, label="target", frame_stamps_ns=stamps, max_new_tokens=2,
                        timeout_s=120.0)
    tree = _point_tree(client, ask)
    assert _tick(tree, lambda: ask.status != Status.RUNNING, 120.0), ask.feedback_message
    assert ask.status == Status.SUCCESS, ask.feedback_message
    assert ask.handle.status == GoalStatus.STATUS_SUCCEEDED
    answer = ask.answer
    assert answer is not None and answer.text.strip() and answer.object_ids == [oid]
    prompted = [_ns(s) for s in ask.handle.response.region_prompt_stamps]
    # clicked only where the model's mask holds the point (on frames the node has a pose and depth for)
    assert prompted and set(prompted) <= in_mask, (prompted, sorted(in_mask))
    (region,) = answer.prompted
    assert region.object_id == oid and region.label == "target" and region.point is not None
    assert region.masks and all(m.shape == (96, 128) and m.any() for m in region.masks.values())


def test_ask_about_a_pixel_click_and_a_point_no_frame_sees(client, scene) -> None:
    """A click on frame 0 (the scene model's pixel of the point) is SUCCESS with a mask on that frame; a
    point inside the object's box (its centre: on no surface) is FAILURE with the node's reason; no point
    at all is FAILURE without a request."""
    from py_trees.common import Status

    from rynnec_ros.core.types import WorldPoint
    from rynnec_ros.ros.behaviours import AskAboutPoint
    from rynnec_ros.scenes.scene import make_scene

    oid, col, row, _, stamps, _ = _surface_point(scene, 0)
    click = AskAboutPoint("ask about the click", client, "What is <object0>?", pixel=(col, row), frame=0,
                          object_id=oid, frame_stamps_ns=stamps, max_new_tokens=2, timeout_s=120.0)
    tree = _point_tree(client, click)
    assert _tick(tree, lambda: click.status != Status.RUNNING, 120.0), click.feedback_message
    assert click.status == Status.SUCCESS, click.feedback_message
    assert [_ns(s) for s in click.handle.response.region_prompt_stamps] == [stamps[0]]
    assert 0 in click.answer.prompted[0].masks

    centre = tuple(map(float, make_scene(3, 8, 128, 96).object(oid).center))
    inside = AskAboutPoint("ask about the inside", client, "What is <object0>?",
                           point=WorldPoint(centre, "odom"), frame_stamps_ns=stamps, timeout_s=60.0)
    tree = _point_tree(client, inside)
    assert _tick(tree, lambda: inside.status != Status.RUNNING, 60.0)
    assert inside.status == Status.FAILURE and inside.answer is None
    assert "is visible on none of the 8 frames" in inside.feedback_message, inside.feedback_message
    with pytest.raises(ValueError, match="not both"):
        AskAboutPoint("both", client, "What is <object0>?", point=WorldPoint(centre, "odom"), pixel=(1, 2))
    # inputs that give no point: FAILURE before anything is sent, with why
    nowhere = AskAboutPoint("ask about nothing", client, "What is <object0>?", inputs=dict)
    tree = _point_tree(client, nowhere)
    tree.tick()
    assert nowhere.status == Status.FAILURE and nowhere.handle is None
    assert nowhere.feedback_message.startswith("not sent: ValueError: give exactly one of point and pixel")


def test_halting_ask_about_point_cancels_its_goal(client, scene, node, watch) -> None:
    """Halted while the node generates the answer about the point (LONG tokens), the behaviour is INVALID
    and its ~/ask_stream goal ends CANCELED, as the node's action server reports it."""
    from action_msgs.msg import GoalStatus
    from py_trees.common import Status

    from rynnec_ros.core.types import WorldPoint
    from rynnec_ros.ros.behaviours import AskAboutPoint

    oid, _, _, xyz, stamps, _ = _surface_point(scene, 0)
    ask = AskAboutPoint("describe it", client, "Describe <object0> in detail.",
                        point=WorldPoint(tuple(xyz), "odom"), object_id=oid, frame_stamps_ns=stamps[:2],
                        max_new_tokens=LONG, timeout_s=120.0)
    tree = _point_tree(client, ask)
    assert _tick(tree, lambda: _generating(ask), 120.0), (ask.status, ask.feedback_message)
    tree.root.stop(Status.INVALID)
    assert ask.status == Status.INVALID and ask.feedback_message == "halted: request cancelled"
    assert watch.terminal(ask.handle.goal_id) == GoalStatus.STATUS_CANCELED, node.output()[-2000:]
    assert ask.handle.wait(30.0)
    reply = ask.handle.response
    assert reply is not None and not reply.success and "cancel" in reply.message, reply
    assert ask.handle.pieces < LONG // 2


def test_example_tree_asks_about_a_published_point(client, scene) -> None:
    """examples/ask_about_point.py: the tree waits for a PointStamped on its topic, asks about it and
    acts on the answer; ticked to SUCCESS with a point of the scene model published mid-run."""
    import py_trees
    from geometry_msgs.msg import PointStamped
    from py_trees.common import Status

    example = _example("ask_about_point")
    *_, xyz, _, _ = _surface_point(scene, 0)
    topic = "/viz_test/target_point"
    root = example.build_tree(client, "What is <object0>?", topic, timeout_s=120.0, max_new_tokens=2)
    tree = py_trees.trees.BehaviourTree(root)
    wait, ask, act = root.children
    tree.tick()
    assert wait.status == Status.RUNNING and ask.status == Status.INVALID  # no point yet
    pub = client.node.create_publisher(PointStamped, topic, 10)
    try:
        deadline = time.monotonic() + 20.0
        while time.monotonic() < deadline and pub.get_subscription_count() == 0:
            time.sleep(0.05)
        msg = PointStamped()
        msg.header.frame_id = "odom"
        msg.point.x, msg.point.y, msg.point.z = map(float, xyz)
        pub.publish(msg)
        assert _tick(tree, lambda: root.status != Status.RUNNING, 120.0), root.tip().feedback_message
    finally:
        client.node.destroy_publisher(pub)
    assert root.status == Status.SUCCESS, [(c.name, c.status, c.feedback_message) for c in root.children]
    assert act.acted_on is ask.answer and ask.answer.prompted and ask.answer.prompted[0].masks
    assert py_trees.blackboard.Blackboard.get(example.POINT_KEY).xyz == pytest.approx(tuple(xyz))
