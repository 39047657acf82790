"""Question understanding: the structured task syntax and slots read from free text.

Expected tasks and slots are read off the sentences by hand; the paraphrase labels come from
the paraphrase sets (``rynnec_ros/eval/data/paraphrases``): ``original``, written before the parser,
and ``blind`` .. ``blind11``, ``blind13`` .. ``blind59``, ``redteam1`` .. ``redteam4``, each written
blind and measured before the parser was generalised on it (together the development set, asserted here;
``blind14`` .. ``blind59`` and the red-team sets by writers who read no project document). The held-out
set (``blind12``, written blind) is only measured by ``eval-paraphrases`` (its size is asserted here,
its parses never), never tuned on.
"""

from __future__ import annotations

import pytest

from rynnec_ros.eval.paraphrases import families, split
from rynnec_ros.spatial.parse import NOT_MEASURABLE, PARTLY_READ, TaskSyntaxError
from rynnec_ros.spatial.plan import parse_question, parse_structured

FAMILIES = families("original")


def test_paraphrase_set_size_and_split() -> None:
    assert all(len(entries) >= 15 for entries in FAMILIES.values())
    assert sum(len(e) for e in FAMILIES.values()) == 250
    assert sum(len(e) for e in families("blind").values()) == 233
    assert sum(len(e) for e in families("blind2").values()) == 239
    dev = split("dev")
    assert len(dev) == (3282 + 234 + 228 + 192 + 209 + 199 + 210 + 209 + 199 + 209 + 206 + 205 + 205
                        + 209 + 209 + 207 + 206 + 209 + 209 + 206 + 209 + 209 + 209 + 207 + 209 + 209 + 207
                        + 209 + 209 + 209 + 207 + 202 + 209 + 209 + 207 + 207 + 202 + 209 + 200
                        + 209 + 207 + 195 + 206 + 209 + 209 + 209 + 209
                        + 190 + 190  # redteam1, redteam2
                        + 190 + 190)  # redteam3, redteam4
    # the third and fourth writers split turning-to-face out of the direction family
    assert {family for family, _, _ in dev} == {*FAMILIES, "rotate_to_face"}
    heldout = split("heldout")
    assert len(heldout) == 256
    assert {family for family, _, _ in heldout} == {*FAMILIES, "rotate_to_face"}
    assert split("fresh2") == []  # blind20/21, measured once, are development sets now
    assert split("fresh3") == []  # blind22/23, measured once, are development sets now
    assert split("fresh4") == []  # blind24/25, measured once, are development sets now
    assert split("fresh5") == []  # blind26/27, measured once, are development sets now
    assert split("fresh6") == []  # blind28/29, measured once, are development sets now
    assert split("fresh7") == []  # blind30/31, measured once, are development sets now
    assert split("fresh8") == []  # blind32/33, measured once, are development sets now
    assert split("fresh9") == []  # blind34/35, measured once, are development sets now
    assert split("fresh10") == []  # blind36/37, measured once, are development sets now
    assert split("fresh11") == []  # blind38/39, measured once, are development sets now
    assert split("fresh12") == []  # blind40/41, measured once, are development sets now
    assert split("fresh13") == []  # blind42/43, measured once, are development sets now
    assert split("fresh14") == []  # blind44/45, measured once, are development sets now
    assert split("fresh15") == []  # blind46/47, measured once, are development sets now
    assert split("fresh16") == []  # blind48/49, measured once, are development sets now
    assert split("fresh17") == []  # blind50/51, measured once, are development sets now
    assert split("fresh18") == []  # blind52/53, measured once, are development sets now
    assert split("fresh19") == []  # blind54/55, measured once, are development sets now
    assert split("fresh20") == []  # blind56/57, measured once, are development sets now
    assert split("fresh21") == []  # blind58/59, measured once, are development sets now
    fresh22 = split("fresh22")  # converted by eval/blind_labels.py
    assert len(fresh22) == 209 + 209
    assert {family for family, _, _ in fresh22} == {*FAMILIES, "rotate_to_face"}
    fresh23 = split("fresh23")  # converted by eval/blind_labels.py
    assert len(fresh23) == 209 + 209
    assert {family for family, _, _ in fresh23} == {*FAMILIES, "rotate_to_face"}
    fresh24 = split("fresh24")  # converted by eval/blind_labels.py
    assert len(fresh24) == 209 + 209
    assert {family for family, _, _ in fresh24} == {*FAMILIES, "rotate_to_face"}
    with pytest.raises(ValueError, match="half must be"):
        split("test")


@pytest.mark.parametrize(
    ("text", "task", "slots", "objects"),
    [
        ("height_from_ground point=top", "height_from_ground", {"point": "top", "unit": "m"}, None),
        ("reachability arm_length_m=1.5", "reachability", {"arm_length_m": 1.5}, None),
        (
            "future_direction_clock turn=left angle_deg=90",
            "future_direction_clock",
            {"turn": "left", "angle_deg": 90.0},
            None,
        ),
        (
            "tallest_choice dim=width order=min objects=1,0",
            "tallest_choice",
            {"dim": "width", "order": "min", "form": "choice"},
            [1, 0],
        ),
        ("closer_to_camera order=far", "closer_to_camera", {"order": "far", "form": "choice"}, None),
        ("distance_to_camera", "distance_to_camera", {"unit": "m"}, None),
    ],
)
def test_structured_form(text: str, task: str, slots: dict, objects: list[int] | None) -> None:
    p = parse_structured(text)
    assert (p.task, p.slots, p.objects) == (task, slots, objects)
    assert parse_structured(p.structured()).structured() == p.structured()  # canonical form round-trips


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "empty"),
        ("teleport", "unknown spatial task"),
        ("reachability arm=1.5", "no slot 'arm'"),
        ("reachability arm_length_m=long", "must be a number"),
        ("reachability arm_length_m=-1", "out of range"),
        ("height_from_ground point=side", "must be one of"),
        ("closer_to_camera order=max", "must be one of near, far"),
        ("height_from_ground top", "not KEY=VALUE"),
        ("center_distance objects=0,0", "distinct"),
        ("walked_distance objects=0", "no slot 'objects'"),
    ],
)
def test_structured_errors_say_what_is_wrong(text: str, why: str) -> None:
    with pytest.raises(TaskSyntaxError, match=why):
        parse_structured(text)


@pytest.mark.parametrize(
    ("question", "structured"),
    [
        # the issue's own examples
        ("How high is the top of <object0> above the floor?", "height_from_ground point=top"),
        ("How high is the bottom of <object0> above the floor?", "height_from_ground point=bottom"),
        ("Can I reach <object0> if my arm is 1.5 meters long?", "reachability arm_length_m=1.5"),
        ("Which one is above, <object0> or <object1>?", "above_choice"),
        ("Is <object0> to the left or to the right of <object1>?", "left_right_choice"),
        ("Is <object0> on my left or my right?", "side_of_me"),
        # units, spelled-out angles and metric arm lengths
        ("How many inches wide is <object0>?", "object_width unit=in"),
        (
            "After you turn ninety degrees to the right, where is <object0>?",
            "future_direction_clock turn=right angle_deg=90",
        ),
        ("My arm is 70 cm long; can I grab <object0>?", "reachability arm_length_m=0.7"),
        ("How far is it from me?", None),
        # an old held-out miss, fixed once that set became development data (docs/spatial.md)
        ("How much space is there between <object0> and <object1>?", "center_distance"),
        # a vertical offset asked as a quantity is a height difference, not a comparison or predicate
        ("How much lower is <object0> than <object1>?", "height_difference"),
        ("By how many inches does <object0> sit above <object1>?", "height_difference unit=in"),
        ("What's the vertical distance between <object0> and <object1>?", "height_difference"),
        ("How many millimeters lower is <object0> than <object1>?", "height_difference unit=mm"),
        # the reference named first: the subject is the other object
        ("How far beneath <object1> is <object0>?", "height_difference objects=0,1"),
        (
            "How many meters higher than the top of <object1> is the top of <object0>?",
            "height_difference point=top objects=0,1",
        ),
        ("Using <object1> as the reference, is <object0> higher?", "higher_choice form=yesno objects=0,1"),
        ("Beside <object0>, is <object1> shorter?", "tallest_choice order=min form=yesno objects=1,0"),
        ("On which side of <object1> does <object0> stand?", "left_right_choice objects=0,1"),
        ("Is <object0> left of <object1> or right of it?", "left_right_choice"),
        # yes/no after a lead-in clause, or asked "whether"
        ("In comparison with <object1>, is <object0> taller?", "tallest_choice form=yesno objects=0,1"),
        ("Tell me whether <object0> is nearer to me than <object1>.", "closer_to_camera form=yesno"),
        ("<object0> versus <object1>: which is taller?", "tallest_choice"),
        # a turn opened by a conjunction inside the clause that asks the direction
        (
            "Where on the clock will <object0> be after I rotate 90 degrees to the right?",
            "future_direction_clock turn=right angle_deg=90",
        ),
        (
            "After turning left by 45°, at what o'clock is <object0>?",
            "future_direction_clock turn=left angle_deg=45",
        ),
        # units asked without "how many" / "in", and "on foot" is none
        ("Between me and <object0>, how many feet are there?", "distance_to_camera unit=ft"),
        ("How far is <object0> from me? Centimeters, please.", "distance_to_camera unit=cm"),
        ("How far have you gone on foot?", "walked_distance"),
        ("What is the total length of my route?", "walked_distance"),
        # relations to "the other" / "it", "which side", superlatives without "which"
        ("Which one is under the other, <object0> or <object1>?", "above_choice relation=below"),
        ("What side of me is <object0> on?", "side_of_me"),
        ("Rightmost of <object0>, <object1> and <object2>?", "leftmost_choice side=right"),
        ("Is <object0> within 1.2 m of my hand?", "reachability arm_length_m=1.2"),
        # the height of a named point is over the floor; comparatives "bigger in height"; "supports"
        ("What height is the top of <object0> at?", "height_from_ground point=top"),
        ("What is the height of <object0>?", "object_height"),
        ("Which is bigger in height, <object0> or <object1>?", "tallest_choice"),
        ("Which is smaller in width, <object0> or <object1>?", "tallest_choice dim=width order=min"),
        ("Which object supports the other, <object0> or <object1>?", "above_choice relation=below"),
        ("Is <object0> on the left-hand side of the image?", "side_of_me side=left"),
        ("Can the robot grasp <object0> from its current spot?", "reachability"),
        ("What's my odometry distance so far?", "walked_distance"),
        # "how close", "spacing", "elevated", the longer / narrower side, "which is on the left"
        ("How close is <object0> to me?", "distance_to_camera"),
        ("What's the spacing between <object0> and <object1>?", "center_distance"),
        ("How elevated is <object0>?", "height_from_ground"),
        ("What is the longer dimension of <object0>?", "object_length"),
        ("What's the smaller horizontal dimension of <object0>?", "object_width"),
        ("Which is on the left, <object0> or <object1>?", "leftmost_choice"),
        # "OBJ or OBJ" offers a choice; "shortest distance" is no size; points above/below compare heights
        ("Is <object0> or <object1> closer to me?", "closer_to_camera"),
        ("Am I nearer to <object0> or to <object1>?", "closer_to_camera"),
        ("What is the shortest distance between <object0> and <object1>?", "center_distance"),
        ("Is the top of <object0> above the top of <object1>?", "higher_choice point=top form=yesno"),
        ("Is <object0> directly above <object1>?", "above_predicate"),
        # "further up / down", "supported by", "holding up", "more distant"
        ("How much further up is <object0> than <object1>?", "height_difference"),
        ("Which is farther down, <object0> or <object1>?", "higher_choice order=min"),
        ("Is <object0> supported by <object1>?", "above_predicate"),
        ("Is <object1> holding up <object0>?", "below_predicate"),
        ("Is <object0> more distant than <object1>?", "closer_to_camera order=far form=yesno"),
        # number words and halves as digits ("which one" stays a word), shorthand, arrows, turn verbs
        (
            "If I turn one hundred and twenty degrees to the right, how many degrees off my heading is "
            "<object0>?",
            "future_direction_degrees turn=right angle_deg=120",
        ),
        ("With a reach of one and a half meters, can I touch <object0>?", "reachability arm_length_m=1.5"),
        ("Which one is taller, <object0> or <object1>?", "tallest_choice"),
        ("Dist to <object0> in ft?", "distance_to_camera unit=ft"),
        ("Turn 30 deg cw -> <object0> at what o'clock?", "future_direction_clock turn=right angle_deg=30"),
        (
            "If I yaw sixty degrees leftward, at what o'clock is <object0>?",
            "future_direction_clock turn=left angle_deg=60",
        ),
        (
            "If I do a three-quarter turn to the right, at what o'clock is <object0>?",
            "future_direction_clock turn=right angle_deg=270",
        ),
        ("How many degrees ccw until <object0> is dead ahead?", "rotate_to_face direction=ccw"),
        ("Which of <object0> and <object1> is the least wide?", "tallest_choice dim=width order=min"),
        # "short / long side", "anti-clockwise", quarters of a unit, the bottom of a stack, "ht diff"
        ("What's the short side of <object0> in cm?", "object_width unit=cm"),
        ("What is the long side of <object0>?", "object_length"),
        ("How far do I rotate anti-clockwise to face <object0>?", "rotate_to_face direction=ccw"),
        (
            "With an arm three quarters of a meter long, could I grab <object0>?",
            "reachability arm_length_m=0.75",
        ),
        ("Which of <object0> and <object1> sits at the bottom of the pile?", "above_choice relation=below"),
        ("ht diff between <object0> and <object1>, in mm?", "height_difference unit=mm"),
        # an object named twice counts once, the last clause names the subject; adjectival lengths
        (
            "Between <object0> and <object1>, is <object1> the taller one?",
            "tallest_choice form=yesno objects=1,0",
        ),
        ("How far down is <object0> compared with <object1>?", "height_difference"),
        ("Would a three-foot arm reach <object0>?", "reachability arm_length_m=0.9144"),
        ("How high off the floor is the uppermost point of <object0>?", "height_from_ground point=top"),
        (
            "Which has the smallest width, <object0>, <object1> or <object2>?",
            "tallest_choice dim=width order=min",
        ),
        ("Which of <object0> and <object1> is more far from me?", "closer_to_camera order=far"),
        # dashes break clauses, "more / most <adjective>", "lengthier", "upon", an order to pick one,
        # a climb "from OBJ up to OBJ" starts at the reference
        (
            "Rotating right 60 degrees – where is <object0> then, in o'clock?",
            "future_direction_clock turn=right angle_deg=60",
        ),
        ("Of <object0>, <object1> and <object2>, which is most wide?", "tallest_choice dim=width"),
        ("Is <object0> lengthier than <object1>?", "tallest_choice dim=length form=yesno"),
        ("Does <object1> rest upon <object0>?", "above_predicate"),
        ("Choose the one further to the right: <object0> or <object1>.", "leftmost_choice side=right"),
        ("How many cm is it from <object1> down to <object0>?", "height_difference unit=cm objects=0,1"),
        # inches and "N and a quarter" as stated lengths, "nearest the floor" is lowest, "before OBJ is
        # ahead" is turning to face, the closest points of two objects say where a distance is measured
        ("Is <object0> within reach of a 24 inch arm?", "reachability arm_length_m=0.6096"),
        ("With two and a quarter feet of reach, can I touch <object0>?", "reachability arm_length_m=0.6858"),
        (
            "Of <object0> and <object1>, which has its bottom closest to the ground?",
            "higher_choice point=bottom order=min",
        ),
        (
            "How many degrees clockwise must I swivel before <object0> is right in front of me?",
            "rotate_to_face",
        ),
        ("How far apart are the nearest points of <object0> and <object1>?", "center_distance"),
        # a scene-setting "looking at OBJ" is no turn, "how much <unit>", "a greater distance from me",
        # "less height", a spaced hyphen breaks a clause and "is that right?" names no side, "a meter and
        # a half"
        ("While looking at <object0>, tell me its distance from the camera.", "distance_to_camera"),
        ("How much centimeter is <object0> away from me?", "distance_to_camera unit=cm"),
        ("Is <object0> at a smaller distance from me than <object1>?", "closer_to_camera form=yesno"),
        ("Of <object0>, <object1> and <object2>, which has more width?", "tallest_choice dim=width"),
        ("<object0> sits on top of <object1> - is that correct?", "above_predicate"),
        ("Can a robot with a meter and a half of reach touch <object0>?", "reachability arm_length_m=1.5"),
        # speech: fillers, no punctuation (a turn clause ends at the question word or the object), a
        # lead-in without its comma; "would I be right in saying"; "center to center"; a benchmark's
        # options standing for a value; "the camera's right"; "following a turn"
        ("uh okay how many feet away is <object0>", "distance_to_camera unit=ft"),
        (
            "once i spin to the right where will <object0> be in degrees",
            "future_direction_degrees turn=right angle_deg=90",
        ),
        (
            "if i rotate left by sixty degrees <object0> ends up at what o'clock",
            "future_direction_clock turn=left angle_deg=60",
        ),
        ("compared with <object1> is <object0> higher up", "higher_choice form=yesno objects=0,1"),
        ("Would I be correct in thinking <object0> is taller than <object1>?", "tallest_choice form=yesno"),
        ("Center to center, how far is <object0> from <object1> in mm?", "center_distance unit=mm"),
        (
            "Which of the following values is the distance from me to <object0> in feet?",
            "distance_to_camera unit=ft",
        ),
        ("Is <object0> on the robot's left?", "side_of_me side=left"),
        (
            "Report the o'clock direction of <object0> following a right turn of 30 degrees.",
            "future_direction_clock turn=right angle_deg=30",
        ),
        # an arm named beside an asked distance is context; "smallest distance to it"; the norm of a
        # difference; "minus"; "the one with the largest" of named heights; a parenthetical restates;
        # chat spelling; fractions of a turn; "1 meter 20"; "its heading points at"
        (
            "With the arm folded, what's the distance from me to <object0> in inches?",
            "distance_to_camera unit=in",
        ),
        (
            "Which of <object0>, <object1>, <object2> has the largest straight-line distance to it?",
            "closest_to_camera order=far",
        ),
        ("||p(<object0>) - p(<object1>)|| in metres, p the box centre", "center_distance"),
        ("bottom of <object1> minus bottom of <object0>, in cm", "height_difference point=bottom unit=cm"),
        (
            "Compare the widths of <object0> and <object1> and give me the one with the smallest.",
            "tallest_choice dim=width order=min",
        ),
        ("Does <object0> sit on <object1> (with <object1> holding it up)?", "above_predicate"),
        ("how far is <object0> from u in ft", "distance_to_camera unit=ft"),
        (
            "If I turn a sixth of a full rotation to the left, what o'clock is <object0> at?",
            "future_direction_clock turn=left angle_deg=60",
        ),
        ("With 2 feet 6 inches of reach, can I grab <object0>?", "reachability arm_length_m=0.762"),
        # "center of OBJ to center of OBJ", "how much <unit>" asks a distance
        ("From the center of <object1> to the center of <object0>, how much mm?", "center_distance unit=mm"),
        # typos one swap, drop or extra letter from a cue word (not at its end, not a substitution)
        ("How far away from the camrea is <object0>?", "distance_to_camera"),
        ("What's the heigth of the top of <object0> off the floor?", "height_from_ground point=top"),
        ("Which is tallre, <object0> or <object1>?", "tallest_choice"),
        ("How many degres clockwise to face <object0>?", "rotate_to_face"),
        (
            "How many degrees counterclockwise until my heading points straight at <object0>?",
            "rotate_to_face direction=ccw",
        ),
    ],
)
def test_slots_from_free_text(question: str, structured: str | None) -> None:
    p, _ = parse_question(question)
    assert (None if p is None else p.structured()) == structured


def test_questions_without_references_count_the_regions() -> None:
    p, _ = parse_question("How far is it from me?", n_regions=1)
    assert p is not None and p.task == "distance_to_camera"


@pytest.mark.parametrize(
    "question",
    ["What color is <object0>?", "Describe the scene.", "Which one is red, <object0> or <object1>?"],
)
def test_unmappable_questions_give_the_reason(question: str) -> None:
    p, why = parse_question(question)
    assert p is None and why.startswith(NOT_MEASURABLE)


