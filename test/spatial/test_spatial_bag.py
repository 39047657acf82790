"""Synthetic scene -> rosbag2 -> Frames round trip, the QA file format and the spatial CLIs."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from rynnec_ros.cli import main
from rynnec_ros.core import masks as rle_codec
from rynnec_ros.core.transforms import TransformStore
from rynnec_ros.eval.spatial import LABELS, evaluate
from rynnec_ros.scenes.bagio import BAG_TF_HISTORY_S, add_tf_message, read_frames, world_pose
from rynnec_ros.scenes.dataset import QA_FORMAT
from rynnec_ros.scenes.synth import SceneOptions, generate_scene
from rynnec_ros.spatial.tasks import TASK_BY_NAME

OPTS = dict(seed=5, frames=8, width=160, height=120, per_task=2)


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("clean")
    summary = generate_scene(out, SceneOptions(**OPTS))
    (out / "summary.json").write_text(json.dumps(summary))
    return out


@pytest.fixture(scope="module")
def noisy(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("noisy")
    generate_scene(out, SceneOptions(**OPTS, depth_noise=0.01, holes=0.05))
    return out


def test_bag_round_trip(clean: Path) -> None:
    frames = read_frames(clean / "bag")
    scene = json.loads((clean / "scene.json").read_text())
    assert len(frames) == OPTS["frames"]
    for f, cam in zip(frames, scene["camera"], strict=True):
        assert f.stamp_ns == cam["stamp_ns"]
        assert f.rgb.shape == (120, 160, 3) and f.rgb.dtype == np.uint8
        assert f.depth is not None and f.depth.dtype == np.float32 and np.isfinite(f.depth).all()
        np.testing.assert_allclose(f.world_T_camera, cam["world_T_camera"], atol=1e-5)
        np.testing.assert_allclose(f.K, scene["K"])
        assert f.frame_id == "camera_color_optical_frame"


def test_noise_and_holes_reach_the_bag(noisy: Path) -> None:
    depth = read_frames(noisy / "bag")[0].depth
    assert depth is not None
    assert 0.03 < np.isnan(depth).mean() < 0.08


def test_question_file_format(clean: Path) -> None:
    data = json.loads((clean / "questions.json").read_text())
    assert data["format"] == QA_FORMAT and data["bag"] == "bag"
    tasks = {q["task"] for q in data["questions"]}
    assert len(tasks) >= 15
    for q in data["questions"]:
        spec = TASK_BY_NAME[q["task"]]
        assert q["frames"] == sorted(q["frames"])
        assert len(q["objects"]) in spec.n_objects
        for o in q["objects"]:
            for stamp, rle in o["masks"].items():
                assert int(stamp) in q["frames"]
                assert rle_codec.decode(rle).shape == (120, 160)
        if spec.kind == "quantity":
            assert q["value"] is not None and q["unit"] == spec.unit
        elif spec.kind == "choice":
            assert 0 <= q["answer_index"] < len(q["objects"])
        else:
            assert q["options"] in (["Yes", "No"], ["Left", "Right"]) and q["answer_index"] in (0, 1)


def _family_scores(result: dict) -> dict[str, float]:
    fam: dict[str, list[float]] = {"mra": [], "roa": [], "accuracy": []}
    for r in result["records"]:
        fam[TASK_BY_NAME[r["task"]].metric].append(r["score"])
    return {k: float(np.mean(v)) for k, v in fam.items() if v}


def test_labels_come_from_the_scene_model(clean: Path) -> None:
    """gen-scene's labels are spatial.truth's on the scene model; checked here from scene.json by hand
    (distance = |object centre − camera position at the window's last frame|), and the solvers' answers
    on the exact scene agreed with every label (0 left out)."""
    assert json.loads((clean / "summary.json").read_text())["label_disagreements"] == 0
    data = json.loads((clean / "questions.json").read_text())
    scene = json.loads((clean / "scene.json").read_text())
    centres = {o["object_id"]: np.array(o["center"]) for o in scene["objects"]}
    cams = {c["stamp_ns"]: np.array(c["world_T_camera"])[:3, 3] for c in scene["camera"]}
    dist = [q for q in data["questions"] if q["structured"] == "distance_to_camera"]
    assert dist
    for q in dist:
        want = np.linalg.norm(centres[q["objects"][0]["object_id"]] - cams[q["frames"][-1]])
        assert q["value"] == pytest.approx(want, abs=2e-4)  # scene.json rounds centres to 0.1 mm


def test_clean_scene_meets_targets(clean: Path) -> None:
    res = evaluate(clean / "bag", clean / "questions.json")
    assert res["labels"].startswith("accuracy")
    assert all(r["routed"] and r["slots_ok"] for r in res["records"])
    scores = _family_scores(res)
    assert scores["mra"] >= 0.9
    assert scores["roa"] >= 0.9
    assert scores["accuracy"] >= 0.95


def test_noisy_scene_meets_targets(noisy: Path) -> None:
    scores = _family_scores(evaluate(noisy / "bag", noisy / "questions.json", use_task=True))
    assert scores["mra"] >= 0.75


def test_eval_cli_writes_json(clean: Path, tmp_path: Path) -> None:
    out = tmp_path / "res.json"
    rc = main(
        [
            "eval",
            "spatial",
            "--bag",
            str(clean / "bag"),
            "--questions",
            str(clean / "questions.json"),
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    data = json.loads(out.read_text())
    # rows are tasks, heights split by reference point ("height_from_ground point=top")
    assert {row.split()[0] for row in data["per_task"]} <= set(TASK_BY_NAME)
    assert data["labels"] == {str(clean / "bag"): LABELS["scene_model"]}
    assert all(0.0 <= s["score"] <= 1.0 for s in data["per_task"].values())


def test_gen_spatial_qa_cli(clean: Path, tmp_path: Path) -> None:
    out = tmp_path / "qa.json"
    rc = main(
        [
            "gen-spatial-qa",
            "--bag",
            str(clean / "bag"),
            "--masks",
            str(clean / "masks.json"),
            "--out",
            str(out),
            "--per-task",
            "1",
        ]
    )
    assert rc == 0
    data = json.loads(out.read_text())
    assert data["source"] == "geometry" and len(data["questions"]) >= 10
    # labels the engine estimated itself: scoring the engine on them is consistency, and says so
    res = evaluate(clean / "bag", out)
    assert res["labels"].startswith("consistency only")
    walked = next(q for q in data["questions"] if q["task"] == "walked_distance")
    assert walked["value"] > 0 and "walked" in walked["answer"]


def test_cli_errors_are_messages(tmp_path: Path, capsys) -> None:
    rc = main(["eval-spatial", "--bag", str(tmp_path / "nope"), "--questions", str(tmp_path / "q.json")])
    assert rc == 2
    assert "error" in capsys.readouterr().err
    with pytest.raises(ValueError, match="at least 2 frames"):
        generate_scene(tmp_path / "x", SceneOptions(frames=1))


def _tf(stamp: int, parent: str, child: str, x: float, yaw: float) -> SimpleNamespace:
    q = [0.0, 0.0, np.sin(yaw / 2), np.cos(yaw / 2)]
    return SimpleNamespace(
        header=SimpleNamespace(frame_id=parent, stamp=SimpleNamespace(sec=stamp, nanosec=0)),
        child_frame_id=child,
        transform=SimpleNamespace(
            translation=SimpleNamespace(x=x, y=0.0, z=0.0),
            rotation=SimpleNamespace(x=q[0], y=q[1], z=q[2], w=q[3]),
        ),
    )


def test_tf_tree_interpolates_and_chains() -> None:
    tree = TransformStore(cache_s=BAG_TF_HISTORY_S)
    def add(*transforms: SimpleNamespace, static: bool = False) -> int:
        return add_tf_message(tree, SimpleNamespace(transforms=list(transforms)), static)

    add(_tf(1, "odom", "base_link", 0.0, 0.0))
    add(_tf(3, "odom", "base_link", 2.0, np.pi / 2))
    add(_tf(0, "base_link", "cam", 0.5, 0.0), static=True)
    T = world_pose(tree, "odom", "cam", 2_000_000_000)
    assert T is not None
    # halfway: base at x=1 turned 45°, camera 0.5 m ahead of it
    np.testing.assert_allclose(T[:3, 3], [1 + 0.5 * np.cos(np.pi / 4), 0.5 * np.sin(np.pi / 4), 0], atol=1e-9)
    assert world_pose(tree, "odom", "cam", 3_100_000_000) is not None  # within 100 ms of the last transform
    assert world_pose(tree, "odom", "cam", 9_000_000_000) is None  # far outside the recorded range
    assert world_pose(tree, "map", "cam", 2_000_000_000) is None  # no chain to that root
    # A non-unit quaternion is refused, as tf2's BufferCore refuses it, and the rest of the message kept.
    bad = _tf(2, "odom", "base_link", 9.0, 0.0)
    bad.transform.rotation.w = 2.0
    assert add(bad, _tf(0, "cam", "lens", 0.1, 0.0)) == 1
    np.testing.assert_allclose(world_pose(tree, "odom", "cam", 2_000_000_000)[:3, 3], T[:3, 3], atol=1e-9)
