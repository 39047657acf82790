"""One solver per spatial task: geometry summaries and parsed slots in, a RynnEC-style ``Answer`` out.

Definitions (the scene-model ground truth in ``truth.py`` implements them independently):
- an object's *centre* is the centre of its box (robust extents, see ``points.summarise``); its *top*
  and *bottom* are the box's highest and lowest points;
- *distance to me*: camera optical centre (last frame) to the object centre, 3D;
- *height above ground*: of the asked point (``point`` slot: top / centre / bottom, centre when the
  question names none) over the floor plane; *height difference*: of those heights;
- *height / length / width*: vertical extent / long / short side of the oriented horizontal box;
- *A above B*: A's bottom is no lower than B's top (``ABOVE_TOLERANCE_M``) and their footprints
  overlap in plan view, so A rests on or hangs over B; two boxes side by side are not above one
  another whatever their heights. *Higher / lower*: comparison of the asked point's heights;
- *left / right of B*: of rightward offsets in my egocentric frame (from my viewpoint); *on my
  left / right*: the sign of the object's rightward offset; *closer / closest*: of distances to me;
  *taller / longer / wider*: of object heights / lengths / widths;
- *reachability*: distance from the camera to the object's nearest point ≤ arm length (the
  question's stated arm length, else the configured one);
- *walked distance*: horizontal path length of the camera over the window's frames.
Where the words allow more than one reading, the answer text names the one used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from rynnec_ros.core.types import Answer
from rynnec_ros.spatial.egocentric import (
    after_turn,
    bearing_cw_deg,
    heading,
    lateral_and_forward,
    path_length_xy,
    to_clock,
)
from rynnec_ros.spatial.ground import Plane
from rynnec_ros.spatial.parse import SLOTS

# "Rests on": a vase's bottom meets the table's top; depth noise makes the two differ by centimetres.
ABOVE_TOLERANCE_M = 0.05
UNIT_SCALE = {"m": 1.0, "cm": 100.0, "mm": 1000.0, "ft": 1 / 0.3048, "in": 1 / 0.0254}
_UNIT_WORDS = {"m": "meters", "cm": "centimeters", "mm": "millimeters", "ft": "feet", "in": "inches"}
_POINT_WORDS = {"top": "top", "center": "centre", "bottom": "bottom"}


class Undeterminable(Exception):
    """The quantity cannot be computed from what the scene holds; the message says why."""


class ObjectFacts(Protocol):
    """What a solver needs of an object: estimated (``ObjectGeometry``) or exact (``SceneObject``)."""

    @property
    def center(self) -> np.ndarray: ...
    @property
    def z_min(self) -> float: ...
    @property
    def z_max(self) -> float: ...
    @property
    def height(self) -> float: ...
    @property
    def length(self) -> float: ...
    @property
    def width(self) -> float: ...
    def nearest_distance(self, p: np.ndarray) -> float: ...
    def footprint_corners(self) -> np.ndarray: ...


@dataclass
class Scene:
    """What the solvers see: my pose, objects by region index, floor, camera path (window).

    All of it is in one gravity-aligned frame (z up). ``request_R_scene`` rotates that frame into the
    request's own: ``None`` when they are the same (posed frames: the world frame of their poses);
    without poses the engine aligns the last camera's frame with gravity, and this undoes it.
    """

    me: np.ndarray
    objects: dict[int, ObjectFacts]
    ground: Plane | None
    camera_path: np.ndarray | None
    request_R_scene: np.ndarray | None = None


def _ref(k: int) -> str:
    return f"<object{k}>"


def _m(x: float) -> str:
    return f"{x:.2f} meters"


def _amount(x_m: float, unit: str) -> tuple[float, str]:
    """Value in the asked unit and its words ("35.0 centimeters")."""
    v = x_m * UNIT_SCALE[unit]
    return v, (f"{v:.2f} {_UNIT_WORDS[unit]}" if unit in ("m", "ft") else f"{v:.1f} {_UNIT_WORDS[unit]}")


def _quantity(text: str, value: float, unit: str, objs: list[int]) -> Answer:
    return Answer(text=text, value=float(value), unit=unit, object_ids=list(objs))


def point_z(o: ObjectFacts, point: str) -> float:
    """World height of an object's top, centre or bottom."""
    return {"top": o.z_max, "center": float(o.center[2]), "bottom": o.z_min}[point]


