"""One solver per spatial task (``solve_<task>``, named in its registry entry, ``tasks.py``): geometry
summaries and the plan's slots in, a RynnEC-style ``Answer`` out.

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

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
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
    @property
    def sigma_m(self) -> float: ...
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


def _quantity(text: str, value: float, unit: str, objs: list[int], sigma: float | None) -> Answer:
    """A quantity with its standard uncertainty ``sigma`` (in ``unit``; None: no estimate)."""
    return Answer(
        text=text, value=float(value), unit=unit, object_ids=list(objs), uncertainty=sigma,
        uncertainty_unit="" if sigma is None else unit,
    )


# ---------------------------------------------------------------- uncertainty (docs/spatial.md)
# An object's ``sigma_m`` is the standard uncertainty of one face of its box; a centre, the mean of two
# opposite faces, has sigma/√2; a size, their difference, √2·sigma. Quantities of independent objects add
# in quadrature.
def _rss(*sigmas: float) -> float:
    return float(np.sqrt(sum(s * s for s in sigmas)))


def _centre_sigma(o: ObjectFacts) -> float:
    return float(o.sigma_m) / np.sqrt(2.0)


def _point_sigma(o: ObjectFacts, point: str) -> float:
    return _centre_sigma(o) if point == "center" else float(o.sigma_m)


def _decided(answer: Answer, margin_m: float, sigma_m: float) -> Answer:
    """A choice or yes/no with how far its deciding quantity is from the boundary and that distance's
    standard uncertainty (metres)."""
    answer.margin_m, answer.uncertainty, answer.uncertainty_unit = float(abs(margin_m)), float(sigma_m), "m"
    return answer


def _bearing_sigma_deg(g: Given) -> float:
    """Standard uncertainty of the subject's bearing: its centre's lateral uncertainty over its horizontal
    distance."""
    r = float(np.linalg.norm((g.objs[0].center - g.me)[:2]))
    return float(np.degrees(np.arctan2(_centre_sigma(g.objs[0]), r)))


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


def footprint_gap(a: np.ndarray, b: np.ndarray) -> float:
    """How far apart two convex plan-view outlines are along the separating axes (metres): the largest gap
    when they do not overlap, minus the smallest overlap (how far one must move to clear the other) when
    they do; the sign agrees with ``footprints_overlap`` (overlap ⇔ negative)."""
    gaps = []
    for poly in (a, b):
        for e in np.roll(poly, -1, axis=0) - poly:
            n = np.array([-e[1], e[0]])
            if not np.any(n):
                continue
            n = n / np.linalg.norm(n)
            pa, pb = a @ n, b @ n
            gaps.append(max(pb.min() - pa.max(), pa.min() - pb.max()))
    return max(gaps)


def above_margin(a: ObjectFacts, b: ObjectFacts) -> float:
    """How far "A is above B" is from flipping (metres): its vertical clearance from the tolerance and, over
    B, how much of A's footprint would have to move off it; beside B, how far apart they stand."""
    gap = footprint_gap(a.footprint_corners(), b.footprint_corners())
    z = a.z_min - (b.z_max - ABOVE_TOLERANCE_M)
    if gap >= 0:  # side by side: to be above, A would have to move over B (and up, when lower)
        return max(gap, -z)
    return min(z, -gap) if z >= 0 else -z


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
    ks: list[int], values: list[float], sigmas: list[float], order: str, form: str, word: str, reading: str
) -> Answer:
    """A comparison as a choice ("<objectK> is the X") or a yes/no about the first object; its margin is
    the gap between the chosen value and the nearest other (``sigmas``: the values' uncertainties)."""
    i = _pick(values, order)
    j = min((k for k in range(len(values)) if k != i), key=lambda k: abs(values[k] - values[i]))
    if form == "yesno":
        yes = "Yes" if i == 0 else "No"
        answer = Answer(text=f"{yes}, {_ref(ks[i])} is {word} ({reading}).", object_ids=[ks[0], ks[1]])
    else:
        answer = Answer(text=f"{_ref(ks[i])} is {word} ({reading}).", object_ids=[ks[i]])
    return _decided(answer, values[i] - values[j], _rss(sigmas[i], sigmas[j]))