# Development questions the parser refuses on purpose (blind18/19, issue 24): "mil" is a millimetre to
# some askers and a thousandth of an inch to others; a typo by a substituted letter is not corrected
# ("wieder", "distent": "closet" is a word); "fits on the top shelf" names a top the reading does not use.
# blind20/21: more typos past correction (a substituted letter, "distanse"; a word under five letters,
# "lowr"; a letter added at the end, "lefth"), a notation no rule defines ("rel_side a=OBJ ref=OBJ"), and
# "on the bottom ... the lower one" of two (a stacking or a lower centre: the words do not say which).
# blind22/23: "lower down" of two with neither "than" nor the floor (one writer meant the one underneath,
# another the lower centre); "at the top/bottom" after a comma, which may name a stacking; a denial then
# its correction ("isn't right of OBJ, it's left of it"); a move to the object ("roll straight over to
# OBJ"), a fit asked in an unpunctuated run-on, notation with a yaw to return, a walk told vaguely
# ("scooted around a fair bit"), a difference in notation whose minus reads as a dash — refusals not
# generalised on, answered by no reading.
# Issue 24, the lead's decision after blind24/25: a yes/no question or statement whose comparison is
# denied ("isn't OBJ closer than OBJ", "OBJ is not as wide as OBJ, correct?") is refused, in every set:
# writers label a denied comparison as the one named or as its opposite, and a yes or a no to a negated
# question is itself ambiguous in English. blind24/25 also: self-corrections ("sorry", "no wait", "I
# mean", ", no,"), which words stand is not for rules to guess; "the lower one" of two (the one under
# the other, or the lower centre); a horizontal range or angular offset, a plan length, port and
# starboard, a clock-hour range "(1-12)", a yaw to bring onto the heading; context sentences carrying
# cue words ("a spinning top", "the top shelf", "a bit worn", "and is now facing") — refusals not
# generalised on, answered by no reading.
# Refused is never answered: each must stay a refusal, never become a silent wrong answer.
REFUSED_BY_DESIGN = {
    # (the lead, after merging para17) a changed frame, refused: the view said mirrored after the
    # question, and "facing the mirror" as a simile
    'From your view, is <object0> sitting to the left or to the right of <object1>? The photographer '
    'needs it mirrored.',
    'Turning counter-clockwise, how many degrees to square up with <object1>, like a client facing the '
    'mirror?',
    # read by the glossary alone (spatial/lexicon.py) and refused again with the blind40/41 round's rule
    # for words of another language left unread: Swedish "närmast", "lägst", "längst", Turkish "ya da"
    'Hangisi sana en yakin: <object2>, <object0> ya da <object1>? Which is most close?',
    'Vilken är närmast? Of <object0>, <object1>, <object2>, which is closest to you?',
    'Vilken sitter lägst? Which of <object2>, <object1> and <object0> sits lowest, by its centre?',
    'Vilken är längst till höger? Which of <object2>, <object0>, <object1> is farthest right?',
    "How far's <object0> from <object1>, in mil?",
    "How much higher's <object0> mounted than <object2>, in mil?",
    "How wide's <object0> across its narrow side, in mil?",
    "Is <object0> wieder than <object1>?",
    "I need to know if it fits on the top shelf, so how tall is <object1> in cm?",
    "How much lowr is <object1> than <object0>, in centimeters?",
    "Which one is more on the lefth, <object2> or <object1>?",
    "rel_side a=<object2> ref=<object0>",
    "which ones on the bottom <object2> or <object1> like which is the lower one",
    "hey robot which is lower down the <object2> or the <object1>",
    "Which one's lower down, <object0> or <object2>?",
    "<object1> is how much more high than <object2>, measured at the top? in centimetre",
    "Which of <object1>, <object0>, <object2> is the most low above floor, at the bottom?",
    "<object2> isn't right of <object1>, it's left of it, correct?",
    "{action: face_target, target: <object0>, return: yaw_deg}",
    "You scooted around a fair bit there. Roughly how many feet would that add up to, start to finish?",
    "If you had to roll straight over to <object2>, how many metres would that be?",
    "will <object0> fit in the car how long is it in feet",
    "top_z(<object1>) - top_z(<object0>) in cm",
    "<object2> isn't taller than <object0>, yes?",
    "<object0> isn't lower than <object1>, right? centres",
    "Isn't <object0> the wider one compared with <object1>?",
    "Total distance you travelled, in centimetres... no wait, give it to me in inches.",
    "Report the horizontal range from the camera to <object2> in millimetres.",
    "Confirm: <object2> is not farther from the camera than <object1>.",
    "Is <object1> closer to you than <object2>? No wait, other way round: is <object2> closer than"
    " <object1>?",
    "Which of <object0>, <object2> and <object1> is closest to you? Sorry, I meant farthest from you.",
    "Which of <object1>, <object2>, <object0> is not near... I mean, which is the farthest from you?",
    "Of <object0>, <object1> and <object2>, identify the element with the greatest plan length.",
    "Which is wider, <object0> or <object2>? Sorry, which is narrower?",
    "which is lower down, <object1> or <object2>",
    "Between <object2> and <object0>, whose top is lower? No, wait, higher.",
    "Verify: the centre of <object2> is not lower than the centre of <object1>.",
    "Is <object1> stacked on <object0>... sorry, I mean is <object0> stacked on <object1>?",
    "Is <object2> to the right of <object1>? I mean the left: is it left of <object1>?",
    "Which is farthest to the right, <object2> or <object1>? Sorry, farthest to the left.",
    "How many degrees clockwise, no, counterclockwise, to face <object2>?",
    "Give the clockwise yaw needed to bring <object1> onto your heading.",
    "If you turn right 90, sorry, left 90, what o'clock is <object2> then?",
    "Arm of 50 cm, no, 55 cm. Can you reach <object0>?",
    "Pretend you're a little pirate ship sailing round the kitchen. How many feet did you sail from"
    " start to finish?",
    "If a tiny mouse stood on the floor right under <object1>, how many centimeters would it have"
    " to climb to touch the underside of it?",
    "Would you happen to know which of <object2> and <object0> is the lower one?",
    "Pretend you're a ship's captain. Is <object1> off the port side or the starboard side?",
    "The robot has paused beside the fridge after a long lap of the kitchen and is now facing the"
    " window; from that current facing, what is the angle in degrees to <object0>?",
    "Pretend you're a spinning top. How many degrees to the left do you spin until you're looking"
    " right at <object1>?",
    "Assume the floor is slippery and the wheels are a bit worn, which does not matter here; how"
    " many degrees must you rotate to the right to end up facing <object1>?",
    "The robot, having just finished restocking the top shelf, turns one hundred and fifty degrees"
    " to its left; afterwards, how many degrees from its heading is <object1>?",
    "There are boxes all over the floor and the radio is loud; your arm is one and a half metres"
    " long; can you reach <object1> without moving?",
    # blind26/27: clauses in another language beside an English gloss (Turkish, romanised Korean,
    # Italian, Portuguese), refused since the rules read English only; "not the nearer one" unturned; the
    # kinds refused above; and refusals not generalised on, answered by no reading.
    'Quanto voce andou no total durante o video? I mean how many meter you moved, sorry my english',
    'Toplam ne kadar yol gittin? How much you go, in feets please.',
    'Quanto e lontano <object2> da te, in centimetri? Scusa, I write bad english.',
    "So, I've been staring at this feed for a while and I keep wondering, since the angle makes it "
    'hard to judge, exactly how far away from you the <object2> is sitting - give it to me in ft. if '
    'you would.',
    'Mi pare che <object2> sia piu lontano da te di <object0>... is true? <object2> more far than <object0>?',
    'Which of <object1> and <object2> is not the nearer one to you?',
    '<object0>, <object1>, <object2> jung-e... sorry, among those three which is most far from you?',
    "I've got three things I'm keeping an eye on out here - the <object1>, the <object0>, and that "
    "<object2> over yonder - and what I'd like to know, if it's not too much bother, is which of them "
    'is the least far from you.',
    'PLS REPORT WHICH OF <object0>, <object2>, <object1> IS AT MAX RANGE FROM UNIT.',
    'Quanto longe fica <object0> do <object1>? em centimetros, please',
    '<object1> badak-eseo eolmana nopi isseoyo? the center of it, in centimetre',
    'Quanto mais alto esta o centro de <object0> em relacao ao centro de <object2>? in centimetros',
    "<object0>'in alti <object1>'in altindan ne kadar asagida? how much lower the bottom, in metre",
    '<object0> nopi-ga myeot senti-yeyo? How tall, in cm?',
    'Quanto e alto <object2>? in millimetri',
    "I've been going back and forth about this with my neighbour, and neither of us can settle it by "
    'eye, so tell me plainly: is <object0> not as wide as <object2>?',
    '<object2>, <object0>, <object1> - which has the smallest height? ki-ga jeil jakeun geo',
    "<object2>'nin tepesi <object0>'in tepesinden daha alcak mi? the top is lower?",
    'Il centro di <object0> e piu in alto di quello di <object1>? yes or no',
    'Of <object0> and <object2>, which is the lower one?',
    '<object0> ile <object1>, hangisi ustte? which is upper',
    '<object2> sta a destra di <object1>? I mean on the right, from your view',
    "<object1>, <object0>'in solunda mi saginda mi? left or right of it?",
    'Standing where you are and looking out, if you read the scene left to right like a page, which '
    'of <object0>, <object2> and <object1> would come at the very end, on the right?',
    '<object0> ve <object1>, hangisi daha sagda? the more right one',
    "Which hand's <object0> on, from where you're stood?",
    "PLS CONFIRM <object2> IS ON UNIT'S RIGHT SIDE.",
    '<object0> saginda mi solunda mi? your right or left?',
    "<object0> myeot si banghyang-iyeyo? what o'clock direction?",
    'How wide an angle is there between your nose and <object1>, in degrees?',
    '<object2> boryeomyeon myeot do dorayo? clockwise, how much degree turn',
    'Quanti gradi devi girare in senso antiorario per guardare <object1>?',
    "<object0>'a donmek icin saat yonunde kac derece donmelisin? clockwise degree",
    "Sola 135 derece donersen <object1> saat kac yonunde olur? which o'clock",
    'Eu acho que seu braco tem 1,2 metros... voce alcanca o <object0>? can reach?',
    "<object0>'a kolunla uzanabilir misin? can reach it?",
    "Chat's betting it's under two feet. Robot, how far is <object1> from the camera, in inches?",
    "Confirm for me that <object0> isn't closer to the camera than <object2>.",
    'No ranking needed: just name which of <object2>, <object0>, <object1> sits nearest the camera.',
    'What is the longest horizontal measurement of <object2>, in mm?',
    'Which of <object1> and <object0> is the lower one?',
    # issue 24, blind28/29's round: a word that no rule reads and no English list knows, where a cue
    # belongs (a unit's place, beside a turn verb, a question word's place, a tag), refused with the word:
    # question words and units in another language, and typos past correction in older sets ("farr",
    # "fur", "wat")
    'how farr away is <object0> from you in feet',
    "Wat o'clock direction is <object2> from you currently?",
    'um how fur uh how far is <object1> from you in centimetres',
    '<object0> is sit over the <object1>? wi-e isseoyo?',
    '<object0> angle from your front direction, myeot do-yeyo?',
    'Hoe hoog is <object0>? Tell me the height in centimeter.',
    'Po obrocie w lewo, I mean after you turn left 60 degrees, where is <object0> on the clock?',
    'Czy możesz reach <object2> with your arm? It is 1 metr long.',
    # blind28/29: clauses in another language, denied comparisons asked yes or no, "lower down" of two,
    # and refusals not generalised on (a walk told as steps summed, a Dutch comparative, "which hand",
    # a tape measurement, a clarification that names a task it is not, a camera's pan)
    'Sum up every step you took during the footage and give me the figure in mm.',
    'Ik wil weten: how long is the route you drove in whole video, in centimeter?',
    'confirm: <object0> NOT closer than <object1>',
    'Kipi kiko karibu zaidi: <object1>, <object0> au <object2>? Which is nearest to you?',
    'Bên trái hay bên phải? I mean, <object1> is on which side of you?',
    'I need a tape measurement, sensor to <object2>, in cm.',
    'Careful: not the gap between two objects. How far is <object0> from the camera itself, in inches?',
    'which one is lower down <object1> or <object2>',
    'Pan left onto <object2>: how many degrees is that move?',
    'Say we pan right 60 degrees. Where does <object0> land as a clock position?',
    # issue 24, blind30/31's round: a level on a person's body is another reference (refused with it)
    'Is <object1> about waist height? Tell me how high its top is from the floor, in cm.',
    # issue 24, blind30/31's round (measured once at 9332276): hearsay stating a quantity no reading checks,
    # words of another language, radio fragments with no quantity word, denied comparisons asked yes/no,
    # a side "of the screen", "the lower one" / "the upper" of two, words the lists do not know
    'Picker Six. Distance logged by you, start to stop, in inches. Over.',
    'Day crew said <object0> is about two metres off you. Confirm?',
    'Base, need a range on <object0>, say in mil, copy?',
    'Confirm <object1> is not closer to you than <object0>.',
    "Unit Three. <object1>, <object0>: which one's the far one? Over.",
    'The morning crew reckons <object0> sits 40 in. from <object1>. Confirm?',
    'Measure between centres of <object1> and <object0>, in cms.',
    'The other shift said the centre of <object0> is about a foot above the centre of <object1>. Right?',
    'Heard the top of <object1> is 6 inches under the top of <object0>. Confirm?',
    'Heard <object0> stands about 40" high. Check that?',
    '<object1> is not as long as <object0>, igen?',
    'Of <object0>, <object1>, <object2>, which has the greatest overall length?',
    'Measured at the top, is <object0> placed lower than <object1>?',
    'Confirm the underside of <object1> is not higher than the underside of <object0>.',
    'Which is the lower one, <object0> or <object1>?',
    'Which one is the upper, <object1> or <object0>?',
    '<object1> is on the left from <object0>, benar?',
    'Heard <object2> is the furthest right of <object0>, <object1> and <object2>. Right?',
    'Other shift said <object0> is about 30 degrees off your nose. True?',
    'Whose top is not as high: <object1> or <object2>?',
    'If your arm were a metre long, would <object2> be within your reach?',
    # blind32/33 (fresh8, measured once at e1eb0be), refused after this round: clauses of another language,
    # self-corrections ("sorry", a restart after "hold on"), a unit typo in a unit's place ("degress"),
    # denied comparisons asked yes or no, limits inside a claim, another person's reach or side, code
    # notations no rule defines, "beam", "range", "track length flown", "mil limetres"
    'Hur långt... sorry, how long way did you walk in total during the film? In meter please.',
    'Which from these three is most away from you - <object0>, <object2>, <object1>?',
    'Which of <object2>, <object0> and <object1> is the longest way from you? She should not walk too far.',
    'Surely <object0> and <object2> are less than a foot apart, eh? How many ft exactly?',
    'Could she reach the top of <object0> if she lifts her arm? I need its top height from the floor, in cm.',
    'Hur högt upp är <object1>? How high up is its top edge from the floor, in meter?',
    'Cu cât e mai jos? How much is the bottom of <object0> under the bottom of <object2>? metri',
    'Please how much is <object1> high? I want in meter.',
    'Hur lång är <object1>? The longest side, in centimeter.',
    "Surely <object2> is at least a metre long, eh? What's its length in metres?",
    'Cât de înalt? How much tall is <object1> from its bottom to its top, in mm?',
    "Bet you can't tell me which of <object0> and <object1> is the lower one.",
    "TICKET: <object1> ON UNIT'S LEFT? Y/N.",
    'For someone standing where you are, would <object2> be on their right hand side?',
    'Cât trebuie? How many degree you must rotate anti-clockwise for facing <object1>?',
    'Om du vänder dig... If you turn left 120 degree, in which clock direction is <object1>?',
    'Kan du nå <object0>? Arm is 1,1 meter.',
    'how many metres did the camera go all together sorry altogether during the video',
    'Confirm the full track length flown by the camera during the recording, in centimetres.',
    'how far is the <object0> from you in centimeter sorry centimetres',
    'Confirm <object2> is at greater range than <object0>.',
    "which is the furthest away <object1> <object2> or <object0> sorry I'm stirring",
    'Give me the range from <object1> to <object0>, inches.',
    "assert <object1>.top.z > 0; what's the top hieght of <object1> above floor in meters",
    'height offset of <object0> relative to <object2> at the top edge, in ft',
    "What's the beam of <object0>, in feet?",
    'how tall is the <object1> in centimeters sorry centimetres',
    'Of <object0> and <object2>, which has the smaller beam?',
    'test: bottom_z(<object2>) > bottom_z(<object1>) -> True?',
    'is <object2> sitting on <object1> hold on is it on top of it',
    'which of these is farthest on the left side <object2> <object1> sorry',
    'Is <object1> off our port side?',
    "in clock terms where's <object2> sorry where is <object2> from the camera",
    'compute yaw offset from camera forward axis to <object2> (deg)',
    "how many degrees is <object0> from your front sorry from the way you're facing",
    # blind34/35 (fresh9, measured once at 1197afb), refused after this round: words of another language
    # (Czech, Tagalog and Ukrainian clauses, tags and unit inflections), "not X-er than" asked yes or no,
    # a way's length on a noun ("the shortest hike"), a turn toward an object by no said amount (read as
    # rotate_to_face only where its goal is said as a face), misspelt cue words past safe correction,
    # notations and words no rule defines ("odometry", "max depth", "near? OBJ | OBJ", "yaw", "broad")
    'Total distance the camera has trekked from the first frame until now, ft please.',
    'Confirm or deny: <object1> is NOT closer to the camera than <object2>.',
    'Sa tatlo, which is most far from me: <object0>, <object2>, <object1>?',
    'Which of <object0>, <object1>, <object2> is the shortest hike from here?',
    'How much ground lies between <object2> and <object1>?',
    'Ano ang height ng center of <object0> from floor? in centimetre',
    'Gaano kataas, how much more high is <object0> than <object1>, center to center, in cm?',
    'How many inch is the top of <object2> over the top of <object0>?',
    'Gaano kataas ang <object0>? How tall it is in cm?',
    "Which object's top is at the greater height above the floor: <object0> or <object1>?",
    "Whose underside is nearer floor level: <object2>'s or <object0>'s?",
    'Treating my view as a map with left as west: does <object1> lie west of <object0>?',
    'Scanning left to right, which do I see first: <object2>, <object1> or <object0>?',
    'Is <object2> on your right hand side? Ano?',
    'Nasa kaliwa ba, is the <object0> on your left?',
    'Report the side (left/right) of the robot on which <object2> is located.',
    'How big angle (in stupních, degrees) is between where I look now and <object2>?',
    'How many degree I must turn against clock to look to <object2>?',
    'Required yaw rotation, in degrees, to bring <object1> to the centre of the view.',
    "Turning the same way as a clock's hands, how many degrees until I face <object2>?",
    'Kung kumanan ako, if I turn right, how many degree will be <object0> from my front?',
    'After I turn to the left on 135 degrees, <object0> will be on which hour?',
    'Abot ko ba, can I reach the <object0> with my hand?',
    'odometry sum, mtrs',
    'near? <object0> | <object2>',
    "Please tell me which one is the most far away: <object2>, <object1> or <object0>. My eyes aren't good.",
    'max depth among <object0> <object1> <object2>',
    'Kids, how much lower down is the middle of <object0> compared with the middle of <object2>, in meters?',
    'len <object1> < len <object0>? y/n',
    'ctr_z <object0> < ctr_z <object2>? y/n',
    'Which is the lower one, <object0> or <object2>?',
    'Which is further to the lefft: <object2> or <object1>?',
    'Bearing of <object2> relative to heading, degres?',
    'turn_cw -> <object0>, deg',
    'turn_ccw -> <object1>, deg',
    'turn -> <object2>, deg',
    # blind36/37 (fresh10, measured once at 6d20cac), refused after this round: words of another language
    # (Polish, Japanese, Portuguese: clauses, question words and particles, unit words), a question particle
    # of another language before a choice reading ("Czy OBJ is higher ... than OBJ?"), phrasings no rule
    # reads ("measure it: you to OBJ", "highest up at the top", "cumulative path ... from first to last
    # frame", "the pair OBJ/OBJ, ... the upper item")
    'Measure it: you to <object1>, inches.',
    'Czy <object1> is higher from floor than <object2>?',
    'which of <object0> <object1> <object2> is highest up at the top',
    'Hidari most one among <object0>, <object2>, <object1>?',
    'Which side of robot is <object0>, esquerda ou direita?',
    'Is <object1> at the left hand of you? Dziekuje.',
    'Nan-ji direction is <object2> from you, like clock?',
    'How much turn you need for look to <object0>? In graus.',
    "Depois de virar para direita 90 graus, <object0> is at what o'clock?",
    'Item 1.02 - cumulative path travelled by the camera from first to last'
    ' frame, tolerance 0.1 ft; state in foot.',
    'Item 11.02 - for the pair <object0>/<object1>, identify the upper item.',
    # blind38/39 (fresh11, measured once at c0ff211), refused after this round: words of another language
    # (German, Spanish, Hindi, Korean), surveyor terms (instrument, station, offset, baseline, survey track),
    # operator function-call and key=value forms no family reads yet, a planner's "lower_of" (the lower
    # centre or the one underneath: the words do not say), asides to a stream's chat, turn-to-face
    # wordings ("bring OBJ onto my heading"), stackings and "the lower one", wordings no rule reads
    'Wie viel... sorry, how many centimeter has the camera moved total during the recording?',
    'Cuánto... how long is the way the robot made in whole video, in cms?',
    'Wie weit... how far is <object1> away of you, in Fuß?',
    'Identify, of the three objects <object1>, <object2> and <object0>, the one with the minimum'
    ' straight-line distance from the camera centre.',
    "Three contenders on the pitch, <object2>, <object1> and <object0>! Who's the closest to our camera"
    " today?",
    'Wie hoch... how high over the floor is the lowest part of <object1>? in Zentimeter',
    'Tallest of the bunch, who takes the crown: <object1>, <object2> or <object0>?',
    '<object2> sits lower than <object0>, measured at the bottom, correct?',
    '<object1> is under of <object0>? yes or no',
    '<object0> stacked right on top of <object2>, can we confirm that call?',
    'the one furthest to the rite among <object0> <object1> <object2>',
    '<object2> on robot left side or right side?',
    'Specify the clockwise yaw rotation, in degrees, required to bring <object2> onto my optical axis.',
    "Wenn ich mich drehe... if I turn right, where is <object1> then in o'clock?",
    'puedo alcanzar <object1>? my arm is 1 meter',
    "What's the cumulative distance along your track from start to end of the survey, in millimetres?",
    "What's the offset from the instrument to <object0>? Metres is fine.",
    'Between <object1> and <object2>, which has the greater range from the station?',
    'Identify which of <object0>, <object2>, <object1> lies at the greatest offset from the instrument.',
    'max_range_of <object1> <object2> <object0>',
    'Shoot the baseline between <object0> and <object1> in centimeters.',
    'elev obj=<object1> ref=floor point=center units=m',
    "how high up is <object1>'s highest point from the floor in metres? chat guessed 2",
    'query=min_length objs=[<object1>,<object2>,<object0>]',
    "Of <object2> and <object0>, which one's the upper?",
    'query=lower_of a=<object1> b=<object0>',
    'Confirm <object0> is left of your line of sight.',
    'is_left(<object2>)',
    'How many degrees counterclockwise must you rotate to bring <object2> onto your heading?',
    'If you turned counterclockwise, how many degrees until you faced <object2>?',
    'query=post_turn_clock turn=right angle=120 target=<object1>',
    # blind19/32/34/38, refused after the blind40/41 round: a word of another alphabet inside a clause the
    # rules read (a thanks alone in its clause is an aside), a slip one letter from a cue word ("abuve")
    'How high is the centre of <object2> abuve the floor in cm?',
    '<object1> stă peste <object2>? I mean, is <object1> lying over <object2>?',
    '<object0>, <object1>, <object2> 중에... which thing is most far from robot?',
    # blind40/41 (fresh12, measured once at 365e690), refused after this round: words of another language
    # (French, Turkish, Swahili, Vietnamese), apologies that correct or name a cue, a denied comparison to
    # confirm, a farmer's rough measures and asides, stage directions, a tester's step with no question,
    # "the lower item" and "upper item in stack", typos past correction, wordings no rule reads
    'Robot, toplam how far you walked in this video? Give answer in meters.',
    'Across the whole scene, how far did you track, all your moves added together?',
    '<object1> est à combien de mètres de moi?',
    'Bu <object2> benden kaç metre uzakta? I mean how far it is from me.',
    '<object1> est plus proche of me than <object0>, yes or no?',
    'Confirm that <object2> is not closer to you than <object1>.',
    'Kati ya <object1> na <object0>, ipi iko karibu zaidi with you?',
    'Which sits further downstage, closer to you, <object2> or <object1>?',
    "Sorry, I'm new... out of <object2>, <object1>, and <object0>, which one is, like, the farthest from "
    'you? Or does that not make sense?',
    'Parmi <object1>, <object0> et <object2>, lequel is the nearest to me?',
    'Distance entre <object2> et <object0>, combien de metres?',
    '<object2> ile <object1> arasındaki mesafe ne kadar? in meter please',
    'Umbali kati ya <object1> na <object2> is how many feets?',
    'Le bas de <object2>, it is at what height from the sol? in metres',
    'Kwa millimita, the centre of <object1> is how high above floor?',
    "<object2>'nin altı <object1>'in altından ne kadar yüksek? how much higher is the bottom, in cm",
    '<object0> iko juu kuliko <object2> by how much? centimetres',
    'Quelle est la largeur de <object1>? in cm please',
    'Urefu wa <object1> ni ngapi? I mean how long it is, the long side, in inch',
    'Which of <object2> and <object1> is narrower... sorry, I mean less wide?',
    'Lequel est le plus long, <object0>, <object2> or <object1>?',
    "<object0> daha uzun mu <object1>'den? I mean longer, horizontal",
    'Lequel est placé le plus haut, <object2>, <object1> ou <object0>, by the top?',
    '<object1> mi daha alçakta, <object0> mı? measured at the bottom',
    "<object2>, <object1>'in altında mı? is it under?",
    "<object2>, <object1>'in solunda mı? from camera",
    'Upande gani wa <object2>, <object1> iko? left or right, for you',
    '<object0> ở bên trái <object2> phải không? from what you see',
    'Entre <object1> et <object2>, lequel est le plus à droite, for you?',
    'En solda hangisi: <object2> or <object1>? from your view',
    'Kipi kiko kushoto zaidi, <object0> or <object2>? for you',
    'Cái nào bên trái nhất, <object1>, <object2> hay <object0>? the most left one',
    '<object1> is on my left side, oui?',
    '<object1> benim sağımda mı? on my right?',
    'Which side of you is <object2> on? Sorry, I mean, left or right?',
    'Je, <object2> iko upande wako wa kulia? on your right?',
    "Is <object0> maybe not on your left? I'm a bit turned around.",
    '<object1> ở bên phải hay bên trái của bạn? left or right of you?',
    "<object1> saat kaç yönünde? like 3 o'clock",
    '<object2> iko saa ngapi kutoka kwako? clock direction',
    '<object1> ở hướng mấy giờ from you now?',
    '<object1>, önüme göre kaç derece? angle from my front',
    'Pembe kati ya mbele yako na <object2> ni digrii ngapi?',
    'Góc giữa hướng nhìn and <object0> is how many độ?',
    'How many degrees do you need to turn to face <object0>? Sorry, either direction, I guess.',
    'Kaç derece saat yönünün tersine dönmeliyim to face <object1>?',
    'Niyageuke digrii ngapi ili kuelekea <object2>? how much turn',
    'Tôi phải xoay bao nhiêu độ theo chiều kim đồng hồ to face <object1>? clockwise',
    "Sola 60 derece dönersem, <object1> saat kaç yönünde olur? which o'clock",
    'Um, suppose you turn right, just a normal turn, where would <object2> be then, in degrees?',
    'Ukigeuka kulia digrii 15, <object2> itakuwa saa ngapi? clock',
    "Nếu tôi quay trái 75 độ, <object1> sẽ ở mấy giờ? what o'clock",
    "Can you reach <object0> with your arm? Sorry, I don't know how long your arm is.",
    "Kolum 30 inç, <object1>'e uzanabilir miyim? can I reach it",
    'Mkono wako ni mita 1.5, unaweza kufika <object2>?',
    'Bras de 0,9 mètre: can you reach <object1>?',
    "Reckon how far you've been carried round this barn the whole time, in feet? A good long stride's "
    'about three foot, but give it me in feet.',
    'How far off is <object0> from you, in foot? About how many pitchfork handles is that?',
    "Which one's the shortest walk from you, <object1>, <object2> or <object0>? I don't fancy hauling "
    'feed further than I must.',
    "How high off the floor is the top of <object0>, in feet? Higher than a calf's back?",
    'How tall is <object0>, in feet? Taller than a man, would you say?',
    'Upper item in stack (<object2>, <object0>):',
    'Lower item of pair <object1> / <object0>:',
    'Is <object2> perched up abov <object1>?',
    # blind42/43 (fresh13, measured once at 9e35441), refused after this round: words of another language the
    # glossary does not hold (Italian "vero", Dutch "hoe", "ver", Malay "dekat"), a formal register ("by what
    # vertical interval", "were one to draw a line"), a learner's "the most far", asides naming a cue word,
    # "falls short of … in elevation", "the lower one"
    'Tell me please the hole way robot has go in this video.',
    'Which is not near at all, I mean the most far, between <object0>, <object1>, <object2>?',
    'Setting aside the question of whether motion is real at all, how far has the camera, in aggregate, '
    'moved over the course of this recording?',
    "And that stunning <object2>, original feature by the way, how many feet is it from where we're "
    'standing?',
    "Which is nearest the camera: <object1>, <object2> or <object0>? None of them is far, mind you, it's "
    'a compact space!',
    'By what vertical interval, in millimetres, does the centre of <object1> lie beneath the centre '
    'of <object0>?',
    'Of the two horizontal dimensions of <object1>, take the shorter: what is its magnitude, in feet?',
    'Among <object2>, <object0> and <object1>, which possesses the least length along its longer '
    'horizontal axis?',
    "Isn't the <object1> placed higher than the <object2>? Lovely eye-line.",
    'Using the clock-face convention, with twelve denoting your present heading, at what hour does '
    '<object0> lie?',
    'Supposing you turned in the clockwise direction, how many degrees of rotation would bring '
    '<object1> dead ahead?',
    'Hoe far is <object0> away from you? Give it in cm please.',
    'Between <object0> and <object1>, which one is more dekat, I mean near, to you?',
    'Wich one is the most ver from you: <object2>, <object0> of <object1>?',
    'State, in millimetres, the amount by which the uppermost point of <object0> falls short of the '
    'uppermost point of <object1> in elevation.',
    'Hoe high is <object0> from bottom to top? In mm please.',
    'Is <object1> sitting lower than <object0>, measured at the bottom?',
    'Just to be certain, which of <object1> and <object0> is the lower one?',
    # blind44/45 (fresh14, measured once at 87faa44), refused after this round: answers of the wrong type
    # (the answer-type check: "which minimises the distance" read as a distance, a statement to confirm
    # read as a choice),
    # notation and formal wording, asides after a complete question, crossword synonyms, words of another
    # language the glossary does not hold, an accountant's abbreviations, a learner's comparatives
    'Compute the sum of the distances between consecutive camera positions across all frames, in cm.',
    'Let p be the position of the camera and c the centre of <object0>. Find |p − c| in metres.',
    'Of <object0> and <object1>, which minimises the distance to the camera?',
    'Let d(X) be the camera-to-X distance. Is d(<object2>) > d(<object1>)?',
    '<object0> is more far from camera than <object1>, yes? ki or ara?',
    "Isn't <object2> further away than <object1>? Confirm it.",
    'Let a and b be the centroids of <object2> and <object1>. Evaluate ||a − b|| in mm.',
    '<object1> is lower from <object2>, how many meter lower? measure at the bottom',
    'Is the length of <object1> strictly less than the length of <object0>?',
    'Let w(X) denote the width of X. Which element of {<object2>, <object1>} maximises w?',
    "Isn't <object0> longer than <object2>? Just confirm.",
    'Of <object0> and <object1>, which has its top at the greater height above the floor?',
    'Let z(X) be the height of the top of X above the floor. Which of <object0>, <object2>, <object1> '
    'minimises z?',
    'Is <object2> mounted lower than <object1>? Measured at the top, obviously.',
    'Of <object2> and <object1>, identify the lower one in the vertical stacking.',
    '<object0> is below of <object2>? ara?',
    "Is <object1> on my right or not? I can't tell from here.",
    'Let θ be the bearing of <object1> relative to the current heading. Find θ in degrees.',
    'My son wants to know how many degrees the robot has to spin to the right so it faces <object0>.',
    'Let the arm length be ℓ = 30 inches. Is <object1> within reach?',
    'Cryptic clue, if you will: total ambulation of the lens over the whole footage, in metres?',
    'Peregrination of the camera, summed end to end: how many foot?',
    'Give me the full tally of your wanderings, expressed in inches.',
    'Max range from robot: <object0>, <object1>, <object2>. Which?',
    '<object1>, <object2> and <object0>, which one is not so far like the others, the most close?',
    'what is distance between <object2> and <object0>? in santimetrai... centimeters',
    'By how many feet does the crown of <object2> overtop the crown of <object0>?',
    'Height delta, tops, <object2> vs <object1>, m',
    "Sink of <object0>'s base beneath <object2>'s base, in centimetres?",
    'Length of <object1> (longer horiz. side), in inches',
    '<object1> L = ? m',
    'Kiek aukštas <object0>? how tall it is in centimetre',
    'Loftiest of <object2>, <object0> and <object1>?',
    'You would agree that the top of <object2> is not as high as the top of <object1>?',
    'From <object0> and <object2>, which one is more up, on the top?',
    'Superjacent of the two, <object0> or <object1>?',
    'L-most obj among <object0>, <object2>, <object1> (cam view)',
    "Confirm <object2> on robot's left.",
    "Kelinta valanda... I mean, <object0> is at what o'clock direction for you now?",
    'Reach test: arm 750 mm, target <object2>. Feasible?',
    # blind46/47 (fresh15, measured once at aa17c12), refused after this round: a choice asked without
    # "which" read as a number (the choice check), a turn's stated angle no reading uses (the number
    # check), words of another language the glossary does not hold ("fut", "santimetri"), radio or
    # instructor talk around a question not read ("flow", "gimme"), a learner's "how much is high" (height
    # above the floor or own height?), "which under other", "how much upper ... the middles", "more
    # closer ... of all three", an aside naming a cue ("I'll dust the lower one first")
    'Between <object0> and <object2>, identify the object at greater distance from the sensor.',
    '<object1> and <object2> how far each other? in fut.',
    'Gimme millimeters between <object2> and <object1>, over.',
    'Where does the base of <object2> sit? How many metres above the mat, I mean the floor?',
    'How much is high <object0>?',
    'What is the wideness of <object2>? in santimetri.',
    'Which one is down, <object0> or <object1>, which under other?',
    'Flow 135 degrees toward your right; then what clock hour holds <object1>?',
    'Which is more closer to camera of all three: <object1>, <object2>, <object0>?',
    'How tall from floor up to the top of <object1> is it, in fut?',
    'How much upper is <object0> than <object2>, in metres? The middles of them.',
    "Which is placed lower, <object1> or <object0>? I'll dust the lower one first.",
    'Were you to turn about to the right, 180 degrees, at what angle would <object2> lie, in degrees?',
    # blind48/49 (fresh16, measured once at c8922ee), refused after this round: millimetres as "mil"
    # (a thousandth of an inch to others), words of another language the glossary does not hold
    # ("walaal", "ji", "yego", "ezkerra" ...; a yes/no to "not X-er than" stays refused after them), "the
    # lower one, down side", two clock hours offered as guesses ("two o'clock, ten?": ten, or 2:10?)
    'Total travel of the camera rig, first frame to last. Give it me in mil.',
    '<object1> is more near to you than <object0>, haa?',
    '<object0> is not closer to you then <object1>, right yaar?',
    "What's the centre-to-centre between <object0> and <object1> in mil?",
    "What's the height AFF to the top of <object0>, in mil?",
    'How much higher is the top of <object0> than the top of <object1>, in mil?',
    'How much meter the bottom of <object0> is more low than bottom of <object2>, walaal?',
    'How tall is <object0>, in mil?',
    '<object1> is not taller than <object0>, correct ba?',
    'Bottom of <object1> is not more high than bottom of <object0>, right walaal?',
    'Between <object0> and <object2>, which one is the upper, hvad?',
    '<object2> or <object1>, which is the lower one, down side?',
    '<object2>, <object1>, <object0>: which is most on left side from you, walaal?',
    "Clock direction to <object0> from the camera right now: what are we talking, two o'clock, ten?",
    "Your arm's 600 mil. Can you get to <object1> from where you're stood?",
    'Is <object0> more far away from you than <object2>, ja?',
    '<object2> is closer to you compare to <object1>? yego or oya?',
    '<object1> is more small than <object0> in the height? yego?',
    'In your view, <object0> is in which side of <object2>, ezkerra or eskuina?',
    'How many degrees turning to left (ezkerrera) you need to look direct at <object0>?',
    # blind50/51 (fresh17, measured once at a90e1ec), refused after the lead's generalisation: asides of
    # the askers' trades after a complete question, denied comparisons, words of another language the
    # glossary does not hold, and the five silent wrong ones, now refused by kind (a comparison stated
    # with a question mark and read as a choice, "who" read as a yes/no, an aside after the '?' that
    # changes the reading, "lowest in height")
    '<object2> is not closer to you than <object1>, yes or no?',
    'How much space is there from <object0> to <object2>? I need inches for the aisle runner.',
    'How tall up from the floor does <object1> reach at its highest point, in ft?',
    'Top of <object1> over top of <object2>, by how many centimetres?',
    'Lowest in height of <object1>, <object0>, <object2> — which?',
    'Whose top reaches higher, <object2> or <object1>? The bunting goes above the higher one.',
    'Is <object1> not sitting lower than <object0>? Confirm.',
    'Which one is upper, <object1> or <object2>? Prosím, tell me.',
    'Name the item nearest the left edge of your view among <object0>, <object1> and <object2>.',
    "Give <object1>'s direction from me in o'clock terms — I can't turn my head in this suit.",
    'Spin clockwise, how many degrees to square up with <object1>, going twice!',
    "Tell me the turn in degrees to point yourself at <object2> — I'll swing the smoker the same way.",
    "Measure me your full travel over the video the way I'd measure an inseam: in inches, start to finish.",
    'Did you move much? Give me the sum of all your movement in the video, in cm.',
    "Of <object0> and <object1>, which one's hugging the camera more closely?",
    '<object0> is not more far than <object2> from me, right?',
    'Measure <object2> to <object0> for me like a shoulder width — in inches.',
    'How much <object0> is more low than <object2> at the top, in mm?',
    'How much high is the centre of <object1> compare to the centre of <object0>, in cm?',
    'Measure the width of <object1> for me, the shorter way across, in inches.',
    '<object2> is less wide than <object0>? Say haan or nahi.',
    'Which is placed the least high, at the top: <object0>, <object2> or <object1>?',
    'Is <object2> above <object1>? Ewe or hayi?',
    '<object0> and <object1> — who is the upper one?',
    'Name whichever of <object1>, <object2> and <object0> is farthest to your right.',
    'If twelve is straight ahead, what time is <object2> right now?',
    'How much degree I turn to look <object1>?',
    'Robot spins right, 30 degrees — what angle is <object2> at after that, in degrees?',
    # blind52/53 (fresh18, measured once at 2f8f4e3), refused after the lead's generalisation: words of
    # another language the glossary does not hold (Marathi, Wolof, Slovenian, Haitian Creole), asides of
    # the askers' trades, and the six silent wrong ones now refused or read by kind (a turn to face said
    # with a turn verb and no amount, "how many mil", "top to bottom" as a placement)
    'Koliko... sorry, how much the camera move all together in this video? answer in mm.',
    'Ladies and gentlemen, the moment of truth: how far has our robot journeyed from start to finish?',
    'And for the bonus round, the sum of every little shuffle our robot made in this video... in inches!',
    'For ten thousand points: how many feet separate you from <object2>?!',
    'My girls count distance in steps, but you give it to me in millimeters: how far is <object1> '
    'from you right now?',
    'Three summits on the horizon: <object2>, <object0>, <object1>. Which one is the farthest from '
    'our position?',
    "Which of <object1>, <object2> and <object0> is the closest to the camera, dancers? Who's in "
    "the front row?",
    'Among <object0>, <object2> and <object1>, point me the one that is the longest way from the lens.',
    'If I walked straight to each of <object2>, <object1> and <object0>, which would I reach first?',
    "The space from <object0> to <object1>, is it a grand jeté's worth? Give it to me in centimeters.",
    'By how much does the top of <object1> rise above the top of <object0>, like a relevé? Metres.',
    'How much deeper down is the middle of <object2> than the middle of <object1>, in ft?',
    'Koliko niže? How much more low is bottom of <object0> than bottom of <object1>, in inches?',
    'Standing up straight like a dancer, how tall would <object1> be, top to bottom, in inches?',
    'Which of <object0> and <object2> is the broader one, side to side across its narrow dimension?',
    '<object1> is sitting above <object0>. Can you confirm, dancers?',
    "Saat neçədir... which clock is <object2> from you, like 2 o'clock or 10 o'clock?",
    "To point yourself at <object1>, turning with the clock, what's the angle?",
    'Quarter turn to the right, dancers, and tell me: at what hour on the clock is <object2> now?',
    'Kiti distance you moved in the whole video? Tell in feets please.',
    'Retractor, please. Camera movement summed over the whole recording - in mm.',
    'Quick, grab-and-go order: how many inches to <object1> from you?',
    'Kiti lamb aahe <object0> from you? in centimeter please',
    'How many mil from the camera to <object2>, prosim?',
    "Oat milk's on <object0> - how far off is it from you, in feet?",
    'Between <object0> and <object2> wich one is more away from you?',
    "Sponge count later. <object2> isn't farther away from you than <object0>, is it?",
    'Which from <object0>, <object1>, <object2> is most near to you, sanga na?',
    'Katera od <object2>, <object0> and <object1> is nearest to camera?',
    "How far is <object0> from <object1>, in metres? Grinder's jammed, be quick.",
    'Kiti antar between <object1> and <object2>? in meter',
    'Tell me the space from <object0> to <object2> in inchs, mesi.',
    'Kiti unch <object0> from floor, middle of it, in inch?',
    'Koliko visoko is center of <object0> above the floor, in centimetre?',
    "Milk steamer's screaming - how high off the ground is <object1>, in feet?",
    'Bottoms only: how far is <object0> below <object1>, in millimetres? Cautery ready.',
    'Kiti jaast unch is <object2> than <object1>, at the bottom, in feet?',
    'Koliko nizje is the bottom of <object2> compared to the bottom of <object0>, in inches?',
    'Konbyen santimet <object1> pi wo pase <object0> at the top?',
    'Kiti unchi of <object0> in feet?',
    'Koliko je visok <object1>, in inch?',
    'Ndax you can tell me long side of <object0> in centimetre?',
    'Ndax <object1> is more wide than <object0>? waaw?',
    'Eske <object2> is less tall than <object1>?',
    'Kon jaast unch at the top, <object1> ki <object2>?',
    'Ndax bottom of <object2> is more high than bottom of <object1>?',
    'Kiles ki pi wo from floor, <object1> oswa <object0>?',
    'Je <object0> levo od <object2>, from you view?',
    "Left or right - where's <object1> compared to <object2>? Grande mocha up.",
    'Kote <object0> ye, goch or dwat of <object1>?',
    'Katera is najbolj desno: <object0>, <object1> ali <object2>?',
    'Kiles ki pi a dwat, <object0> oswa <object2>?',
    'Ndax <object2> is on you right side?',
    'Je <object2> na tvoji levi?',
    'Kote <object2> ye, on your goch or dwat?',
    'Ndax you say <object1> position as clock hour from you now?',
    'A ki le <object0> ye from you, like clock direction?',
    'Kiti degree you must turn clockwise to look <object1>?',
    "Rotate counter-clockwise till <object1>'s dead ahead: how many degrees? Needle.",
    'Ndax how many degree you turn in anti-clock way to face <object1>?',
    'Ko se obrnes desno, 120 degrees, how many degrees is <object0> then?',
    'Si ou vire a goch, ki le <object2> ap ye on the clock?',
    'Ndax you arm can reach <object1>?',
    'Ali lahko doseze <object1> with your arm, it is 1.2 meter long?',
    # blind54/55 (fresh19, measured once at 21184d7), refused after this round's generalisation: words of
    # another language the glossary does not hold (wt/lex6's), and the kinds docs/spatial.md lists as
    # left refused
    "I'm flat on my back under this sink and can't see you — what's the total distance you've moved "
    'so far, in centimetres?',
    'Before I sign off the walk-around: how far is <object0> from the camera, in feet?',
    'Give me the distance from you to <object2> in mil — I need it to cut the pipe.',
    '<object2> is less far from you then <object0>, houda?',
    'what is more a prop to you from <object0>, <object1> and <object2>? gràcies',
    'Which one is the upper, <object0> or <object2>?',
    'how much degree you must turn for look <object2>? gràcies',
    "Hold still for me, open a little wider... sorry, robot: what's the total path you moved during "
    'that clip, in centimetres?',
    'Cue 31 depends on it: about how many centimetres is <object1> from you?',
    'Am I right that <object0> is not nearer to you than <object2>? Asking from the rail.',
    'Which is nearest to you from the deck — <object1>, <object2> or <object0>?',
    'Among <object0>, <object1>, <object2>, which is the least far from you? Tilt your head back '
    'for me... robot, go ahead.',
    'How wide is <object2>, in millimetres? Open a touch wider for me.',
    'Is <object2> longer than <object0>? Tongue to the left, please.',
    'Confirm <object0> is longer than <object1>, then go cue 9.',
    'Of <object1>, <object2>, <object0>, which one is highest above the floor? Slight bite, please.',
    'Of <object0> and <object2>, which is the lower one? Standby.',
    'Of <object2>, <object0> and <object1>, which is farthest to the right as you look? Cotton roll in.',
    'Using clock positions, where does <object0> sit relative to you? Like upper-right molar is 2 '
    "o'clock for me.",
    # (end of blind54/55)
    # blind56/57 (fresh20, measured once at 4d94b1a) and blind58/59 (fresh21, measured once at a6809e3),
    # refused after this round: greetings and words of another language the glossary does not hold (kept
    # for the glossary's owner), a bound stated beside the question ("more than two metres away? Give me
    # the actual distance"), a thing compared that is no object named ("Higher than the bails?"), the
    # askers' trades and asides with a cue word in them ("like deep fine leg", "I'm on my knees so it's
    # hard to tell", "so I can cut the marionette crossbar"), a cue said only beside the question ("like a
    # bottom plate", "I'd have to reach up"), a learner's "less high" with no floor or placement word (the
    # shorter or the lower?), and single kinds docs/spatial.md lists ("lower down" of two, "which one is
    # the upper", "stick up past the top of", "in feet and inches", "lefft", "turn for look to")
    'Hw far you walk altogether in this video? Say in feet, my friend ask me. Spas.',
    "I'd bet you moved less than ten meters overall. What was your actual total distance travelled?",
    'Is <object2> more than two metres away from you? Give me the actual distance.',
    'Sa mamao <object1>? How far it is from you, the camera?',
    'How far is <object1> from where you are right now, in metres and not feet?',
    'Ke efe e haufi? Which of <object0>, <object2>, <object1> is more closer to you?',
    'How many feet would we walk going straight from <object1> to <object2>?',
    'What is the height of the centre of <object2> above the bench floor, in millimetres?',
    'Which is lower down, <object0> or <object2>?',
    'Is <object2> lying below <object1>, like a bottom plate under the movement?',
    'Is <object0> to the lef of <object2>, kali laska?',
    'Scanning the beach left to right, which comes first: <object1>, <object0> or <object2>?',
    'Do you have <object2> on your left-hand side, like the crown of a watch held face down?',
    'At what angle, in degrees, does <object1> lie from the way you face right now?',
    'Is <object1> less than 45 degrees from your facing direction? What is the exact angle?',
    'Show the group: how many degrees do you turn, and which way, to face <object0>?',
    'Turning like clock hands, how many degree until <object2> is in front of you?',
    'Salom! How much distanse you moved in all the video? Say in santimetrs please.',
    'Vet speaking: give me the overall distance the camera was carried during the video, in cms.',
    "I reckon you've moved no more than a few metres the whole time. How many mtrs was it really, all "
    'added up?',
    'Crane op, need distance camera to <object1> in ft, copy?',
    'Fakamolemole, how long it is from you until <object2>, in mil?',
    "Isn't <object1> nearer to you than <object2>? The horse is waiting, so yes or no.",
    'Among <object2>, <object0> and <object1>, which one sits farthest from your camera, out like deep '
    'fine leg?',
    'How many metres between <object0> and <object1>, centre to centre? Measure it like a pitch.',
    'What is distance from <object1> to <object2> in santimetrs?',
    'How high off the ground is the top of <object0>, in metres? Higher than the bails?',
    'How tall is <object0>, in metres? Taller than a set of stumps?',
    '<object0> is less high than <object1>, yes or no?',
    'Is <object1> to you right?',
    'How much degrees turn you need for look direct at <object0>?',
    "Slew right 30 degrees, then what's the bearing to <object2> in degrees? Over.",
    'Jam na. What is the range from you to <object0>, in meter?',
    "How tall off the floor does <object1> reach at its top, in meters? I'm on my knees so it's hard to "
    'tell.',
    'Tell me the height of <object1> in feet - will it fit under the lowest rack?',
    'Which one is the upper, <object1> or <object2>?',
    'Call out position of <object0> clockface style, twelve being your nose.',
    'How many degrees you must turn for look to <object2>?',
    'Between needle changes: give me the overall travel of the camera in cms.',
    'Add up every bit you moved through the footage and tell me the sum in inchs, like I measure my '
    'marionette strings.',
    'Which is not as close to you: <object0> or <object1>?',
    'Measure for me the space from <object0> to <object1>, in inches, so I can cut the marionette crossbar.',
    'Ikh vil wissen: the highest point of <object2>, how many meters from floor it is?',
    'How far does the top of <object0> stick up past the top of <object1>, in inches?',
    'How tall does <object0> stand, in feet and inches? Feet is fine.',
    'Ikh fregn: which is more low placed, <object1> or <object0>?',
    "Is <object1> mounted higher up than <object0>? I'd have to reach up to leave a note there.",
    'Vinaka, <object0> is under <object1>, io?',
    'Is <object1> right of <object2> from your point of view? Stage right and house right always confuse me.',
    'Is <object1> to the lefft of <object2> from the camera?',
    'Turnin clockwise, how far round to look at <object1>? Keep the arm steady though.',
    'Turn right - no number, just a turn right - and tell me the clock direction of <object0> afterwards.',
    "Is <object1> in arm's reach for you? I'd rather not lean over the client.",
    # (end of blind56 .. blind59)
    # redteam1 and redteam2 (round 20, development sets now): refused on purpose, by kind: a context
    # sentence about the asker's own place ("I'm on the left side of the room.") or a thing with a number
    # ("My ladder is 2 m tall"); a turn, a distance or a height set aside or denied ("not after any turn",
    # "without turning", "I don't mean the highest one"; round 21 reads the question after a leading "not
    # …" alone, so "not from you - from each other" and three like it are read now); two questions
    # with one picked afterwards; a correction ("no sorry", "Actually"); a person's side or reach; a
    # changed scene supposed; a sentence about another thing beside a walk; numbers in two units ("1 m 20
    # cm") or a spoken fraction of degrees; "off-centre" with a face; "the lower one of the pair"
    'My ladder is 2 m tall, but never mind that: how far did you move in total during the video, in inches?',
    'Say you swung round to your left a bit at the end. Ignore that; how far did you actually '
    'move overall during the video?',
    "Over the whole video, what's the total length of your route, in yards... no sorry, in feet?",
    'The top shelf is empty, by the way. How much distance did you cover overall during the recording?',
    "I'm standing on the left side of the room. How many metres is <object0> from you right now?",
    "I'm not asking where it would be after a turn, just how far is <object0> from you now, in mm?",
    'Is <object0> more than a metre away? Actually, just tell me how far it is from you, in inches.',
    "I'm on the left side of the room. Of <object0> and <object1>, which one is further away from you?",
    "Say you swung round to your left a bit, 45 or so; that doesn't change distances, so just "
    'tell me: which is nearer to you right now, <object0> or <object1>?',
    "I'm at the left end of the room. Is it <object0>, <object1> or <object2> that is nearest to you?",
    "I don't care which is the highest one. Which of <object0>, <object1> and <object2> is "
    'farthest from you?',
    "I'm on the right side of the room. How far is <object0> from <object1>, in inches?",
    "Your arm is 70 cm long, but that's beside the point: how far is <object0> from <object1>?",
    "I'm on the left side of the room. At its centre, how high above the floor is <object0>, in feet?",
    "I'm on the left. How much higher off the floor is the underside of <object0> than the "
    'underside of <object1>, in cm?',
    "I'm on the left side of the room. What is the length of the longer horizontal side of "
    '<object0>, in mm?',
    "Out of <object0>, <object1> and <object2>, which is the tallest? I don't mean the highest "
    'one, I mean its own height.',
    'Which is the highest one: <object2>, <object0> or <object1>? I mean placed highest, not tallest.',
    "I'm on the left side of the room. Which is less high above the floor, <object1> or <object0>?",
    "I'm on the left of the room. Is <object0> above <object1>?",
    'Is it <object0> or <object1> that is the lower one of the pair?',
    "I'm on the left side of the room. As you see them, is <object1> to the right of <object0>?",
    'Say you swung round to your left a bit; never mind that. From your current viewpoint, is '
    '<object0> on the left of <object1>?',
    "I'm on the left side of the room. Is <object0> on your right?",
    "I'm on the left side of the room. What o'clock direction is <object0> from you?",
    'Before you turn anywhere: what clock position is <object0> at right now?',
    "I'm not asking you to turn. Just what angle, in degrees, lies between your current forward "
    'direction and <object0>?',
    'How far off-centre is <object0>, in degrees, from the way you face right now?',
    "I'm on the left side of the room. How much do you have to turn to face <object0>, in degrees?",
    'Say you swung round to your left a bit, 45 or so. Where would <object0> be then, in degrees '
    'from your heading?',
    'If you turned to your right by 22 and a half degrees, how many degrees off your new heading '
    'would <object0> be?',
    'My ladder is 2 m tall, but ignore that. Can you reach <object0> with your arm?',
    'Can you reach <object0>? Your arm is 1 m 20 cm.',
    "Two things: what's the weather like, and how far has the camera moved overall? Only the "
    'second one matters to me.',
    'If someone put a lamp on the table, would that change anything? Never mind - just tell me '
    'which is nearer to you: <object1> or <object0>.',
    'The one on the left is my favourite, but tell me which of <object2>, <object0> and '
    '<object1> is closest to the camera.',
    'Two questions: which of <object1>, <object2> and <object0> is the heaviest, and which is '
    'the nearest to you? I only need the nearest one answered.',
    "She's closest to <object0> herself, but from you: which of <object0>, <object1> and "
    '<object2> is the most distant?',
    "Ignore how far either is from you; what's the distance between <object0> and <object1> in cm?",
    'Two questions: how tall is <object0>, and how high above the floor is its top? I only want the second.',
    'Two questions: how far is <object0> from you, and how long is it? I only need how long it is.',
    'If <object0> were moved to the other side of the room, it would still be the same width - '
    'so what is its width in centimetres?',
    "Two questions: which of them is heavier, and does <object1>'s bottom sit higher off the "
    "floor than <object0>'s bottom? Just the second.",
    'Two questions: is <object1> above <object0>, and what colour is it? Only the first matters.',
    "Looking from the other side wouldn't change the stack, so which of <object0> and <object1> "
    'is the one on top?',
    "She's facing you, so her left is your right - but I want it from your view: is <object1> "
    'left of <object0>?',
    'Two questions: how far is <object0> from <object1>, and on which side of <object1> is '
    '<object0>, from your view? Only the side, please.',
    'Two questions: which of <object0> and <object1> is bigger, and which is further to the left '
    'from you? I only want the second.',
    'Two questions: how far is <object0>, and is it on your left? Just answer the side question.',
    "The door on the right is at 3 o'clock - never mind that. Where's <object0> on the clock face from you?",
    "Not after any turn - as you face right now, what o'clock is <object0> at?",
    "Two questions: is <object0> on your left, and what's its bearing in degrees from where you "
    'face? Just the bearing.',
    'Without turning, how many degrees away from your forward direction is <object0>?',
    'Two questions: how far is <object0>, and can you reach it with your 30-inch arm? Only the reach one.',
    'She can reach things from her chair, but can you reach <object0> from where you are now?',
    # (end of redteam1 .. redteam2)
    # redteam3 and redteam4 (round 21, development sets now): refused on purpose, by kind: a statement
    # with a number or a unit beside the question ("OBJ looks about 2 feet tall.", "You're 3 metres from
    # OBJ.", "My toddler's arm is about 30 cm, but yours is 1.2 m", "a 70 cm doorway"), a unit denied
    # ("in inches, not feet", "Not in feet, in metres"), a place or another thing's size ("near the door",
    # "a 70 cm gap"), a correction or a question taken back that names a previous question ("No wait, I
    # asked for the nearest by mistake", "Turn right 60 degrees... no wait", "? Actually, give me"), a
    # fact about an object beside a choice after "I know;" or as a relative clause ("OBJ, which is
    # taller, or OBJ"), a reading set aside by "forget" / "don't need" / "doesn't matter", a turn set aside
    # or told as done ("Without turning", "Before you turn", "You turned 90 degrees earlier"), a clock's
    # convention stated ("If 12 is straight ahead"), a rank, a quantifier ("both at their centres"), "not
    # the closer one", quoted speech, a fit asked, "depth to", "from its own bottom to its own top"
    'You started near the door and ended up by the window. How many metres did you cover overall?',
    'How far did the robot go altogether while filming? Not in feet, in metres.',
    "The 3 metres to the wall don't matter here. What total distance did you move in the video, in inches?",
    '<object0> looks about 2 feet tall. How far is it from you, in metres?',
    'depth to <object0> (ft)?',
    'Which of <object0> and <object1> is not the closer one to you?',
    '<object1> is the tallest, I know; but which among <object0>, <object1> and <object2> is closest to '
    'you?',
    'Rank <object2>, <object1> and <object0> by distance from you and tell me only the most distant one.',
    'No wait, I asked for the nearest by mistake. Which of <object0>, <object1> and <object2> is the '
    'farthest from you?',
    '<object0> is about 50 cm from you; how far is it from <object1>, in millimetres?',
    'Separation between <object1> and <object0>, in inches, not feet.',
    '<object0> is 2 m from you; how high above the floor is its lowest point, in centimetres?',
    'Compared with <object1>, how much higher is <object0> when you measure both at their centres, in '
    'metres?',
    '<object0> is 3 feet from you; how long is it, in metres?',
    'How high is <object0> from its own bottom to its own top, in feet?',
    "There's a 70 cm gap I want to push <object0> through sideways. How wide is it, in inches?",
    'If 12 is straight ahead of you, what hour does <object0> sit at?',
    'Without turning, in which clock direction is <object0>?',
    'You turned 90 degrees earlier in the video, but where is <object0> now on the clock?',
    '<object0> is about 3 metres away; at how many degrees from your facing direction is it?',
    "Is <object0> at 2 o'clock? Actually, give me the angle in degrees between your heading and it "
    'instead.',
    'Ignore the 90 degrees you turned earlier; how much turning do you need now to face <object0>?',
    "Turn right 60 degrees... no wait, turn left 60 degrees. Then at what o'clock would <object0> be?",
    "You're 2 m from <object0>. After turning 10 degrees to the right, what o'clock is it at?",
    '<object0> is 3 feet tall; can you reach it with your arm?',
    'No wait, your arm is 50 cm, not 70. Can you reach <object0>?',
    'My boy asks "can the robot get <object0> with its hand?"',
    "You turned 90 degrees twice, I know that already. What I'd like is how far you moved in total, in cm.",
    'A colleague guessed 3 metres, but give me your own figure in feet: how far did you move in total '
    'during the video?',
    "You've moved about 2 metres during the video, fine, but how far away from you is <object0> right now, "
    'in centimetres?',
    'How far is <object0> from the camera? Please answer in feet, not metres.',
    '<object0> is 30 cm tall, I know that. How far from you is it, in metres?',
    "I don't need the distance between <object0> and <object1>; just tell me which of the two is closer to "
    'you.',
    'Which is closer to you: <object0>, which is taller, or <object1>?',
    'Forget which one is tallest; among <object0>, <object1> and <object2>, which is nearest to you?',
    'You are 2 m from <object0>, I know. How far is <object0> from <object1>?',
    'My wife wants to know how far <object1> sits from <object0>, in feet and inches... well, just feet is '
    'fine.',
    "Which is nearer doesn't matter; tell me the distance between <object0> and <object1>.",
    'My toddler can climb onto things up to 50 cm. How high is the underside of <object0> off the floor, '
    'in cm?',
    "You're 1.2 m tall, I think. How high from the floor is the highest point of <object0>?",
    "They say you're 3 feet from <object0>. How long is it, in centimetres?",
    'Will <object0> fit through a 70 cm doorway? I mean, how wide is it, in cm?',
    'Which is taller, <object0> or <object1>? I mean the objects themselves, not how high they are placed.',
    '<object0> is about 2 metres away. Is it on your left side?',
    'Before you turn anywhere: what clock direction is <object0> in?',
    "If 12 o'clock is straight ahead, how many degrees away from that is <object0>?",
    'Without turning, how many degrees from dead ahead is <object0>?',
    "My son says <object0> is about 30 degrees from you. What's the real angle from your forward "
    'direction?',
    "You're 3 metres from <object0>. If you swing 15 degrees to the left, where will it be, as an angle in "
    'degrees?',
    "My toddler's arm is about 30 cm, but yours is 1.2 m: can you reach <object0>?",
    "You're 1.5 m tall, I know. Can your arm reach <object0>?",
    # (the lead, after fresh24) a property asked by a word no rule reads: Slovenian "uri" (hours) after
    # the glossed "kateri" (which), read before only because "like clock" followed
    'Ob kateri uri is <object0> from you, like clock?',
}


