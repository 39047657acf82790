"""The node as `ros2 launch rynnec_ros rynnec.launch.py` starts it, driven by the real Jazzy `ros2` tools.

One launched node (own ROS domain) serves the module, in this order: what needs an empty buffer first,
then colour frames are fed with `ros2 run rynnec_ros rynnec_replay` (docs/ros.md: the same as
`rynnec-ros replay` on a robot) and the services and the action are called, and the lifecycle
transitions come last. Expected values come from docs/ros.md, srv/*.srv, action/Ask.action, the launch
file's ``--show-args`` and the generated bag itself (read with rosbags), as cited at each test.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import (
    Launch,
    Ros2,
    Scene,
    Workspace,
    parse_action_output,
    ros2_domain,
    stamp_ns,
    stamps_yaml,
    wait_until,
)

pytestmark = [pytest.mark.cli]

NODE = "/rynnec"  # docs/ros.md: node name `rynnec`, in the launch namespace (none here)


@dataclass
class Shared:
    ros: Ros2
    launch: Launch
    scene: Scene


@pytest.fixture(scope="module")
def node(workspace: Workspace, checkpoint: Path, scenes) -> Iterator[Shared]:
    """`ros2 launch rynnec_ros rynnec.launch.py checkpoint:=... color_topic:=<bag's colour topic>`.

    No depth, camera_info or world_frame: geometry cannot answer here (test_auto_fallback_states_reason).
    `qos_reliability:=reliable` as docs/ros.md advises for the rclpy bag player.
    """
    scene = scenes("sqlite3")
    with ros2_domain(workspace) as ros:
        launch = ros.launch("rynnec_ros", "rynnec.launch.py", f"checkpoint:={checkpoint}",
                            f"color_topic:={scene.color_topic()}", "qos_reliability:=reliable")
        ros.wait_active(NODE, launch)
        yield Shared(ros, launch, scene)


@pytest.fixture(scope="module")
def fed(node: Shared) -> Shared:
    """The bag's colour frames published into the node with `ros2 run rynnec_ros rynnec_replay`.

    `ingest_fps` is set to 0 first (docs/ros.md: "0 = every frame"), so the buffer must then hold every
    colour frame of the bag, whatever the publishing jitter.
    """
    ros, topic = node.ros, node.scene.color_topic()
    out = ros.run("param", "set", NODE, "ingest_fps", "0.0").stdout
    assert out.startswith("Set parameter successful"), out
    ros.run("run", "rynnec_ros", "rynnec_replay", str(node.scene.bag), "--topics", topic, "--wait-for", topic,
            timeout=180)
    expected = len(node.scene.color_stamps())
    wait_until(lambda: len(ros.service_call(f"{NODE}/list_frames", "rynnec_ros/srv/ListFrames")["stamps"])
               >= expected, 60, f"{expected} frames buffered")
    return node


def _buffered(shared: Shared) -> list[int]:
    reply = shared.ros.service_call(f"{NODE}/list_frames", "rynnec_ros/srv/ListFrames")
    return [stamp_ns(t) for t in reply["stamps"]]


# --- no node needed ------------------------------------------------------------------------------------


def test_show_args_backend_lists_remote(workspace: Workspace) -> None:
    """`--show-args` documents every backend docs/ros.md names: torch, onnxruntime, tensorrt and remote."""
    with ros2_domain(workspace) as ros:
        out = ros.run("launch", "rynnec_ros", "rynnec.launch.py", "--show-args").stdout
    blocks = dict(re.findall(r"^\s*'(\w+)':\n((?:\s{8}.*\n?)+)", out, re.M))
    assert "backend" in blocks, out
    for backend in ("torch", "onnxruntime", "tensorrt", "remote"):
        assert backend in blocks["backend"], f"backend's help lacks {backend!r}:\n{blocks['backend']}"
    # README.md / docs/ros.md name these launch arguments.
    for name in ("namespace", "params_file", "checkpoint", "device", "color_topic", "world_frame",
                 "qos_reliability", "autostart"):
        assert name in blocks, f"rynnec.launch.py --show-args lacks {name!r}:\n{out}"


def test_rynnec_ros_command_installed(workspace: Workspace) -> None:
    """After the robot install, the `rynnec-ros` command of docs/ros.md and models/README.md exists.

    docs/ros.md's command table (`rynnec-ros make-segmenting-checkpoint DIR`, `rynnec-ros replay BAG`)
    and models/README.md (`rynnec-ros make-tiny-checkpoint`) use it as a plain command. The Jazzy venv
    here also holds a `rynnec-ros` from the development `pip install -e .`, which a robot's venv (only
    requirements-robot.txt) does not: so the command must resolve inside the workspace's install/ once
    that venv's bin is left out of PATH, and run from the sourced workspace.
    """
    env = workspace.env
    venv_bin = str(Path(env["VIRTUAL_ENV"]) / "bin")
    robot_path = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != venv_bin)
    found = shutil.which("rynnec-ros", path=robot_path)
    assert found is not None, (
        f"no `rynnec-ros` on PATH of the sourced workspace (without the dev venv's {venv_bin}): "
        f"PATH={robot_path}")
    assert Path(found).resolve().is_relative_to(workspace.root / "install"), found
    with ros2_domain(workspace) as ros:
        out = ros.run("--help", exe=found, timeout=120).stdout
    for command in ("make-segmenting-checkpoint", "make-tiny-checkpoint", "gen-scene", "replay", "node"):
        assert command in out, f"`rynnec-ros --help` lacks {command}:\n{out}"


# --- the launched node, buffer still empty -------------------------------------------------------------


def test_failed_ask_has_option_index_minus_one(node: Shared) -> None:
    """A request the node cannot answer (nothing buffered yet) fails with a reason and option_index -1.

    srv/AskQuestion.srv: `success` false "with the reason in `message`"; `option_index` is "-1 when no
    options were given or none matched" — a failed answer matched none. docs/ros.md: empty buffer →
    `success: false` and a `message` saying what was wrong.
    """
    reply = node.ros.service_call(f"{NODE}/ask", "rynnec_ros/srv/AskQuestion",
                                  "{question: 'Which is it?', options: ['a sofa', 'a lamp']}")
    assert reply["success"] is False, reply
    assert reply["message"], reply
    assert reply["option_index"] == -1, reply


def test_param_set_integer_reads_back_double(node: Shared) -> None:
    """`ros2 param set /rynnec ingest_fps 3` stores a double (docs/ros.md: float parameters accept
    integers, stored as floats), so `ros2 param get` prints ros2param's "Double value is: 3.0"."""
    out = node.ros.run("param", "set", NODE, "ingest_fps", "3").stdout
    assert out.startswith("Set parameter successful"), out
    assert node.ros.param_get(NODE, "ingest_fps") == "Double value is: 3.0"


