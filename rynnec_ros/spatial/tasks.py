"""The spatial task registry: one entry per task, everything the package knows of it in one place.

An entry names its slots and their defaults (the structured ``task`` grammar), the cues that read it
from free text (``parse.cue_*``, each with its rank in the one decision list) and the question words its
reading uses (``uses``, for the whole-question check), its solver (``solvers.solve_*``), how it is
scored and asked (kind, metric, objects, unit, generation phrasings after the RynnEC templates, seed
paper appendix A.3, with ``{A}``, ``{B}``, ``{C}`` for object references and ``{turn}`` for a turn such as
``90 degrees to the left``). Its ground truth lives in the tooling (``scenes/truth.py``, ``LABELS``, keyed by
the same name: the runtime may not import the scene model) and its row in docs/spatial.md; tests check
that every registered task has both. Adding a task is one entry here plus its cue and solver functions:
docs/spatial.md, "Adding a task".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from rynnec_ros.core.types import Answer
from rynnec_ros.spatial import parse, solvers


class Cue(NamedTuple):
    """A rule that reads a task from a question: asked in ``rank`` order (lowest first) among the cues
    for the same number of ``objects`` (0, 1, or 2 for two or more); the first that reads the question
    decides it."""

    rank: int
    objects: int
    read: Callable[[parse.Question], parse.Slots | None]


@dataclass(frozen=True)
class SpatialTask:
    """One spatial task. ``kind``: quantity | choice (pick an object) | yesno; ``metric``: mra | roa |
    accuracy; ``n_objects``: the numbers of objects it is asked about; ``unit``: of its value (None: no
    value); ``slots``: its structured slots with defaults (None: no default), in the order ``reading``
    lists them; ``values``: a slot's allowed values where they differ from ``parse.SLOT_VALUES``; ``uses``:
    the question cues its reading accounts for (``parse.USES``)."""

    name: str
    kind: str
    metric: str
    n_objects: tuple[int, ...]
    unit: str | None
    slots: Mapping[str, str | float | None]
    uses: frozenset[str]
    cues: tuple[Cue, ...]
    solve: Callable[[solvers.Given], Answer]
    phrasings: tuple[str, ...]
    values: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def names_objects(self) -> bool:
        """Whether the task is about objects (and so accepts ``objects=``)."""
        return self.n_objects != (0,)


TASKS: tuple[SpatialTask, ...] = (
    SpatialTask(
        "walked_distance",
        kind="quantity", metric="mra", n_objects=(0,), unit="m",
        slots={"unit": "m"},
        uses=frozenset({"walk", "horizontal", "size", "viewer"}),
        cues=(Cue(10, 0, parse.cue_walked_distance),),
        solve=solvers.solve_walked_distance,
        phrasings=(
            "How far have you walked in total?",
            "What is the total distance you have covered walking?",
            "What is the overall distance you have walked?",
            "How far did you walk?",
        ),
    ),
    SpatialTask(
        "rotate_to_face",
        kind="quantity", metric="roa", n_objects=(1,), unit="deg",
        slots={"direction": "cw"},
        uses=frozenset({"horizontal", "viewer", "turn", "direction"}),
        cues=(Cue(110, 1, parse.cue_rotate_to_face),),
        solve=solvers.solve_rotate_to_face,
        phrasings=(
            "How many degrees clockwise do you need to turn to face the direction of {A}?",
            "To face towards {A}, how many degrees should you rotate in a clockwise direction?",
            "What degree of clockwise rotation is necessary for you to face {A}'s direction?",
        ),
    ),
    SpatialTask(
        "future_direction_degrees",
        kind="quantity", metric="roa", n_objects=(1,), unit="deg",
        slots={"turn": None, "angle_deg": None},
        uses=frozenset({"horizontal", "viewer", "turn", "direction"}),
        cues=(Cue(120, 1, parse.cue_future_direction_degrees),),
        solve=solvers.solve_future_direction_degrees,
        phrasings=(
            "After you turn {turn}, how many degrees clockwise from your facing direction will {A} be?",
            "If you turn {turn}, at what clockwise angle will {A} be relative to you?",
            "Upon turning {turn}, what is the clockwise angle from your heading to {A}?",
        ),
    ),
    SpatialTask(
        "future_direction_clock",
        kind="quantity", metric="roa", n_objects=(1,), unit="oclock",
        slots={"turn": None, "angle_deg": None},
        uses=frozenset({"horizontal", "viewer", "turn", "direction"}),
        cues=(Cue(121, 1, parse.cue_future_direction_clock),),
        solve=solvers.solve_future_direction_clock,
        phrasings=(
            "After you turn {turn}, where will {A} be in relation to you?",
            "If you turn {turn}, in which direction will {A} be positioned?",
            "Upon making a turn of {turn}, how will {A} be oriented with respect to you?",
        ),
    ),
    SpatialTask(
        "direction_degrees",
        kind="quantity", metric="roa", n_objects=(1,), unit="deg",
        slots={},
        uses=frozenset({"horizontal", "viewer", "direction"}),
        cues=(Cue(140, 1, parse.cue_direction_degrees),),
        solve=solvers.solve_direction_degrees,
        phrasings=(
            "At what clockwise angle from your facing direction is {A}?",
            "How many degrees clockwise from where you are facing is {A}?",
            "What is the clockwise bearing of {A} relative to your heading, in degrees?",
        ),
    ),
    SpatialTask(
        "direction_clock",
        kind="quantity", metric="roa", n_objects=(1,), unit="oclock",
        slots={},
        uses=frozenset({"horizontal", "viewer", "direction"}),
        cues=(Cue(130, 1, parse.cue_direction_clock),),
        solve=solvers.solve_direction_clock,
        phrasings=(
            "At what o'clock direction is {A} relative to you?",
            "In which clock direction is {A} located from your viewpoint?",
            "Where is {A} relative to you, as a clock position?",
        ),
    ),
    SpatialTask(
        "reachability",
        kind="yesno", metric="accuracy", n_objects=(1,), unit="m",
        slots={"arm_length_m": None},
        uses=frozenset({"size", "viewer", "threshold", "comparison"}),
        cues=(Cue(190, 1, parse.cue_reachability),),
        solve=solvers.solve_reachability,
        phrasings=(
            "Can you reach {A} without walking?",
            "Is {A} within your arm's reach from where you are?",
            "Could you pick up {A} without moving your feet?",
        ),
    ),
    SpatialTask(
        "closest_to_camera",
        kind="choice", metric="accuracy", n_objects=(3,), unit=None,
        slots={"order": "near"},
        values={"order": ("near", "far")},
        uses=frozenset({"viewer", "comparison", "choice"}),
        cues=(Cue(480, 2, parse.cue_closest),),
        solve=solvers.solve_closer_to_camera,
        phrasings=(
            "Which is closest to you, {A} or {B} or {C}?",
            "Among {A}, {B}, and {C}, which one is nearer to you?",
            "Which of {A}, {B}, or {C} is closest to you?",
            "Which of the three objects, {A}, {B}, or {C}, is closest to you?",
        ),
    ),
    SpatialTask(
        "closer_to_camera",
        kind="choice", metric="accuracy", n_objects=(2,), unit=None,
        slots={"order": "near", "form": "choice"},
        values={"order": ("near", "far")},
        uses=frozenset({"viewer", "comparison"}),
        cues=(Cue(490, 2, parse.cue_closer),),
        solve=solvers.solve_closer_to_camera,
        phrasings=(
            "Which is closer to you, {A} or {B}?",
            "Between {A} and {B}, which one is nearer to you?",
            "Which one is closer to you, {A} or {B}?",
        ),
    ),
    SpatialTask(
        "center_distance",
        kind="quantity", metric="mra", n_objects=(2,), unit="m",
        slots={"unit": "m"},
        uses=frozenset({"comparison"}),
        cues=(Cue(500, 2, parse.cue_apart),),
        solve=solvers.solve_center_distance,
        phrasings=(
            "What is the distance between the centers of {A} and {B}?",
            "How far apart are the centers of {A} and {B}?",
            "What is the separation between the central points of {A} and {B}?",
        ),
    ),
    SpatialTask(
        "distance_to_camera",
        kind="quantity", metric="mra", n_objects=(1,), unit="m",
        slots={"unit": "m"},
        uses=frozenset({"viewer"}),
        cues=(Cue(240, 1, parse.cue_distance_to_camera),),
        solve=solvers.solve_distance_to_camera,
        phrasings=(
            "How far is {A} from you?",
            "What is the distance between you and {A}?",
            "How many meters away from you is {A}?",
        ),
    ),
    SpatialTask(
        "height_difference",
        kind="quantity", metric="mra", n_objects=(2,), unit="m",
        slots={"point": "center", "unit": "m"},
        uses=frozenset({"size", "floor", "comparison", "difference"}),
        cues=(Cue(400, 2, parse.cue_height_difference),),
        solve=solvers.solve_height_difference,
        phrasings=(
            "What is the height difference above ground level between {A} and {B}?",
            "How much higher or lower is {A} compared to {B} above the ground?",
            "By what amount does the elevation of {A} differ from that of {B}?",
        ),
    ),
    SpatialTask(
        "height_from_ground",
        kind="quantity", metric="mra", n_objects=(1,), unit="m",
        slots={"point": "center", "unit": "m"},
        uses=frozenset({"size", "floor"}),
        cues=(
            Cue(160, 1, parse.cue_reaches_up),
            Cue(180, 1, parse.cue_over_floor),
            Cue(200, 1, parse.cue_height_of_a_point),
        ),
        solve=solvers.solve_height_from_ground,
        phrasings=(
            "How high above the ground is {A}?",
            "What is the height of {A} above the floor?",
            "At what elevation from the ground is {A} located?",
        ),
    ),
    SpatialTask(
        "tallest_choice",
        kind="choice", metric="accuracy", n_objects=(2, 3), unit=None,
        slots={"dim": "height", "order": "max", "form": "choice"},
        uses=frozenset({"size", "floor", "whole", "comparison"}),
        cues=(Cue(470, 2, parse.cue_taller),),
        solve=solvers.solve_tallest_choice,
        phrasings=(
            "Among the three objects {A}, {B}, and {C}, which one is the tallest?",
            "Which of the three objects {A}, {B}, and {C} is tallest?",
            "Out of the three objects {A}, {B}, and {C}, which one is the tallest?",
            "Which is taller, {A} or {B}?",
            "Between {A} and {B}, which one is taller?",
            "Of {A} and {B}, which object is the taller one?",
        ),
    ),
    SpatialTask(
        "object_height",
        kind="quantity", metric="mra", n_objects=(1,), unit="m",
        slots={"unit": "m"},
        uses=frozenset({"size", "floor", "whole"}),
        cues=(Cue(170, 1, parse.cue_own_height), Cue(210, 1, parse.cue_height)),
        solve=solvers.solve_object_height,
        phrasings=(
            "How tall is {A}?",
            "What is the height of {A}?",
            "Can you tell me the height of {A}?",
        ),
    ),
    SpatialTask(
        "object_width",
        kind="quantity", metric="mra", n_objects=(1,), unit="m",
        slots={"unit": "m"},
        uses=frozenset({"horizontal", "size", "whole"}),
        cues=(Cue(220, 1, parse.cue_object_width),),
        solve=solvers.solve_object_width,
        phrasings=(
            "How wide is {A}?",
            "What is the width of {A}?",
            "Can you estimate the width of {A}?",
        ),
    ),
    SpatialTask(
        "object_length",
        kind="quantity", metric="mra", n_objects=(1,), unit="m",
        slots={"unit": "m"},
        uses=frozenset({"horizontal", "size", "whole"}),
        cues=(Cue(230, 1, parse.cue_object_length),),
        solve=solvers.solve_object_length,
        phrasings=(
            "How long is {A}?",
            "What is the length of {A}?",
            "Can you estimate the length of {A}?",
        ),
    ),
    SpatialTask(
        "above_predicate",
        kind="yesno", metric="accuracy", n_objects=(2,), unit=None,
        slots={},
        uses=frozenset({"size", "floor", "stacking", "comparison"}),
        cues=(Cue(450, 2, parse.cue_above),),
        solve=solvers.solve_above_predicate,
        phrasings=(
            "Is {A} above {B}?",
            "Does {A} appear over {B}?",
            "Can you confirm if {A} is positioned above {B}?",
        ),
    ),
    SpatialTask(
        "below_predicate",
        kind="yesno", metric="accuracy", n_objects=(2,), unit=None,
        slots={},
        uses=frozenset({"size", "floor", "stacking", "comparison"}),
        cues=(Cue(440, 2, parse.cue_below),),
        solve=solvers.solve_below_predicate,
        phrasings=(
            "Is {A} below {B}?",
            "Does {A} appear under {B}?",
            "Can you confirm if {A} is positioned below {B}?",
        ),
    ),
    SpatialTask(
        "left_predicate",
        kind="yesno", metric="accuracy", n_objects=(2,), unit=None,
        slots={},
        uses=frozenset({"horizontal", "viewer", "comparison"}),
        cues=(Cue(350, 2, parse.cue_left_of),),
        solve=solvers.solve_left_predicate,
        phrasings=(
            "From your viewpoint, is {A} to the left of {B}?",
            "Does {A} appear on the left side of {B} from where you stand?",
            "Can you confirm if {A} is positioned to the left of {B} from your perspective?",
        ),
    ),
    SpatialTask(
        "right_predicate",
        kind="yesno", metric="accuracy", n_objects=(2,), unit=None,
        slots={},
        uses=frozenset({"horizontal", "viewer", "comparison"}),
        cues=(Cue(340, 2, parse.cue_right_of),),
        solve=solvers.solve_right_predicate,
        phrasings=(
            "From your viewpoint, is {A} to the right of {B}?",
            "Does {A} appear on the right side of {B} from where you stand?",
            "Can you confirm if {A} is positioned to the right of {B} from your perspective?",
        ),
    ),
    SpatialTask(
        "higher_choice",
        kind="choice", metric="accuracy", n_objects=(2, 3), unit=None,
        slots={"point": "center", "order": "max", "form": "choice"},
        uses=frozenset({"size", "floor", "comparison"}),
        cues=(Cue(420, 2, parse.cue_points_above), Cue(460, 2, parse.cue_higher)),
        solve=solvers.solve_higher_choice,
        phrasings=(
            "Which one is higher, {A} or {B}?",
            "Between {A} and {B}, which one sits higher above the floor?",
            "Which of {A}, {B} and {C} is the highest?",
        ),
    ),
    SpatialTask(
        "above_choice",
        kind="choice", metric="accuracy", n_objects=(2,), unit=None,
        slots={"relation": "above"},
        uses=frozenset({"size", "floor", "stacking", "comparison", "choice"}),
        cues=(Cue(410, 2, parse.cue_in_stack), Cue(430, 2, parse.cue_which_is_above)),
        solve=solvers.solve_above_choice,
        phrasings=(
            "Which one is above the other, {A} or {B}?",
            "Of {A} and {B}, which one is on top?",
            "Between {A} and {B}, which is the one above?",
        ),
    ),
    SpatialTask(
        "left_right_choice",
        kind="yesno", metric="accuracy", n_objects=(2,), unit=None,
        slots={},
        uses=frozenset({"horizontal", "viewer", "comparison", "choice"}),
        cues=(Cue(300, 2, parse.cue_which_side_of), Cue(330, 2, parse.cue_left_or_right_of)),
        solve=solvers.solve_left_right_choice,
        phrasings=(
            "Is {A} to the left or to the right of {B}?",
            "From your viewpoint, is {A} left or right of {B}?",
            "On which side of {B} is {A}, left or right?",
        ),
    ),
    SpatialTask(
        "leftmost_choice",
        kind="choice", metric="accuracy", n_objects=(2, 3), unit=None,
        slots={"side": "left"},
        uses=frozenset({"horizontal", "viewer", "comparison", "choice"}),
        cues=(Cue(310, 2, parse.cue_scan), Cue(320, 2, parse.cue_furthest_to_a_side)),
        solve=solvers.solve_leftmost_choice,
        phrasings=(
            "Which one is further to the left, {A} or {B}?",
            "Of {A}, {B} and {C}, which is the leftmost?",
            "Which of {A} and {B} is more to the left from where you stand?",
        ),
    ),
    SpatialTask(
        "side_of_me",
        kind="yesno", metric="accuracy", n_objects=(1,), unit=None,
        slots={"side": None},
        uses=frozenset({"horizontal", "viewer"}),
        cues=(Cue(150, 1, parse.cue_side_of_me),),
        solve=solvers.solve_side_of_me,
        phrasings=(
            "Is {A} on your left or your right?",
            "Is {A} to your left or to your right?",
            "On which side of you is {A}, left or right?",
        ),
    ),
)

TASK_BY_NAME: dict[str, SpatialTask] = {t.name: t for t in TASKS}

# Side words that no side cue read (three objects, no "which"): no task, rather than a later one.
REFUSALS: tuple[Cue, ...] = (Cue(360, 2, parse.cue_unread_side),)

# Every cue in decision order, per number of objects (0, 1, 2 = two or more), with the task it reads
# (None: a refusal).
DECISIONS: dict[int, list[tuple[Cue, str | None]]] = {
    n: sorted(
        [(c, t.name) for t in TASKS for c in t.cues if c.objects == n]
        + [(c, None) for c in REFUSALS if c.objects == n],
        key=lambda pair: pair[0].rank,
    )
    for n in (0, 1, 2)
}


def turn_phrase(turn_ccw_deg: float) -> str:
    """Words for a turn (``90 degrees to the left``) used when filling ``{turn}``."""
    side = "left" if turn_ccw_deg > 0 else "right"
    return f"{round(abs(turn_ccw_deg))} degrees to the {side}"