@pytest.mark.parametrize(("family", "expected", "question"), split("dev"))
def test_development_half(family: str, expected: str, question: str) -> None:
    p, why = parse_question(question)
    if question in REFUSED_BY_DESIGN:
        assert p is None and why.startswith((PARTLY_READ, NOT_MEASURABLE)), why
        return
    assert p is not None, why
    assert p.structured() == parse_structured(expected).structured()


def test_a_set_edited_after_it_was_pinned_is_refused(monkeypatch) -> None:
    """The manifest pins every set's bytes (sha256, computed by hashlib when the set was committed): a blind
    set changed after it was measured is refused, not silently re-measured."""
    from rynnec_ros.eval import paraphrases

    real = paraphrases._read
    paraphrases.families.cache_clear()
    monkeypatch.setattr(paraphrases, "_read", lambda name: real(name).replace(b"How far", b"How near", 1)
                        if name == "blind12.yaml" else real(name))
    with pytest.raises(ValueError, match="changed since it was pinned"):
        paraphrases.families("blind12")
    paraphrases.families.cache_clear()
    with pytest.raises(ValueError, match="no paraphrase set 'blind99'"):
        paraphrases.families("blind99")


def _assert_refused(question: str, reading: str, unused: str) -> None:
    """``question`` is refused as partly read: read as ``reading``, the reason ending in ``unused``."""
    p, why = parse_question(question)
    assert p is None
    assert why.startswith(f"{PARTLY_READ}: I read {question!r} as {reading}"), why
    assert why.endswith(unused), why