def test_param_out_of_range_is_refused_with_the_reason(node: Shared) -> None:
    """`ros2 param set /rynnec overlay_jpeg_quality 0`: docs/ros.md gives the range 1-100, so the node
    refuses it; ros2param's set verb (ros2param/verb/set.py) then prints "Setting parameter failed: "
    and the node's reason on stderr, and the value stays the default 95 (docs/ros.md)."""
    proc = node.ros.run("param", "set", NODE, "overlay_jpeg_quality", "0")
    assert proc.stderr.strip().startswith("Setting parameter failed: "), (proc.stdout, proc.stderr)
    assert "overlay_jpeg_quality" in proc.stderr and "100" in proc.stderr, proc.stderr
    assert node.ros.param_get(NODE, "overlay_jpeg_quality") == "Integer value is: 95"


@pytest.mark.parametrize(("topic", "msg_type"), [
    ("overlay/compressed", "sensor_msgs/msg/CompressedImage"),
    ("annotations", "foxglove_msgs/msg/ImageAnnotations"),
    ("markers", "visualization_msgs/msg/MarkerArray"),
    ("detections_3d", "vision_msgs/msg/Detection3DArray"),
    ("detections_2d", "vision_msgs/msg/Detection2DArray"),
])
def test_viewer_and_planner_topics_are_offered(node: Shared, topic: str, msg_type: str) -> None:
    """`ros2 topic info /rynnec/<topic>` on the active node: the type docs/ros.md names and the node as
    its one publisher (ros2topic/verb/info.py prints "Type: ..." then "Publisher count: N")."""
    out = node.ros.run("topic", "info", f"{NODE}/{topic}").stdout
    assert f"Type: {msg_type}" in out and "Publisher count: 1" in out, out