class Given:
    """What a solver gets: the scene, the plan's slots (defaults filled in) and the configured arm length.

    ``ks`` are the region indices of the scene's objects in the plan's order (subject first) and ``objs``
    their summaries; ``rights`` (rightward offsets in my egocentric frame) is computed on first use.
    """

    def __init__(self, scene: Scene, slots: Mapping[str, str | float | None], arm_length_m: float) -> None:
        self.scene, self.slots, self.arm_length_m = scene, slots, arm_length_m
        self.me = scene.me[:3, 3]
        self.ks = list(scene.objects)
        self.objs = [scene.objects[k] for k in self.ks]
        self.unit = str(slots.get("unit") or "m")

    @cached_property
    def forward(self) -> np.ndarray:
        return heading(self.scene.me)

    @cached_property
    def rights(self) -> list[float]:
        return [lateral_and_forward(self.me, self.forward, o.center)[0] for o in self.objs]

    def bearing(self) -> float:
        """Clockwise bearing of the subject from where I face (degrees)."""
        forward = self.forward  # a pose with no horizontal heading is malformed input (RequestError)
        try:
            return bearing_cw_deg(self.me, forward, self.objs[0].center)
        except ValueError as exc:
            raise Undeterminable(str(exc)) from exc


# ------------------------------------------------------------------ one solver per task
def solve_walked_distance(g: Given) -> Answer:
    assert g.scene.camera_path is not None
    v, words = _amount(path_length_xy(g.scene.camera_path), g.unit)
    return _quantity(f"I have walked {words} in total.", v, g.unit, [], None)  # poses carry no covariance


def solve_distance_to_camera(g: Given) -> Answer:
    v, words = _amount(float(np.linalg.norm(g.objs[0].center - g.me)), g.unit)
    sigma = _centre_sigma(g.objs[0]) * UNIT_SCALE[g.unit]
    return _quantity(f"{_ref(g.ks[0])} is {words} away from me.", v, g.unit, g.ks, sigma)


def solve_closer_to_camera(g: Given) -> Answer:
    """Also ``closest_to_camera`` (three objects): the words follow the number of objects."""
    dists = [float(np.linalg.norm(o.center - g.me)) for o in g.objs]
    far = g.slots["order"] == "far"
    word = ("farther" if far else "closer") if len(g.objs) == 2 else ("farthest" if far else "closest")
    form = str(g.slots.get("form", "choice"))
    reading = "distances from me to the objects' centres"
    sigmas = [_centre_sigma(o) for o in g.objs]
    return _choice_or_yesno(g.ks, dists, sigmas, str(g.slots["order"]), form, f"{word} to me", reading)


def solve_center_distance(g: Given) -> Answer:
    v, words = _amount(float(np.linalg.norm(g.objs[0].center - g.objs[1].center)), g.unit)
    text = f"The centers of {_ref(g.ks[0])} and {_ref(g.ks[1])} are {words} apart."
    sigma = _rss(*(_centre_sigma(o) for o in g.objs)) * UNIT_SCALE[g.unit]
    return _quantity(text, v, g.unit, g.ks, sigma)


def solve_height_from_ground(g: Given) -> Answer:
    if g.scene.ground is None:
        raise Undeterminable("no floor plane is visible in the depth of this window")
    point = str(g.slots["point"])
    v, words = _amount(_height_over(g.scene.ground, g.objs[0], point), g.unit)
    sigma = _point_sigma(g.objs[0], point) * UNIT_SCALE[g.unit]  # the floor: thousands of inliers
    return _quantity(
        f"The {_POINT_WORDS[point]} of {_ref(g.ks[0])} is {words} above the ground.", v, g.unit, g.ks, sigma
    )


def solve_height_difference(g: Given) -> Answer:
    point = str(g.slots["point"])  # a difference needs only gravity, not the floor
    d = _height_over(g.scene.ground, g.objs[0], point) - _height_over(g.scene.ground, g.objs[1], point)
    v, words = _amount(abs(d), g.unit)
    rel = "higher" if d >= 0 else "lower"
    p = _POINT_WORDS[point]
    sigma = _rss(*(_point_sigma(o, point) for o in g.objs)) * UNIT_SCALE[g.unit]
    text = f"The {p} of {_ref(g.ks[0])} is {words} {rel} than the {p} of {_ref(g.ks[1])}."
    return _quantity(text, v, g.unit, g.ks, sigma)


def _size(g: Given, dim: str) -> Answer:
    v, words = _amount(float(getattr(g.objs[0], dim)), g.unit)
    sigma = np.sqrt(2.0) * float(g.objs[0].sigma_m) * UNIT_SCALE[g.unit]
    return _quantity(f"The {dim} of {_ref(g.ks[0])} is approximately {words}.", v, g.unit, g.ks, sigma)


def solve_object_height(g: Given) -> Answer:
    return _size(g, "height")


def solve_object_width(g: Given) -> Answer:
    return _size(g, "width")


def solve_object_length(g: Given) -> Answer:
    return _size(g, "length")