def _assert_refused_because(question: str, reason: str) -> None:
    """``question`` is refused as partly read, ``reason`` part of the reason given."""
    p, why = parse_question(question)
    assert p is None
    assert why.startswith(PARTLY_READ) and reason in why, why


def _assert_reads(question: str, expected: str) -> None:
    """``question`` is read, as the structured task ``expected`` (its slots' defaults filled in)."""
    p, why = parse_question(question)
    assert p is not None, why
    assert p.structured() == parse_structured(expected).structured()


# Issue 24: a reading must use every cue the question carries. Each sentence below carries a cue (a turn,
# a top or bottom, a threshold, a negation, a second question ...) that a plausible reading would drop;
# the expected outcome is read off the sentence by hand: the task it means, or a refusal naming the cue.
@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("if i trun right 90 degrees what o'clock is <object0>",
         "future_direction_clock turn=right angle_deg=90"),
        ("How high does <object0> reach?", "height_from_ground point=top"),
        ("How far up does <object0> reach?", "height_from_ground point=top"),
        ("What's the gap under <object0>?", "height_from_ground point=bottom"),
        ("How much room is there under <object0>?", "height_from_ground point=bottom"),
        ("Is <object0> or <object1> on top?", "above_choice"),
        ("Is <object0> or <object1> to the left?", "leftmost_choice"),
        ("Which is less far from me, <object0> or <object1>?", "closer_to_camera"),
        ("Who is more near, <object0> or <object1>?", "closer_to_camera"),
        ("Which one is least far: <object0>, <object1> or <object2>?", "closest_to_camera"),
        ("Which is less near to me, <object0> or <object1>?", "closer_to_camera order=far"),
        # kinds generalised on after blind18/19's second measurement (sentences of our own)
        ("hey robot is <object0> nearer than <object1>", "closer_to_camera form=yesno"),
        ("Of <object0> and <object1>, which isn't as far from you?", "closer_to_camera"),
        ("Which way from <object0> is <object1>, left or right?", "left_right_choice objects=1,0"),
        ("if i turn write by 45 degrees what o'clock is <object0>",
         "future_direction_clock turn=right angle_deg=45"),
        ("after a 90 to the left, what is the bearing of <object0> in degrees?",
         "future_direction_degrees turn=left angle_deg=90"),
        ("turn L 30, <object0> clock?", "future_direction_clock turn=left angle_deg=30"),
        ("Is <object0> sitting ontop of <object1>?", "above_predicate"),
        ("is <object0> to ya left", "side_of_me side=left"),
        ("What turn angle gets you pointed at <object0>?", "rotate_to_face"),
        # kinds generalised on after blind20/21's measurement (sentences of our own): a bare unit word
        # closing the request, a size superlative of a distance ("the greatest range from the camera"),
        # a relation called on two objects (the first is its subject), a vessel's sides, a statement
        # asked as a question or with a confirmation tag, planner abbreviations and calls in a row,
        # learners' "how much far", turn verbs "to OBJ", a place label's number
        ("How far away is <object0> from you, millimeter?", "distance_to_camera unit=mm"),
        ("<object0> width, inch", "object_width unit=in"),
        ("How far have you travelled on foot, in cm?", "walked_distance unit=cm"),
        ("Which of <object0>, <object1>, <object2> is at the greatest range from the camera?",
         "closest_to_camera order=far"),
        ("Of <object0>, <object1> and <object2>, which one is the shortest way off from me?",
         "closest_to_camera"),
        ("Which has the minimum distance to the camera: <object0>, <object1> or <object2>?",
         "closest_to_camera"),
        ("above(<object1>, <object0>)", "above_predicate"),
        ("taller_than(<object0>, <object1>)?", "tallest_choice form=yesno"),
        ("Swing 30 degrees to starboard; what o'clock is <object0> then?",
         "future_direction_clock turn=right angle_deg=30"),
        ("is <object0> on the port side?", "side_of_me side=left"),
        ("<object0> sits higher than <object1>, correct?", "higher_choice form=yesno"),
        ("<object1> is further from you than <object0>?", "closer_to_camera order=far form=yesno"),
        ("how much high is <object0> above the floor?", "height_from_ground"),
        ("sep between <object0> and <object1> in cm", "center_distance unit=cm"),
        ("trav dist in ft", "walked_distance unit=ft"),
        ("Count all your movement so far: how many meters?", "walked_distance"),
        ("side(<object1>)", "side_of_me"),
        ("is_right <object0>", "side_of_me side=right"),
        ("rotate_to <object0> cw, deg", "rotate_to_face"),
        ("How far must you pivot to see <object0> straight ahead?", "rotate_to_face"),
        ("turn_right(45) then bearing_deg(<object0>)", "future_direction_degrees turn=right angle_deg=45"),
        ("Which of <object0>, <object1>, <object2> is at the extreme left?", "leftmost_choice"),
        ("Dock 4 here: how far is <object0> from you?", "distance_to_camera"),
        # kinds of the next registers (sentences of our own): a turn given as an order without punctuation,
        # "then" between a turn and the question, units as speech transcripts spell them, a quiz's numbered
        # options, an afterthought "or maybe OBJ" offering the other object
        ("turn left ninety degrees where is <object0> on the clock",
         "future_direction_clock turn=left angle_deg=90"),
        ("rotate 90 cw then clock of <object0>?", "future_direction_clock turn=right angle_deg=90"),
        ("how far is <object0> from you in sent a meters", "distance_to_camera unit=cm"),
        ("Q7. What is the distance between <object0> and <object1> in meters? (a) 0.5 (b) 1.0 (c) 1.5",
         "center_distance"),
        ("Is <object0> closer to you, or maybe <object1>?", "closer_to_camera"),
        ("How much taller is <object0> than <object1> in cm?", "height_difference unit=cm"),
        # a question opened by its verb (German word order), a lead-in starting from the reference, the
        # floor as the other end of a gap
        ("Stands <object0> higher than <object1>?", "higher_choice form=yesno"),
        ("From <object1>, is <object0> to the left?", "left_predicate objects=0,1"),
        ("What's the gap between <object0> and the floor?", "height_from_ground point=bottom"),
        # digits said one by one (radio), tens a transcript split, the quantity named after the unit, a
        # turn said as a way to go with its angle, a relation called with named arguments
        ("Tower, clock position of <object0> after we turn two seven zero degrees right?",
         "future_direction_clock turn=right angle_deg=270"),
        ("turn write for ty five degrees, what o'clock is <object0>",
         "future_direction_clock turn=right angle_deg=45"),
        ("<object0> is how many meters high?", "height_from_ground"),
        ("if I go left 90 degrees, which way's <object0> then, in degrees?",
         "future_direction_degrees turn=left angle_deg=90"),
        ("is_left_of(a=<object1>, b=<object0>)", "left_predicate"),
        ("left_of(<object1>, ref=<object0>)", "left_predicate"),
        ("grandpa wants to know is the <object0> higher up than the <object1>", "higher_choice form=yesno"),
        ("How many degrees to the right is <object0> from straight ahead?", "direction_degrees"),
        # facing another way is a turn, a bearing asked after it, a side said as an afterthought, a quiz's
        # true/false
        ("suppose I face the other way, what's the bearing to <object0> then?",
         "future_direction_degrees angle_deg=180"),
        ("If I turn 90 degrees, left I mean, where's <object0> at o'clock?",
         "future_direction_clock turn=left angle_deg=90"),
        ("Q: True/False — <object0> is closer to the camera than <object1>.", "closer_to_camera form=yesno"),
        ("From the camera's viewpoint, is <object0> to the right of <object1>?", "right_predicate"),
        # distances to the camera compared in planner notation, a callsign's number
        ("dist(cam, <object0>) < dist(cam, <object1>)", "closer_to_camera form=yesno"),
        ("Forklift 3 to base: is <object0> on my left side?", "side_of_me side=left"),
        # a subject set out before its question, "is she right" as correctness (no side)
        ("the <object0> is it closer than the <object1>", "closer_to_camera form=yesno"),
        ("mom says the <object0> is higher than the <object1> is she right", "higher_choice form=yesno"),
        # learners' plain adjective where objects are offered, "for looking OBJ" as facing it
        ("<object0> and <object1>, which one high?", "higher_choice"),
        ("Which one is far, <object0> or <object1>?", "closer_to_camera order=far"),
        ("Which is small in height, <object0> or <object1>?", "tallest_choice order=min"),
        ("How many degree you should rotate to left for looking <object0>?", "rotate_to_face direction=ccw"),
        # a guess before the question is no part of it
        ("I'd say about 30 cm, but how tall is <object0> actually?", "object_height"),
        ("My guess is left, but which side of you is <object0> on?", "side_of_me"),
        # a turn said as a manoeuvre by its angle
        ("ok so if I do a 180, where's <object0>?", "future_direction_clock angle_deg=180"),
        # "how high over OBJ" is a height difference, "breadth" a width
        ("How high over <object1> is <object0>?", "height_difference objects=0,1"),
        ("What is the breadth of <object0>?", "object_width"),
        ("I'd like you to pick up <object0> off the shelf. Is it within reach?", "reachability"),
        ("Which one is nearer the ceiling, <object0> or <object1>?", "higher_choice"),
        # issue 24, blind22/23's kinds (sentences of our own): a predicate typed by its return value asks
        # yes or no (a denied comparison asked yes or no is refused: see the refusals below)
        ("bool is_nearer(a=<object1>, b=<object0>)", "closer_to_camera form=yesno"),
        ("is_taller(<object0>, <object1>) -> bool", "tallest_choice form=yesno"),
        # a confirmation tag with an afterthought; the side after "but" is the one asked
        ("<object0> is lower than <object1>, right? by their middles", "higher_choice order=min form=yesno"),
        ("Is <object1> not on my left but on my right?", "side_of_me side=right"),
        # how far up an object goes is its top
        ("up to where does <object0> go above the floor, in cm?", "height_from_ground point=top unit=cm"),
        ("how high does <object1> go from the floor", "height_from_ground point=top"),
        # a topic list before the question: the question after it says which is the subject
        ("ok <object1> and <object0>: which side of <object1> is <object0> on?",
         "left_right_choice objects=0,1"),
        ("<object2> and <object0>, is <object0> left of <object2>?", "left_predicate objects=0,2"),
        # a quarter turn said beside "round", amounts said as fractions of the way round
        ("if I swing round to my left a quarter turn where is <object0> on the clock",
         "future_direction_clock turn=left angle_deg=90"),
        ("if I turn right three quarters of the way round, where's <object0> at o'clock?",
         "future_direction_clock turn=right angle_deg=270"),
        ("if I turn halfway round to my left what o'clock is <object0>",
         "future_direction_clock turn=left angle_deg=180"),
        ("if I turn left by a right angle, what o'clock is <object0>?",
         "future_direction_clock turn=left angle_deg=90"),
        ("if I turn by a right angle to my left, what o'clock is <object0>?",
         "future_direction_clock turn=left angle_deg=90"),
        # sides by their letter in notation, "left or write" heard for right, a hedge after the question
        ("<object1> on my R, y/n", "side_of_me side=right"),
        ("Confirm <object0> is L of <object1> in camera frame", "left_predicate"),
        ("hey left or write wear's <object0> from me", "side_of_me"),
        ("Which is longer, <object0> or <object1>? not sure if you can tell", "tallest_choice dim=length"),
        ("<object0> is nearer than <object1>; true or not?", "closer_to_camera form=yesno"),
        ("which is skinnier <object0> or <object1>", "tallest_choice dim=width order=min"),
        ("What's the height of <object1> from base till top in cm?", "object_height unit=cm"),
        ("which is the most high, <object0>, <object1> or <object2>?", "higher_choice"),
        ("how many degrees do I turn counterclockwise to <object1>", "rotate_to_face direction=ccw"),
        # issue 24, blind24/25's kinds (sentences of our own): "check:", "verify", "validate" before a
        # statement ask whether it holds, as "confirm" does
        ("Check: <object1> sits higher than <object0>.", "higher_choice form=yesno"),
        ("Validate that <object0> is wider than <object2>.", "tallest_choice dim=width form=yesno"),
        ("Please verify <object2> is nearer to you than <object0>", "closer_to_camera form=yesno"),
        # a statement with a question mark, then a clarification that asks nothing
        ("<object0> is further away than <object1>? From you, I mean.",
         "closer_to_camera order=far form=yesno"),
        ("<object1> sits higher than <object0>? Their middles, that is.", "higher_choice form=yesno"),
        # the inch abbreviated: "ins", "in in.", "30 in." before the next sentence (30 in = 0.762 m)
        ("What is the width of <object0>, in ins?", "object_width unit=in"),
        ("How far am I from <object1>? Answer in in.", "distance_to_camera unit=in"),
        ("The arm is 30 in. Can you reach <object0>?", "reachability arm_length_m=0.762"),
        ("what's the length of <object2> in mtrs", "object_length"),
        # which of two is at the bottom or the upper element: the one under (or on) the other
        ("Which one is at the bottom, <object0> or <object1>?", "above_choice relation=below"),
        ("Which is on the bottom: <object0> or <object1>?", "above_choice relation=below"),
        ("<object0> or <object1>: which is the upper element?", "above_choice"),
        # a choice with "not as" still picks one: the nearer
        ("Of <object1> and <object0>, which is not as far from you?", "closer_to_camera"),
        # issue 24, blind26/27's kinds (sentences of our own): a unit's plural made regular
        ("How wide is <object2>, in inchs?", "object_width unit=in"),
        ("how far have you rolled so far in feets", "walked_distance unit=ft"),
        # a bare "in" closing a request or after the question is the inch
        ("Distance from you to <object1>, reply in.", "distance_to_camera unit=in"),
        ("How tall is <object0>? in.", "object_height unit=in"),
        # "right now" is a time, no side
        ("Of <object0> and <object2>, which is closer to you right now?", "closer_to_camera"),
        # a turn's side by its letter after any turn verb; the way a clock's hands go is clockwise
        ("Robot pivots L 45 deg. Clock position of <object1> after?",
         "future_direction_clock turn=left angle_deg=45"),
        ("Turning the way a clock's hands move, how many degrees to face <object1>?",
         "rotate_to_face direction=cw"),
        # "before / until OBJ was dead ahead": the turn to face it, however the turn is said
        ("If you spun to the left, how many degrees would pass until <object0> was dead ahead?",
         "rotate_to_face direction=ccw"),
        # context in plain English, with few listed words, is no other language
        ("My nephew keeps asking. Which is taller, <object0> or <object1>?", "tallest_choice"),
        # issue 24, blind28/29's kinds (sentences of our own): other words for an object's top and bottom
        ("How many inches does the summit of <object0> rise above the summit of <object1>?",
         "height_difference point=top unit=in"),
        ("What height is the apex of <object2> off the floor?", "height_from_ground point=top"),
        ("How high is the foot of <object1> above the ground, in cm?",
         "height_from_ground point=bottom unit=cm"),
        ("How high off the ground is the lowest part of <object1>, in cm?",
         "height_from_ground point=bottom unit=cm"),
        # a claim, then a confirmation tag in its own sentence, asks whether the claim holds
        ("My sister reckons <object1> is longer than <object0>. True?",
         "tallest_choice dim=length form=yesno"),
        ("The manual says <object2> sits higher than <object1>. Correct?", "higher_choice form=yesno"),
        ("<object0> is nearer to you than <object1>. Agreed?", "closer_to_camera form=yesno"),
        # rotation-sense words and their split spellings
        ("Spinning withershins, how many degrees until <object0> is in front of you?",
         "rotate_to_face direction=ccw"),
        ("anti clock wise, how many degrees to face <object1>?", "rotate_to_face direction=ccw"),
        ("how many degrees clock wise must I turn to face <object2>", "rotate_to_face direction=cw"),
        # a side abbreviated beside a turn verb, before or after it
        ("Unit does a rt turn 45 deg; clock position of <object0> after?",
         "future_direction_clock turn=right angle_deg=45"),
        ("If you rotate lt by 120 degrees, how many degrees off your heading is <object0>?",
         "future_direction_degrees turn=left angle_deg=120"),
        # refusals of blind28/29 that generalise: "least distant", "betwixt", "atop", "L or R", the span
        # between two objects, how to round the answer (its unit kept), a hedge after the question
        ("Which one is least distant from the camera: <object1>, <object0> or <object2>?",
         "closest_to_camera"),
        ("What is the gap betwixt <object0> and <object1>, in feet?", "center_distance unit=ft"),
        ("Does <object0> rest atop <object1>?", "above_predicate"),
        ("<object2>: L or R of the camera?", "side_of_me"),
        ("What's the span between <object0> and <object1> in metres?", "center_distance"),
        ("How far is <object1> from you, rounded to the nearest tenth?", "distance_to_camera"),
        ("Give the bearing of <object0> in degrees, rounded to the nearest 10.", "direction_degrees"),
        ("How far have you travelled, to the nearest centimetre?", "walked_distance unit=cm"),
        ("Which is taller, <object0> or <object2>? I'm not sure.", "tallest_choice"),
        ("rot ccw deg to face <object1>", "rotate_to_face direction=ccw"),
        # digits said one by one, two of them too; a unit's prefix alone; a builder's datum and sill
        ("Arm length is five zero centimetres, can you reach <object1>?", "reachability arm_length_m=0.5"),
        ("How tall is <object0>, in centi?", "object_height unit=cm"),
        ("Top of <object2> AFF in mm?", "height_from_ground point=top unit=mm"),
        ("What's the sill height of <object1>?", "height_from_ground point=bottom"),
        # a sight put on the object is the turn to face it
        ("How far must I rotate until the reticle is on <object0>?", "rotate_to_face"),
        # numbers that measure nothing: a clock hour's range, decimal places, an age, a test case's label
        ("Clock hour of <object1>, an integer 1 to 12?", "direction_clock"),
        ("Distance from the camera to <object2> in metres to 3 d.p.", "distance_to_camera"),
        ("I'm 91 years old, dear. How tall is <object0>?", "object_height"),
        ("Test case 7: of <object1> and <object2>, which is wider?", "tallest_choice dim=width"),
        # a decimal said aloud; a claim then a request to check it; twelve o'clock is dead ahead; the datum
        ("Arm is one point two five metres. Can you reach <object2>?", "reachability arm_length_m=1.25"),
        ("The late shift says <object1> is wider than <object0>. Please verify.",
         "tallest_choice dim=width form=yesno"),
        ("How many degrees to bring <object2> to my 12 o'clock?", "rotate_to_face"),
        ("How high above datum is the underside of <object0>, in mm?",
         "height_from_ground point=bottom unit=mm"),
        # hearsay to check: "could that be right?", "That so?", a yes/no after "but" opening its clause
        ("A driver told me <object1> is left of <object2>; could that be right?", "left_predicate"),
        ("Rumour is <object0> is narrower than <object2>. That so?",
         "tallest_choice dim=width order=min form=yesno"),
        ("Excuse an old man, but is <object2> farther from you than <object1>?",
         "closer_to_camera order=far form=yesno"),
        ("Bro, if I turn 45 right what o'clock is <object0>?",
         "future_direction_clock turn=right angle_deg=45"),
        # "is OBJ taller or OBJ?" offers both: a choice; a British unit's typo is corrected as the American
        ("Is <object2> more wide or <object1>?", "tallest_choice dim=width"),
        ("How long is <object0>, in centimetress?", "object_length unit=cm"),
        # a word no list knows outside a cue's place (a name) changes nothing the rules read
        ("My cousin Siobhan asks: which is wider, <object0> or <object1>?", "tallest_choice dim=width"),
        # an informal yes tag ("yep?", "ya?") asks whether the statement holds
        ("<object1> sits more high than <object0>, yep?", "higher_choice form=yesno"),
        # a turn whose goal is an object is the turn to face it, its side the sense ("turn towards",
        # "come round to"); a helm order "come left 90" is a turn by its angle
        ("Rotating towards <object0> clockwise, what angle is that?", "rotate_to_face"),
        ("How many degrees to come around to <object0>? Go to the left.", "rotate_to_face direction=ccw"),
        ("Come right one-two-zero, then what's the angle to <object0>?",
         "future_direction_degrees turn=right angle_deg=120"),
        # a height an object has is its own size; a height it sits at its placement
        ("Of <object0>, <object1> and <object2>, which has the highest height?", "tallest_choice"),
        ("Of <object0>, <object1> and <object2>, which sits at the highest height?", "higher_choice"),
        # the asker's reason after the question asks nothing, even with a "which" in it
        ("Is <object2> longer than <object0>? I need to know which box to open first.",
         "tallest_choice dim=length form=yesno"),
        # "identify / name the one ..." asks for one of those named
        ("Of <object1> and <object0>, name the one lying more to the left.", "leftmost_choice"),
        # a radio closer asks nothing; a unit alone in a sentence is the answer's unit; apologies and
        # "if you don't mind" ask nothing
        ("Range to <object0>, copy. Millimetres please. Over and out.", "distance_to_camera unit=mm"),
        ("Very sorry to bother you, but how wide is <object1>? Centimetres are fine.",
         "object_width unit=cm"),
        ("How far apart are <object0> and <object1>, if you don't mind?", "center_distance"),
        # a quantity claimed and asked checked is the quantity, measured in the claim's unit (the engine's
        # text says whether the claim holds)
        ("My boss reckons <object1> and <object0> are 3 feet apart. Is that so?", "center_distance unit=ft"),
        ("A friend says the robot drove 12 m during the clip, is that accurate?", "walked_distance"),
        ("The manual says you must rotate 90 degrees clockwise to face <object0>. Correct?",
         "rotate_to_face"),
        # "lock on to OBJ" is facing it; "fall" is an English verb (no word of another language)
        ("Rotate how many degrees counterclockwise to lock on to <object0>?", "rotate_to_face direction=ccw"),
        ("Seen from your camera, does <object1> fall to the left or the right of <object0>?",
         "left_right_choice"),
        # the object put "on the nose" is faced; a taunt's denied ability and a "huh?" tag deny nothing
        ("How many degrees right to get <object0> on the nose?", "rotate_to_face"),
        ("Bet you don't know which is wider, <object1> or <object0>.", "tallest_choice dim=width"),
        ("<object0> is further from you than <object1>, huh?", "closer_to_camera order=far form=yesno"),
        # issue 24 (blind32/33 kinds, sentences of our own): a texter's interjection opening the question
        # hides no auxiliary; "it" in a pair ("one of it and OBJ") is one of the pair, no reference; "hold
        # on" closing the question restarts nothing
        ("yo is <object0> taller than <object1>", "tallest_choice form=yesno"),
        ("bruh which is nearer, <object1> or <object0>?", "closer_to_camera"),
        ("I reckon <object1> is the wider one of it and <object0>. Which is wider?",
         "tallest_choice dim=width"),
        ("how far is <object0> from you, hold on", "distance_to_camera"),
        # a ticket's or job's number is a label, no quantity; "to port" names a side as "to the left"
        # does; a millimetre split by speech-to-text; one extent of two objects compared in notation
        ("JOB 77: how tall is <object2>, in cm?", "object_height unit=cm"),
        ("Ticket #12 - which is nearer, <object0> or <object1>?", "closer_to_camera"),
        ("Is <object0> to port?", "side_of_me side=left"),
        ("how long is <object1> in mil li metres", "object_length unit=mm"),
        ("assert <object2>.length < <object0>.length", "tallest_choice dim=length order=min form=yesno"),
        ("check: <object0>.height > <object1>.height", "tallest_choice form=yesno"),
        # (the next writers' registers probed with sentences of our own) "below" / "above" that point into
        # a forwarded message place nothing in the scene; "is OBJ X or is OBJ X?" offers a choice
        ("Per the thread below, can you confirm that <object0> is taller than <object1>?",
         "tallest_choice form=yesno"),
        ("As noted above, which is nearer, <object0> or <object1>?", "closer_to_camera"),
        ("Is <object0> below <object1>? Details below.", "below_predicate"),
        ("Is the teddy <object0> closer to you or is <object1> closer?", "closer_to_camera"),
        ("Does <object0> sit higher than <object1> or does <object1> sit higher?", "higher_choice"),
        # a comparison said as a fragment and asked ("OBJ closer than OBJ?") asks yes or no
        ("<object0> closer than <object1>?", "closer_to_camera form=yesno"),
        ("<object1> less wide than <object2>?", "tallest_choice dim=width order=min form=yesno"),
        # "grabbing distance" is a reach, not a distance to report
        ("Is <object0> within grabbing distance?", "reachability"),
        # (issue 24, blind34/35's kinds, sentences of our own) "not as X as" asked yes or no is read as the
        # opposite comparison, as the writers of the development sets label it (35 of their 35 such yes/no
        # questions); the answer states that reading. "not X-er than" stays refused (labelled both ways)
        ("<object0> isn't as close to you as <object1>, correct?", "closer_to_camera order=far form=yesno"),
        ("Is <object1> not placed as high above the floor as <object0>?",
         "higher_choice order=min form=yesno"),
        ("Verify that <object0> is not as wide as <object1>.",
         "tallest_choice dim=width order=min form=yesno"),
        ("<object1> not as wide as <object0>?", "tallest_choice dim=width order=min form=yesno"),
        ("Would it be correct to say <object1> is to the left of <object2>?", "left_predicate"),
        # "right-most" with its hyphen; a side without its article; "side from OBJ" names the reference
        ("Left-most of <object1> and <object2>?", "leftmost_choice"),
        ("Right-most one: <object0>, <object2> or <object1>?", "leftmost_choice side=right"),
        ("<object2> sits on right from me, correct?", "side_of_me side=right"),
        ("Is <object0> on left side?", "side_of_me side=left"),
        ("On which side from <object0> does <object1> sit?", "left_right_choice objects=1,0"),
        # a decimal comma before a unit
        ("If my reach is 0,8 m, can I get <object1>?", "reachability arm_length_m=0.8"),
        ("With an arm of 1,25 metres, could I grab <object0>?", "reachability arm_length_m=1.25"),
        # units as keys write them: in brackets, an abbreviation's plural closing, straight after the object
        ("walk_len [ft]", "walked_distance unit=ft"),
        ("total_walked (cm)", "walked_distance unit=cm"),
        ("Height of <object1> above the floor, fts.", "height_from_ground unit=ft"),
        ("Width of <object2>, ins?", "object_width unit=in"),
        ("len <object2> in", "object_length unit=in"),
        ("Walked distance over the clip, foot.", "walked_distance unit=ft"),
        ("How long did you walk on foot?", "walked_distance"),
        # an annotator's keys for distances, heights, tops and bottoms
        ("h_top <object1> cm", "height_from_ground point=top unit=cm"),
        ("h_bot <object2> in", "height_from_ground point=bottom unit=in"),
        ("h_ctr <object0> ft", "height_from_ground unit=ft"),
        ("d(cam,<object1>) in", "distance_to_camera unit=in"),
        ("d(<object0>,<object2>) m", "center_distance"),
        ("dist2cam <object2> / mm", "distance_to_camera unit=mm"),
        ("ctr-ctr <object0>-<object1>, in", "center_distance unit=in"),
        ("clk pos <object0>", "direction_clock"),
        ("<object0> on cam left? y/n", "side_of_me side=left"),
        ("top_max: <object0>/<object1>", "higher_choice point=top"),
        ("bot_min: <object0>/<object1>", "higher_choice point=bottom order=min"),
        ("Floor up to the top of <object1>, in cm?", "height_from_ground point=top unit=cm"),
        # the sense said by the clock: "against the clock" is counterclockwise; a slip as near a word's
        # plural as the word ("degres") is that word
        ("How many degrees must I rotate against the clock to face <object0>?",
         "rotate_to_face direction=ccw"),
        ("Turning with the clock, how many degrees to face <object1>?", "rotate_to_face"),
        ("How many degres clockwise is <object1> from where I face?", "direction_degrees"),
        # a turn said by its angle alone after a time word: "after a 180"
        ("After a 180, which o'clock is <object2>?", "future_direction_clock angle_deg=180"),
        # a turn imagined, its bearing asked (no object as the turn's goal)
        ("If I turn left, how many degrees to my right is <object1>?",
         "future_direction_degrees turn=left angle_deg=90"),
        # (issue 24, blind36/37's kinds, sentences of our own) a yes/no tag spelled in full or by its
        # letters, or as a verdict, asks yes or no: no choice of objects
        ("<object2> top lower than <object0> top? Y or N", "higher_choice point=top order=min form=yesno"),
        ("<object1> wider than <object0>, yes/no", "tallest_choice dim=width form=yesno"),
        ("Confirm <object0> is above <object1>. Pass/fail.", "above_predicate"),
        # a confirmation tag with no stop before it, after a complete question, is no side
        ("<object1> is farther from you than <object2> right??", "closer_to_camera order=far form=yesno"),
        ("<object0> is on the left of you correct?", "side_of_me side=left"),
        # a clause of support ("one sits on the other") asks which is on top or underneath
        ("Which one is higher, <object1> or <object2>, if one sits on the other?", "above_choice"),
        ("which is the lower, <object0> or <object1>, resting on each other", "above_choice relation=below"),
        ("which one at the top <object2> or <object1>", "above_choice"),
        # a checklist's item number is a label; a tolerance is the unit the answer is given in
        ("Check 2.4: distance from the camera to <object1>, report in cm.", "distance_to_camera unit=cm"),
        ("Item 7) width of <object0> in mm", "object_width unit=mm"),
        ("#3 - how tall is <object2>, in inches?", "object_height unit=in"),
        ("Height of <object1> above the floor, tolerance ± 3 mm, report mm.", "height_from_ground unit=mm"),
        ("Step 5: bearing of <object0>, +/- 2 deg, in degrees", "direction_degrees"),
        ("how far apart are <object0> and <object2>, tol. 1 cm?", "center_distance unit=cm"),
        # a question opened by a negated auxiliary asks to confirm the comparison named (all 13 such
        # questions of the development sets are labelled so); the answer's reading states it
        ("Isn't <object0> taller than <object1>?", "tallest_choice form=yesno"),
        ("isnt <object2> nearer to the camera than <object0>", "closer_to_camera form=yesno"),
        # one extent of two compared in words; "a greater elevation" is higher
        ("Confirm the width of <object1> is greater than the width of <object0>.",
         "tallest_choice dim=width form=yesno"),
        ("is the length of <object2> less than that of <object1>?",
         "tallest_choice dim=length order=min form=yesno"),
        ("Which of <object0> and <object1> sits at a greater elevation?", "higher_choice"),
        # both sides offered, one misspelt past the corrector; a learner's "more up", "OBJs top"
        ("Is <object0> to the right or lefft of <object1>?", "left_right_choice"),
        ("how much more up is <object1>s top than <object0>s top, in cm",
         "height_difference point=top unit=cm"),
        # a turn imagined in a clause of its own: the object after it is no goal of the turn
        ("If you turn right, which o'clock will <object1> be at?",
         "future_direction_clock turn=right angle_deg=90"),
        ("Please assess the distance from the camera to <object2>.", "distance_to_camera"),
        # the camera's distance said as one noun, the lens as the camera; a learner's superlative of a side
        # (before this round "the most right of OBJ and OBJ" was read as "right of")
        ("Of <object2>, <object0> and <object1>, pick the one with the minimum camera distance.",
         "closest_to_camera"),
        ("which of <object1>, <object2> is at the greatest distance from the lens?",
         "closer_to_camera order=far"),
        ("most left one: <object1> <object0> <object2>?", "leftmost_choice"),
        ("the most right of <object0> and <object1>?", "leftmost_choice side=right"),
        ("is <object2> most left of <object1>?", "left_predicate"),
        # an unknown word opening a question before the object, read as a relation (yes or no either way)
        ("Utrum <object2> is left of <object0>?", "left_predicate"),
        # (issue 24, blind38/39's kinds) a unit split by speech-to-text is one unit, never the default metres
        ("the distance from the camera to <object2>, centi metres please", "distance_to_camera unit=cm"),
        ("how far away is <object1>, in milli meters?", "distance_to_camera unit=mm"),
        # an afterthought naming the point for both objects keeps the objects in the order named
        ("Of <object1> and <object2>, which is higher? that is, the middle of them", "higher_choice"),
        # the other side denied after a yes/no side question: the side named is asked
        ("Does <object0> sit on your left side and not your right side?", "side_of_me side=left"),
        # "is she right?" asks whether someone else's claim holds: a confirmation, not a side
        ("my sister reckons <object2> is nearer than <object0>, is she right?",
         "closer_to_camera form=yesno"),
        # "which hand side" is which side, never a distance
        ("What hand side of you is <object1> on?", "side_of_me"),
        # speech-to-text homophones of cue words, where the sentence leaves one reading
        ("how far have you travelled in feat", "walked_distance unit=ft"),
        ("witch one is taller, <object0> or <object1>?", "tallest_choice"),
        ("turn aunty clockwise how many degrees to face <object2>", "rotate_to_face direction=ccw"),
        ("is <object1> to the rite of <object0>?", "right_predicate"),
        # (issue 24, blind40/41's kinds) feet and inches by their short names are one length: 5 ft 2 in is
        # 62 in, 62 * 0.0254 = 1.5748 m
        ("could an arm of 5 ft 2 in get to <object2>?", "reachability arm_length_m=1.5748"),
        # a row's unit column names the unit of the answer
        ("Distance from camera | object: <object1> | unit: ft", "distance_to_camera unit=ft"),
        # a reason after a yes/no question, its subject dropped, asks nothing: "which" there is no choice
        ("Is <object2> wider than <object0>? Need to know which goes in the van first.",
         "tallest_choice dim=width form=yesno"),
        # "right" after a statement complete with its second object is a tag asking whether it holds
        ("<object0> is way taller than <object2> right", "tallest_choice form=yesno"),
        ("<object2> is on the right side of <object1> right, from your side", "right_predicate"),
        # a slip one letter from a long cue word, no other cue word as near, is that word
        ("how far is <object1> from you, in centimiters?", "distance_to_camera unit=cm"),
        ("How wdie is <object0>?", "object_width"),
        ("the rightmots of <object2> and <object1>?", "leftmost_choice side=right"),
        # refusal kinds read now: an apology or hedge closing a complete question names no cue; one opening
        # it is no correction; a hedged unit is still the unit asked (no unit asked: the default metres)
        ("Is <object1> below <object2>? Sorry if this is a basic one.", "below_predicate"),
        ("Sorry, how tall is <object0>? In inches, I suppose?", "object_height unit=in"),
        ("How far have you gone? Sorry, I never know which unit to use.", "walked_distance"),
        ("Which is furthest to the right, <object0>, <object1> or <object2>? Sorry, just making sure.",
         "leftmost_choice side=right"),
        # a spreadsheet row: keyed cells, an empty value cell, a unit cell, a turn cell named in the heading
        ("Row 3 | field: distance to camera | object: <object1> | units: centimetres | value:",
         "distance_to_camera unit=cm"),
        ("Post-turn clock of <object2> | turn: left 60 deg", "future_direction_clock turn=left angle_deg=60"),
        # a tester's step heading before the question is English, not another language
        ("Verify lateral placement: is <object2> right of <object0>?", "right_predicate"),
        # "isnt it" after a complete statement is a confirmation tag
        ("<object2> is a lot nearer to you than <object1> isnt it", "closer_to_camera form=yesno"),
        # "at the top" after the second object of a "how much higher" is the point both are measured at
        ("how much higher is <object2> than <object0> at the top, in cm",
         "height_difference point=top unit=cm"),
        # German "oder" is "or" (the glossary, spatial/data/foreign_words.yaml): a choice of two sides, and
        # a closing "oder?" that asks "isn't it?" of a yes/no (meanings by hand, as a German speaker reads)
        ("Ist <object1> links oder rechts von <object0>? left or right", "left_right_choice"),
        ("Is <object2> on your left, oder?", "side_of_me side=left"),
        # units of other languages in their cases (the glossary): Spanish "pulgadas" inches, Czech "v
        # metrech" in metres, Polish "w centymetrach" in centimetres (meanings by hand)
        ("How far is <object0> from you, in pulgadas?", "distance_to_camera unit=in"),
        ("How far is <object0> from <object1>? Please, v metrech.", "center_distance"),
        ("How tall is <object2>? W centymetrach.", "object_height unit=cm"),
        # (issue 24, blind44/45's kinds) an aside after a complete question that asserts nothing about
        # the objects (an order to confirm, impatience, the asker unable to see) is no cue
        ("Is <object0> closer to you than <object1>? Please confirm.", "closer_to_camera form=yesno"),
        ("Which is the nearest, <object2>, <object0> or <object1>? Not so hard.", "closest_to_camera"),
        ("How tall is <object1> in cm? I cannot see it from here.", "object_height unit=cm"),
        ("How tall is <object1> in cm? Do not make me ask twice.", "object_height unit=cm"),
        # an accountant's "reqd"; the clock hands' way is clockwise; a half-left/right turn of a stated
        # amount is a turn of that amount; "at what hour" asks the clock; "which hand is OBJ on" the side;
        # a side denied and the other said states the one said
        ("Turn reqd to face <object2>, clockwise, in degrees?", "rotate_to_face"),
        ("Turning the same way as the clock hands, how many degrees to face <object0>?", "rotate_to_face"),
        ("After a half-left turn of 30 degrees, where is <object1> in degrees?",
         "future_direction_degrees turn=left angle_deg=30"),
        ("Taking straight ahead as twelve, at what hour is <object2>?", "direction_clock"),
        ("Which hand are <object0> on, seen from the robot?", "side_of_me"),
        ("<object2> is not to your right, it is to your left, true?", "side_of_me side=left"),
        # formal and crossword synonyms of the families' words
        ("How great is the stature of <object2>, in centimetres?", "object_height unit=cm"),
        ("Is <object0> sinistral of you?", "side_of_me side=left"),
        ("Is <object2> to your starboard side?", "side_of_me side=right"),
        ("Which is the most dextral: <object0>, <object1> or <object2>?", "leftmost_choice side=right"),
        ("On which flank of mine does <object1> sit?", "side_of_me"),
        ("With my limb 60 cm long, could I touch <object2>?", "reachability arm_length_m=0.6"),
        ("What is the interval between <object0> and <object1> in metres?", "center_distance"),
        ("How far betwixt <object2> and <object1>?", "center_distance"),
        ("How high above the floor is the crown of <object0>?", "height_from_ground point=top"),
        ("Which is less elevated, <object0> or <object2>?", "higher_choice order=min"),
        ("Which lies beneath, <object1> or <object2>?", "above_choice relation=below"),
        ("Which of <object2>, <object0>, <object1> is proximate-most to you?", "closest_to_camera"),
        ("Name the object at maximal distance from you: <object0>, <object1> or <object2>.",
         "closest_to_camera order=far"),
        ("Is <object2> strictly closer than <object0> to you?", "closer_to_camera form=yesno"),
        # (issue 24, blind44/45's kinds) "in." after the preposition "in" is the inch abbreviated
        ("Width of <object2>, in in.?", "object_width unit=in"),
        # the heading made to meet an object is a turn to face it
        ("What is the clockwise turn, in degrees, to align your heading with <object1>?", "rotate_to_face"),
        ("Counterclockwise, by how many degrees must you turn to confront <object0>?",
         "rotate_to_face direction=ccw"),
        # a form of answer denied is not the form asked: "not in o'clock" asks degrees, "not degrees" hours
        ("Where is <object1> in degrees, not in o'clock?", "direction_degrees"),
        ("After turning left by 60 degrees, what angle is <object0> at? Not o'clock.",
         "future_direction_degrees turn=left angle_deg=60"),
        ("After a 45 degree left turn, where would <object2> be? Not degrees, clock hours.",
         "future_direction_clock turn=left angle_deg=45"),
        # (issue 24, blind42/43's kinds) "how many" counts a noun: "in." after it is the inch's abbreviation
        ("How many in. from <object2> to <object0>?", "center_distance unit=in"),
        ("How many in. tall is <object1>?", "object_height unit=in"),
        # a comparison fragment with no question word is asked yes or no, a remark after its question mark
        # ("yes, no", the point it is measured at) asks no choice
        ("<object1> narrower than <object2>? Yes, no.", "tallest_choice dim=width order=min form=yesno"),
        ("<object0> higher than <object1>? The middles.", "higher_choice form=yesno"),
        # a turn whose goal is an object, its amount asked, is the turn to face it, whatever particle
        # ("round") its verb takes and however the robot's pose toward it is said
        ("If you spun round clockwise until you were aimed at <object1>, how many degrees is that?",
         "rotate_to_face"),
        ("Give the counterclockwise rotation, in degrees, that leaves the robot oriented towards <object0>.",
         "rotate_to_face direction=ccw"),
        ("Rotating to the left to take in <object2>, how much of a turn is that in degrees?",
         "rotate_to_face direction=ccw"),
        # refusal kinds read now: a learner's "not so X like OBJ" is "not as X as OBJ"
        ("<object0> is not so near to you like <object2>, yes?", "closer_to_camera order=far form=yesno"),
        ("<object1> is not so long like <object0>, true?", "tallest_choice dim=length order=min form=yesno"),
        # the other side set aside ("rather than", "instead of") after a side asked yes or no
        ("Is <object2> to my right rather than my left?", "side_of_me side=right"),
        # a side asked as a fragment about one object
        ("<object1> on the right side? y/n", "side_of_me side=right"),
        # "between the floor and" a point of the object is its height over the floor
        ("What is the gap between the ground and the top of <object0>, in inches?",
         "height_from_ground point=top unit=in"),
        # "at the minute" is "now", no time; "a metre of reach" is an arm of one metre
        ("Where is <object2> by the clock at the minute?", "direction_clock"),
        ("With a foot of reach, can you touch <object1>?", "reachability arm_length_m=0.3048"),
        # "remote" said of a place is "distant"; "remove" as a noun is a distance
        ("How remote is <object0> from the robot, in metres?", "distance_to_camera"),
        ("Which of <object2>, <object1> and <object0> sits at the greatest remove from you?",
         "closest_to_camera order=far"),
        ("Of <object1> and <object2>, which is at the lesser remove from the camera?", "closer_to_camera"),
    ],
)
def test_cues_that_a_reading_needs_are_read(question: str, expected: str) -> None:
    _assert_reads(question, expected)