# --- with the bag's colour frames buffered ------------------------------------------------------------


def test_list_frames(fed: Shared) -> None:
    """`~/list_frames` (srv/ListFrames.srv): active, every colour frame of the bag (ingest_fps 0),
    oldest first, `has_depth` per frame (false: no depth topic), no resets (one pass of the bag)."""
    reply = fed.ros.service_call(f"{NODE}/list_frames", "rynnec_ros/srv/ListFrames")
    assert reply["active"] is True
    assert [stamp_ns(t) for t in reply["stamps"]] == fed.scene.color_stamps()
    assert reply["has_depth"] == [False] * len(reply["stamps"])
    assert reply["resets"] == 0


def test_ask_samples_the_window(fed: Shared) -> None:
    """`~/ask` with options, no stamps: answered by the model over the window sampled at 1 fps.

    docs/ros.md: the window is sampled at `sample_fps` (1) and at most 30 frames. The bag's 16 frames are
    0.5 s apart over 7.5 s, so 1 fps keeps ⌊7.5⌋ + 1 = 8 of them, each ≥ 1 s after the one before.
    `option_index` is an index into the two options or -1 (srv); the random model's choice is noise.
    """
    buffered = _buffered(fed)
    reply = fed.ros.service_call(f"{NODE}/ask", "rynnec_ros/srv/AskQuestion",
                                 "{question: 'What is in the room?', options: ['a sofa', 'a car']}")
    assert reply["success"] is True, reply
    assert reply["message"] == ""
    assert reply["source"] == "model"
    assert reply["option_index"] in (-1, 0, 1)
    used = [stamp_ns(t) for t in reply["frame_stamps"]]
    assert set(used) <= set(buffered) and used == sorted(used), used
    assert len(used) == 8, used
    assert all(b - a >= 999_000_000 for a, b in itertools.pairwise(used)), used
    assert "total" in [t["stage"] for t in reply["timings"]], reply["timings"]


def test_ask_exact_frame_stamps(fed: Shared) -> None:
    """`frame_stamps` given: exactly those frames are used (srv: "Exact frames to use")."""
    chosen = _buffered(fed)[-2:]
    reply = fed.ros.service_call(f"{NODE}/ask", "rynnec_ros/srv/AskQuestion",
                                 f"{{question: 'What is this?', frame_stamps: {stamps_yaml(chosen)}}}")
    assert reply["success"] is True, reply
    assert [stamp_ns(t) for t in reply["frame_stamps"]] == chosen


