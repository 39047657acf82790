"""Blind writers' labels (``docs/blind-writer-brief.md``) converted mechanically to paraphrase-set entries.

The writers of the issue-24 sets read no project document: they label each question with one of the
brief's 19 families and that family's plain fields (``unit``, ``order``, ``form``, ``subject`` ...). The
sets' ``expected`` is the structured task (``AskQuestion.task`` syntax) with the slots that differ from
their defaults and ``objects=`` when the subject is not the first object the question names. Converting by
a table, never by reading the questions, keeps the labels the writers' own; an entry whose fields do not
fit the brief is reported by index and field and dropped rather than guessed.

``python -m rynnec_ros.eval.blind_labels SRC.yaml DST.yaml --about TEXT`` writes a set file; the lines it
prints are the only thing the converting engineer reads before the set is measured.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import yaml

from rynnec_ros.spatial.plan import parse_structured

UNITS = ("m", "cm", "mm", "ft", "in")
_OBJECT = re.compile(r"<object(\d+)>")

#: brief family -> (the set's family group, numbers of objects its questions name)
FAMILIES: dict[str, tuple[str, tuple[int, ...]]] = {
    "travelled": ("walked_distance", (0,)),
    "distance_to_me": ("distance_to_camera", (1,)),
    "nearer_of_two": ("closer_closest", (2,)),
    "nearest_of_three": ("closer_closest", (3,)),
    "distance_between": ("center_distance", (2,)),
    "height_above_floor": ("height_from_ground", (1,)),
    "height_offset": ("height_difference", (2,)),
    "own_size": ("object_size", (1,)),
    "size_compare": ("size_choice", (2, 3)),
    "placed_higher": ("higher_lower", (2, 3)),
    "stacked": ("above_below", (2,)),
    "left_right_between": ("left_right", (2,)),
    "leftmost": ("left_right", (2, 3)),
    "my_side": ("side_of_me", (1,)),
    "clock_direction": ("direction", (1,)),
    "bearing_degrees": ("direction", (1,)),
    "turn_to_face": ("rotate_to_face", (1,)),
    "direction_after_turn": ("future_direction", (1,)),
    "reach": ("reachability", (1,)),
}


class LabelError(ValueError):
    """An entry whose label does not fit the brief: ``field`` names what is wrong."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"field {field}: {message}")
        self.field = field


def _choice(entry: dict[str, Any], key: str, allowed: tuple[str, ...], default: str | None = None) -> str:
    value = entry.get(key, default)
    if value is None or str(value).strip().lower() not in allowed:
        raise LabelError(key, f"{value!r} is not one of {'|'.join(allowed)}")
    return str(value).strip().lower()


def _number(entry: dict[str, Any], key: str) -> float:
    value = entry.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise LabelError(key, f"{value!r} is not a positive number")
    return float(value)


def _subject(entry: dict[str, Any], named: list[int]) -> int:
    """The subject's region index, from ``<objectK>``, ``objectK`` or ``K``; it must be a named object."""
    value = str(entry.get("subject", "")).strip()
    m = re.fullmatch(r"<?(?:object)?(\d+)>?", value)
    if m is None or int(m.group(1)) not in named:
        raise LabelError("subject", f"{entry.get('subject')!r} is not an object the question names {named}")
    return int(m.group(1))


def _objects(subject: int, named: list[int]) -> list[str]:
    """``objects=`` (subject first, then the others as named) when the subject is not named first."""
    if subject == named[0]:
        return []
    return ["objects=" + ",".join(map(str, [subject, *(k for k in named if k != subject)]))]


def _unit(entry: dict[str, Any]) -> list[str]:
    unit = _choice(entry, "unit", UNITS)
    return [] if unit == "m" else [f"unit={unit}"]