@pytest.mark.parametrize(
    ("question", "cue"),
    [
        ("so if I spun to my left a bit, which way would <object0> be?", "spun"),
        ("Is <object0> more than 2 meters away?", "more than 2"),
        # a limit is no claim, two quantities are two claims, and a bearing's side is not in its degrees
        ("They said <object0> is more than 2 meters from me, is that right?", "more than 2"),
        ("I heard <object0> is 2 m away and 40 cm wide. Correct?", "cm"),
        ("People say <object0> sits 20 degrees off my nose. True?", "20"),
        # another person's side, body level or reach is not the camera's
        ("Is <object1> on the right of the nurse?", "right of the nurse"),
        ("Is <object0> about knee height?", "knee height"),
        ("Can the child reach <object2> from here?", "can the child reach"),
        ("Is <object0> or <object1> further astern?", "astern"),
        ("Which is not the closest, <object0> or <object1>?", "not"),
        ("How far is the top of <object0> from me?", "top"),
        ("How far is <object0> from me, and which way is it?", "and which"),
        ("Is the bottom of <object0> closer to me than <object1>?", "bottom"),
        # present but not read: each would otherwise get a confident answer to another question
        ("How far is <object0> from me, in mil?", "in mil"),  # mm to some, a thousandth of an inch to others
        ("How wide is <object0> in yards?", "in yards"),
        ("How high is the highest shelf of <object0>?", "highest"),
        ("How many degrees counterclockwise to <object0>?", "counterclockwise"),
        ("What bearing will <object0> have once the camera pans?", "pans"),
        ("What turn angle is <object0> at?", "turn"),
        ("Relative to <object1>, is <object0> on the leeft or the right side?", "leeft"),
        # a yes/no question no choice reading answers ("Is OBJ the leftmost ...?" wants yes or no)
        ("Is <object1> the leftmost of <object0> and <object1>?", "is"),
        ("Is <object0> the nearest of <object0>, <object1> and <object2>?", "is"),
        # a unit word beside the asked unit: the answer would come in the other one
        ("How tall is <object0> in meters, centimeter precision?", "centimeter"),
        ("How far is <object0> from <object1>, centimeter or inch?", "inch"),
        # the asker's place, which no reading of the objects alone uses
        ("Which of <object0>, <object1> and <object2> is longest, measured from you?", "from you"),
        ("How tall is <object0> from the camera?", "from the camera"),
        # opposite comparisons, a difference no task measures, a sequence of turns
        ("Is <object0> taller or shorter than <object1>?", "shorter"),
        ("Maybe <object0> is higher than <object1>? Or lower?", "lower"),
        ("How much wider is <object0> than <object1>?", "how much wider"),
        ("Which is closer, <object0> or <object1>, and by how much?", "and by how much"),
        ("turn left 90 then turn left again 90, clock of <object0>?", "turn"),
        ("If I turned right 90 and then another 90, at what o'clock is <object0>?", "another"),
        ("after I turn left and then right by 90, where is <object0>?", "left and then right"),
        # two dimensions or two quantities compared at once, two sizes asked, nearness to an object, a turn
        # told as done (the frames may show it already), the floor as one end of a distance to the camera
        ("Is <object0> wider than <object1>, or is it longer?", "wider"),
        ("Is <object0> higher than <object1> and also closer?", "higher"),
        ("How tall and wide is <object0>?", "tall and wide"),
        ("Which one is further apart from <object2>, <object0> or <object1>?", "further apart from OBJ"),
        ("I just turned left 90 degrees, what o'clock is <object0>?", "i just turned"),
        ("When I turned left earlier, where was <object0>?", "turned"),
        ("How far is <object0> from the camera to the floor?", "to the floor"),
        # a compass heading, a rank among the objects, a second question in its own sentence, a size word
        # a distance reading leaves unused
        ("turn right to heading zero niner zero, where is <object0>?", "to heading"),
        ("Which is the second closest: <object0>, <object1> or <object2>?", "second closest"),
        ("Rank <object0>, <object1> and <object2> by distance.", "rank"),
        ("Is <object0> to the left of <object1>? And how far apart are they?", "? and how"),
        ("<object0>: range from you, high or low?", "high"),
        # a ratio, an offset to one side, a height relative to the camera, a distance along one axis
        ("How many times taller is <object0> than <object1>?", "how many times"),
        ("How far to the right of <object1> is <object0>?", "how far to the right"),
        ("How high above you is <object0>?", "above you"),
        ("How far below the camera is <object0>?", "below the camera"),
        ("What's the horizontal distance between <object0> and <object1>?", "horizontal"),
        # a correction mid-question, another object's point of view, "and how far" as a second question
        ("Say I turn right, no wait, left, 90 degrees. Clock position of <object0>?", "no wait"),
        ("What's the height of <object0>, sorry, its width?", "sorry"),
        ("From the perspective of <object1>, is <object0> on its left?", "perspective of OBJ"),
        ("Could a 2 ft arm reach <object0>, and how far is it?", "and how"),
        # a sign convention for the answer, a comparison sign beside a quantity
        ("yaw_needed(<object0>) [deg, ccw+]", "counterclockwise+"),
        ("height(<object0>) in cm > 50?", ">"),
        # a difference with its verb between, a question about each object, the viewer as the subject
        ("how much is <object0> wider than <object1>", "how much is OBJ wider"),
        ("Are <object0> and <object1> both on your left?", "both"),
        ("How far are you from <object0> and <object1>?", "are you from"),
        # two quantities asked, compass and vertical angles
        ("First, how tall is <object0>? Second, how wide?", "? second, how"),
        ("I need two numbers: distance to <object0> and its height.", "two numbers"),
        ("What's the bearing of <object0> from north?", "north"),
        ("At what angle above the horizon is <object0>?", "above the horizon"),
        ("How far down do I need to look to see <object0>?", "how far down do i need to look"),
        # a turn in clock hours or aimed at a clock position, a move of the camera
        ("turn left by 2 o'clock, where is <object0>?", "turn left by 2 o'clock"),
        ("how many degrees until <object0> is at my 3 o'clock?", "until OBJ is at my 3 o'clock"),
        ("if I turn left 90 and walk forward, where's <object0>?", "walk forward"),
        ("if I step to the left, is <object0> still on my right?", "step to the left"),
        ("If I were facing 90 degrees further left, what o'clock is <object0>?", "facing 90 degrees"),
        # two sizes named as nouns, which way to turn (a side, not an angle)
        ("What is the length and breadth of <object0>?", "length and width"),
        ("which way do I have to turn to see <object0>?", "which way do i have to turn"),
        ("turn to face <object0>, which way and how much?", "which way"),
        # a reference other than the objects, the camera and the floor; a fit asked
        ("How far is <object0> from the wall?", "how far is OBJ from the wall"),
        ("How high is <object0> above the table?", "how high is OBJ above the table"),
        ("Does <object0> fit under <object1>?", "does OBJ fit"),
        # two quantities compared, which a distance reading does not answer
        ("How far is <object0> compared to <object1>?", "compared to"),
        ("Is the distance to <object0> more than the height of <object1>?", "more than the height"),
        # a quantity asked beside a size word, a changed pose, a time
        ("How tall is the stack of <object0> on <object1>?", "how tall"),
        ("How far must I drive to reach <object0>?", "how far"),
        ("If I lean forward, can I reach <object0>?", "lean forward"),
        ("How long will it take to reach <object0>?", "how long will it take"),
        # issue 24: a turn whose amount is said in words no rule reads is no quarter turn (the default)
        ("if I turn right by an eighth, where is <object0> in degrees?", "eighth"),
        ("if I turn right a third of the way round, where is <object0> at o'clock?", "third"),
        ("if I spin right two quarter turns, what o'clock is <object0>?", "quarter"),
        ("if I turn left by a few notches, what o'clock is <object0>?", "notches"),
        ("if I rotate to the right by one clock hour where is <object0> in degrees", "hour"),
        # "lower down" of two without "than" or the floor: the one underneath, or the lower centre
        ("Which is lower down, <object0> or <object1>?", "lower down"),
        # issue 24 (the lead's decision after blind24/25): a denied comparison asked yes or no is refused.
        # Writers label "OBJ is not farther than OBJ" as the comparison named or as its opposite, and a yes
        # or a no to a negated question is itself ambiguous in English ("not as X as" is read: see
        # test_cues_that_a_reading_needs_are_read)
        # (a question opened by the negated auxiliary, "isn't OBJ taller than OBJ?", is read: see
        # test_cues_that_a_reading_needs_are_read)
        ("<object0> isn't taller than <object1>, yes?", "not"),
        ("Is <object1> not higher than <object0>?", "not"),
        ("Confirm <object2> is not closer to you than <object0>.", "not"),
        ("<object0> is not lower than <object1>, right? by their middles", "not"),
        # "the lower one" of two: the one underneath to some askers, the lower centre to others
        ("Of <object0> and <object1>, which is the lower one?", "the lower one"),
        ("which of these is the lower of the two, <object2> or <object0>", "the lower of the two"),
        # issue 24 (blind26/27): a clause in which few words are English is in another language; the
        # rules would read the English gloss beside it alone (sentences of our own: Spanish, German,
        # romanised Japanese, followed by an English-looking gloss; the Swahili one is read since the
        # glossary's fourth pass, test_spatial_lexicon)
        # the glossary reads "gira a la izquierda" (turn left), not "dime: donde queda" (tell me: where is)
        ("Gira a la izquierda y dime: donde queda <object0>? (clock)", "donde"),
        ("<object0> wa migi ni arimasu ka? is it on your right?", "OBJ wa right ni arimasu ka"),
        # a choice's negation that no rewrite turns: read without its "not" it would pick the other
        ("Which of <object0> and <object1> is not the nearest one to you?", "not"),
        ("between <object2> and <object0>, which isn't the taller one", "isn't the taller"),
        # issue 24 (blind28/29): a word that no rule reads and no English list knows, where a cue belongs,
        # is refused with the word; the rules would answer the rest without it (a unit's place after a
        # number or a closing "in", a tag, a question word's place, beside a turn verb, a side's place;
        # sentences of our own, Spanish, German, Polish, French, Japanese)
        ("Your arm is 2 stopy long, can you reach <object0>?", "stopy"),
        ("turn gauche 90 degrees, what o'clock is <object0>?", "gauche"),
        ("Is <object2> on my right hand or on my gauche hand?", "gauche"),
        # an angle and a side are a turn whatever verb says it; a length unit with no arm length read
        ("Snap 90 right, what o'clock is <object2>?", "90 right"),
        ("Flick left, where is <object1> on the clock?", "flick"),
        ("Arm: some centimetres. Can you reach <object0>?", "centimeters"),
        # issue 24 (blind32/33 kinds): a question restarted after "hold on" is a self-correction; an
        # unknown word after "how many / how much" stands in a unit's place (read without it, a distance)
        ("is <object1> under <object0> hold on is it below it", "hold on"),
        ("how much sazhen away is <object1>?", "sazhen"),
        # a statement to confirm about one of three, where the task has no yes/no form (it would name the
        # nearest)
        ("Please verify: <object2> is the closest of <object0>, <object1> and <object2>.", "verify: OBJ"),
        # (issue 24, blind34/35's kinds, sentences of our own) a short/long word on a noun measured from a
        # place is the length of a way there, not the object's size
        ("Which of <object0>, <object1> and <object2> is the shortest stroll from where I stand?",
         "shortest stroll"),
        ("Of <object1> and <object2>, which is the longer ride from here?", "longer ride"),
        # a side said of an object, read as a distance
        ("<object0> is at left from you, yes?", "left"),
        # a turn by no said amount toward an object is the turn to face it, never a quarter turn then a
        # bearing
        ("Rotating clockwise, how many degrees until I point at <object2>?", "until i point at OBJ"),
        ("rotate_ccw -> <object0>, degrees", "rotate counterclockwise, OBJ"),
        ("Spinning anticlockwise, how many degrees to get <object1>?", "to get OBJ"),
        # a side misspelt past safe correction is no distance word's neighbour
        ("Which one is further to the rightt: <object1> or <object0>?", "rightt"),
        # (issue 24, blind36/37's kinds) an unknown word opening a question before the object may be a
        # particle that makes it yes or no: a reading that picks one of the objects is refused
        ("Utrum <object1> is nearer to you than <object2>?", "utrum"),
        # a tolerance in one unit and the report in another: two units
        ("Item 4. <object0> width, tol. 5 mm, report in inches", "inches"),
        # (issue 24, blind38/39's kinds) a planner's "lower_of": the lower centre or the one underneath, the
        # name does not say which
        ("lower_of(<object2>, <object1>)", "lower of OBJ"),
        ("cmd: lower_of <object0> <object2>", "lower of OBJ"),
        # (issue 24, blind40/41's kinds) a second number beside the arm's length is no part of it
        ("arm 2 feet, 5 inches more, can you reach <object1>?", "5"),
        # a word of another alphabet inside a clause the rules read may ask anything
        ("<object2> ở phía nào from you?", "ở"),
        # a two-letter word no list knows before the object governs it ("the top du OBJ")
        ("the top du <object0>, how high above the floor?", "du"),
        # an unknown word one letter from a cue word, which read without it answers another question
        ("What is the anglr between your heading and <object2>?", "anglr"),
        # an apology that corrects ("sorry, I meant ...") or names a cue stays a correction
        ("Which is nearer, <object0> or <object1>? Sorry, I meant the farther one.", "sorry"),
        ("Can you reach <object0>? Sorry, I am not sure how long your arm is.", "sorry"),
        ("Which is wider, <object2> or <object1>? Sorry, wrong question.", "sorry"),
        # (issue 24, blind42/43's kinds) "how many in" with no dot: the preposition, the unit unsaid
        ("how many in between <object0> and you", "how many in"),
        # a turn's own amount asked with no goal said: no quarter turn is assumed before a bearing
        ("If you pivot to the right, how many degrees would that be for <object1>?",
         "how many degrees would that be"),
        ("Work out the angle of clockwise rotation required, then tell me where <object2> is.",
         "angle of clockwise rotation"),
    ],
)
def test_a_cue_no_reading_uses_is_refused_with_the_cue(question: str, cue: str) -> None:
    p, why = parse_question(question)
    assert p is None
    assert why.startswith(PARTLY_READ) and why.endswith(f"does not use {cue!r}"), why