def test_ask_about_a_clicked_pixel(fed: Shared) -> None:
    """A region given by a click, as docs/ros.md types it: `prompt: {points: [{x, y}], labels: [1]}`, stamp
    zero = the newest buffered frame (msg/RegionPrompt.msg). srv/AskQuestion.srv: `region_masks` holds
    one ObjectMask per frame SAM 2 found the object on (the clicked frame, and the others the answer
    used when the object is followed through the window), each stamped with one of the answer's
    frames, the region's object_id and label, RLE of that frame's size (the bag's Image height/width);
    `region_prompt_stamps` names the clicked frame alone."""
    from pycocotools import mask as mask_util

    newest = _buffered(fed)[-1]
    request = ("{question: 'What is <object0>?', regions: [{object_id: 5, label: 'thing', "
               "prompt: {points: [{x: 40.0, y: 30.0}], labels: [1]}}]}")
    reply = fed.ros.service_call(f"{NODE}/ask", "rynnec_ros/srv/AskQuestion", request)
    assert reply["success"] is True, reply
    used = [stamp_ns(t) for t in reply["frame_stamps"]]
    assert newest in used
    assert [stamp_ns(t) for t in reply["region_prompt_stamps"]] == [newest], reply["region_prompt_stamps"]
    masks = reply["region_masks"]
    on = [stamp_ns(m["header"]["stamp"]) for m in masks]
    assert newest in on and set(on) <= set(used) and len(on) == len(set(on)), on
    frames = {s: (h, w) for t, s, h, w, _ in fed.scene.images() if t == fed.scene.color_topic()}
    for m in masks:
        h, w = frames[stamp_ns(m["header"]["stamp"])]
        assert (m["object_id"], m["label"], list(m["size"])) == (5, "thing", [h, w])
    clicked = masks[on.index(newest)]
    h, w = frames[newest]
    assert mask_util.decode({"size": [h, w], "counts": clicked["counts"].encode()}).any()
    bad = fed.ros.service_call(f"{NODE}/ask", "rynnec_ros/srv/AskQuestion", request.replace("[1]", "[2]"))
    assert bad["success"] is False and "labels must be 1 (on the object) or 0" in bad["message"], bad
    # docs/ros.md's 3D point request, as typed there; this node has no world_frame, so it says so
    point = ("{question: 'What is <object0>?', regions: [{object_id: 1, prompt: {point: {header: "
             "{frame_id: map}, point: {x: 1.2, y: 0.4, z: 0.8}}}}]}")
    refused = fed.ros.service_call(f"{NODE}/ask", "rynnec_ros/srv/AskQuestion", point)
    assert refused["success"] is False and "need the world_frame parameter" in refused["message"], refused


def test_segment(fed: Shared) -> None:
    """`~/segment` on three frames: one ObjectMask per frame used, tied to the source frame's header.

    srv/Segment.srv + docs/ros.md: masks carry `header` = the source frame's header (stamp and frame_id
    as in the bag), the request's `object_id`, COCO RLE `size` [h, w] of the frame (from the bag's
    Image height/width) whose `counts` decode (pycocotools) to that size.
    """
    from pycocotools import mask as mask_util

    chosen = _buffered(fed)[-3:]
    reply = fed.ros.service_call(
        f"{NODE}/segment", "rynnec_ros/srv/Segment",
        f"{{expression: 'the sofa', object_id: 7, frame_stamps: {stamps_yaml(chosen)}}}")
    assert reply["success"] is True, reply
    assert [stamp_ns(t) for t in reply["frame_stamps"]] == chosen
    frames = {s: (h, w, fid) for t, s, h, w, fid in fed.scene.images() if t == fed.scene.color_topic()}
    assert len(reply["masks"]) == len(chosen), reply["masks"]
    for m in reply["masks"]:
        h, w, frame_id = frames[stamp_ns(m["header"]["stamp"])]
        assert stamp_ns(m["header"]["stamp"]) in chosen
        assert m["header"]["frame_id"] == frame_id
        assert m["object_id"] == 7
        assert list(m["size"]) == [h, w]
        decoded = mask_util.decode({"size": [h, w], "counts": m["counts"].encode()})
        assert decoded.shape == (h, w)


