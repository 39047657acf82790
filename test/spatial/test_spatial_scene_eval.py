"""Scene-model ground truth of the paraphrase evaluation, checked on hand-made boxes (values by hand)."""

from __future__ import annotations

import numpy as np
import pytest

from rynnec_ros.spatial.parse import parse_structured
from rynnec_ros.spatial.scene import Box, Camera, Room, Scene, SceneObject, make_T, pitch_matrix, yaw_matrix
from rynnec_ros.spatial.scene_eval import above, ground_truth, mra, roa

# A table top 0.7..0.74 m high over 1.2 × 0.6 m, a box resting on it, a second box on the floor 1 m away.
TABLE = SceneObject(1, "table", [Box(np.array([2.0, 0.0, 0.72]), np.array([1.2, 0.6, 0.04]))], (0, 0, 0))
ON_TABLE = SceneObject(2, "box", [Box(np.array([2.2, 0.1, 0.84]), np.array([0.2, 0.2, 0.2]))], (0, 0, 0))
FLOOR_BOX = SceneObject(3, "box", [Box(np.array([2.0, -1.5, 0.2]), np.array([0.4, 0.4, 0.4]))], (0, 0, 0))
NEXT_BOX = SceneObject(4, "box", [Box(np.array([2.5, -1.5, 0.21]), np.array([0.4, 0.4, 0.42]))], (0, 0, 0))


def _scene() -> Scene:
    scene = Scene(Room(), [TABLE, ON_TABLE, FLOOR_BOX, NEXT_BOX], Camera.from_fov(64, 48))
    scene.base_poses.append(make_T(yaw_matrix(0.0), np.zeros(3)))  # at the origin, facing +x
    scene.head_poses.append(make_T(pitch_matrix(0.3), np.array([0.0, 0.0, 1.2])))
    return scene


def test_above_needs_plan_overlap_and_vertical_separation() -> None:
    assert above(ON_TABLE, TABLE) and not above(TABLE, ON_TABLE)
    # side by side on the floor, tops 1 cm apart: neither is above the other
    assert not above(NEXT_BOX, FLOOR_BOX) and not above(FLOOR_BOX, NEXT_BOX)


@pytest.mark.parametrize(
    ("task", "objs", "want"),
    [
        ("height_from_ground point=top", [ON_TABLE], 0.94),
        ("height_from_ground", [ON_TABLE], 0.84),
        ("height_from_ground point=bottom", [ON_TABLE], 0.74),
        ("height_from_ground point=top unit=cm", [TABLE], 74.0),
        ("height_difference point=top", [ON_TABLE, FLOOR_BOX], 0.54),
        ("distance_to_camera", [TABLE], np.sqrt(2.0**2 + 0.48**2)),  # camera at (0, 0, 1.2)
    ],
)
def test_quantities(task: str, objs: list[SceneObject], want: float) -> None:
    gt = ground_truth(parse_structured(task), _scene(), objs, 0)
    assert gt is not None and gt["value"] == pytest.approx(want)


def test_words_and_choices() -> None:
    s = _scene()
    assert ground_truth(parse_structured("above_predicate"), s, [ON_TABLE, TABLE], 0) == {
        "kind": "word",
        "word": "yes",
    }
    assert ground_truth(parse_structured("above_choice"), s, [FLOOR_BOX, NEXT_BOX], 0)["index"] is None
    # FLOOR_BOX is at y = -1.5 while I face +x: on my right
    assert ground_truth(parse_structured("side_of_me"), s, [FLOOR_BOX], 0)["word"] == "right"
    assert ground_truth(parse_structured("side_of_me side=left"), s, [FLOOR_BOX], 0)["word"] == "no"
    arm = parse_structured("reachability arm_length_m=3")  # nearest corner (1.8, -1.3, 0.4): 2.36 m away
    assert ground_truth(arm, s, [FLOOR_BOX], 0)["word"] == "yes"
    assert ground_truth(parse_structured("reachability"), s, [FLOOR_BOX], 0)["word"] == "no"  # 0.8 m arm


def test_metrics() -> None:
    assert mra(1.0, 1.0) == 1.0 and mra(2.0, 1.0) == 0.0
    assert mra(1.07, 1.0) == pytest.approx(0.9)  # fails only θ = 0.95 (error 7 % ≥ 5 %)
    assert roa(359.0, 1.0, 360.0, 90.0) == pytest.approx(1 - 2 / 90)
    assert roa(11.0, 1.0, 12.0, 3.0) == pytest.approx(1 - 2 / 3)
