"""The blind writers' label converter on hand-made entries.

Expected strings are worked by hand from docs/blind-writer-brief.md (families and fields) and the slot
table of docs/spatial.md (task names, slots and their defaults; ``objects=`` subject first when the
subject is not the first object named) -- not from the converter or the parser.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rynnec_ros.eval.blind_labels import LabelError, convert, expected_of, main

CASES = [
    ({"q": "how far did you go, feet", "family": "travelled", "unit": "ft"}, "walked_distance unit=ft"),
    ({"q": "range to <object0>?", "family": "distance_to_me", "unit": "m"}, "distance_to_camera"),
    # yes/no with the second-named object as subject: objects= subject first
    ({"q": "<object0> vs <object1>: is <object1> nearer?", "family": "nearer_of_two", "order": "near",
      "form": "yesno", "subject": "<object1>"}, "closer_to_camera form=yesno objects=1,0"),
    # subject named first: the default order, no objects=
    ({"q": "is <object1> farther than <object0>", "family": "nearer_of_two", "order": "far",
      "form": "yesno", "subject": "object1"}, "closer_to_camera order=far form=yesno"),
    # a choice has no subject: one given anyway is not used
    ({"q": "<object0> or <object1>, which is nearer", "family": "nearer_of_two", "order": "near",
      "form": "choice", "subject": "<object1>"}, "closer_to_camera"),
    ({"q": "farthest of <object0> <object1> <object2>", "family": "nearest_of_three", "order": "far"},
     "closest_to_camera order=far"),
    ({"q": "<object0> to <object1> in mm", "family": "distance_between", "unit": "mm"},
     "center_distance unit=mm"),
    ({"q": "how high is <object0>", "family": "height_above_floor", "point": "center", "unit": "m"},
     "height_from_ground"),
    ({"q": "top of <object0> above floor, in", "family": "height_above_floor", "point": "top", "unit": "in"},
     "height_from_ground point=top unit=in"),
    ({"q": "how much lower is <object0> than <object2>", "family": "height_offset", "point": "bottom",
      "unit": "cm", "subject": "<object2>"}, "height_difference point=bottom unit=cm objects=2,0"),
    ({"q": "how wide is <object0>", "family": "own_size", "dim": "width", "unit": "cm"},
     "object_width unit=cm"),
    ({"q": "shortest of <object0>, <object1>, <object2>", "family": "size_compare", "dim": "height",
      "order": "min", "form": "choice"}, "tallest_choice order=min"),
    ({"q": "is <object0> longer than <object1>", "family": "size_compare", "dim": "length", "order": "max",
      "form": "yesno", "subject": "<object0>"}, "tallest_choice dim=length form=yesno"),
    ({"q": "which top is lower, <object1> or <object0>", "family": "placed_higher", "point": "top",
      "order": "min", "form": "choice"}, "higher_choice point=top order=min"),
    ({"q": "<object0> / <object1>: is <object1> higher", "family": "placed_higher", "point": "center",
      "order": "max", "form": "yesno", "subject": 1}, "higher_choice form=yesno objects=1,0"),
    ({"q": "is <object0> under <object1>", "family": "stacked", "relation": "below", "form": "yesno",
      "subject": "<object0>"}, "below_predicate"),
    ({"q": "<object1> on <object0>?", "family": "stacked", "relation": "above", "form": "yesno",
      "subject": "<object0>"}, "above_predicate objects=0,1"),
    ({"q": "which is the lower one, <object0> or <object1>", "family": "stacked", "relation": "below",
      "form": "choice"}, "above_choice relation=below"),
    ({"q": "relative to <object0>, is <object1> to the right", "family": "left_right_between",
      "form": "yesno", "side": "right", "subject": "<object1>"}, "right_predicate objects=1,0"),
    ({"q": "which side of <object2> is <object0> on", "family": "left_right_between", "form": "which",
      "subject": "<object0>"}, "left_right_choice objects=0,2"),
    ({"q": "rightmost: <object0>, <object1>", "family": "leftmost", "side": "right"},
     "leftmost_choice side=right"),
    ({"q": "which side is <object0> on", "family": "my_side", "side": "none"}, "side_of_me"),
    ({"q": "which side is <object0> on", "family": "my_side"}, "side_of_me"),
    ({"q": "is <object0> on my left", "family": "my_side", "side": "left"}, "side_of_me side=left"),
    ({"q": "<object0> o'clock", "family": "clock_direction"}, "direction_clock"),
    ({"q": "bearing <object0>", "family": "bearing_degrees"}, "direction_degrees"),
    ({"q": "turn to <object0>", "family": "turn_to_face", "direction": "unspecified"}, "rotate_to_face"),
    ({"q": "cw to <object0>", "family": "turn_to_face", "direction": "cw"}, "rotate_to_face"),
    ({"q": "ccw to <object0>", "family": "turn_to_face", "direction": "ccw"}, "rotate_to_face direction=ccw"),
    ({"q": "turn left; <object0> clock?", "family": "direction_after_turn", "answer_as": "clock",
      "turn": "left", "angle_deg": 90}, "future_direction_clock turn=left angle_deg=90"),
    ({"q": "turn around, bearing <object0>", "family": "direction_after_turn", "answer_as": "degrees",
      "turn": "right", "angle_deg": 180.0}, "future_direction_degrees turn=right angle_deg=180"),
    ({"q": "reach <object0>?", "family": "reach", "arm_length_m": None}, "reachability"),
    # 2 ft = 0.6096 m exactly (1 ft = 0.3048 m by definition)
    ({"q": "2 ft arm, reach <object0>?", "family": "reach", "arm_length_m": 0.6096},
     "reachability arm_length_m=0.6096"),
]


@pytest.mark.parametrize(("entry", "expected"), CASES)
def test_expected_of(entry: dict, expected: str) -> None:
    assert expected_of(entry)[1] == expected


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({"q": "how far <object0>", "family": "distance_to_me", "unit": "yards"}, "unit"),
        ({"q": "how far <object0>", "family": "distance_to_me"}, "unit"),  # the brief always names a unit
        ({"q": "how far <object0>", "family": "distance_to_robot", "unit": "m"}, "family"),
        ({"q": "how far <object0> <object1>", "family": "distance_to_me", "unit": "m"}, "q"),
        ({"q": "is <object0> nearer than <object1>", "family": "nearer_of_two", "order": "near",
          "form": "yesno"}, "subject"),
        ({"q": "is <object0> nearer than <object1>", "family": "nearer_of_two", "order": "near",
          "form": "yesno", "subject": "<object2>"}, "subject"),
        ({"q": "is <object0> taller than <object1> and <object2>", "family": "size_compare", "dim": "height",
          "order": "max", "form": "yesno", "subject": "<object0>"}, "form"),
        ({"q": "turn and <object0>", "family": "direction_after_turn", "answer_as": "clock", "turn": "left",
          "angle_deg": 0}, "angle_deg"),
        ({"q": "turn and <object0>", "family": "direction_after_turn", "answer_as": "clock", "turn": "left",
          "angle_deg": 400}, "angle_deg"),
        ({"q": "reach <object0>", "family": "reach", "arm_length_m": "long"}, "arm_length_m"),
    ],
)
def test_label_errors_name_the_field(entry: dict, field: str) -> None:
    with pytest.raises(LabelError) as e:
        expected_of(entry)
    assert e.value.field == field


def test_convert_groups_and_reports_by_index(tmp_path: Path) -> None:
    entries = [CASES[0][0], {"q": "x <object0>", "family": "own_size", "dim": "depth", "unit": "m"},
               "not a mapping", CASES[1][0], CASES[25][0], CASES[24][0]]
    families, errors = convert(entries)
    assert families == {"walked_distance": [["walked_distance unit=ft", CASES[0][0]["q"]]],
                        "distance_to_camera": [["distance_to_camera", CASES[1][0]["q"]]],
                        "direction": [["direction_degrees", CASES[25][0]["q"]],
                                      ["direction_clock", CASES[24][0]["q"]]]}
    assert [e.split(":")[0] for e in errors] == ["entry 1 (own_size)", "entry 2"]
    src, dst = tmp_path / "src.yaml", tmp_path / "dst.yaml"
    src.write_text(yaml.safe_dump(entries))
    assert main([str(src), str(dst), "--about", "test"]) == 0
    written = yaml.safe_load(dst.read_text())
    assert written == {"about": "test", "families": families}
