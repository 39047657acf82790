"""One solver per spatial task: geometry summaries in, a RynnEC-style ``Answer`` out.

Definitions (shared with the synthetic ground truth in ``scene.py``):
- an object's *centre* is the centre of its box (robust extents, see ``points.summarise``);
- *distance to me*: camera optical centre (last frame) to the object centre, 3D;
- *height above ground*: centre height over the floor plane; *height difference*: of those heights;
- *height / length / width*: vertical extent / long / short side of the min-area horizontal box;
- *above / below*: comparison of centre heights; *left / right*: of rightward offsets in my
  egocentric frame; *closer / closest*: of distances to me; *tallest*: of object heights;
- *reachability*: distance from the camera to the object's nearest point ≤ arm length;
- *walked distance*: horizontal path length of the camera over the window's frames.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from rynnec_ros.spatial.egocentric import (
    after_turn,
    bearing_cw_deg,
    heading,
    lateral_and_forward,
    path_length_xy,
    to_clock,
)
from rynnec_ros.spatial.ground import Plane
from rynnec_ros.spatial.templates import parse_turn
from rynnec_ros.types import Answer


class Undeterminable(Exception):
    """The quantity cannot be computed from what the scene holds; the message says why."""


class ObjectFacts(Protocol):
    """What a solver needs of an object: estimated (``ObjectGeometry``) or exact (``SceneObject``)."""

    @property
    def center(self) -> np.ndarray: ...
    @property
    def height(self) -> float: ...
    @property
    def length(self) -> float: ...
    @property
    def width(self) -> float: ...
    def nearest_distance(self, p: np.ndarray) -> float: ...


@dataclass
class Scene:
    """What the solvers see: my pose, objects by region index, floor, camera path (window)."""

    me: np.ndarray
    objects: dict[int, ObjectFacts]
    ground: Plane | None
    camera_path: np.ndarray | None


def _ref(k: int) -> str:
    return f"<object{k}>"


def _m(x: float) -> str:
    return f"{x:.2f} meters"


def _quantity(text: str, value: float, unit: str, objs: list[int]) -> Answer:
    return Answer(text=text, value=float(value), unit=unit, object_ids=list(objs))


def solve(task: str, scene: Scene, question: str, arm_length_m: float) -> Answer:
    """Answer ``task`` on ``scene``; ``question`` supplies parameters such as the turn angle."""
    me_pos = scene.me[:3, 3]
    ks = list(scene.objects)
    objs = [scene.objects[k] for k in ks]

    if task == "walked_distance":
        assert scene.camera_path is not None
        d = path_length_xy(scene.camera_path)
        return _quantity(f"I have walked {_m(d)} in total.", d, "m", [])

    if task == "distance_to_camera":
        d = float(np.linalg.norm(objs[0].center - me_pos))
        return _quantity(f"{_ref(ks[0])} is {_m(d)} away from me.", d, "m", ks)

    if task in ("closer_to_camera", "closest_to_camera"):
        dists = [float(np.linalg.norm(o.center - me_pos)) for o in objs]
        i = int(np.argmin(dists))
        word = "closer" if task == "closer_to_camera" else "closest"
        return Answer(text=f"{_ref(ks[i])} is {word} to me.", object_ids=[ks[i]])

    if task == "center_distance":
        d = float(np.linalg.norm(objs[0].center - objs[1].center))
        return _quantity(f"The centers of {_ref(ks[0])} and {_ref(ks[1])} are {_m(d)} apart.", d, "m", ks)

    if task == "height_from_ground":
        if scene.ground is None:
            raise Undeterminable("no floor plane is visible in the depth of this window")
        h = float(scene.ground.height(objs[0].center))
        return _quantity(f"{_ref(ks[0])} is {_m(h)} above the ground.", h, "m", ks)

    if task == "height_difference":
        if scene.ground is not None:
            ha, hb = (float(scene.ground.height(o.center)) for o in objs[:2])
        else:  # a difference needs only gravity, not the floor
            ha, hb = float(objs[0].center[2]), float(objs[1].center[2])
        d = ha - hb
        rel = "higher" if d >= 0 else "lower"
        return _quantity(f"{_ref(ks[0])} is {_m(abs(d))} {rel} than {_ref(ks[1])}.", abs(d), "m", ks)

    if task in ("object_height", "object_width", "object_length"):
        dim = task.split("_")[1]
        value = {"height": objs[0].height, "width": objs[0].width, "length": objs[0].length}[dim]
        return _quantity(f"The {dim} of {_ref(ks[0])} is approximately {_m(value)}.", value, "m", ks)

    if task == "tallest_choice":
        i = int(np.argmax([o.height for o in objs]))
        word = "tallest" if len(objs) > 2 else "taller"
        return Answer(text=f"{_ref(ks[i])} is the {word}.", object_ids=[ks[i]])

    if task in ("above_predicate", "below_predicate"):
        higher = objs[0].center[2] > objs[1].center[2]
        truth = higher if task == "above_predicate" else not higher
        rel = "above" if higher else "below"
        yes = "Yes" if truth else "No"
        return Answer(text=f"{yes}, {_ref(ks[0])} is {rel} {_ref(ks[1])}.", object_ids=ks)

    forward = heading(scene.me)
    if task in ("left_predicate", "right_predicate"):
        ra, _ = lateral_and_forward(me_pos, forward, objs[0].center)
        rb, _ = lateral_and_forward(me_pos, forward, objs[1].center)
        right_of = ra > rb
        truth = right_of if task == "right_predicate" else not right_of
        side = "right" if right_of else "left"
        yes = "Yes" if truth else "No"
        return Answer(
            text=f"{yes}, from my viewpoint {_ref(ks[0])} is to the {side} of {_ref(ks[1])}.", object_ids=ks
        )

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
            turn = parse_turn(question)
            if turn is None:
                raise Undeterminable("the question does not say how far and which way I turn")
            b = after_turn(b, turn)
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
            return _quantity(f"I need to turn {round(b)} degrees clockwise to face {ref}.", b, "deg", ks)
        side = f"{round(360 - b)} degrees to my left" if b > 180 else f"{round(b)} degrees to my right"
        return _quantity(f"{ref} is {round(b)} degrees clockwise from where I face ({side}).", b, "deg", ks)

    if task == "reachability":
        d = objs[0].nearest_distance(me_pos)
        if d <= arm_length_m:
            text = (
                f"Yes. {_ref(ks[0])} is {_m(d)} away from me, within my {arm_length_m:.2f} meter arm's "
                "reach, so I can pick it up without walking."
            )
        else:
            text = (
                f"No. {_ref(ks[0])} is {_m(d)} away from me, and my arm is only {_m(arm_length_m)} long, "
                "so I need to walk up to it."
            )
        return _quantity(text, d, "m", ks)

    raise ValueError(f"no solver for task {task!r}")
