"""Question understanding: every generation phrasing and the paper's own templates map to their task.

Expected tasks and turns are read off the sentences by hand (RynnEC appendix A.3 wording)."""

from __future__ import annotations

import pytest

from rynnec_ros.spatial.parse import object_references
from rynnec_ros.spatial.plan import parse_question
from rynnec_ros.spatial.tasks import TASKS, turn_phrase


def recognise_question(question: str, n_regions: int = 0) -> str | None:
    parsed, _ = parse_question(question, n_regions)
    return None if parsed is None else parsed.task


def parse_turn(question: str) -> float | None:
    """Counter-clockwise turn (left positive) the parser reads from a future-direction question."""
    parsed, _ = parse_question(question, 1)
    if parsed is None or parsed.slots.get("turn") is None:
        return None
    angle = float(parsed.slots["angle_deg"])  # type: ignore[arg-type]
    return angle if parsed.slots["turn"] == "left" else -angle


_CASES = [(spec.name, phrasing) for spec in TASKS for phrasing in spec.phrasings]


@pytest.mark.parametrize(("task", "phrasing"), _CASES)
def test_each_phrasing_routes_to_its_task(task: str, phrasing: str) -> None:
    assert sum(1 for t in TASKS if t.name == task) == 1
    n_refs = phrasing.count("{") - phrasing.count("{turn}")
    question = phrasing.format(A="<object0>", B="<object1>", C="<object2>", turn="90 degrees to the left")
    assert len(object_references(question)) == n_refs
    assert recognise_question(question) == task


def test_every_task_has_three_phrasings() -> None:
    assert all(len(t.phrasings) >= 3 for t in TASKS)


@pytest.mark.parametrize(
    ("question", "task"),
    [
        # verbatim RynnEC appendix A.3 templates with [A] -> <objectK>
        (
            "If you turn left by 90- degree, in which direction will <object0> be positioned?",
            "future_direction_clock",
        ),
        (
            "Upon making a 90- degree left turn, how will <object0> be oriented with respect to you?",
            "future_direction_clock",
        ),
        (
            "What degree of clockwise rotation is necessary for you to face <object0>’ s direction?",
            "rotate_to_face",
        ),
        (
            "Which of the three objects, <object0>, <object1>, or <object2>, is closest to you?",
            "closest_to_camera",
        ),
        (
            "By what amount does the elevation of <object0> differ from that of <object1>?",
            "height_difference",
        ),
        ("Does <object0> appear over <object1>?", "above_predicate"),
        ("How far did you walk?", "walked_distance"),
        # RynnEC-Bench / paper figure phrasings
        ("Which of the two objects, <object 1> or <object 2>, is closer to me?", "closer_to_camera"),
        (
            "What is the difference in height above the ground between <object1> and <object2>?",
            "height_difference",
        ),
        (
            "After you turn 90 degree to the left, where will <object1> be in relation to you?",
            "future_direction_clock",
        ),
        ("How far is [<REGION>] from me?", "distance_to_camera"),
        ("Can I grab <object0> without walking?", "reachability"),
    ],
)
def test_paper_phrasings(question: str, task: str) -> None:
    assert recognise_question(question) == task


@pytest.mark.parametrize(
    "question",
    [
        "What color is <object0>?",
        "Describe the scene.",
        "What is <object0> used for?",
        "Which one is red, <object0> or <object1>?",
    ],
)
def test_non_spatial_questions_are_not_routed(question: str) -> None:
    assert recognise_question(question) is None


def test_object_count_disambiguates() -> None:
    # "closer" with three objects is the 3-way task, with two the pairwise one
    assert recognise_question("Which is closer to you, <object0> or <object1>?") == "closer_to_camera"
    assert (
        recognise_question("Which is closer to you, <object0>, <object1> or <object2>?")
        == "closest_to_camera"
    )


@pytest.mark.parametrize(
    ("text", "turn"),
    [
        ("After you turn 90 degrees to the left, where is <object0>?", 90.0),
        ("If you turn left by 90- degree, where is <object0>?", 90.0),
        ("Upon making a 90- degree left turn, where is <object0>?", 90.0),
        ("If you turn right by 45 degrees, where is <object0>?", -45.0),
        ("After turning 30 degrees to your right, where is <object0>?", -30.0),
        ("If you turn left, where is <object0>?", 90.0),
        ("Where is <object0>?", None),
    ],
)
def test_parse_turn(text: str, turn: float | None) -> None:
    assert parse_turn(text) == turn


def test_turn_phrase_round_trips() -> None:
    for t in (90.0, -90.0, 45.0, -135.0):
        assert parse_turn(f"After you turn {turn_phrase(t)}, where is <object0>?") == t


def test_questions_without_references_count_the_regions() -> None:
    assert recognise_question("How far is it from me?") is None
    assert recognise_question("How far is it from me?", n_regions=1) == "distance_to_camera"
    assert recognise_question("Which one is closer to me?", n_regions=2) == "closer_to_camera"


def test_every_object_count_has_a_phrasing() -> None:
    for spec in TASKS:
        for n in spec.n_objects:
            assert any(sum(f"{{{k}}}" in p for k in "ABC") == n for p in spec.phrasings), (spec.name, n)
