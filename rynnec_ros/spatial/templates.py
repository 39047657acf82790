"""The spatial task families: their metric, question phrasings (generation) and recognisers (routing).

Phrasings follow the RynnEC templates (seed paper appendix A.3) with ``{A}``, ``{B}``, ``{C}`` for
object references (``<object0>`` …) and ``{turn}`` for a turn such as ``90 degrees to the left``.
Recognition first rewrites every object reference (``<object3>``, ``<object 3>``, ``[<REGION>]``) to
``OBJ``, then tries the per-task regular expressions in the order of ``TASKS`` (specific before
general) and checks the number of referenced objects.
"""

from __future__ import annotations

import re
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
    patterns: tuple[str, ...]


_ME = r"(?:me|you|myself|yourself|the camera|the robot)"
_TURN = r"(?:turn|turning|rotate|rotating|rotation)"
_VERB = r"(?:is |appear |appears |located |positioned |situated )*"
_DEG_Q = r"(?:how many degrees|what (?:clockwise )?angle|clockwise angle)"

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
        (
            r"how far (?:have|did) (?:you|i) (?:walk|walked|travel|travell?ed|move|moved|go|gone)",
            r"(?:total|overall) distance (?:that )?(?:you|i) (?:have )?(?:covered|walked|travell?ed|moved)",
            r"(?:total|overall) distance .*(?:walk|walked|travell?ed|covered)",
            r"distance (?:you|i) (?:have )?(?:walked|travell?ed|covered)",
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
        (
            r"clockwise.*\bto face\b",
            r"\bto face\b.*clockwise",
            r"clockwise.*\bface (?:towards? |the direction of )?OBJ",
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
        (
            rf"{_TURN}.*{_DEG_Q}",
            rf"{_DEG_Q}.*(?:after|once|when|if) (?:you |i )?{_TURN}",
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
        (
            rf"(?:after|if|once|upon|when)\b.*\b{_TURN}\b.*(?:where|direction|o'?clock|oriented|position)",
            rf"(?:where|direction|o'?clock|oriented|position).*(?:after|if|once|upon|when)\b.*\b{_TURN}\b",
            rf"\b(?:making|make) an? .*{_TURN}",
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
        (
            r"(?:what|which) (?:clockwise )?(?:angle|bearing)",
            r"how many degrees clockwise from",
            r"\bbearing\b",
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
        (
            r"o'?\s?clock",
            r"clock (?:direction|position)",
            rf"(?:where|which direction|what direction) is OBJ (?:located |positioned |situated )?"
            rf"(?:relative|in relation|with respect) to {_ME}",
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
        (
            r"\breach\b",
            r"without (?:walking|moving|stepping)",
            r"arm'?s? (?:length|reach)",
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
        (rf"(?:closest|nearest|closer|nearer)(?: to {_ME})?",),
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
        (rf"(?:closer|nearer|closest|nearest)(?: to {_ME})?",),
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
        (
            r"cent(?:er|re)s?|central",
            r"how far apart",
            r"distance between OBJ and OBJ",
            r"how far is OBJ from OBJ",
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
        (
            r"how far (?:away )?is (?:OBJ|it|that|this)\b",
            rf"how far .*\b(?:from|away from) {_ME}\b",
            rf"distance (?:between|from) {_ME} (?:and|to) OBJ",
            rf"distance (?:of|to|from) OBJ (?:from|to) {_ME}",
            r"how (?:many meters|far) away",
            rf"distance .*OBJ.*{_ME}|distance .*{_ME}.*OBJ",
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
        (
            r"height difference|difference in height",
            r"higher or lower",
            r"elevation .*differ|differ.*elevation",
            r"how much (?:higher|lower)",
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
        (
            r"above (?:the )?(?:ground|floor)",
            r"(?:from|off) (?:the )?(?:ground|floor)",
            r"elevation",
            r"how high is OBJ",
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
        (
            r"\btallest\b",
            r"\btaller\b",
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
        (
            r"how tall",
            r"\bheight\b",
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
        (
            r"how wide",
            r"\bwidth\b",
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
        (
            r"how long is",
            r"\blength\b",
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
        (rf"OBJ {_VERB}(?:above|over|higher than|on top of) OBJ",),
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
        (rf"OBJ {_VERB}(?:below|under|beneath|underneath|lower than) OBJ",),
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
        (rf"OBJ {_VERB}(?:to |on )?(?:the )?left (?:side )?of OBJ",),
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
        (rf"OBJ {_VERB}(?:to |on )?(?:the )?right (?:side )?of OBJ",),
    ),
)

TASK_BY_NAME: dict[str, TaskSpec] = {t.name: t for t in TASKS}

_OBJ_RE = re.compile(r"\[\s*(?:<REGION>\s*)+\]|<\s*region\s*>|<\s*object\s*_?\s*(\d+)\s*>", re.IGNORECASE)
_COMPILED = [(t, [re.compile(p) for p in t.patterns]) for t in TASKS]


def object_references(question: str) -> list[int | None]:
    """Object indices referenced in order (``None`` for anonymous ``<REGION>`` references)."""
    return [int(m.group(1)) if m.group(1) is not None else None for m in _OBJ_RE.finditer(question)]


def normalise(question: str) -> str:
    """Lower-case question with object references replaced by ``OBJ`` and apostrophes unified."""
    text = _OBJ_RE.sub("\x00", question).lower().replace("\x00", "OBJ")
    text = text.replace("’", "'").replace("‘", "'")
    return re.sub(r"\s+", " ", text).strip()


def recognise_question(question: str, n_regions: int | None = None) -> str | None:
    """Task name of a spatial question in free text, or ``None`` when no template matches.

    The number of objects is the number of references in the text; a question without references
    ("How far is it from me?") counts ``n_regions`` objects when the caller passes its regions.
    """
    text = normalise(question)
    n_refs = len(object_references(question))
    if n_refs == 0 and n_regions:
        n_refs = n_regions
    for spec, regexes in _COMPILED:
        if n_refs not in spec.n_objects:
            continue
        if any(r.search(text) for r in regexes):
            return spec.name
    return None


_TURN_RE = re.compile(
    r"(?:turn|turning|rotate|rotating|rotation|turned|rotated)\s+(?:of\s+|by\s+)?"
    r"(?:(?P<deg1>\d+(?:\.\d+)?)\s*-?\s*degrees?\s+)?(?:to\s+(?:the|your)\s+)?(?P<side1>left|right)"
    r"(?:\s+(?:by\s+)?(?P<deg2>\d+(?:\.\d+)?)\s*-?\s*degrees?)?"
    r"|(?P<deg3>\d+(?:\.\d+)?)\s*-?\s*degrees?\s+(?:to\s+(?:the|your)\s+)?(?P<side3>left|right)\b"
    r"|(?P<side4>left|right)\s+(?:turn|rotation)"
    r"|turn(?:ing)?\s+around|about[- ]face",
    re.IGNORECASE,
)


def parse_turn(question: str) -> float | None:
    """Counter-clockwise turn in degrees described in ``question`` (left positive), if any.

    ``"turn 90 degrees to the left"`` → 90, ``"turn right by 45-degree"`` → −45, ``"turn around"`` →
    180, ``"turn left"`` → 90 (a plain left/right turn is a quarter turn).
    """
    text = question.replace("’", "'")
    m = _TURN_RE.search(text)
    if m is None:
        # "Upon making a 90-degree left turn"
        m2 = re.search(
            r"(\d+(?:\.\d+)?)\s*-?\s*degrees?\s+(left|right)\s+(?:turn|rotation)", text, re.IGNORECASE
        )
        if m2 is None:
            return None
        deg, side = float(m2.group(1)), m2.group(2).lower()
        return deg if side == "left" else -deg
    groups = m.groupdict()
    side = groups["side1"] or groups["side3"] or groups["side4"]
    if side is None:
        return 180.0
    deg_text = groups["deg1"] or groups["deg2"] or groups["deg3"]
    if deg_text is None:
        m2 = re.search(r"(\d+(?:\.\d+)?)\s*-?\s*degrees?\s+(?:left|right)\s+(?:turn|rotation)", text, re.I)
        deg_text = m2.group(1) if m2 else None
    deg = float(deg_text) if deg_text is not None else 90.0
    return deg if side.lower() == "left" else -deg


def turn_phrase(turn_ccw_deg: float) -> str:
    """Words for a turn (``90 degrees to the left``) used when filling ``{turn}``."""
    side = "left" if turn_ccw_deg > 0 else "right"
    return f"{round(abs(turn_ccw_deg))} degrees to the {side}"