def _slots(family: str, entry: dict[str, Any], named: list[int]) -> list[str]:
    """The structured task's words for one entry (before ``parse_structured`` canonicalises them)."""
    if family == "travelled":
        return ["walked_distance", *_unit(entry)]
    if family == "distance_to_me":
        return ["distance_to_camera", *_unit(entry)]
    if family == "distance_between":
        return ["center_distance", *_unit(entry)]
    if family == "height_above_floor":
        return ["height_from_ground", f"point={_choice(entry, 'point', ('top', 'center', 'bottom'))}",
                *_unit(entry)]
    if family == "height_offset":
        return ["height_difference", f"point={_choice(entry, 'point', ('top', 'center', 'bottom'))}",
                *_unit(entry), *_objects(_subject(entry, named), named)]
    if family == "own_size":
        return [f"object_{_choice(entry, 'dim', ('height', 'length', 'width'))}", *_unit(entry)]
    if family == "nearest_of_three":
        return ["closest_to_camera", f"order={_choice(entry, 'order', ('near', 'far'))}"]
    if family == "leftmost":
        return ["leftmost_choice", f"side={_choice(entry, 'side', ('left', 'right'))}"]
    if family == "my_side":
        side = _choice(entry, "side", ("left", "right", "none"), default="none")
        return ["side_of_me"] + ([] if side == "none" else [f"side={side}"])
    if family == "clock_direction":
        return ["direction_clock"]
    if family == "bearing_degrees":
        return ["direction_degrees"]
    if family == "turn_to_face":
        direction = _choice(entry, "direction", ("cw", "ccw", "unspecified"))
        return ["rotate_to_face"] + (["direction=ccw"] if direction == "ccw" else [])
    if family == "direction_after_turn":
        answer_as = _choice(entry, "answer_as", ("clock", "degrees"))
        angle = _number(entry, "angle_deg")
        if angle > 360:
            raise LabelError("angle_deg", f"{angle:g} is more than a full turn")
        return [f"future_direction_{answer_as}", f"turn={_choice(entry, 'turn', ('left', 'right'))}",
                f"angle_deg={angle:g}"]
    if family == "reach":
        if entry.get("arm_length_m") is None:
            return ["reachability"]
        return ["reachability", f"arm_length_m={_number(entry, 'arm_length_m'):g}"]
    # the comparisons: a choice among the objects, or a yes/no claim about a subject between two
    form_values = {"left_right_between": ("yesno", "which"), "stacked": ("yesno", "choice")}
    form = _choice(entry, "form", form_values.get(family, ("choice", "yesno")))
    if form == "yesno" and len(named) != 2:
        raise LabelError("form", f"a yes/no claim is between two objects, the question names {len(named)}")
    about = _objects(_subject(entry, named), named) if form in ("yesno", "which") else []
    if family == "stacked":
        relation = _choice(entry, "relation", ("above", "below"))
        if form == "yesno":
            return [f"{relation}_predicate", *about]
        return ["above_choice", f"relation={relation}"]
    if family == "left_right_between":
        if form == "which":
            return ["left_right_choice", *about]
        return [f"{_choice(entry, 'side', ('left', 'right'))}_predicate", *about]
    if family == "nearer_of_two":
        return ["closer_to_camera", f"order={_choice(entry, 'order', ('near', 'far'))}", f"form={form}",
                *about]
    if family == "size_compare":
        return ["tallest_choice", f"dim={_choice(entry, 'dim', ('height', 'length', 'width'))}",
                f"order={_choice(entry, 'order', ('max', 'min'))}", f"form={form}", *about]
    if family == "placed_higher":
        return ["higher_choice", f"point={_choice(entry, 'point', ('top', 'center', 'bottom'))}",
                f"order={_choice(entry, 'order', ('max', 'min'))}", f"form={form}", *about]
    raise LabelError("family", f"{family!r} has no conversion")  # FAMILIES and this table disagree


def expected_of(entry: dict[str, Any]) -> tuple[str, str]:
    """``(family group, expected)`` of one writer's entry; ``LabelError`` names the field at fault."""
    family = str(entry.get("family", ""))
    if family not in FAMILIES:
        raise LabelError("family", f"{family!r} is not a family of the brief")
    question = entry.get("q")
    if not isinstance(question, str) or not question.strip():
        raise LabelError("q", "no question text")
    named = list(dict.fromkeys(int(k) for k in _OBJECT.findall(question)))
    group, counts = FAMILIES[family]
    if len(named) not in counts:
        raise LabelError("q", f"names {len(named)} distinct objects, {family} asks about "
                              f"{' or '.join(map(str, counts))}")
    return group, parse_structured(" ".join(_slots(family, entry, named))).structured(half_turn_side=True)


def convert(entries: list[Any]) -> tuple[dict[str, list[list[str]]], list[str]]:
    """The set's ``families`` (group -> [[expected, question], ...], in the writer's order) and one error
    line per dropped entry (its index, family and the field at fault)."""
    out: dict[str, list[list[str]]] = {}
    errors: list[str] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            errors.append(f"entry {i}: not a mapping")
            continue
        try:
            group, expected = expected_of(entry)
        except ValueError as e:  # LabelError, or a slot value the task grammar refuses
            errors.append(f"entry {i} ({entry.get('family')}): {e}")
            continue
        out.setdefault(group, []).append([expected, str(entry["q"])])
    return out, errors


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("src", type=Path, help="the writer's YAML list of {q, family, fields}")
    p.add_argument("dst", type=Path, help="the paraphrase set file to write")
    p.add_argument("--about", required=True, help="who wrote the set, from what, and how it was converted")
    args = p.parse_args(argv)
    entries = yaml.safe_load(args.src.read_text())
    if not isinstance(entries, list):
        print(f"{args.src}: not a YAML list", file=sys.stderr)
        return 1
    converted, errors = convert(entries)
    for line in errors:
        print(line)
    kept = sum(len(v) for v in converted.values())
    print(f"{args.src}: {len(entries)} entries, {kept} converted, {len(errors)} dropped")
    text = yaml.safe_dump({"about": args.about, "families": converted}, sort_keys=False, allow_unicode=True,
                          width=110)
    args.dst.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