def test_the_reading_lists_every_slot_and_the_objects() -> None:
    p = parse_structured("height_difference point=top objects=1,0")
    assert p.reading([1, 0]) == "height_difference point=top unit=m objects=1,0"
    # the reading is itself a structured task meaning the same question
    assert parse_structured(p.reading([1, 0])).structured() == p.structured()


@pytest.mark.parametrize(
    ("question", "reading", "asked"),
    [
        # (issue 24, blind44/45) the reading's type of answer is the one the question asks: whatever cue
        # chose the reading, a choice among named objects is not answered by a number (the distance between
        # them), an amount not by a choice, a statement put to confirm not by a choice where the task can
        # answer yes or no (tasks.py: closer_to_camera, tallest_choice and higher_choice have form=yesno)
        ("Of <object1> and <object2>, which lessens the gap to you?", "center_distance",
         "'of OBJ and OBJ, which' asks which one, and that reading answers with a number"),
        ("What distance separates me from the closer of <object0> and <object1>?", "closer_to_camera",
         "'what distance' asks for an amount, and that reading does not answer with one"),
        ("You would agree <object2> is not as wide as <object1>?", "tallest_choice dim=width order=min",
         "'you would agree' asks yes or no, and that reading does not answer so"),
    ],
)
def test_an_answer_of_another_type_than_asked_is_refused(question: str, reading: str, asked: str) -> None:
    p, why = parse_question(question)
    assert p is None
    assert why.startswith(f"{PARTLY_READ}: I read {question!r} as {reading}, but {asked}"), why


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # the check refuses only a mismatch: a quiz's values ("which of the following") are picked by a
        # number, a claimed hour or choice is answered by the one measured, "how far" inside a remark is
        # no amount asked, and a side put to confirm is answered yes or no
        ("Which of the following is the width of <object0>, in centimeters?", "object_width unit=cm"),
        ("Someone told me <object0> is at your three o'clock. True?", "direction_clock"),
        ("<object0> sits on your right, not your left, true?", "side_of_me side=right"),
        ("I can't judge how far it is. With a one metre arm, could you touch <object1>?",
         "reachability arm_length_m=1"),
    ],
)
def test_an_answer_of_the_type_asked_passes_the_check(question: str, expected: str) -> None:
    _assert_reads(question, expected)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # (issue 24, blind46/47) every number is a value the reading uses, read in full: a length whose
        # smaller unit is left unsaid is 3 ft 4 in = 40 in = 40 × 0.0254 = 1.016 m; "two metres fifteen"
        # is 2.15 m; the foot and inch marks 2' 6" are 30 in = 0.762 m, 3' is 3 × 0.3048 = 0.9144 m
        ("With an arm of three foot four, is <object1> within reach?", "reachability arm_length_m=1.016"),
        ("With an arm of two metres fifteen, could you reach <object0>?", "reachability arm_length_m=2.15"),
        ("My arm is 2' 6\", can I reach <object0>?", "reachability arm_length_m=0.762"),
        ("My arm is 3', can I reach <object0>?", "reachability arm_length_m=0.9144"),
        # every unit word is the unit answered in: the plural abbreviations "ins" and "mtrs", "ft." with
        # its dot
        ("How many ins wide is <object1>?", "object_width unit=in"),
        ("How far is <object0> from you, in mtrs?", "distance_to_camera"),
        ("How tall is <object0>, in ft.?", "object_height unit=ft"),
        # the top or bottom of a thing in other words; a learner's "upper than" (a height difference)
        ("What is the peak of <object0> above the floor, in cm?", "height_from_ground point=top unit=cm"),
        ("How high above the floor is the lower extremity of <object1>?", "height_from_ground point=bottom"),
        ("How much cm <object0> is upper than <object2>?", "height_difference unit=cm"),
        # "the higher, on top" is the one above (a stacking); "goes first from the right" the rightmost
        ("Which one is the higher, on top: <object0> or <object1>?", "above_choice"),
        ("Which goes first from the right, <object0> or <object1>?", "leftmost_choice side=right"),
        # radio procedure and an instructor's preamble around a complete question are dropped
        ("Breaker one-nine, how far is <object0> from you? Come back.", "distance_to_camera"),
        ("Breathe in deeply and tell me how tall <object1> is.", "object_height"),
        # one meaning each: the spread between two is their distance; the whole mileage the walked
        # distance; the item minimising the distance to the camera the nearest; the larger horizontal
        # dimension the length
        ("What is the spread between <object0> and <object1>?", "center_distance"),
        ("What was the total mileage of the camera over the video?", "walked_distance"),
        ("Choose the item minimising distance to the camera among <object0>, <object1> and <object2>.",
         "closest_to_camera"),
        ("What is the larger horizontal dimension of <object0>?", "object_length"),
        # a learner's forms
        ("Which is farer from you, <object0> or <object1>?", "closer_to_camera order=far"),
        ("What is the wideness of <object0>?", "object_width"),
        ("Is <object1> leftside to <object0>?", "left_predicate"),
        ("Can take <object0> with your hand?", "reachability"),
        ("Hang a left 90 degrees; what o'clock is <object0> then?",
         "future_direction_clock turn=left angle_deg=90"),
        ("How far is <object1> from my vantage point?", "distance_to_camera"),
        ("Is <object2> at right or at left?", "side_of_me"),
        # a gap to the viewer is a distance, not the room under a thing; a question opening with "and"
        # carries on a conversation; "how broad" is the width; from the middle of one to the middle of
        # the other is the centres' distance; "further down the road" is farther; "what hour is OBJ at"
        # the clock hour; "reaching OBJ, possible?" whether it is in reach
        ("Pick the object with the bigger gap to the camera: <object0> or <object1>.",
         "closer_to_camera order=far"),
        ("And what o'clock is <object0> for you?", "direction_clock"),
        ("How broad is <object1>, in inches?", "object_width unit=in"),
        ("What is the span from the middle of <object0> to the middle of <object2>?", "center_distance"),
        ("Of <object1> and <object0>, which sits further down the road from you?",
         "closer_to_camera order=far"),
        ("With twelve o'clock dead ahead, what hour is <object1> at?", "direction_clock"),
        ("Arm of 80 cm. Reaching <object2>, is it possible?", "reachability arm_length_m=0.8"),
        # more room under one than under the other compares the two bottoms' heights (yes/no), not the
        # first under the second
        ("Is there less room underneath <object2> than beneath <object0>?",
         "higher_choice point=bottom order=min form=yesno"),
    ],
)
def test_blind46_47_kinds_are_read(question: str, expected: str) -> None:
    _assert_reads(question, expected)


@pytest.mark.parametrize(
    ("question", "reading", "unused"),
    [
        # (issue 24, blind46/47) a number the reading does not use refuses, naming it: a turn's angle is
        # never a convention's number ("ninety degrees" after a turn read as another angle is refused in
        # the reading that drops it); "1 m 5" is 1.05 m or 1.5 m, so the 5 is unread, not guessed
        ("Spin to your right, a hundred and eighty degrees, which o'clock is <object0> then?",
         "future_direction_clock turn=right angle_deg=90", "that reading does not use '180'"),
        ("With an arm of 1 m 5, is <object1> within reach?", "reachability arm_length_m=1",
         "that reading does not use '5'"),
        # a unit no reading answers in is refused by name, not converted
        ("How many yards is <object0> from you?", "distance_to_camera",
         "'yards' names a unit no reading answers in"),
        # a choice without "which" is never answered by a number
        ("Between <object0> and <object1>, point out the item at the larger distance.",
         "center_distance", "'point out the item' asks which one, and that reading answers with a number"),
        ("Of <object0> and <object2>, name the one with the greater spacing.",
         "center_distance", "'name the one' asks which one, and that reading answers with a number"),
        # an amount asked of a choice: the distance from me to the nearer of two is a number, not the
        # choice; "in ft and in" asks two units, one of them unread
        ("What is the distance between the nearer of <object1> and <object2> and me?", "closer_to_camera",
         "'what is the distance between' asks for an amount, and that reading does not answer with one"),
        ("Height of <object0> in ft and in?", "object_height unit=ft",
         "that reading does not use 'inches'"),
        # a count of steps is no length; a number that ends a sentence is a number all the same (no arm
        # length is read from a bare "0.7", so the reach is not measured with the default arm)
        ("How many steps have you walked?", "walked_distance",
         "'steps' names a unit no reading answers in"),
        ("Arm 0.7. Reach <object0>?", "reachability", "that reading does not use '0.7'"),
    ],
)
def test_an_unused_number_unit_or_choice_is_refused(question: str, reading: str, unused: str) -> None:
    _assert_refused(question, reading, unused)


# Issue 24, blind48/49 round: every side word is consumed, and a misspelt unit is a unit. Sentences of
# our own; the readings are worked by hand.
@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # the parade ground's "left face" / "right face" is a quarter turn to that side; "half right" an
        # eighth (45 degrees); the direction after it is asked, not the current one
        ("Right face! Where is <object1> on the clock now?",
         "future_direction_clock turn=right angle_deg=90"),
        ("Left face. Give me <object0>'s bearing in degrees.",
         "future_direction_degrees turn=left angle_deg=90"),
        ("Half left! What o'clock is <object2>?", "future_direction_clock turn=left angle_deg=45"),
        # "all right" places nothing
        ("All right, what o'clock is <object2>?", "direction_clock"),
        # a side after a number states the direction's convention, not a turn
        ("Angle of <object0>, in degrees, with 0 ahead and 90 to the right?", "direction_degrees"),
        # a unit misspelt by one letter, where only one unit is that near: "inchs" (a dropped e), "fet"
        # (a dropped e of feet), "inchus" (a changed letter of inches) are read as that unit
        ("How many inchus tall is <object0>?", "object_height unit=in"),
        ("What is the width of <object1> in fet?", "object_width unit=ft"),
        ("How far apart are <object0> and <object1>, inchs?", "center_distance unit=in"),
        # (the lead, after the merge) a word one edit from a unit's name that is a word is no slip: Italian
        # "in foto" is "in the photo", so the height is asked in the default metres, never in feet
        ("How tall is <object0> in foto?", "object_height"),
    ],
)
def test_sides_and_misspelt_units_are_read(question: str, expected: str) -> None:
    _assert_reads(question, expected)


@pytest.mark.parametrize(
    ("question", "reading", "unused"),
    [
        # a side said apart from every object is a turn the current direction would leave unread
        ("Right! Now, what o'clock is <object0>?", "direction_clock", "that reading does not use 'right'"),
        # a walk round an object is a move (found probing "half a circle", a turn only after a turn verb)
        ("If I walk half a circle round <object1>, what o'clock is it?", "direction_clock",
         "that reading does not use 'walk half a circle round'"),
        # a slip as near two words of the rules, "frot" (foot or front), is refused, not skipped
        ("How tall is <object1> in frot?", "object_height", "that reading does not use 'frot'"),
        # (the lead, after the merge) two relations offered as the answers ask a choice between them: a
        # yes or no to one of them ("below": yes) would not say which
        ("Is <object2> above <object0> or below it?", "below_predicate",
         "'above OBJ or below' offers two answers, and that reading answers yes or no"),
        ("Is <object1> under <object0> or over it?", "below_predicate",
         "'under OBJ or over' offers two answers, and that reading answers yes or no"),
    ],
)
def test_an_unread_side_or_an_ambiguous_unit_slip_is_refused(
    question: str, reading: str, unused: str
) -> None:
    _assert_refused(question, reading, unused)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # an address or a tag after a complete question asks nothing: the question before it is read
        # ("friend" also stands for other languages' address terms, which the glossary glosses so)
        ("Which is taller, <object1> or <object0>, pal?", "tallest_choice"),
        ("How wide is <object2> in centimetres, do you reckon?", "object_width unit=cm"),
        ("Is <object0> to your left, sir? Yes or no.", "side_of_me side=left"),
        ("Is <object1> nearer to you than <object0>, right friend?", "closer_to_camera form=yesno"),
        ("How far apart are <object0> and <object1>, I wonder?", "center_distance"),
        # literary English: "doth" is does, "loftier" higher, "upon which hand" on which side, a clock's
        # hands' way clockwise and "widdershins" its opposite, "the compass of my arm" its reach, "a gulf
        # betwixt" the distance, "fall short of" lower than (a height difference at the named tops)
        ("Doth <object1> sit loftier than <object0>?", "higher_choice form=yesno"),
        ("Upon which hand of the camera sits <object2>?", "side_of_me"),
        ("Turning widdershins, how many degrees until you face <object1>?", "rotate_to_face direction=ccw"),
        ("How far must you rotate in the manner of a clock's hands to look upon <object0>?",
         "rotate_to_face"),
        ("Lies <object2> within the compass of your arm?", "reachability"),
        ("How great a gulf lies between <object0> and <object1>?", "center_distance"),
        ("By how many centimetres does the top of <object0> fall short of the top of <object1>?",
         "height_difference point=top unit=cm"),
        ("What sum of ground have you traversed since the recording began?", "walked_distance"),
        # the longer / shorter run from you is farther / nearer; half a circle is 180 degrees (but three
        # quarters of a full circle stays 270); "square on to" faces; "has the least distance to" nearest
        ("Of <object0> and <object1>, which is the longer run from the camera?",
         "closer_to_camera order=far"),
        ("Turn half a circle to your right: what o'clock is <object0> then?",
         "future_direction_clock turn=right angle_deg=180"),
        ("Turning three quarters of a full circle to the left, where is <object1> on the clock?",
         "future_direction_clock turn=left angle_deg=270"),
        ("How many degrees to be square on to <object2>?", "rotate_to_face"),
        ("Which of <object0>, <object1> and <object2> has the least distance to you?", "closest_to_camera"),
        ("Which is the most left side, <object0> or <object1>?", "leftmost_choice"),
        # a learner's "up of" is above, "more small than OBJ in height" shorter, "then" after a
        # comparative "than"; "how long is it from you to OBJ" a distance, never the object's length
        ("<object1> is up of <object0>?", "above_predicate"),
        ("<object0> is more small than <object2> in height?", "tallest_choice order=min form=yesno"),
        ("Is <object1> wider then <object0>?", "tallest_choice dim=width form=yesno"),
        ("How long is it from me to <object0>, in feet?", "distance_to_camera unit=ft"),
        # the rotation needed to orient towards OBJ is the turn to face it; "positioned uppermost" on top;
        # AFF is above the floor; the floor eaten up in the whole clip the walk; "70 cms" 70 cm
        ("The rotation required to orient the robot towards <object2>, in degrees?", "rotate_to_face"),
        ("Which is positioned uppermost, <object0> or <object1>?", "above_choice"),
        ("Height AFF of <object0>, in metres?", "height_from_ground"),
        ("How much ground did the robot eat up in this whole clip?", "walked_distance"),
        ("With an arm of 70 cms, can you reach <object1>?", "reachability arm_length_m=0.7"),
        # a length along the greater side is the length
        ("What length does <object2> measure along its greater side?", "object_length"),
    ],
)
def test_blind48_49_kinds_are_read(question: str, expected: str) -> None:
    _assert_reads(question, expected)


# Issue 24, after fresh17 (the lead's round): three answer-type holes and an aside, closed by kind.
# Sentences of our own; each refusal's reason is the check that fires, worked out by hand from the words.
@pytest.mark.parametrize(
    ("question", "reason"),
    [
        # a comparison stated with a question mark and no question word is put to confirm: a choice
        # reading ("which of the two is higher") would name an object where yes or no was asked (here the
        # other order is offered too, so the statement is not the yes/no of its first object either)
        ("<object0> sits more high than <object1>, or is <object1> higher?",
         "states a comparison to confirm, and that reading does not answer yes or no"),
        # "who" among named objects asks which of them: a yes/no reading ("is OBJ to the right?") does not
        # say which ("Of OBJ and OBJ, who is more to the right?", "who" straight after the objects, is read
        # as the choice since round 22)
        ("<object0> vs <object2>. who is more to the right?",
         "'. who is' asks which one, and that reading answers yes or no"),
        # an aside after the question that names another relation must not choose the reading: the
        # question before the '?' alone asks which is nearer, the aside's "above" would make it a stacking
        ("Which is nearer to you, <object0> or <object1>? My cat sleeps above the nearer one.",
         "the question before the '?' reads as closer_to_camera alone"),
        # "highest / lowest in height": placement to some askers, the object's own height to others
        ("Highest in height among <object0>, <object1>, <object2>?",
         "'highest in height' may mean the object's own height, and that reading is a placement"),
        # (after fresh18) "top to bottom" is the object's own extent: the top's height above the floor
        # would answer another question
        ("How tall is <object1> when it stands up, top to bottom, in feet?",
         "'top to bottom' may mean the object's own height, and that reading is a placement"),
        # a turn verb with no amount beside words that put the object in front is the turn to face it:
        # a quarter turn then a bearing would answer another question
        ("Point yourself at <object2> by turning clockwise: what angle?",
         "asks the turn to face it, and that reading turns by a set amount"),
        # "how many mil": a millimetre or a thousandth of an inch, refused as "in mil" is
        ("How many mil is <object0> from the camera?", "does not use 'how many mil'"),
    ],
)
def test_an_answer_of_another_type_or_an_aside_reading_is_refused(question: str, reason: str) -> None:
    _assert_refused_because(question, reason)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # the stated comparison that the yes/no reading already answers stays read (subject first)
        ("<object2> is narrower than <object0>?", "tallest_choice dim=width order=min form=yesno"),
        # a tail that gives a reason, thanks, the answers offered or the unit leaves the reading as it is
        ("Which of <object0> and <object1> is nearer to you? Thanks a lot.", "closer_to_camera"),
        ("Which is taller, <object0> or <object1>? I need to know for the shelf.", "tallest_choice"),
        ("Is <object0> left or right of <object1>? left or right", "left_right_choice"),
        # (after fresh18) a turn's direction said as "anti-clock way" is counterclockwise
        ("How many degrees do you turn the anti-clock way to face <object2>?",
         "rotate_to_face direction=ccw"),
        # an object named again: the last clause "how far above OBJ is OBJ" marks its first object as the
        # reference, so the subject is <object1>, the one above
        ("From <object0> up to <object1>: how far above <object0> is <object1>?",
         "height_difference objects=1,0"),
    ],
)
def test_a_tail_that_changes_nothing_is_read(question: str, expected: str) -> None:
    _assert_reads(question, expected)


# Issue 24, after fresh19 (blind54/55): two invariants. Sentences of our own; readings worked by hand.
@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # among N objects, the one not as far to one side as the others is less far that way than every
        # other one: the one furthest the other way (with "the other two" / "the rest" naming all others)
        ("Among <object2>, <object0> and <object1>, which isn't as far to the left as the rest?",
         "leftmost_choice side=right"),
        ("Of <object1>, <object0>, <object2>, which one sits not so far right as the other two?",
         "leftmost_choice"),
        # a spoken mixed number is one number: 1 + 1/2 = 1.5 m; 2 + 1/4 = 2.25 ft = 0.6858 m (2.25 x
        # 0.3048); "a metre and half" = 1.5 m; "1 and 3/4" = 1.75 m
        ("My reach is one and half metres; can I get to <object0>?", "reachability arm_length_m=1.5"),
        ("Could an arm of two and a quarter feet touch <object1>?", "reachability arm_length_m=0.6858"),
        ("With a metre and half of arm, is <object2> reachable?", "reachability arm_length_m=1.5"),
        ("Arm of 1 and 3/4 m: reach <object0>?", "reachability arm_length_m=1.75"),
        ("Could an arm one and three quarters metres long reach <object2>?",
         "reachability arm_length_m=1.75"),
    ],
)
def test_a_negated_side_superlative_and_mixed_numbers_are_read(question: str, expected: str) -> None:
    _assert_reads(question, expected)


@pytest.mark.parametrize(
    ("question", "reading", "unused"),
    [
        # every negation is consumed: "not as far left" turned into a nearer-than by the distance rewrite
        # is no distance from the viewer; a side asked yes or no leaves its "not" unread
        ("Is <object1> not as far left as <object2>?", "left_predicate", "that reading does not use 'not'"),
        # "not the leftmost" among three may be either of two others: the negation stays unread
        ("Which of <object0>, <object1>, <object2> is not the leftmost?", "leftmost_choice",
         "that reading does not use 'not'"),
        # (found probing the negations) "no" between a verb and a comparative denies it as "not" does: read
        # without it, "is OBJ no farther" would ask whether it is farther
        ("Is <object2> no farther from the camera than <object0>?", "closer_to_camera order=far form=yesno",
         "that reading does not use 'OBJ no farther'"),
        ("Of <object1> and <object0>, which sits no higher?", "higher_choice",
         "that reading does not use 'sits no higher'"),
    ],
)
def test_an_unconsumed_negation_is_refused(question: str, reading: str, unused: str) -> None:
    _assert_refused(question, reading, unused)


# Issue 24, after fresh19: a trade's aside beside a complete question, and single kinds. Sentences of our
# own; readings worked by hand from the words.
@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # a sentence that names no object, is no question, reads no task alone and holds no slot word is
        # an aside: the question is read without it (a label's number, "Bay 7", where no slot is a number)
        ("Keep the tray steady. Which of <object0> and <object1> is nearer to you?", "closer_to_camera"),
        ("How tall is <object2>, in centimetres? Bay 7 is clear.", "object_height unit=cm"),
        # a size word alone is no task about no object: "Hold it wide" beside a distance changes nothing
        ("Hold the door wide... robot, how far is <object1> from you?", "distance_to_camera"),
        # the unit said in its own sentence is still read
        ("Paint the rail first. How high is <object0> above the floor? Feet, please.",
         "height_from_ground unit=ft"),
        # a learner's "you" for "your" before a side
        ("Is <object1> on you left?", "side_of_me side=left"),
        # against the clock's hands is counterclockwise; a turn round onto an object faces it
        ("Turning against the clock hands, how many degrees until you face <object2>?",
         "rotate_to_face direction=ccw"),
        ("How many degrees to spin yourself round counterclockwise onto <object0>?",
         "rotate_to_face direction=ccw"),
        # "range between" two objects is the distance between their centres; a room's floor is the floor
        ("Range between <object1> and <object0>, in feet?", "center_distance unit=ft"),
        ("How high is <object2> off the store-room floor?", "height_from_ground"),
        # "not as far from the camera" of two is the nearer one
        ("Of <object0> and <object2>, which is not as far from the robot?", "closer_to_camera"),
        # "stage right" denied beside the camera's view asks nothing; "camera right" is the image's right
        ("Not stage right; camera's view: is <object1> right of <object2>?", "right_predicate"),
        ("Which is furthest camera right, <object0>, <object1> or <object2>?", "leftmost_choice side=right"),
    ],
)
def test_asides_and_fresh19_kinds_are_read(question: str, expected: str) -> None:
    _assert_reads(question, expected)