def test_segment_over_every_buffered_frame_with_track_window(fed: Shared) -> None:
    """docs/ros.md, as typed: `ros2 param set /rynnec track_window true`, then `~/segment` read on the
    first and last of the newest five buffered frames returns masks only on buffered frames between
    them (the bag's stamps), more than the two frames it read when SAM 2 follows the object onto the
    others; `frame_stamps` stays the two frames read."""
    ros = fed.ros
    span = _buffered(fed)[-5:]
    out = ros.run("param", "set", NODE, "track_window", "true").stdout
    assert out.startswith("Set parameter successful"), out
    try:
        assert ros.param_get(NODE, "track_window") == "Boolean value is: True"
        reply = ros.service_call(
            f"{NODE}/segment", "rynnec_ros/srv/Segment",
            f"{{expression: 'the sofa', object_id: 8, frame_stamps: {stamps_yaml([span[0], span[-1]])}}}")
    finally:
        ros.run("param", "set", NODE, "track_window", "false")
    assert reply["success"] is True, reply
    assert [stamp_ns(t) for t in reply["frame_stamps"]] == [span[0], span[-1]]
    on = [stamp_ns(m["header"]["stamp"]) for m in reply["masks"]]
    assert set(on) <= set(span) and len(on) == len(set(on)) and len(on) > 2, (on, span)
    assert all(m["object_id"] == 8 for m in reply["masks"])


def test_segment_stream_action(fed: Shared) -> None:
    """`ros2 action send_goal --feedback /rynnec/segment_stream rynnec_ros/action/Segment ...` on the
    frames `~/segment` is asked about: action/Segment.action's result fields "mean exactly what they mean
    in srv/Segment", so the masks (stamps, object_id, RLE counts) equal the service's on those frames
    (greedy decoding), the status is SUCCEEDED, and feedback pieces count up from 1 as in Ask.action."""
    chosen = _buffered(fed)[-3:]
    request = f"{{expression: 'the sofa', object_id: 7, frame_stamps: {stamps_yaml(chosen)}}}"
    served = fed.ros.service_call(f"{NODE}/segment", "rynnec_ros/srv/Segment", request)
    assert served["success"] is True, served
    out = fed.ros.run("action", "send_goal", "--feedback", f"{NODE}/segment_stream",
                      "rynnec_ros/action/Segment", request, timeout=180).stdout
    feedback, result, status = parse_action_output(out)
    assert status == "SUCCEEDED", out
    assert result["success"] is True, result
    assert [stamp_ns(t) for t in result["frame_stamps"]] == chosen
    assert [(stamp_ns(m["header"]["stamp"]), m["object_id"], m["counts"]) for m in result["masks"]] == \
        [(stamp_ns(m["header"]["stamp"]), m["object_id"], m["counts"]) for m in served["masks"]]
    assert [f["pieces"] for f in feedback] == list(range(1, len(feedback) + 1))


def test_action_streams_feedback(fed: Shared) -> None:
    """`ros2 action send_goal --feedback /rynnec/ask_stream rynnec_ros/action/Ask ...`.

    action/Ask.action: feedback per generated piece with `text` (all so far), `delta` (new piece) and
    `pieces` (feedback messages sent so far); the result carries AskQuestion's response fields.
    """
    out = fed.ros.run("action", "send_goal", "--feedback", f"{NODE}/ask_stream", "rynnec_ros/action/Ask",
                      "{question: 'Describe the room.', max_new_tokens: 16}", timeout=180).stdout
    feedback, result, status = parse_action_output(out)
    assert status == "SUCCEEDED", out
    assert feedback, f"no Feedback printed:\n{out}"
    assert [f["pieces"] for f in feedback] == list(range(1, len(feedback) + 1))
    assert feedback[-1]["text"] == "".join(f["delta"] for f in feedback)
    assert result["success"] is True, result
    assert result["source"] == "model"
    assert result["option_index"] == -1  # no options given (Ask.action / AskQuestion.srv)
    assert len(result["frame_stamps"]) >= 1