def solve_tallest_choice(g: Given) -> Answer:
    dim, order = str(g.slots["dim"]), str(g.slots["order"])
    values = [float(getattr(o, dim)) for o in g.objs]
    words = {"height": ("taller", "shorter"), "length": ("longer", "shorter"), "width": ("wider", "narrower")}
    word = words[dim][0 if order == "max" else 1]
    if len(g.objs) > 2:
        word = word[:-1] + "st" if word.endswith("er") else word
        word = "the " + word
    sigmas = [np.sqrt(2.0) * float(o.sigma_m) for o in g.objs]
    reading = f"comparing object {dim}s"
    return _choice_or_yesno(g.ks, values, sigmas, order, str(g.slots["form"]), word, reading)


def solve_higher_choice(g: Given) -> Answer:
    point, order = str(g.slots["point"]), str(g.slots["order"])
    values = [_height_over(g.scene.ground, o, point) for o in g.objs]
    word = (
        ("higher" if order == "max" else "lower")
        if len(g.objs) == 2
        else ("the highest" if order == "max" else "the lowest")
    )
    reading = f"comparing the heights of their {_POINT_WORDS[point]}s above the floor"
    sigmas = [_point_sigma(o, point) for o in g.objs]
    return _choice_or_yesno(g.ks, values, sigmas, order, str(g.slots["form"]), word, reading)


def _faces_sigma(g: Given) -> float:
    return _rss(*(float(o.sigma_m) for o in g.objs))


def solve_above_predicate(g: Given) -> Answer:
    (a, b), (oa, ob) = g.ks, g.objs
    yes = "Yes" if is_above(oa, ob) else "No"
    answer = Answer(text=f"{yes}. {_above_text(a, oa, b, ob)}.", object_ids=g.ks)
    return _decided(answer, above_margin(oa, ob), _faces_sigma(g))


def solve_below_predicate(g: Given) -> Answer:
    (a, b), (oa, ob) = g.ks, g.objs
    yes = "Yes" if is_above(ob, oa) else "No"
    answer = Answer(text=f"{yes}. {_above_text(b, ob, a, oa)}.", object_ids=g.ks)
    return _decided(answer, above_margin(ob, oa), _faces_sigma(g))


def solve_above_choice(g: Given) -> Answer:
    ks, objs = g.ks, g.objs
    top = [i for i, j in ((0, 1), (1, 0)) if is_above(objs[i], objs[j])]
    margin = min(above_margin(objs[0], objs[1]), above_margin(objs[1], objs[0]))  # both relations decide
    if not top:
        answer = Answer(
            text=f"Neither: {_above_text(ks[0], objs[0], ks[1], objs[1])}, nor is {_ref(ks[1])} above it.",
            object_ids=[],
        )
        return _decided(answer, margin, _faces_sigma(g))
    i = top[0] if g.slots["relation"] == "above" else 1 - top[0]
    word = "above" if g.slots["relation"] == "above" else "below"
    answer = Answer(text=f"{_ref(ks[i])} is {word} {_ref(ks[1 - i])}.", object_ids=[ks[i]])
    return _decided(answer, margin, _faces_sigma(g))


def _side_of(g: Given) -> tuple[str, str]:
    """The subject's side of the other object, and the words of it from my viewpoint."""
    side = "right" if g.rights[0] > g.rights[1] else "left"
    return side, f"from my viewpoint {_ref(g.ks[0])} is to the {side} of {_ref(g.ks[1])}"


def _sides_decided(g: Given, answer: Answer) -> Answer:
    """Margin of a left / right relation: the difference of the two rightward offsets."""
    return _decided(answer, g.rights[0] - g.rights[1], _rss(*(_centre_sigma(o) for o in g.objs)))


def solve_left_predicate(g: Given) -> Answer:
    side, view = _side_of(g)
    return _sides_decided(g, Answer(text=f"{'Yes' if side == 'left' else 'No'}, {view}.", object_ids=g.ks))


def solve_right_predicate(g: Given) -> Answer:
    side, view = _side_of(g)
    return _sides_decided(g, Answer(text=f"{'Yes' if side == 'right' else 'No'}, {view}.", object_ids=g.ks))


def solve_left_right_choice(g: Given) -> Answer:
    side, view = _side_of(g)
    return _sides_decided(g, Answer(text=f"{side.capitalize()}: {view}.", object_ids=g.ks))


