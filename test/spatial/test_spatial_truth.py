"""Scene-model ground truth (``spatial.truth``), checked on hand-made boxes (values by hand), and the one
spatial scorer (``eval.spatial.score``) on hand-made labels."""

from __future__ import annotations

import numpy as np
import pytest

from rynnec_ros.core.types import Answer
from rynnec_ros.eval.spatial import label_of_question, score
from rynnec_ros.scenes.scene import Box, Camera, Room, Scene, SceneObject, make_T, pitch_matrix, yaw_matrix
from rynnec_ros.scenes.truth import above, ground_truth
from rynnec_ros.spatial.plan import parse_structured

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


def test_walked_distance_counts_only_the_window() -> None:
    """Base at x = 0, 1, 3, 6 m: the whole path is 6 m, the window of frames 1..3 walks 5 m."""
    s = _scene()
    s.base_poses[:] = [make_T(yaw_matrix(0.0), np.array([x, 0.0, 0.0])) for x in (0.0, 1.0, 3.0, 6.0)]
    s.head_poses[:] = s.head_poses[:1] * 4
    p = parse_structured("walked_distance")
    assert ground_truth(p, s, [], 3)["value"] == pytest.approx(6.0)
    assert ground_truth(p, s, [], 3, first=1)["value"] == pytest.approx(5.0)


def test_default_arm_length_is_a_parameter() -> None:
    """FLOOR_BOX's nearest corner is √(1.8² + 1.3² + 0.8²) = 2.36 m from the camera: a 2.6 m arm reaches
    it, a 2.0 m arm does not, and 2.3 m is within the 0.15 m close-call margin (no label)."""
    p = parse_structured("reachability")
    assert ground_truth(p, _scene(), [FLOOR_BOX], 0, arm_length_m=2.6)["word"] == "yes"
    assert ground_truth(p, _scene(), [FLOOR_BOX], 0, arm_length_m=2.0)["word"] == "no"
    assert ground_truth(p, _scene(), [FLOOR_BOX], 0, arm_length_m=2.3) is None


def test_score_metrics_by_hand() -> None:
    """RynnEC-Bench metrics through the one scorer: MRA over θ = 0.50..0.95, RoA with 90° (3 h) reference."""
    mra = {"kind": "mra", "value": 1.0}
    assert score(mra, Answer(text="", value=1.0, unit="m"), []) == 1.0
    assert score(mra, Answer(text="", value=2.0, unit="m"), []) == 0.0
    assert score(mra, Answer(text="", value=1.07, unit="m"), []) == pytest.approx(0.9)  # fails θ = 0.95 only
    assert score(
        {"kind": "deg", "value": 1.0}, Answer(text="", value=359.0, unit="deg"), []
    ) == pytest.approx(1 - 2 / 90)
    assert score(
        {"kind": "clock", "value": 1.0}, Answer(text="", value=11.0, unit="oclock"), []
    ) == pytest.approx(1 - 2 / 3)
    # a label naming its unit: an answer in another unit scores 0 (100 cm is not 1 "m")
    assert (
        score({"kind": "mra", "value": 1.0, "unit": "m"}, Answer(text="", value=100.0, unit="cm"), []) == 0.0
    )
    assert score({"kind": "index", "index": 1}, Answer(text="", object_ids=[7]), [5, 7]) == 1.0
    assert score({"kind": "index", "index": None}, Answer(text="Neither: ..."), [5, 7]) == 1.0
    assert score({"kind": "word", "word": "no"}, Answer(text="No. <object0> is ..."), []) == 1.0


def test_question_file_labels() -> None:
    """A question file entry read into the scorer's label form (format in docs/spatial.md)."""
    q = {"task": "closer_to_camera", "objects": [{"object_id": 3}, {"object_id": 9}], "answer_index": 1}
    assert label_of_question(q) == ({"kind": "index", "index": 1}, [3, 9])
    q = {"task": "above_predicate", "objects": [], "options": ["Yes", "No"], "answer_index": 1}
    assert label_of_question(q)[0] == {"kind": "word", "word": "no"}
    q = {"task": "direction_clock", "objects": [], "value": 2.0, "unit": "oclock"}
    assert label_of_question(q)[0] == {"kind": "clock", "value": 2.0, "unit": "oclock"}
