"""The spatial task families: their kind, metric, object counts and question phrasings (generation).

Phrasings follow the RynnEC templates (seed paper appendix A.3) with ``{A}``, ``{B}``, ``{C}`` for
object references (``<object0>`` …) and ``{turn}`` for a turn such as ``90 degrees to the left``.
Questions are understood by ``parse.py`` (rules over cue words, not these phrasings).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TaskSpec:
    """``kind``: quantity | choice (pick an object) | yesno; ``metric``: mra | roa | accuracy."""

    name: str
    kind: str
    metric: str
    n_objects: tuple[int, ...]
    unit: str | None
    phrasings: tuple[str, ...]


TASKS: tuple[TaskSpec, ...] = (
    TaskSpec(
        "walked_distance",
        "quantity",
        "mra",
        (0,),
        "m",
        (
            "How far have you walked in total?",
            "What is the total distance you have covered walking?",
            "What is the overall distance you have walked?",
            "How far did you walk?",
        ),
    ),
    TaskSpec(
        "rotate_to_face",
        "quantity",
        "roa",
        (1,),
        "deg",
        (
            "How many degrees clockwise do you need to turn to face the direction of {A}?",
            "To face towards {A}, how many degrees should you rotate in a clockwise direction?",
            "What degree of clockwise rotation is necessary for you to face {A}'s direction?",
        ),
    ),
    TaskSpec(
        "future_direction_degrees",
        "quantity",
        "roa",
        (1,),
        "deg",
        (
            "After you turn {turn}, how many degrees clockwise from your facing direction will {A} be?",
            "If you turn {turn}, at what clockwise angle will {A} be relative to you?",
            "Upon turning {turn}, what is the clockwise angle from your heading to {A}?",
        ),
    ),
    TaskSpec(
        "future_direction_clock",
        "quantity",
        "roa",
        (1,),
        "oclock",
        (
            "After you turn {turn}, where will {A} be in relation to you?",
            "If you turn {turn}, in which direction will {A} be positioned?",
            "Upon making a turn of {turn}, how will {A} be oriented with respect to you?",
        ),
    ),
    TaskSpec(
        "direction_degrees",
        "quantity",
        "roa",
        (1,),
        "deg",
        (
            "At what clockwise angle from your facing direction is {A}?",
            "How many degrees clockwise from where you are facing is {A}?",
            "What is the clockwise bearing of {A} relative to your heading, in degrees?",
        ),
    ),
    TaskSpec(
        "direction_clock",
        "quantity",
        "roa",
        (1,),
        "oclock",
        (
            "At what o'clock direction is {A} relative to you?",
            "In which clock direction is {A} located from your viewpoint?",
            "Where is {A} relative to you, as a clock position?",
        ),
    ),
    TaskSpec(
        "reachability",
        "yesno",
        "accuracy",
        (1,),
        "m",
        (
            "Can you reach {A} without walking?",
            "Is {A} within your arm's reach from where you are?",
            "Could you pick up {A} without moving your feet?",
        ),
    ),
    TaskSpec(
        "closest_to_camera",
        "choice",
        "accuracy",
        (3,),
        None,
        (
            "Which is closest to you, {A} or {B} or {C}?",
            "Among {A}, {B}, and {C}, which one is nearer to you?",
            "Which of {A}, {B}, or {C} is closest to you?",
            "Which of the three objects, {A}, {B}, or {C}, is closest to you?",
        ),
    ),
    TaskSpec(
        "closer_to_camera",
        "choice",
        "accuracy",
        (2,),
        None,
        (
            "Which is closer to you, {A} or {B}?",
            "Between {A} and {B}, which one is nearer to you?",
            "Which one is closer to you, {A} or {B}?",
        ),
    ),
    TaskSpec(
        "center_distance",
        "quantity",
        "mra",
        (2,),
        "m",
        (
            "What is the distance between the centers of {A} and {B}?",
            "How far apart are the centers of {A} and {B}?",
            "What is the separation between the central points of {A} and {B}?",
        ),
    ),
    TaskSpec(
        "distance_to_camera",
        "quantity",
        "mra",
        (1,),
        "m",
        (
            "How far is {A} from you?",
            "What is the distance between you and {A}?",
            "How many meters away from you is {A}?",
        ),
    ),
    TaskSpec(
        "height_difference",
        "quantity",
        "mra",
        (2,),
        "m",
        (
            "What is the height difference above ground level between {A} and {B}?",
            "How much higher or lower is {A} compared to {B} above the ground?",
            "By what amount does the elevation of {A} differ from that of {B}?",
        ),
    ),
    TaskSpec(
        "height_from_ground",
        "quantity",
        "mra",
        (1,),
        "m",
        (
            "How high above the ground is {A}?",
            "What is the height of {A} above the floor?",
            "At what elevation from the ground is {A} located?",
        ),
    ),
    TaskSpec(
        "tallest_choice",
        "choice",
        "accuracy",
        (2, 3),
        None,
        (
            "Among the three objects {A}, {B}, and {C}, which one is the tallest?",
            "Which of the three objects {A}, {B}, and {C} is tallest?",
            "Out of the three objects {A}, {B}, and {C}, which one is the tallest?",
            "Which is taller, {A} or {B}?",
            "Between {A} and {B}, which one is taller?",
            "Of {A} and {B}, which object is the taller one?",
        ),
    ),
    TaskSpec(
        "object_height",
        "quantity",
        "mra",
        (1,),
        "m",
        (
            "How tall is {A}?",
            "What is the height of {A}?",
            "Can you tell me the height of {A}?",
        ),
    ),
    TaskSpec(
        "object_width",
        "quantity",
        "mra",
        (1,),
        "m",
        (
            "How wide is {A}?",
            "What is the width of {A}?",
            "Can you estimate the width of {A}?",
        ),
    ),
    TaskSpec(
        "object_length",
        "quantity",
        "mra",
        (1,),
        "m",
        (
            "How long is {A}?",
            "What is the length of {A}?",
            "Can you estimate the length of {A}?",
        ),
    ),
    TaskSpec(
        "above_predicate",
        "yesno",
        "accuracy",
        (2,),
        None,
        (
            "Is {A} above {B}?",
            "Does {A} appear over {B}?",
            "Can you confirm if {A} is positioned above {B}?",
        ),
    ),
    TaskSpec(
        "below_predicate",
        "yesno",
        "accuracy",
        (2,),
        None,
        (
            "Is {A} below {B}?",
            "Does {A} appear under {B}?",
            "Can you confirm if {A} is positioned below {B}?",
        ),
    ),
    TaskSpec(
        "left_predicate",
        "yesno",
        "accuracy",
        (2,),
        None,
        (
            "From your viewpoint, is {A} to the left of {B}?",
            "Does {A} appear on the left side of {B} from where you stand?",
            "Can you confirm if {A} is positioned to the left of {B} from your perspective?",
        ),
    ),
    TaskSpec(
        "right_predicate",
        "yesno",
        "accuracy",
        (2,),
        None,
        (
            "From your viewpoint, is {A} to the right of {B}?",
            "Does {A} appear on the right side of {B} from where you stand?",
            "Can you confirm if {A} is positioned to the right of {B} from your perspective?",
        ),
    ),
    TaskSpec(
        "higher_choice",
        "choice",
        "accuracy",
        (2, 3),
        None,
        (
            "Which one is higher, {A} or {B}?",
            "Between {A} and {B}, which one sits higher above the floor?",
            "Which of {A}, {B} and {C} is the highest?",
        ),
    ),
    TaskSpec(
        "above_choice",
        "choice",
        "accuracy",
        (2,),
        None,
        (
            "Which one is above the other, {A} or {B}?",
            "Of {A} and {B}, which one is on top?",
            "Between {A} and {B}, which is the one above?",
        ),
    ),
    TaskSpec(
        "left_right_choice",
        "yesno",
        "accuracy",
        (2,),
        None,
        (
            "Is {A} to the left or to the right of {B}?",
            "From your viewpoint, is {A} left or right of {B}?",
            "On which side of {B} is {A}, left or right?",
        ),
    ),
    TaskSpec(
        "leftmost_choice",
        "choice",
        "accuracy",
        (2, 3),
        None,
        (
            "Which one is further to the left, {A} or {B}?",
            "Of {A}, {B} and {C}, which is the leftmost?",
            "Which of {A} and {B} is more to the left from where you stand?",
        ),
    ),
    TaskSpec(
        "side_of_me",
        "yesno",
        "accuracy",
        (1,),
        None,
        (
            "Is {A} on your left or your right?",
            "Is {A} to your left or to your right?",
            "On which side of you is {A}, left or right?",
        ),
    ),
)

TASK_BY_NAME: dict[str, TaskSpec] = {t.name: t for t in TASKS}


def turn_phrase(turn_ccw_deg: float) -> str:
    """Words for a turn (``90 degrees to the left``) used when filling ``{turn}``."""
    side = "left" if turn_ccw_deg > 0 else "right"
    return f"{round(abs(turn_ccw_deg))} degrees to the {side}"