def _height_over(ground: Plane | None, o: ObjectFacts, point: str) -> float:
    """Height of the point over the floor plane, or (no floor) in the gravity-aligned frame."""
    z = point_z(o, point)
    if ground is None:
        return z
    p = np.array([o.center[0], o.center[1], z])
    return float(ground.height(p))


def footprints_overlap(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two convex plan-view outlines (N×2, in order around) overlap: no separating axis."""
    for poly in (a, b):
        edges = np.roll(poly, -1, axis=0) - poly
        for e in edges:
            n = np.array([-e[1], e[0]])
            if not np.any(n):
                continue
            pa, pb = a @ n, b @ n
            if pa.max() <= pb.min() or pb.max() <= pa.min():
                return False
    return True


def is_above(a: ObjectFacts, b: ObjectFacts) -> bool:
    """A rests on or hangs over B (see the module definitions)."""
    over = footprints_overlap(a.footprint_corners(), b.footprint_corners())
    return over and a.z_min >= b.z_max - ABOVE_TOLERANCE_M


def _above_text(a: int, oa: ObjectFacts, b: int, ob: ObjectFacts) -> str:
    """Why A is or is not above B, in the words of the definition."""
    if is_above(oa, ob):
        return f"{_ref(a)} is above {_ref(b)}: it rests on or over it"
    if not footprints_overlap(oa.footprint_corners(), ob.footprint_corners()):
        rel = "higher" if oa.center[2] > ob.center[2] else "lower"
        return (
            f"{_ref(a)} is not above {_ref(b)}: they do not overlap in plan view (side by side); "
            f"its centre is {_m(abs(float(oa.center[2] - ob.center[2])))} {rel}"
        )
    return f"{_ref(a)} is not above {_ref(b)}: its bottom is below the top of {_ref(b)}"


def _pick(values: list[float], order: str) -> int:
    return int(np.argmax(values)) if order in ("max", "far") else int(np.argmin(values))


def _choice_or_yesno(
    ks: list[int], values: list[float], order: str, form: str, word: str, reading: str
) -> Answer:
    """A comparison as a choice ("<objectK> is the X") or a yes/no about the first object."""
    i = _pick(values, order)
    if form == "yesno":
        yes = "Yes" if i == 0 else "No"
        return Answer(text=f"{yes}, {_ref(ks[i])} is {word} ({reading}).", object_ids=[ks[0], ks[1]])
    return Answer(text=f"{_ref(ks[i])} is {word} ({reading}).", object_ids=[ks[i]])


def solve(task: str, scene: Scene, slots: dict, arm_length_m: float) -> Answer:
    """Answer ``task`` on ``scene`` with the parsed ``slots`` (``parse.SLOTS`` fills missing ones)."""
    slots = {**SLOTS.get(task, {}), **slots}
    me_pos = scene.me[:3, 3]
    ks = list(scene.objects)
    objs = [scene.objects[k] for k in ks]
    unit = str(slots.get("unit") or "m")

    if task == "walked_distance":
        assert scene.camera_path is not None
        v, words = _amount(path_length_xy(scene.camera_path), unit)
        return _quantity(f"I have walked {words} in total.", v, unit, [])

    if task == "distance_to_camera":
        v, words = _amount(float(np.linalg.norm(objs[0].center - me_pos)), unit)
        return _quantity(f"{_ref(ks[0])} is {words} away from me.", v, unit, ks)

    if task in ("closer_to_camera", "closest_to_camera"):
        dists = [float(np.linalg.norm(o.center - me_pos)) for o in objs]
        far = slots["order"] == "far"
        word = ("farther" if far else "closer") if len(objs) == 2 else ("farthest" if far else "closest")
        form = str(slots.get("form", "choice"))
        reading = "distances from me to the objects' centres"
        return _choice_or_yesno(ks, dists, str(slots["order"]), form, f"{word} to me", reading)

    if task == "center_distance":
        v, words = _amount(float(np.linalg.norm(objs[0].center - objs[1].center)), unit)
        return _quantity(f"The centers of {_ref(ks[0])} and {_ref(ks[1])} are {words} apart.", v, unit, ks)

    if task == "height_from_ground":
        if scene.ground is None:
            raise Undeterminable("no floor plane is visible in the depth of this window")
        point = str(slots["point"])
        v, words = _amount(_height_over(scene.ground, objs[0], point), unit)
        return _quantity(
            f"The {_POINT_WORDS[point]} of {_ref(ks[0])} is {words} above the ground.", v, unit, ks
        )

    if task == "height_difference":
        point = str(slots["point"])  # a difference needs only gravity, not the floor
        d = _height_over(scene.ground, objs[0], point) - _height_over(scene.ground, objs[1], point)
        v, words = _amount(abs(d), unit)
        rel = "higher" if d >= 0 else "lower"
        p = _POINT_WORDS[point]
        return _quantity(
            f"The {p} of {_ref(ks[0])} is {words} {rel} than the {p} of {_ref(ks[1])}.", v, unit, ks
        )

    if task in ("object_height", "object_width", "object_length"):
        dim = task.split("_")[1]
        value = {"height": objs[0].height, "width": objs[0].width, "length": objs[0].length}[dim]
        v, words = _amount(value, unit)
        return _quantity(f"The {dim} of {_ref(ks[0])} is approximately {words}.", v, unit, ks)

    if task == "tallest_choice":
        dim, order = str(slots["dim"]), str(slots["order"])
        values = [float(getattr(o, dim)) for o in objs]
        words = {
            "height": ("taller", "shorter"),
            "length": ("longer", "shorter"),
            "width": ("wider", "narrower"),
        }
        word = words[dim][0 if order == "max" else 1]
        if len(objs) > 2:
            word = word[:-1] + "st" if word.endswith("er") else word
            word = "the " + word
        return _choice_or_yesno(ks, values, order, str(slots["form"]), word, f"comparing object {dim}s")

    if task == "higher_choice":
        point, order = str(slots["point"]), str(slots["order"])
        values = [_height_over(scene.ground, o, point) for o in objs]
        word = (
            ("higher" if order == "max" else "lower")
            if len(objs) == 2
            else ("the highest" if order == "max" else "the lowest")
        )
        reading = f"comparing the heights of their {_POINT_WORDS[point]}s above the floor"
        return _choice_or_yesno(ks, values, order, str(slots["form"]), word, reading)

    if task in ("above_predicate", "below_predicate"):
        a, b = (0, 1) if task == "above_predicate" else (1, 0)
        truth = is_above(objs[a], objs[b])
        yes = "Yes" if truth else "No"
        if task == "above_predicate":
            why = _above_text(ks[0], objs[0], ks[1], objs[1])
        else:
            why = _above_text(ks[1], objs[1], ks[0], objs[0])
        return Answer(text=f"{yes}. {why}.", object_ids=ks)

    if task == "above_choice":
        top = [i for i, j in ((0, 1), (1, 0)) if is_above(objs[i], objs[j])]
        if not top:
            return Answer(
                text=f"Neither: {_above_text(ks[0], objs[0], ks[1], objs[1])}, nor is {_ref(ks[1])} above "
                "it.",
                object_ids=[],
            )
        i = top[0] if slots["relation"] == "above" else 1 - top[0]
        word = "above" if slots["relation"] == "above" else "below"
        return Answer(text=f"{_ref(ks[i])} is {word} {_ref(ks[1 - i])}.", object_ids=[ks[i]])

    forward = heading(scene.me)
    rights = [lateral_and_forward(me_pos, forward, o.center)[0] for o in objs]
    if task in ("left_predicate", "right_predicate", "left_right_choice"):
        right_of = rights[0] > rights[1]
        side = "right" if right_of else "left"
        view = f"from my viewpoint {_ref(ks[0])} is to the {side} of {_ref(ks[1])}"
        if task == "left_right_choice":
            return Answer(text=f"{side.capitalize()}: {view}.", object_ids=ks)
        truth = right_of if task == "right_predicate" else not right_of
        return Answer(text=f"{'Yes' if truth else 'No'}, {view}.", object_ids=ks)

    if task == "leftmost_choice":
        order = "max" if slots["side"] == "right" else "min"
        i = _pick(rights, order)
        word = f"the furthest to the {slots['side']}" if len(objs) > 2 else f"further to the {slots['side']}"
        return Answer(text=f"{_ref(ks[i])} is {word}, from my viewpoint.", object_ids=[ks[i]])

    if task == "side_of_me":
        side = "right" if rights[0] > 0 else "left"
        where = f"{_ref(ks[0])} is on my {side}, {_m(abs(rights[0]))} to the {side} of the direction I face"
        asked = slots.get("side")
        if asked is None:
            return Answer(text=f"{side.capitalize()}: {where}.", object_ids=ks)
        return Answer(text=f"{'Yes' if asked == side else 'No'}, {where}.", object_ids=ks)

    if task in (
        "direction_clock",
        "direction_degrees",
        "rotate_to_face",
        "future_direction_clock",
        "future_direction_degrees",
    ):
        try:
            b = bearing_cw_deg(me_pos, forward, objs[0].center)
        except ValueError as exc:
            raise Undeterminable(str(exc)) from exc
        ref = _ref(ks[0])
        if task.startswith("future_"):
            if slots.get("turn") is None or slots.get("angle_deg") is None:
                raise Undeterminable("the question does not say how far and which way I turn")
            angle = float(slots["angle_deg"])
            b = after_turn(b, angle if slots["turn"] == "left" else -angle)
            if task == "future_direction_clock":
                c = to_clock(b)
                return _quantity(f"{ref} will be at my {c} o'clock direction.", c, "oclock", ks)
            return _quantity(
                f"After the turn, {ref} will be {round(b)} degrees clockwise from where I face.", b, "deg", ks
            )
        if task == "direction_clock":
            c = to_clock(b)
            return _quantity(f"{ref} is at my {c} o'clock position.", c, "oclock", ks)
        if task == "rotate_to_face":
            if slots["direction"] == "ccw":
                ccw = float(np.mod(360.0 - b, 360.0))
                return _quantity(
                    f"I need to turn {round(ccw)} degrees counterclockwise to face {ref}.", ccw, "deg", ks
                )
            return _quantity(f"I need to turn {round(b)} degrees clockwise to face {ref}.", b, "deg", ks)
        side = f"{round(360 - b)} degrees to my left" if b > 180 else f"{round(b)} degrees to my right"
        return _quantity(f"{ref} is {round(b)} degrees clockwise from where I face ({side}).", b, "deg", ks)

    if task == "reachability":
        stated = slots.get("arm_length_m")
        arm = float(stated) if stated is not None else arm_length_m
        whose = "the stated" if stated is not None else "my configured"
        d = objs[0].nearest_distance(me_pos)
        if d <= arm:
            text = (
                f"Yes. {_ref(ks[0])} is {_m(d)} away from me, within {whose} {arm:.2f} meter arm's "
                "reach, so I can pick it up without walking."
            )
        else:
            text = (
                f"No. {_ref(ks[0])} is {_m(d)} away from me, beyond {whose} {arm:.2f} meter arm's reach, "
                "so I need to walk up to it."
            )
        return _quantity(text, d, "m", ks)

    raise ValueError(f"no solver for task {task!r}")