def solve_leftmost_choice(g: Given) -> Answer:
    i = _pick(g.rights, "max" if g.slots["side"] == "right" else "min")
    j = min((k for k in range(len(g.objs)) if k != i), key=lambda k: abs(g.rights[k] - g.rights[i]))
    side = g.slots["side"]
    word = f"the furthest to the {side}" if len(g.objs) > 2 else f"further to the {side}"
    answer = Answer(text=f"{_ref(g.ks[i])} is {word}, from my viewpoint.", object_ids=[g.ks[i]])
    sigma = _rss(_centre_sigma(g.objs[i]), _centre_sigma(g.objs[j]))
    return _decided(answer, g.rights[i] - g.rights[j], sigma)


def solve_side_of_me(g: Given) -> Answer:
    r = g.rights[0]
    side = "right" if r > 0 else "left"
    where = f"{_ref(g.ks[0])} is on my {side}, {_m(abs(r))} to the {side} of the direction I face"
    asked = g.slots.get("side")
    if asked is None:
        answer = Answer(text=f"{side.capitalize()}: {where}.", object_ids=g.ks)
    else:
        answer = Answer(text=f"{'Yes' if asked == side else 'No'}, {where}.", object_ids=g.ks)
    return _decided(answer, r, _centre_sigma(g.objs[0]))


def solve_direction_clock(g: Given) -> Answer:
    c = to_clock(g.bearing())
    sigma = _bearing_sigma_deg(g) / 30.0
    return _quantity(f"{_ref(g.ks[0])} is at my {c} o'clock position.", c, "oclock", g.ks, sigma)


def solve_direction_degrees(g: Given) -> Answer:
    b = g.bearing()
    side = f"{round(360 - b)} degrees to my left" if b > 180 else f"{round(b)} degrees to my right"
    text = f"{_ref(g.ks[0])} is {round(b)} degrees clockwise from where I face ({side})."
    return _quantity(text, b, "deg", g.ks, _bearing_sigma_deg(g))


def solve_rotate_to_face(g: Given) -> Answer:
    b, ref = g.bearing(), _ref(g.ks[0])
    if g.slots["direction"] == "ccw":
        ccw = float(np.mod(360.0 - b, 360.0))
        text = f"I need to turn {round(ccw)} degrees counterclockwise to face {ref}."
        return _quantity(text, ccw, "deg", g.ks, _bearing_sigma_deg(g))
    text = f"I need to turn {round(b)} degrees clockwise to face {ref}."
    return _quantity(text, b, "deg", g.ks, _bearing_sigma_deg(g))


def half_turn(angle: str | float | None) -> bool:
    """Whether a turn by ``angle`` degrees is a half turn, which ends in the same pose either way."""
    return angle is not None and float(angle) % 360 == 180


def turn_unsaid(slots: Mapping[str, str | float | None]) -> bool:
    """Whether a turn's amount, or its side, is not said: the pose after it is then unknown. A half turn
    ends in the same pose either way, so its side need not be said ("after a 180")."""
    angle = slots.get("angle_deg")
    return angle is None or (slots.get("turn") is None and not half_turn(angle))


def _after_turn(g: Given) -> float:
    """The subject's bearing after the stated turn."""
    b = g.bearing()
    if turn_unsaid(g.slots):
        raise Undeterminable("the question does not say how far and which way I turn")
    angle = float(g.slots["angle_deg"])  # type: ignore[arg-type]
    return after_turn(b, angle if g.slots["turn"] == "left" else -angle)


def solve_future_direction_clock(g: Given) -> Answer:
    c = to_clock(_after_turn(g))
    sigma = _bearing_sigma_deg(g) / 30.0
    return _quantity(f"{_ref(g.ks[0])} will be at my {c} o'clock direction.", c, "oclock", g.ks, sigma)


def solve_future_direction_degrees(g: Given) -> Answer:
    b = _after_turn(g)
    text = f"After the turn, {_ref(g.ks[0])} will be {round(b)} degrees clockwise from where I face."
    return _quantity(text, b, "deg", g.ks, _bearing_sigma_deg(g))


def solve_reachability(g: Given) -> Answer:
    stated = g.slots.get("arm_length_m")
    arm = float(stated) if stated is not None else g.arm_length_m
    whose = "the stated" if stated is not None else "my configured"
    d = g.objs[0].nearest_distance(g.me)
    ref = _ref(g.ks[0])
    if d <= arm:
        text = (
            f"Yes. {ref} is {_m(d)} away from me, within {whose} {arm:.2f} meter arm's "
            "reach, so I can pick it up without walking."
        )
    else:
        text = (
            f"No. {ref} is {_m(d)} away from me, beyond {whose} {arm:.2f} meter arm's reach, "
            "so I need to walk up to it."
        )
    answer = _quantity(text, d, "m", g.ks, float(g.objs[0].sigma_m))
    answer.margin_m = abs(d - arm)
    return answer
