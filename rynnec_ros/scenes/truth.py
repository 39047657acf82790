"""Ground truth of spatial questions from a synthetic scene's model (boxes, poses), never from the solvers.

The task definitions of docs/spatial.md are implemented here a second time, from the words and on the
scene generator's primitives (``scene.SceneObject`` boxes and the robot's base and head poses), so an
evaluation against these labels cannot agree with the answering code (``solvers.py``) by construction:
heights are box tops / centres / bottoms over the floor z = 0, "above" is one box resting on or over
another with overlapping footprints (tested by sampling footprint points, not by separating axes),
directions come from the robot base's yaw. Close calls (choices within a margin, directions on a clock
boundary, reachability near the arm length) give ``None``: their labels would be noise.

Used by ``gen-scene`` (the labels of its questions file) and by the paraphrase evaluation
(``rynnec_ros.eval.spatial``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rynnec_ros.scenes.scene import Scene, SceneObject
from rynnec_ros.spatial.plan import Parsed

ARM_LENGTH_M = 0.8
# Asked unit → factor from metres (written out here so that no number comes from the answering code).
_PER_METRE = {"m": 1.0, "cm": 100.0, "mm": 1000.0, "ft": 1 / 0.3048, "in": 1 / 0.0254}


# ------------------------------------------------------------------ ground truth from the scene model
def _me(scene: Scene, i: int) -> tuple[np.ndarray, np.ndarray]:
    """Camera position and horizontal forward direction (the base's yaw; the head only pitches)."""
    base = scene.base_poses[i]
    yaw = np.arctan2(base[1, 0], base[0, 0])
    return scene.world_T_camera(i)[:3, 3], np.array([np.cos(yaw), np.sin(yaw)])


def _right_offset(pos: np.ndarray, fwd: np.ndarray, o: SceneObject) -> float:
    d = o.center[:2] - pos[:2]
    return float(d[0] * fwd[1] - d[1] * fwd[0])  # forward × up, i.e. my right


def _bearing_cw(pos: np.ndarray, fwd: np.ndarray, o: SceneObject) -> float:
    d = o.center[:2] - pos[:2]
    ahead = float(d @ fwd)
    return float(np.degrees(np.arctan2(_right_offset(pos, fwd, o), ahead)) % 360.0)


def _point_height(o: SceneObject, point: str) -> float:
    lo, hi = o.local_bounds()
    return {"top": float(hi[2]), "bottom": float(lo[2]), "center": float((lo[2] + hi[2]) / 2)}[point]


def _footprint_samples(o: SceneObject, n: int = 9) -> np.ndarray:
    lo, hi = o.local_bounds()
    u, v = np.meshgrid(np.linspace(lo[0], hi[0], n), np.linspace(lo[1], hi[1], n))
    c, s = np.cos(o.yaw), np.sin(o.yaw)
    return np.stack([c * u.ravel() - s * v.ravel(), s * u.ravel() + c * v.ravel()], axis=1)


def _inside(o: SceneObject, xy: np.ndarray) -> np.ndarray:
    lo, hi = o.local_bounds()
    c, s = np.cos(o.yaw), np.sin(o.yaw)
    u = c * xy[:, 0] + s * xy[:, 1]
    v = -s * xy[:, 0] + c * xy[:, 1]
    return (u >= lo[0]) & (u <= hi[0]) & (v >= lo[1]) & (v <= hi[1])


def above(a: SceneObject, b: SceneObject) -> bool:
    """A rests on or over B: part of A's footprint lies over B's and A's bottom is at B's top or higher."""
    overlap = bool(_inside(b, _footprint_samples(a)).any() or _inside(a, _footprint_samples(b)).any())
    return overlap and _point_height(a, "bottom") >= _point_height(b, "top") - 0.01


class _Window:
    """One question about the window ``first..last`` of ``scene``: what every label function reads."""

    def __init__(
        self, p: Parsed, scene: Scene, objs: list[SceneObject], last: int, first: int, arm_length_m: float
    ) -> None:
        self.scene, self.objs, self.last, self.first = scene, objs, last, first
        self.arm_length_m = arm_length_m
        self.s, self.task = p.slots, p.task
        self.pos, self.fwd = _me(scene, last)
        self.unit = _PER_METRE[str(self.s.get("unit", "m"))]

    def choice(self, values: list[float], order: str, margin: float) -> dict[str, Any] | None:
        srt = sorted(values)
        gap = srt[1] - srt[0] if order in ("min", "near") else srt[-1] - srt[-2]
        if gap < margin:
            return None
        i = int(np.argmax(values) if order in ("max", "far") else np.argmin(values))
        if self.s.get("form") == "yesno":
            return {"kind": "word", "word": "yes" if i == 0 else "no"}
        return {"kind": "index", "index": i}

    def rights(self) -> list[float]:
        return [_right_offset(self.pos, self.fwd, o) for o in self.objs]

    def bearing(self) -> float | None:
        """The subject's clockwise bearing now, or None for an object too close for a direction label."""
        if float(np.linalg.norm((self.objs[0].center - self.pos)[:2])) < 1.0:
            return None
        return _bearing_cw(self.pos, self.fwd, self.objs[0])


Label = dict[str, Any] | None


def _walked(w: _Window) -> Label:
    xy = np.array([w.scene.base_poses[i][:2, 3] for i in range(w.first, w.last + 1)])
    return {"kind": "mra", "value": float(np.sum(np.hypot(*np.diff(xy, axis=0).T))) * w.unit}


def _distance(w: _Window) -> Label:
    return {"kind": "mra", "value": float(np.linalg.norm(w.objs[0].center - w.pos)) * w.unit}


def _center_distance(w: _Window) -> Label:
    return {"kind": "mra", "value": float(np.linalg.norm(w.objs[0].center - w.objs[1].center)) * w.unit}


def _height_from_ground(w: _Window) -> Label:
    h = _point_height(w.objs[0], str(w.s["point"]))
    return None if h < 0.05 else {"kind": "mra", "value": h * w.unit}


def _height_difference(w: _Window) -> Label:
    d = abs(_point_height(w.objs[0], str(w.s["point"])) - _point_height(w.objs[1], str(w.s["point"])))
    return None if d < 0.15 else {"kind": "mra", "value": d * w.unit}


def _size(dim: str) -> Callable[[_Window], Label]:
    return lambda w: {"kind": "mra", "value": float(getattr(w.objs[0], dim)) * w.unit}


def _closer(w: _Window) -> Label:
    dists = [float(np.linalg.norm(o.center - w.pos)) for o in w.objs]
    return w.choice(dists, str(w.s["order"]), max(0.25, 0.1 * min(dists)))


def _tallest(w: _Window) -> Label:
    return w.choice([float(getattr(o, str(w.s["dim"]))) for o in w.objs], str(w.s["order"]), 0.1)


def _higher(w: _Window) -> Label:
    return w.choice([_point_height(o, str(w.s["point"])) for o in w.objs], str(w.s["order"]), 0.15)


def _above_predicate(w: _Window) -> Label:
    return {"kind": "word", "word": "yes" if above(w.objs[0], w.objs[1]) else "no"}


def _below_predicate(w: _Window) -> Label:
    return {"kind": "word", "word": "yes" if above(w.objs[1], w.objs[0]) else "no"}


def _above_choice(w: _Window) -> Label:
    top = [i for i, j in ((0, 1), (1, 0)) if above(w.objs[i], w.objs[j])]
    if not top:
        return {"kind": "index", "index": None}
    return {"kind": "index", "index": top[0] if w.s["relation"] == "above" else 1 - top[0]}


def _side_of(w: _Window) -> str | None:
    """The subject's side of the other object, or None for a close call."""
    rights = w.rights()
    if abs(rights[0] - rights[1]) < 0.3:
        return None
    return "right" if rights[0] > rights[1] else "left"


def _is_on(side: str) -> Callable[[_Window], Label]:
    def label(w: _Window) -> Label:
        found = _side_of(w)
        return None if found is None else {"kind": "word", "word": "yes" if found == side else "no"}

    return label


def _left_right(w: _Window) -> Label:
    found = _side_of(w)
    return None if found is None else {"kind": "word", "word": found}


def _leftmost(w: _Window) -> Label:
    return w.choice(w.rights(), "max" if w.s["side"] == "right" else "min", 0.3)


def _side_of_me(w: _Window) -> Label:
    r = w.rights()[0]
    if abs(r) < 0.3:
        return None
    side = "right" if r > 0 else "left"
    return {"kind": "word", "word": side if w.s["side"] is None else ("yes" if w.s["side"] == side else "no")}


def _reachable(w: _Window) -> Label:
    stated = w.s["arm_length_m"]
    arm = float(stated) if stated is not None else w.arm_length_m
    d = w.objs[0].nearest_distance(w.pos)
    return None if abs(d - arm) < 0.15 else {"kind": "word", "word": "yes" if d <= arm else "no"}


def _clock(bearing: float | None) -> Label:
    if bearing is None or abs((bearing % 30.0) - 15.0) < 3.0:
        return None
    hour = round(bearing / 30.0) % 12
    return {"kind": "clock", "value": float(12 if hour == 0 else hour)}


def _degrees(bearing: float | None) -> Label:
    if bearing is None or min(bearing, 360.0 - bearing) < 3.0:
        return None
    return {"kind": "deg", "value": bearing}


def _after_turn(w: _Window) -> float | None:
    bearing = w.bearing()
    if bearing is None:
        return None
    turn = float(w.s["angle_deg"]) * (1 if w.s["turn"] == "left" else -1)  # type: ignore[arg-type]
    return (bearing + turn) % 360.0


def _rotate(w: _Window) -> Label:
    bearing = w.bearing()
    if bearing is not None and w.s["direction"] == "ccw":
        bearing = (360.0 - bearing) % 360.0
    return _degrees(bearing)


# The label of each registered task (``spatial.tasks``), by its name: test/spatial/test_spatial_tasks.py
# checks that every task has one.
LABELS: dict[str, Callable[[_Window], Label]] = {
    "walked_distance": _walked,
    "distance_to_camera": _distance,
    "center_distance": _center_distance,
    "height_from_ground": _height_from_ground,
    "height_difference": _height_difference,
    "object_height": _size("height"),
    "object_length": _size("length"),
    "object_width": _size("width"),
    "closer_to_camera": _closer,
    "closest_to_camera": _closer,
    "tallest_choice": _tallest,
    "higher_choice": _higher,
    "above_predicate": _above_predicate,
    "below_predicate": _below_predicate,
    "above_choice": _above_choice,
    "left_predicate": _is_on("left"),
    "right_predicate": _is_on("right"),
    "left_right_choice": _left_right,
    "leftmost_choice": _leftmost,
    "side_of_me": _side_of_me,
    "reachability": _reachable,
    "direction_clock": lambda w: _clock(w.bearing()),
    "direction_degrees": lambda w: _degrees(w.bearing()),
    "future_direction_clock": lambda w: _clock(_after_turn(w)),
    "future_direction_degrees": lambda w: _degrees(_after_turn(w)),
    "rotate_to_face": _rotate,
}


def ground_truth(
    p: Parsed,
    scene: Scene,
    objs: list[SceneObject],
    last: int,
    first: int = 0,
    arm_length_m: float = ARM_LENGTH_M,
) -> dict[str, Any] | None:
    """Label of a question about the window ``first..last`` of ``scene``, or ``None`` for a close call.

    ``objs`` are the scene objects in the task's order (subject first). The label is
    ``{"kind": "mra" | "deg" | "clock", "value": v}`` for quantities (in the asked unit),
    ``{"kind": "index", "index": i}`` for a choice among ``objs`` (``None``: neither), or
    ``{"kind": "word", "word": "yes" | "no" | "left" | "right"}``. ``arm_length_m`` is the arm when the
    question states none.
    """
    return LABELS[p.task](_Window(p, scene, objs, last, first, arm_length_m))