@pytest.mark.parametrize(
    ("question", "reason"),
    [
        # a sentence with a side word may be the question's side: kept, and refused where it changes it
        ("Is <object0> taller than <object1>? Lean to the right, please.",
         "the question before the '?' reads as tallest_choice alone"),
        # a number beside a reading that holds a number may be that number: the sentence stays
        ("Can you reach <object1>? Shelf 3 is next.", "that reading does not use '3'"),
        # a clockwise bearing (330 for 30 degrees to the left) does not answer the angle toward the left
        ("What angle left of dead ahead is <object2>, in degrees?",
         "'left' asks the angle toward the left, and that reading is the clockwise bearing"),
        # (found writing these tests) the passive "until OBJ is faced" puts the object in front: a turn
        # by a set amount then a bearing would answer another question
        ("Turning clockwise, how many degrees until <object2> is faced?",
         "asks the turn to face it, and that reading turns by a set amount"),
        # a theatre's "stage left" is the performer's left, the camera's right when it faces the stage
        ("Is <object0> stage left of <object2>?", "that reading does not use 'stage left'"),
        # a lone side word after a question no reading of a distance uses
        ("How far is <object1> from the camera? right",
         "'right' after the question names a side, and that reading measures none"),
    ],
)
def test_a_sentence_that_may_change_the_question_is_refused(question: str, reason: str) -> None:
    _assert_refused_because(question, reason)


# A viewpoint supposed other than the camera's, or the view changed as a whole. Sentences of our own;
# readings worked by hand: a distance or a side from the viewer depends on where the viewer is, so a
# supposed place or facing answers another question unless the reading is the same from anywhere (the
# distance between two objects, a height above the floor) or is the turn to face the object named.
@pytest.mark.parametrize(
    ("question", "reason"),
    [
        ("Imagine you face the window. Where is <object0> on the clock?", "does not use 'imagine you face'"),
        ("If you were standing at the door, how far would <object1> be?",
         "does not use 'if you were standing'"),
        ("Picture yourself by the oven: is <object2> on your left?", "does not use 'picture yourself by'"),
        ("What if we stood behind <object0>, would <object1> be nearer than <object2>?",
         "does not use 'if we stood'"),
        ("Flip the picture. Is <object0> left of <object1>?", "does not use 'flip'"),
        ("Suppose the camera were upside down: which is higher, <object0> or <object1>?",
         "does not use 'upside down'"),
    ],
)
def test_a_supposed_viewpoint_is_refused(question: str, reason: str) -> None:
    _assert_refused_because(question, reason)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # the distance between two objects is the same from any place the asker supposes
        ("If I were standing at <object1>, how far is <object0> from it, in metres?", "center_distance"),
        # a supposed turn is a turn the geometry makes; a supposed facing of an object is the turn to face it
        ("Imagine you turn right 90 degrees. Where is <object1> on the clock?",
         "future_direction_clock turn=right angle_deg=90"),
        ("Imagine you face <object2>: how many degrees clockwise is that turn?", "rotate_to_face"),
        # the current facing said as a supposition is no other viewpoint
        ("If you're facing straight ahead, is <object0> on your right?", "side_of_me side=right"),
        # a supposed arm names no viewpoint
        ("Suppose my arm is 0.8 m long. Can I reach <object0>?", "reachability arm_length_m=0.8"),
    ],
)
def test_a_supposition_that_changes_no_viewpoint_is_read(question: str, expected: str) -> None:
    _assert_reads(question, expected)



# Red-team probes (wt/para18): sentences of our own, one per class the check table did not have. Each was
# read before as a task that answers something else, judged by hand: the geometry measures the scene in
# the latest frame from the camera, so an earlier time, a scene changed by supposition, objects set apart
# from a choice or a person as the reference is another question.
@pytest.mark.parametrize(
    ("question", "reason"),
    [
        # another time: was read as the distance, side, clock direction or height now
        ("How far away was <object0> originally?", "does not use 'originally'"),
        ("Was <object0> to your left in the previous frame?", "does not use 'previous frame'"),
        ("how high was <object0> before it got moved", "does not use 'before it got moved'"),
        ("When you first saw <object0>, was it on your left?", "does not use 'first saw'"),
        ("where was <object0> on the clock at the beginning", "does not use 'at the beginning'"),
        ("Earlier, <object0> was closer than <object1>, right?", "does not use 'earlier'"),
        # a changed scene: was read as the objects where they stand
        ("After you pick up <object0>, how far is <object1>?", "does not use 'after you pick up OBJ'"),
        ("If someone moved <object0> to the right, would it be on your right?",
         "does not use 'if someone moved OBJ'"),
        ("if <object0> was placed next to <object1> which is taller", "does not use 'if OBJ was placed'"),
        # objects set apart from a choice: was read as a choice among all three (could answer <object0>)
        ("Except <object0>, which is the tallest of <object0>, <object1> and <object2>?",
         "does not use 'except OBJ'"),
        ("Not counting <object0>, which is the closest of <object0>, <object1>, <object2>?",
         "does not use 'not counting OBJ'"),
        ("Of the ones on the left, which is the closest: <object0>, <object1>, <object2>?",
         "does not use 'of the ones on'"),
        ("Among those on the table, which is tallest, <object0>, <object1> or <object2>?",
         "does not use 'among those on'"),
        ("What's the nearest object on your right, <object0>, <object1> or <object2>?",
         "does not use 'nearest object on your right'"),
        ("Which is the nearest red one, <object0>, <object1> or <object2>?", "does not use 'red one'"),
        # a person or a room part as the reference: was read from the camera
        ("How far is <object0> from her?", "does not use 'from her'"),
        ("Is <object0> on the left for the customer?", "does not use 'left for the customer'"),
        ("From where the patient sits, is <object0> on the left?", "does not use 'where the patient sits'"),
        ("is <object0> on the left from the guest's side", "does not use \"from the guest's side\""),
        ("How far is <object0> from the window?", "does not use 'how far is OBJ from the window'"),
        # a second round of the same kinds, and commands: "pick up OBJ" was read as the reach, "put OBJ on
        # OBJ" as whether it is on it, "which one on the table" as a choice among all three
        ("How far was <object0> when the video started?", "does not use 'when the video started'"),
        ("At the very start, which was closer, <object0> or <object1>?", "does not use 'at the very start'"),
        ("Did <object0> used to be closer than <object1>?", "does not use 'OBJ used to'"),
        ("Which one on the table is the tallest, <object0>, <object1> or <object2>?",
         "does not use 'which one on the table'"),
        ("How far is <object0> from my friend?", "does not use 'from my friend'"),
        ("How far is <object0> from the customer's chair?", "does not use \"from the customer's chair\""),
        ("Is <object0> on your left if you were her?", "does not use 'if you were her'"),
        ("How far is <object0> from the entrance?", "does not use 'how far is OBJ from the entrance'"),
        ("Pick up <object0>.", "does not use 'pick up OBJ'"),
        ("Put <object0> on <object1>.", "does not use 'put OBJ'"),
        # a third round: a part of the room as the reference of a nearness or a side (was read from the
        # camera: "closer to the wall than OBJ" as the nearer to the camera), an object supposed away
        ("Is <object0> closer to the wall than <object1>?", "does not use 'closer to the wall'"),
        ("Which is nearer the window, <object0> or <object1>?", "does not use 'nearer the window'"),
        ("Is <object0> to the left of the door?", "does not use 'left of the door'"),
        ("How far is <object0> from the back wall?", "does not use 'how far is OBJ from the back wall'"),
        ("If <object1> weren't there, which would be closest, <object0> or <object2>?",
         "does not use \"if OBJ weren't there\""),
        # (the lead, after the merge: the round's report left it open) two objects offered as the reference
        # of one subject: which of them it is nearer to, no choice of the nearest to the camera
        ("Is <object2> nearer to <object0> or to <object1>?", "does not use 'OBJ nearer to OBJ or to OBJ'"),
        ("Which is <object1> further from, <object0> or <object2>?",
         "does not use 'OBJ further from, OBJ or OBJ'"),
    ],
)
def test_a_red_team_probe_is_refused(question: str, reason: str) -> None:
    _assert_refused_because(question, reason)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # the walk is summed over the frames' span: the time it names is its own
        ("How far have you walked since the start of the video?", "walked_distance"),
        # the last frame is the one the geometry measures
        ("In the last frame, how tall is <object0>?", "object_height"),
        # a thing set aside that is no object named, and a pick-up that is the reach itself
        ("Ignoring the rug, how high is the top of <object0> off the floor?", "height_from_ground point=top"),
        ("Can I pick up <object0> with an arm of 0.7 m?", "reachability arm_length_m=0.7"),
        # "the gap between" two objects is labelled the distance between them by every writer who asked it
        ("What's the gap between <object0> and <object1>, in cm?", "center_distance unit=cm"),
        # "if it is lower" is a sign convention's condition, no object lowered
        ("How many cm higher is the top of <object0> than the top of <object1>, negative if it is lower?",
         "height_difference point=top unit=cm"),
        # "take OBJ as the reference" names the reference, no act; "they used to be" is no object's past
        ("Take <object1> as the reference: is <object0> beneath it?", "below_predicate objects=0,1"),
        ("My eyes aren't what they used to be. How far is <object0> from you, in feet?",
         "distance_to_camera unit=ft"),
        # where the asker stands is the camera's place
        ("Is <object1> on the left of <object0> from where you stand?", "left_predicate"),
    ],
)
def test_a_red_team_probe_that_asks_what_it_reads_is_read(question: str, expected: str) -> None:
    _assert_reads(question, expected)


# After fresh23 (blind62/63, measured once at dec2036): its one silent-wrong kind, a comparison stated and
# asked whose subject is a point of an object, "Top of OBJ is more low than top of OBJ?", read as a choice
# (the subject was looked for only as a bare "OBJ is"). The asker claims something of the first object's
# point, so the reading is the yes/no about it (subject: the first object named, the default). Sentences
# of our own; readings worked by hand from the words.
@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Bottom of <object1> is more high than bottom of <object2>?",
         "higher_choice point=bottom form=yesno"),
        ("The top of <object2> sits lower than the top of <object0>?",
         "higher_choice point=top order=min form=yesno"),
        ("Middle of <object0> is higher than middle of <object1>?", "higher_choice form=yesno"),
        ("<object0> middle is more high than <object1> middle?", "higher_choice form=yesno"),
        # a question word after it asks which one: the choice, as before
        ("Top of <object0> is lower than top of <object1>? Which one?", "higher_choice point=top order=min"),
    ],
)
def test_a_stated_comparison_of_points_is_a_yes_no(question: str, expected: str) -> None:
    _assert_reads(question, expected)


# After fresh20 (blind56/57, measured once at 4d94b1a): four of its five silent-wrong kinds. Sentences of
# our own; readings worked by hand from the words.
@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # the span from the floor to a point, said before the quantity, is that point's height
        ("Give me the ground-to-middle height of <object1> in cm.", "height_from_ground unit=cm"),
        ("What's the floor to top distance of <object2>?", "height_from_ground point=top"),
        # a learner's transliterated centimetre ("santimetr") is built on the unit's stem
        ("How wide is <object0>, in santimetr?", "object_width unit=cm"),
        # the point said outside the likeness as well is read
        ("Is the top of <object0> higher than the top of <object1>, like a roof over a shed?",
         "higher_choice point=top form=yesno"),
    ],
)
def test_fresh20_kinds_are_read(question: str, expected: str) -> None:
    _assert_reads(question, expected)


@pytest.mark.parametrize(
    ("question", "reason"),
    [
        # a word no list knows where the unit goes, before "please": the unit asked, unread
        ("How far is <object2>? Give it in sentimetrz please.", "does not use 'sentimetrz'"),
        # a turn with no side: the pose after it is unknown (the solver would refuse it too)
        ("If you rotate 60 degrees, where on the clock is <object1>?",
         "it does not say which way or how far I turn"),
        # the bottom said only in a likeness is no point compared
        ("Is <object0> lower than <object2>, like a bottom drawer?",
         "is said only in 'like a bottom drawer'"),
    ],
)
def test_fresh20_kinds_are_refused(question: str, reason: str) -> None:
    _assert_refused_because(question, reason)


# After fresh20/21 (blind56 .. blind59, development sets now): their silent-wrong kinds. Sentences of our
# own; readings worked by hand from the words.
@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # an angle said by its adjective is the bearing, as "angle" is
        ("What is the angular distance of <object1> from straight ahead?", "direction_degrees"),
        ("Tell me the angular position of <object0> relative to where the camera points.",
         "direction_degrees"),
        # a half turn with no side said: the same pose either way, one reading with either side
        ("Once you spin all the way round, what o'clock is <object0>?",
         "future_direction_clock turn=left angle_deg=180"),
        ("After a 180, how many degrees off your nose is <object2>?",
         "future_direction_degrees turn=right angle_deg=180"),
        # "less high" with a floor or a placement verb is the placement, as 33 development writers meant it
        ("Is <object0> less high off the floor than <object1>?", "higher_choice order=min form=yesno"),
        ("Is <object0> not hung as high as <object1>?", "higher_choice order=min form=yesno"),
        # an amount: no reading subtracts own heights, the writers labelled the height difference
        ("By how much is <object1> less high than <object0>?", "height_difference"),
        # the point said in the question proper too; a reason or an aside that fills no slot of the reading
        ("Is the top of <object0> higher than the top of <object1>? I'd have to reach up to dust them.",
         "higher_choice point=top form=yesno"),
        ("How far is <object0>, so I can plan my route?", "distance_to_camera"),
        ("Is <object0> taller than <object1>? I'm short, so I can only reach the bottom.",
         "tallest_choice form=yesno"),
        # a teenager's "like" naming the object's own extent is no likeness
        ("how long is <object1>? like the long side in inchs", "object_length unit=in"),
    ],
)
def test_fresh20_21_kinds_are_read(question: str, expected: str) -> None:
    _assert_reads(question, expected)


def test_a_half_turn_is_one_reading_whichever_side_is_said() -> None:
    """A half turn ends in the same pose either way (the solver turns an unsaid side so): its readings
    compare equal, and a writer's label keeps the side it said."""
    left = parse_structured("future_direction_clock turn=left angle_deg=180")
    right = parse_structured("future_direction_clock turn=right angle_deg=180")
    assert left.structured() == right.structured() == "future_direction_clock angle_deg=180"
    assert left.structured(half_turn_side=True) == "future_direction_clock turn=left angle_deg=180"
    quarter = parse_structured("future_direction_clock turn=left angle_deg=90")
    assert quarter.structured() == "future_direction_clock turn=left angle_deg=90"


@pytest.mark.parametrize(
    ("question", "reason"),
    [
        # an angle asked that no reading of two objects measures: "offset / separation" read as a distance
        ("What is the angular separation between <object0> and <object1>?", "does not use 'angular'"),
        # a learner's "less high" with no floor, point or placement word: the shorter or the lower one
        ("Is <object1> less high than <object2>?", "'less high' may mean the shorter object"),
        ("Which one is less high, <object0> or <object1>?", "'less high' may mean the shorter object"),
        ("<object2> is not so high as <object0>, right?", "'not so high' may mean the shorter object"),
        # a point said only beside the question: in the asker's sentence, a likeness, "as if"
        ("Which is higher, <object0> or <object1>? We'd have to climb up to the top shelf to dust it.",
         "its point=top is said only in \"we'd have to climb up to the top shelf to dust it\""),
        ("Is <object0> mounted higher than <object1>? My cat would have to jump up to the top.",
         "its point=top is said only in 'my cat would have to jump up to the top'"),
        ("Is <object1> lower than <object0>, as if the bottom drawer were pulled out?",
         "is said only in 'as if the bottom drawer were pulled out'"),
        ("Which sits lower, <object1> or <object2>, like a bottom bunk?",
         "is said only in 'like a bottom bunk'"),
        ("Which sits lower, <object1> or <object2>, like the bottom bunk of a bed?",
         "is said only in 'like the bottom bunk of a bed'"),
    ],
)
def test_fresh20_21_kinds_are_refused(question: str, reason: str) -> None:
    _assert_refused_because(question, reason)


# Red-team probes, round 19 (issue 24): 171 questions of our own in the kinds the issue names, each with
# the reading we mean worked out by hand from its words (REFUSE where no task answers it). Before this
# round's changes 99 were read as meant, 19 as another task or slot (silent wrong) and 53 refused; after
# them 102 are read as meant, 0 silent wrong, 69 refused. Those read are pinned here with the reading
# meant; those refused with the reason, and, in a comment, the reading meant where a task answers them.
@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # a turn said conversationally or with a typo
        ("if u swing round to ur left by 90, where's <object0> on the clock",
         'future_direction_clock turn=left angle_deg=90'),
        ("Say I turned rigth 45 degrees — then what o'clock would <object1> be at?",
         'future_direction_clock turn=right angle_deg=45'),
        ("Let's say you rotate thirty degrees to the left. How many degrees off your front is "
         "<object2> then?",
         'future_direction_degrees turn=left angle_deg=30'),
        ('Picture yourself turning a quarter to the right: what clock position is <object0> at?',
         'future_direction_clock turn=right angle_deg=90'),
        ("where would <object1> be on the clock after you've spun 60 to the right",
         'future_direction_clock turn=right angle_deg=60'),
        ("After trning left 90 degrees, what o'clock is <object0>?",
         'future_direction_clock turn=left angle_deg=90'),
        ("Once you've done a U-turn, what o'clock is <object1>?", 'future_direction_clock angle_deg=180'),
        ("If you turned around, would <object0> be at 6 o'clock?", 'future_direction_clock angle_deg=180'),
        ('Turn your head 45 right. Where is <object2> now on the clock?',
         'future_direction_clock turn=right angle_deg=45'),
        ('Where on the clock is <object1> if you face left?',
         'future_direction_clock turn=left angle_deg=90'),
        ("Where's <object0> on the clock?", 'direction_clock'),
        ('how many degrees is <object1> from your nose right now', 'direction_degrees'),
        ('If you yaw 30° to port, where on the clock is <object2>?',
         'future_direction_clock turn=left angle_deg=30'),
        # a top or bottom said indirectly
        ('How far up does <object0> reach from the floor?', 'height_from_ground point=top'),
        ('How much room is there under <object1>, down to the floor?', 'height_from_ground point=bottom'),
        ("What's the clearance beneath <object2> in cm?", 'height_from_ground point=bottom unit=cm'),
        ('How high does the uppermost part of <object0> sit above the ground?',
         'height_from_ground point=top'),
        ('How high off the floor is the very highest point of <object1>?', 'height_from_ground point=top'),
        ('How far is the underside of <object2> above the floor, in inches?',
         'height_from_ground point=bottom unit=in'),
        ('How high is <object0>, top to bottom?', 'object_height'),
        ('How tall is the whole of <object1>?', 'object_height'),
        ('Does the top edge of <object2> sit higher than the top edge of <object0>?',
         'higher_choice point=top form=yesno'),
        ('How much higher does <object0> reach than <object1>, at their tops?',
         'height_difference point=top'),
        ("Which one's base is lower, <object1> or <object2>?", 'higher_choice point=bottom order=min'),
        ("What's the height of the gap under <object0>?", 'height_from_ground point=bottom'),
        ('How high is the middle of <object1> above the floor?', 'height_from_ground'),
        ('How high does <object0> stick up above the floor?', 'height_from_ground point=top'),
        ('How far does <object1> hang down from its top to its bottom?', 'object_height'),
        ("Is the peak of <object2> higher than <object0>'s peak?", 'higher_choice point=top form=yesno'),
        ("How high above the floor is <object1>'s lowest edge?", 'height_from_ground point=bottom'),
        ("What's the distance from the floor to the crown of <object0>?", 'height_from_ground point=top'),
        # "is A or B ...?" choices
        ('Is <object0> or <object1> closer to you?', 'closer_to_camera'),
        ('Is <object1> or <object0> the taller one?', 'tallest_choice'),
        ('Is <object2> or <object0> further left?', 'leftmost_choice'),
        ('Is <object0> or <object2> higher up?', 'higher_choice'),
        ('Is <object1> or <object2> wider?', 'tallest_choice dim=width'),
        ('Is <object0> or <object1> on top?', 'above_choice'),
        ('Is <object2> closer than <object1> or not?', 'closer_to_camera form=yesno'),
        ('Which is nearer, <object1> or <object0>?', 'closer_to_camera'),
        ('<object0> or <object2>: which is longer?', 'tallest_choice dim=length'),
        ('Is it <object1> or <object0> that sits lower?', 'higher_choice order=min'),
        ('Is <object0> or is <object1> further away from you?', 'closer_to_camera order=far'),
        ('Would you say <object2> or <object1> is shorter?', 'tallest_choice order=min'),
        ('Is <object1> to the left or the right of <object2>?', 'left_right_choice'),
        ('Between <object0> and <object1>, is the first or the second one closer?', 'closer_to_camera'),
        ('Is <object0>, <object1> or <object2> the closest?', 'closest_to_camera'),
        ('Is <object1> or <object0> the one more to the right?', 'leftmost_choice side=right'),
        ('Is <object0> or <object1> narrower?', 'tallest_choice dim=width order=min'),
        # subject and reference in planner shorthand
        ('dist(<object1>, <object0>)', 'center_distance'),
        ('height_diff top: <object2> vs <object0>', 'height_difference point=top'),
        ('rel <object0> ref <object1>: left?', 'left_predicate'),
        ('is_left_of(<object1>, <object2>)', 'left_predicate'),
        ('above(<object0>, <object1>)?', 'above_predicate'),
        ('<object2> wrt <object1>: higher?', 'higher_choice form=yesno'),
        ('ref=<object0> subj=<object1> rel=left?', 'left_predicate objects=1,0'),
        ('taller?(<object1>, <object0>)', 'tallest_choice form=yesno'),
        ('nearer?(<object2>, <object0>)', 'closer_to_camera form=yesno'),
        ('Relative to <object1>, is <object0> on the right?', 'right_predicate objects=0,1'),
        ('With <object2> as the reference, how much higher is <object1>?', 'height_difference objects=1,2'),
        ('From <object0> up to <object1>, how many cm?', 'height_difference unit=cm objects=1,0'),
        ('<object1> vs <object2>, which is left', 'leftmost_choice'),
        ('<object0>: below <object2>? y/n', 'below_predicate'),
        # superlatives of height
        ('Which of <object0>, <object1>, <object2> is the highest?', 'higher_choice'),
        ('Which of <object0>, <object1>, <object2> is tallest?', 'tallest_choice'),
        ('Of <object1>, <object2> and <object0>, which has the highest top?', 'higher_choice point=top'),
        ('Which is the lowest-hanging of <object0>, <object1>, <object2>?', 'higher_choice order=min'),
        ('Which of the three is the least tall: <object0>, <object1>, <object2>?',
         'tallest_choice order=min'),
        ('Of <object2>, <object0>, <object1>, which reaches highest?', 'higher_choice point=top'),
        ('Which of <object0>, <object1> and <object2> sits highest off the floor?', 'higher_choice'),
        ("Who's the tallest: <object1>, <object0> or <object2>?", 'tallest_choice'),
        ('Which one of <object0>, <object1>, <object2> has the lowest bottom?',
         'higher_choice point=bottom order=min'),
        ('Which of <object1>, <object2>, <object0> is highest up?', 'higher_choice'),
        ('Which of <object0>, <object1>, <object2> stands the highest?', 'higher_choice'),
        ('Which of <object0>, <object1>, <object2> is the biggest in height?', 'tallest_choice'),
        ('Which object is the highest of all: <object2>, <object1>, <object0>?', 'higher_choice'),
        # cue words in asides
        ("Is <object0> on your left? I'm standing behind you.", 'side_of_me side=left'),
        ('How many degrees to turn to face <object1>? I get dizzy when I spin clockwise.', 'rotate_to_face'),
        # suppositions and changed viewpoints
        ('If you were standing where <object0> is, how far would <object1> be?', 'center_distance'),
        ("Pretend you're a bird looking down: which is on top, <object0> or <object1>?", 'above_choice'),
        ('Say you had a 1 m arm. Could you reach <object1>?', 'reachability arm_length_m=1.0'),
        ('Assuming your arm is 70 cm, can you grab <object0>?', 'reachability arm_length_m=0.7'),
        ('If you walked over to <object1>, how far would you have walked?', 'distance_to_camera'),
        # numbers and units in odd places
        ('In centimetres: <object0>, how far from you?', 'distance_to_camera unit=cm'),
        ('<object1> height above floor (mm)?', 'height_from_ground unit=mm'),
        ('How far is <object0>? 2 decimal places, in metres.', 'distance_to_camera'),
        ('Can you reach <object2> if your arm is 2 ft 6?', 'reachability arm_length_m=0.762'),
        ('How many inches wide is <object1>?', 'object_width unit=in'),
        ('<object2>: how tall, cms?', 'object_height unit=cm'),
        ("What's the length of <object0> in inch?", 'object_length unit=in'),
        ('Give me the distance to <object2>, 3 significant figures, millimetres.',
         'distance_to_camera unit=mm'),
        ('Arm length 90cm. Reach <object0>?', 'reachability arm_length_m=0.9'),
        ('How far is <object1> from <object2>, in cm not m?', 'center_distance unit=cm'),
        ("How many metres high is <object2>'s top from the floor?", 'height_from_ground point=top'),
        # "high" for "tall"
        ('Is <object2> less high up than <object1>?', 'higher_choice order=min form=yesno'),
        ('Is <object0> placed less high than <object1>?', 'higher_choice order=min form=yesno'),
        ('Is <object0> higher than <object1>?', 'higher_choice form=yesno'),
        ('Which is less high above the floor, <object1> or <object2>?', 'higher_choice order=min'),
        # angle words
        ("What's the angle to <object0> from where you're pointing?", 'direction_degrees'),
        ('Angular offset of <object1>, please, in degrees.', 'direction_degrees'),
        ('At what angle from your heading does <object2> lie?', 'direction_degrees'),
        ('From your angle, is <object0> left of <object1>?', 'left_predicate'),
        ("What's the offset of <object2> from you?", 'distance_to_camera'),
    ],
)
def test_a_round19_probe_is_read_as_meant(question: str, expected: str) -> None:
    _assert_reads(question, expected)