def test_auto_fallback_states_reason(fed: Shared) -> None:
    """`spatial_source: auto` with no depth, intrinsics or TF: a spatial question goes to the model and
    the answer says why in `reason` (issue 20: the fallback must state its reason; docs/ros.md: auto
    answers from geometry when depth, intrinsics and poses cover the objects, else from the model)."""
    assert fed.ros.param_get(NODE, "spatial_source") == "String value is: auto"
    reply = fed.ros.service_call(f"{NODE}/ask", "rynnec_ros/srv/AskQuestion",
                                 "{question: 'How far have I walked?', task: 'walked_distance'}")
    assert reply["success"] is True, reply
    assert reply["source"] == "model", reply
    assert reply["reason"], f"fell back to the model without a reason: {reply}"


def test_geometry_source_fails_with_reason(fed: Shared) -> None:
    """`ros2 param set /rynnec spatial_source geometry` (docs/ros.md's example): without poses the same
    question fails "with the reason" instead of going to the model."""
    ros = fed.ros
    out = ros.run("param", "set", NODE, "spatial_source", "geometry").stdout
    assert out.startswith("Set parameter successful"), out
    try:
        reply = ros.service_call(f"{NODE}/ask", "rynnec_ros/srv/AskQuestion",
                                 "{question: 'How far have I walked?', task: 'walked_distance'}")
    finally:
        ros.run("param", "set", NODE, "spatial_source", "auto")
    assert reply["source"] != "model", reply
    assert reply["success"] is False or reply["has_value"] is False, reply
    assert reply["message"] or reply["reason"], reply


def test_partly_read_question_goes_to_the_model_saying_what_it_left_unread(fed: Shared) -> None:
    """Issue 24 / docs/ros.md: "How far have I walked since I turned left?" is no walked distance (that is
    measured from the window's start): the turn is a cue the walked-distance reading does not use, so under
    auto the model answers, `reason` names the unread words and `reading` stays empty (srv/AskQuestion.srv:
    "Empty when the model answered")."""
    reply = fed.ros.service_call(f"{NODE}/ask", "rynnec_ros/srv/AskQuestion",
                                 "{question: 'How far have I walked since I turned left?'}")
    assert reply["success"] is True and reply["source"] == "model", reply
    assert reply["reason"].startswith("answered by the model: not fully understood"), reply
    # the unread words are quoted after "does not use" and hold the turn ('turned' or 'i turned': how much
    # of the clause the parser quotes is its own choice)
    unread = reply["reason"].partition("does not use '")[2]
    assert "turned'" in unread and reply["reading"] == "", reply


# --- lifecycle last: it changes the node's state ------------------------------------------------------


def _stays(ros: Ros2, state: str, seconds: float) -> None:
    """`ros2 lifecycle get` keeps answering ``state`` for ``seconds`` (the launch must not move it)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        now = ros.lifecycle_state(NODE)
        assert now == state, f"{NODE} went from {state} to {now!r} by itself"
        time.sleep(1)


def test_lifecycle_transitions_stick(node: Shared) -> None:
    """Issue 20 item 1: `ros2 lifecycle set /rynnec deactivate` leaves the node inactive — the launch's
    autostart must not activate it again — and so do cleanup + configure; activate makes it active.

    docs/ros.md: the services exist in every state; `~/list_frames` answers `active` (ListFrames.srv:
    "True when the node is active").
    """
    ros = node.ros

    def transition(name: str) -> None:
        out = ros.run("lifecycle", "set", NODE, name, timeout=120).stdout
        assert "Transitioning successful" in out, out

    transition("deactivate")
    assert ros.lifecycle_state(NODE) == "inactive"
    _stays(ros, "inactive", 5)
    assert ros.service_call(f"{NODE}/list_frames", "rynnec_ros/srv/ListFrames")["active"] is False
    transition("cleanup")
    assert ros.lifecycle_state(NODE) == "unconfigured"
    transition("configure")
    assert ros.lifecycle_state(NODE) == "inactive"
    _stays(ros, "inactive", 5)
    transition("activate")
    assert ros.lifecycle_state(NODE) == "active"
    assert ros.service_call(f"{NODE}/list_frames", "rynnec_ros/srv/ListFrames")["active"] is True