@pytest.mark.parametrize(
    ("question", "reason"),
    [
        # a turn said conversationally or with a typo
        ("Where's <object2> on the clock face, if I nudge you a little to the left?", "does not use 'left'"),
        # (meant: future_direction_clock turn=right angle_deg=120)
        ("Spin right by 120 degrees and tell me <object0>'s clock direction.", "does not use 'and tell'"),
        # (meant: future_direction_degrees turn=right angle_deg=90)
        ("If you went round clockwise 90 degrees, what's the bearing of <object2> in degrees?",
         "does not use 'if you went'"),
        ("if you turn to the left a bit, what o'clock is <object0>", "does not use 'a bit'"),
        ("After you turn left and then right, what o'clock is <object1>?",
         "does not use 'left and then right'"),
        ('Rotate 90 then tell me where <object2> is on the clock.', "does not use 'rotate'"),
        # (meant: future_direction_degrees angle_deg=180)
        ('Supposing you pivot 180, in degrees where is <object0>?', "does not use 'pivot'"),
        # a top or bottom said indirectly
        # (meant: higher_choice point=top)
        ('Whose lid is higher, <object0> or <object1>?', "does not use 'lid'"),
        # (meant: height_from_ground point=bottom)
        ('How high is <object2> off the floor at its feet?', "does not use 'its feet'"),
        # "is A or B ...?" choices
        ('Is <object0> taller or shorter than <object1>?', "does not use 'shorter'"),
        ('Is <object2> above or below <object0>?',
         "'above or below' offers two answers, and that reading answers yes or"),
        # (meant: closer_to_camera objects=2,0)
        ('Is <object2> nearer than <object0>, or the other way round?', "does not use 'the other way round'"),
        # subject and reference in planner shorthand
        ('<object0> > <object1> in height?',
         "no spatial task matches '<object0> > <object1> in height?' with 2"),
        # superlatives of height
        ('Which of <object0>, <object1>, <object2> is the highest in height?',
         "'highest in height' may mean the object's own height, and that"),
        ('Which is least high, <object0>, <object1> or <object2>?',
         "'least high' may mean the shorter object (its own height), and that"),
        # cue words in asides
        # (meant: distance_to_camera)
        ('How far is <object0> from you? My daughter is on the left side of the room.',
         "does not use 'how far'"),
        # (meant: object_width unit=cm)
        ("How wide is <object0>, in cm? I'm measuring for a box that's 30 cm deep.", "does not use '30'"),
        # (meant: higher_choice form=yesno objects=2,0)
        ('Is <object2> higher than <object0>? We keep the heavy stuff at the bottom.',
         "does not use 'at the bottom'"),
        # (meant: closer_to_camera objects=1,0)
        ('Which is closer, <object1> or <object0>? I turned the lights on earlier.',
         "does not use 'i turned'"),
        # (meant: direction_clock)
        ("What o'clock is <object0>? I always mix up left and right.", "does not use 'left'"),
        # (meant: height_from_ground)
        ('How high is <object1> above the floor? My grandfather was six feet tall.', "does not use 'feet'"),
        ('How long is <object2>? Like, the top bit is bent.', "does not use 'top'"),
        # (meant: higher_choice order=min)
        ("Which is lower, <object0> or <object1>? My knees can't take bending to the bottom shelf.",
         'its point=bottom is said only in "my knees can\'t take bending to the'),
        # (meant: above_predicate objects=1,2)
        ("Is <object1> above <object2>? I'd stack them the other way round myself.",
         "does not use 'the other way round'"),
        # (meant: center_distance)
        ('How far apart are <object0> and <object1>? My tape only goes to 2 metres.', "does not use '2'"),
        # (meant: reachability)
        ('Can you reach <object2>? I hurt my right arm yesterday.',
         "the question before the '?' reads as reachability alone, and the"),
        # (meant: tallest_choice objects=0,2)
        ('Which is taller, <object0> or <object2>? The kids say the top one wobbles.',
         "the question before the '?' reads as tallest_choice alone, and the"),
        ("Is <object0> higher than <object1>? I'd have to stand on a chair to reach the top.",
         'its point=top is said only in "i\'d have to stand on a chair to reach'),
        # (meant: height_from_ground unit=ft)
        ('How high is <object2> from the floor, in feet? I grew up with feet and inches.',
         "does not use 'inches'"),
        # (meant: closer_to_camera form=yesno objects=1,0)
        ('Is <object1> nearer than <object0>? As if it matters, the bottom one is broken.',
         "does not use 'bottom'"),
        ('Which is higher, <object0> or <object1>, so I can put the bottom shelf under it?',
         "it is read so only with 'i can put the bottom shelf under it' beside"),
        # (meant: below_predicate objects=2,0)
        ('Is <object2> below <object0>, like a foot under a table?', "does not use 'foot'"),
        # suppositions and changed viewpoints
        ('Imagine you are facing <object2>. How many degrees to turn to face it?',
         "does not use 'imagine you are facing OBJ. how many degrees to turn'"),
        ('From the doorway, is <object1> on the left?', "does not use 'from the doorway'"),
        ('Suppose <object0> were moved a metre closer; would it be closer than <object2>?',
         "does not use 'suppose OBJ were moved'"),
        ('If I stood behind <object1>, would <object0> be on my left?', "does not use 'if i stood'"),
        ('Seen from <object2>, where is <object0> on the clock?',
         "no spatial task matches 'Seen from <object2>, where is <object0> on"),
        ('If the camera were lower, would <object2> still look higher than <object1>?',
         "does not use 'lower'"),
        ("Looking from the window's side, is <object0> left of <object1>?",
         'does not use "looking from the window\'s side"'),
        ('From my side of the table, is <object2> on the right?', "does not use 'from my side of the table'"),
        ('Tomorrow, when the room is tidied, which will be closest: <object0>, <object1> or <object2>?',
         "does not use 'tomorrow'"),
        ('In the mirror, is <object1> to the left of <object0>?', "does not use 'mirror'"),
        # numbers and units in odd places
        ('How far, feet and inches, is <object2>?', "does not use 'inches'"),
        ('Distance to <object1> — answer in yards.', "does not use 'in yards'"),
        ('Is <object0> within 1.5 m of you?',
         "no spatial task matches 'Is <object0> within 1.5 m of you?' with 1"),
        ('How far is <object1> in metres and centimetres?', "does not use 'centimeters'"),
        ('Is <object0> more than 50 cm taller than <object1>?', "does not use 'more than 5'"),
        # (meant: future_direction_clock turn=left angle_deg=90)
        ("If you turn 1/4 turn left, what o'clock is <object0>?", "does not use '4'"),
        ('How far to <object1>, in km?', "does not use 'in km'"),
        # (meant: distance_to_camera unit=ft)
        ('Object 3, <object2>: how far from you in feet?', "does not use '3'"),
        # (meant: object_height unit=in)
        ('Height of <object0> (in.)?', "'in.' asks for a length in in, and that reading answers in m"),
        # several questions in one
        ('How far is <object0> and how tall is it?', "does not use 'and how'"),
        ('Which is closer, <object1> or <object2>, and by how much?', "does not use 'and by how much'"),
        ('Is <object0> on your left? Also, how high is it?', "does not use 'high'"),
        ("What o'clock is <object1>, and how far away?", "does not use 'and how'"),
        ('How tall is <object2>? How wide?', "does not use '? how wide'"),
        ('Is <object0> above <object1>, and is <object1> above <object2>?',
         "no spatial task matches 'Is <object0> above <object1>, and is"),
        ('Tell me the height and the width of <object0>.', "does not use 'height and the width'"),
        ('How far have you walked, and where is <object1> on the clock?', "does not use 'and where'"),
        ('Is <object2> closer than <object0>? If so, how much closer?', "does not use 'how much closer'"),
        ('Which is tallest, <object0>, <object1> or <object2>, and which is widest?',
         "does not use 'tallest'"),
        # "high" for "tall"
        ('Is <object0> less high than <object2>?',
         "'less high' may mean the shorter object (its own height), and that"),
        ('Which is not as high, <object1> or <object0>?',
         "no spatial task matches 'Which is not as high, <object1> or"),
        ('<object1> is not as high as <object2>, true?',
         "'not as high' may mean the shorter object (its own height), and that"),
        ('Is <object2> not so high like <object0>?',
         "'not so high' may mean the shorter object (its own height), and that"),
        # angle words
        # (meant: direction_degrees)
        ('Give the azimuth of <object1>.', "no spatial task matches 'Give the azimuth of <object1>.' with 1"),
        ('What is the angular gap between <object0> and <object2>?', "does not use 'angular'"),
        ('How big is the angular distance from <object1> to <object0>?', "does not use 'angular'"),
    ],
)
def test_a_round19_probe_is_refused(question: str, reason: str) -> None:
    p, why = parse_question(question)
    assert p is None
    assert why.startswith((PARTLY_READ, NOT_MEASURABLE)) and reason in why, why


# After redteam1/redteam2 (round 20, development sets now): their silent-wrong kinds. Sentences of our own;
# readings worked by hand from the words.
@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # a sentence about another thing by its place lends the question no side, top or height: the
        # question is read without it (the fan's "left" is no leftmost, the rack's "top" no point, the
        # bench's "low" no order)
        ("The fan on the left is noisy. Which of <object0> and <object1> is nearer to you?",
         "closer_to_camera"),
        ("The top rack is full. How high above the floor is <object1>?", "height_from_ground"),
        ("The bench by the right wall sits low. Is <object0> under <object1>?", "below_predicate"),
        ("The sink on the right drips, never mind it. Rotating counterclockwise, how many degrees to face "
         "<object2>?", "rotate_to_face direction=ccw"),
        # (a round-19 probe refused then: the shelf's "top" was read as a cue; its sentence names another
        # thing, and the question proper is complete)
        ("Is <object1> taller than <object2>? The top shelf is full anyway.", "tallest_choice form=yesno"),
        # (its head noun is the shelf: "top" is the shelf's, not a point of an object)
        ("The top shelf is empty. How high above the floor is <object0>?", "height_from_ground"),
        # how high an object reaches compared is its top: a yes/no, a choice, an amount
        ("Does <object1> reach higher than <object2>?", "higher_choice point=top form=yesno"),
        ("Which reaches lower, <object0> or <object2>?", "higher_choice point=top order=min"),
        ("How many cm lower does <object0> reach than <object1>?", "height_difference point=top unit=cm"),
        # ... also said "less high": reaching is the top's placement, not the object's own height
        ("Does <object0> reach less high than <object2>?", "higher_choice point=top order=min form=yesno"),
        # a planner's max_by / min_by a distance from the camera: the farthest / the nearest
        ("max_by_distance([<object0>, <object1>], from=camera)", "closer_to_camera order=far"),
        ("min_by_distance([<object1>, <object2>, <object0>], ref=cam)", "closest_to_camera"),
        ("argmax(range, <object0>, <object1>, <object2>)", "closest_to_camera order=far"),
        # ... and by an own extent: the biggest / the smallest in it
        ("max_by_width([<object0>, <object1>])", "tallest_choice dim=width"),
        ("min_by_length(<object1>, <object0>)", "tallest_choice dim=length order=min"),
    ],
)
def test_redteam_kinds_are_read(question: str, expected: str) -> None:
    _assert_reads(question, expected)


@pytest.mark.parametrize(
    ("question", "reason"),
    [
        # a statement whose subject may be one of the objects ("the one on the right") decides nothing
        ("The one on the right is mine, but which of <object0> and <object1> is taller?",
         "it is read so only with 'the one on the right is mine' beside the question"),
        # a person's side set against the camera's: whose side is the asker's to say
        ("He faces me, so his right is my left: which of <object0> and <object1> is more to the right?",
         "does not use 'his right is my left'"),
        # "which has the largest" picks one: never a number (the distance between the two)
        ("<object0>, <object1>: which has the largest distance?", "'which has the largest' asks which one"),
        # (the lead, after round 20) a sentence whose subject is a part or point ("the edge", "the point")
        # may say the point measured: it is not set apart as another thing, and its "top" / "bottom", not
        # used by the question proper's reading, is refused (read without it, the centre would be answered)
        ("The edge on the top matters. How high above the floor is <object0>?", "does not use 'on the top'"),
        ("The point at the bottom counts. How much higher is <object1> than <object0>?",
         "does not use 'at the bottom'"),
    ],
)
def test_redteam_kinds_are_refused(question: str, reason: str) -> None:
    _assert_refused_because(question, reason)


# After redteam3/redteam4 (round 21, development sets now): their silent-wrong kinds. Sentences of our own;
# readings worked by hand from the words.
@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # "right" / "all right" opening a sentence with a comma, before a question word or "next" / "now",
        # moves on to the question: no side (the side asked is the question's own, or none)
        ("Okay, next one: is <object1> on your right-hand side?", "side_of_me side=right"),
        ("Right, now tell me how far <object2> is from you.", "distance_to_camera"),
        ("All right, which of <object0> and <object1> is nearer to you?", "closer_to_camera"),
        # a planner's extreme over a list, "argmax(QUANTITY) over OBJ, OBJ": "over" ranges over the objects,
        # no "above"; each quantity of the families: own extents, the distance from the camera, the height
        # above the floor (a placement, its article dropped by the notation)
        ("argmin(length) over <object2>, <object0>", "tallest_choice dim=length order=min"),
        ("argmax(width) over <object1> and <object0>", "tallest_choice dim=width"),
        ("argmin(height) over {<object0>, <object1>, <object2>}", "tallest_choice order=min"),
        ("argmax(distance) over <object0>, <object1>, <object2>", "closest_to_camera order=far"),
        ("argmin(range) over <object1>, <object0>", "closer_to_camera"),
        ("argmin(height_above_floor) over <object1>, <object2>", "higher_choice order=min"),
        ("which has the largest height above floor, <object0> or <object1>?", "higher_choice"),
        # a mark before a pair ("looking at OBJ and OBJ") names the objects asked about, no reference: the
        # objects stay in the order named
        ("Looking at <object2> and <object0>: which is underneath?", "above_choice relation=below"),
        ("With <object1> and <object0> in view, which one is on top?", "above_choice"),
        # image coordinates: x grows to the right (said so or not), so the smallest x is the leftmost and
        # the largest the rightmost; the convention said beside it is no side asked
        ("Which of <object1> and <object2> has the largest x in the picture?", "leftmost_choice side=right"),
        ("Of <object0>, <object1>, <object2>, which has the smallest x (x increases to the right)?",
         "leftmost_choice"),
        ("argmin(x) over <object0>, <object1>", "leftmost_choice"),
    ],
)
def test_redteam34_kinds_are_read(question: str, expected: str) -> None:
    _assert_reads(question, expected)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # a reading taken back before the question proper ("not how / which / the / its / in …" opening the
        # question, after "no", "sorry" …, up to the first break) supplies no task or slot: the question
        # after it is read alone ("how wide" is no width, "its distance" no distance, "in feet" no unit)
        ("Not how wide <object1> is: how long is it, in cm?", "object_length unit=cm"),
        ("No, not its distance from you: how high above the floor is the top of <object2>?",
         "height_from_ground point=top"),
        ("Not in feet, in inches: how tall is <object0>?", "object_height unit=in"),
        ("Sorry, not which is closer: which of <object0> and <object1> is wider?",
         "tallest_choice dim=width"),
        ("Not the shortest one - which of <object0>, <object1> and <object2> is the farthest from you?",
         "closest_to_camera order=far"),
        # (the question proper names its own subject first: OBJ0 left of OBJ1, not the order named first)
        ("Not whether <object1> is left of <object0>: is <object0> left of <object1>?",
         "left_predicate objects=0,1"),
        # ("not sure" negates no reading: the question is read as before)
        ("Not sure, but is <object0> on your left?", "side_of_me side=left"),
        # a statement about the named objects before the question (or before ", but") supplies no task: the
        # question after it is read alone, its "it" the objects the statement names in the order named
        ("<object2> is on your right. How far is it from you, in feet?", "distance_to_camera unit=ft"),
        ("<object0> is the bigger one, but which of <object0> and <object1> is nearer to you?",
         "closer_to_camera"),
        # (OBJ1 sits on the left of OBJ0; "is it higher than it": OBJ1 higher than OBJ0, the order named)
        ("<object1> sits on the left of <object0>, but is it higher than it?", "higher_choice form=yesno"),
        ("<object0> and <object1> are on the left. Which of them is taller?", "tallest_choice"),
        ("<object0> is closer to you, but is <object1> taller than <object0>?",
         "tallest_choice form=yesno objects=1,0"),
        # (a statement the question only confirms is the question: read as a whole, as before)
        ("<object1> is above <object0>. Correct?", "above_predicate"),
    ],
)
def test_redteam34_set_aside_is_not_read(question: str, expected: str) -> None:
    _assert_reads(question, expected)


def test_redteam34_set_aside_is_said() -> None:
    """The words set aside are said with the answer, as glossed words are."""
    parsed, _ = parse_question("Not how wide <object1> is: how long is it, in cm?")
    assert parsed is not None
    assert parsed.glossed == "read it without 'Not how wide <object1> is', set aside"


@pytest.mark.parametrize(
    ("question", "reason"),
    [
        # words set aside that may set an object apart before a choice, or an "it" that may be either of
        # two objects the statement names: no reading knows which object is meant
        ("Not the one on the left: which of <object0>, <object1> and <object2> is tallest?",
         "the words set aside name an object the question proper may mean"),
        ("<object1> is above <object0>. Is it on your left?",
         "the words set aside name an object the question proper may mean"),
        # the question proper alone is refused as it reads (a distance from the wall)
        ("Not the distance to you: how far is <object0> from the wall?",
         "does not use 'how far is OBJ from the wall'"),
    ],
)
def test_redteam34_set_aside_is_refused(question: str, reason: str) -> None:
    _assert_refused_because(question, reason)


@pytest.mark.parametrize(
    ("question", "reason"),
    [
        # an image coordinate the rules do not read (a convention said otherwise, "y") is refused: read
        # without it, the convention's side would be taken for the side asked
        ("Which of <object1> and <object2> has the smallest x (x grows to the left)?",
         "does not use 'smallest x'"),
        ("Which of <object0> and <object2> has the largest y value? (y grows to the right)",
         "does not use"),
    ],
)
def test_redteam34_image_coordinates_are_refused(question: str, reason: str) -> None:
    _assert_refused_because(question, reason)


# Round 22 (fresh24's silent wrong readings, fixed by kind). Expected readings worked out by hand; the
# sentences are my own unless marked "fresh24", which quotes a measured question verbatim.
@pytest.mark.parametrize(
    ("question", "reason"),
    [
        # a direction or way asked is answered by a direction or a side, never by a distance (before:
        # every one of these read as distance_to_camera)
        ("Which direction is <object1> from you?", "does not use 'which direction'"),
        ("In what direction does <object2> lie from you?", "does not use 'what direction'"),
        ("Which way is <object0> from you at the moment?", "does not use 'which way'"),
        # (a word no rule reads between the question word and "direction" is read with it)
        ("In what zorbly direction is <object1> from you?", "does not use 'what zorbly direction'"),
    ],
)
def test_round22_direction_asked_never_a_distance(question: str, reason: str) -> None:
    _assert_refused_because(question, reason)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # fresh24, verbatim: Icelandic "klukka" (clock) glossed, then read as a clock direction
        ("In what klukka direction is <object0> from you now?", "direction_clock"),
        ("Which way is <object1>, on your left or on your right?", "side_of_me"),
        ("What clock direction is <object2> from you?", "direction_clock"),
    ],
)
def test_round22_direction_asked_is_read(question: str, expected: str) -> None:
    _assert_reads(question, expected)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # fresh24, verbatim: Basque "bai" (yes) or "no" is a yes-or-no tag, never a choice of the objects
        # (before: closer_to_camera form=choice)
        ("Bai or no: <object0> is more near to you than <object1>?", "closer_to_camera form=yesno"),
        # an unknown word "or" a "no" of any language, a clause of its own: yes or no (OBJ2 higher than
        # OBJ0 asked; OBJ1 wider than OBJ2 stated then tagged)
        ("Quux or no: is <object2> higher than <object0>?", "higher_choice form=yesno"),
        ("<object1> is wider than <object2>, zib/nei?", "tallest_choice dim=width form=yesno"),
        ("Is <object0> farther from you than <object2>? blorp or nope.",
         "closer_to_camera order=far form=yesno"),
        # the glossary's Basque tag with its question mark after a statement's question mark
        ("<object2> is nearer to you than <object1>? bai?", "closer_to_camera form=yesno"),
        # a confirmation tag after a question mark closing a yes/no question
        ("Is <object1> lower than <object0>? correct?", "higher_choice order=min form=yesno"),
    ],
)
def test_round22_yes_or_no_tags_are_read(question: str, expected: str) -> None:
    _assert_reads(question, expected)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # fresh24, verbatim: a tag "right?" after a complete statement, then a viewpoint or an
        # interjection, is a tag (before: left_right_choice, side_of_me asking the side, a refusal)
        ("<object0> is left of <object1> right?? from ur pov", "left_predicate"),
        ("<object0> is to ur left right? lol", "side_of_me side=left"),
        ("<object0>'s top is lower than <object1>'s top right??",
         "higher_choice point=top order=min form=yesno"),
        # my own: the same kinds, worked by hand
        ("<object2> is on your right right? haha", "side_of_me side=right"),
        ("<object1> is nearer to you than <object2> correct? pls", "closer_to_camera form=yesno"),
        ("<object2>'s bottom is higher than <object0>'s bottom right?",
         "higher_choice point=bottom form=yesno"),
    ],
)
def test_round22_tag_with_an_afterthought_is_a_tag(question: str, expected: str) -> None:
    _assert_reads(question, expected)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # fresh24, verbatim: "under side", "underneath part" name the underside (before: the centre)
        ("The under side of <object0>, how many cm it is over the floor?",
         "height_from_ground point=bottom unit=cm"),
        ("<object0> underneath part, how high from the ground it is? inch",
         "height_from_ground point=bottom unit=in"),
        # my own: "lower side of OBJ", "OBJ's under surface", "its underneath side" are the bottom too
        ("How high off the floor is the lower side of <object2>, in cm?",
         "height_from_ground point=bottom unit=cm"),
        ("How high above the floor is <object1>'s under surface?", "height_from_ground point=bottom"),
        ("Take <object0>: how far above the ground is its underneath side, in feet?",
         "height_from_ground point=bottom unit=ft"),
        # fresh24, verbatim: "who's" after the objects named asks which of them (before: left_predicate)
        ("out of <object0> and <object1> who's further left on ur screen", "leftmost_choice"),
        # my own: OBJ1 or OBJ2, the one further right picked; three objects, the nearest picked
        ("of <object1> and <object2>, who is more to the right?", "leftmost_choice side=right"),
        ("among <object2>, <object0> and <object1> who is nearest to you", "closest_to_camera"),
    ],
)
def test_round22_points_and_who_are_read(question: str, expected: str) -> None:
    _assert_reads(question, expected)


@pytest.mark.parametrize(
    ("question", "reason"),
    [
        # a bare "underneath" that takes no object names the underside, which no reading at the centre uses
        ("<object1> underneath, how high from the floor is it?", "does not use 'underneath'"),
        # fresh24, verbatim: "the lower of the pair" is refused as "the lower one" is (the stacking and the
        # placement answer differently; before: higher_choice order=min)
        ("Which of <object0> and <object1> is the lower of the pair?",
         "does not use 'the lower of the pair'"),
        ("Between <object2> and <object1>, which is the lower of the 2?",
         "does not use 'the lower of the 2'"),
        ("Which of <object1> and <object0> is the lower of both?", "does not use 'the lower of both'"),
    ],
)
def test_round22_points_and_pairs_are_refused(question: str, reason: str) -> None:
    _assert_refused_because(question, reason)


def test_round22_a_walk_guessed_in_a_unit_is_not_dropped() -> None:
    """fresh24, verbatim: a walk's amount guessed in feet, the distance asked with no unit: read in metres it
    would drop the asker's unit silently, so it is refused; my own: the same guess with feet asked is read
    in feet (the guess's unit is the answer's), and a guess in metres beside feet asked is refused."""
    _assert_refused_because("bet u didnt even move 10 feet the whole time, how far did u go?",
                            "does not use 'move 10 feet'")
    _assert_reads("I bet you didn't move 10 feet, how far did you go in feet?", "walked_distance unit=ft")
    _assert_refused_because("you moved 4 m at most, how far did you travel in feet?", "does not use")


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # fresh24, verbatim: "the bottom of it" names the point measured, no relation to the first object,
        # so the order named stands (before: objects=2,0)
        ("Which is more low from floor, <object0> or <object2>? the bottom of it",
         "higher_choice point=bottom order=min"),
        # my own: OBJ1 and OBJ0 in the order named, measured at the top
        ("Which is higher, <object1> or <object0>? the top of it", "higher_choice point=top"),
    ],
)
def test_round22_a_point_of_it_keeps_the_order_named(question: str, expected: str) -> None:
    p, why = parse_question(question)
    assert p is not None, why
    assert p.objects is None
    _assert_reads(question, expected)


@pytest.mark.parametrize(
    ("question", "reason"),
    [
        # Found at round 22's merge (the lead's own sentences): a tag after the question mark of a choice
        # was left in the text, and its "right" read as the side asked: the choice of the higher became the
        # rightmost (leftmost_choice side=right). A tag asks yes or no, which a choice does not answer.
        ("Which is higher, <object0> or <object1>? right?", "'is that so?' asks yes or no"),
        ("Which of <object2> and <object0> is longer? correct?", "'is that so?' asks yes or no"),
        # "yes or no" asked of a choice: no answer a choice gives is a yes or a no (before: the choice)
        ("Yes or no: which of <object0> and <object1> is taller?", "'yes or no' asks yes or no"),
        ("Which of <object1> and <object2> is nearer to you? y/n", "'yes or no' asks yes or no"),
    ],
)
def test_a_tag_or_yes_or_no_after_a_choice_is_refused(question: str, reason: str) -> None:
    _assert_refused_because(question, reason)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # the side asked stays the side when the tag confirms a choice of sides: the rightmost asked
        ("Which one is more to the right, <object0> or <object1>? right?", "leftmost_choice side=right"),
        # "yes or no" after a comparison asked yes or no is that question's form
        ("Is <object0> taller than <object1>, yes or no?", "tallest_choice form=yesno"),
    ],
)
def test_a_tag_after_a_choice_of_sides_or_a_yes_no_is_read(question: str, expected: str) -> None:
    _assert_reads(question, expected)


@pytest.mark.parametrize(
    ("question", "reason"),
    [
        # Found after fresh24's "In what klukka direction is OBJ from you now?" (the lead's own sentences):
        # a property asked by a name no rule reads, the rest of the question read as the distance to the
        # camera ("OBJ from you"). No reading answers an orientation, a percentage or a made-up word.
        ("In what orientation is <object0> from you?", "does not use 'in what orientation is OBJ'"),
        ("In which zorp is <object1> from you?", "does not use 'in which zorp is OBJ'"),
        ("What flurb of <object2> from you?", "does not use 'what flurb of OBJ'"),
        ("What percentage of <object0> is above the floor?", "does not use 'what percentage of OBJ'"),
    ],
)
def test_a_property_no_rule_reads_is_refused(question: str, reason: str) -> None:
    _assert_refused_because(question, reason)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # the same form with a property the rules read stays read (worked by hand: the bearing is the
        # angle from where I face, the distance the camera's)
        ("What bearing is <object0> from you?", "direction_degrees"),
        ("What distance is <object1> from you?", "distance_to_camera"),
        # the height an object is AT is where it is, not how tall it is (before: object_height); with no
        # point said, the centre
        ("What height is <object0> mounted at?", "height_from_ground"),
        ("What height does <object2> sit at, in cm?", "height_from_ground unit=cm"),
        ("What's the height <object1> hangs at?", "height_from_ground"),
        # ... and "what height is OBJ?" is still its own height
        ("What height is <object0>?", "object_height"),
    ],
)
def test_a_property_the_rules_read_and_the_height_at(question: str, expected: str) -> None:
    _assert_reads(question, expected)
