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

from typing import Any

import numpy as np

from rynnec_ros.scenes.scene import Scene, SceneObject
from rynnec_ros.spatial.parse import Parsed

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
    pos, fwd = _me(scene, last)
    s, task = p.slots, p.task
    unit = _PER_METRE[str(s.get("unit", "m"))]

    def choice(values: list[float], order: str, margin: float) -> dict[str, Any] | None:
        srt = sorted(values)
        gap = srt[1] - srt[0] if order in ("min", "near") else srt[-1] - srt[-2]
        if gap < margin:
            return None
        i = int(np.argmax(values) if order in ("max", "far") else np.argmin(values))
        if s.get("form") == "yesno":
            return {"kind": "word", "word": "yes" if i == 0 else "no"}
        return {"kind": "index", "index": i}

    if task == "walked_distance":
        xy = np.array([scene.base_poses[i][:2, 3] for i in range(first, last + 1)])
        return {"kind": "mra", "value": float(np.sum(np.hypot(*np.diff(xy, axis=0).T))) * unit}
    if task == "distance_to_camera":
        return {"kind": "mra", "value": float(np.linalg.norm(objs[0].center - pos)) * unit}
    if task == "center_distance":
        return {"kind": "mra", "value": float(np.linalg.norm(objs[0].center - objs[1].center)) * unit}
    if task == "height_from_ground":
        h = _point_height(objs[0], str(s["point"]))
        return None if h < 0.05 else {"kind": "mra", "value": h * unit}
    if task == "height_difference":
        d = abs(_point_height(objs[0], str(s["point"])) - _point_height(objs[1], str(s["point"])))
        return None if d < 0.15 else {"kind": "mra", "value": d * unit}
    if task in ("object_height", "object_length", "object_width"):
        return {"kind": "mra", "value": float(getattr(objs[0], task.split("_")[1])) * unit}
    if task in ("closer_to_camera", "closest_to_camera"):
        dists = [float(np.linalg.norm(o.center - pos)) for o in objs]
        return choice(dists, str(s["order"]), max(0.25, 0.1 * min(dists)))
    if task == "tallest_choice":
        v = [float(getattr(o, str(s["dim"]))) for o in objs]
        return choice(v, str(s["order"]), 0.1)
    if task == "higher_choice":
        v = [_point_height(o, str(s["point"])) for o in objs]
        return choice(v, str(s["order"]), 0.15)
    if task in ("above_predicate", "below_predicate"):
        a, b = (objs[0], objs[1]) if task == "above_predicate" else (objs[1], objs[0])
        return {"kind": "word", "word": "yes" if above(a, b) else "no"}
    if task == "above_choice":
        top = [i for i, j in ((0, 1), (1, 0)) if above(objs[i], objs[j])]
        if not top:
            return {"kind": "index", "index": None}
        return {"kind": "index", "index": top[0] if s["relation"] == "above" else 1 - top[0]}
    rights = [_right_offset(pos, fwd, o) for o in objs]
    if task in ("left_predicate", "right_predicate", "left_right_choice"):
        if abs(rights[0] - rights[1]) < 0.3:
            return None
        side = "right" if rights[0] > rights[1] else "left"
        if task == "left_right_choice":
            return {"kind": "word", "word": side}
        return {"kind": "word", "word": "yes" if side == task.split("_")[0] else "no"}
    if task == "leftmost_choice":
        return choice(rights, "max" if s["side"] == "right" else "min", 0.3)
    if task == "side_of_me":
        if abs(rights[0]) < 0.3:
            return None
        side = "right" if rights[0] > 0 else "left"
        return {"kind": "word", "word": side if s["side"] is None else ("yes" if s["side"] == side else "no")}
    if task == "reachability":
        arm = float(s["arm_length_m"]) if s["arm_length_m"] is not None else arm_length_m
        d = objs[0].nearest_distance(pos)
        return None if abs(d - arm) < 0.15 else {"kind": "word", "word": "yes" if d <= arm else "no"}
    if float(np.linalg.norm((objs[0].center - pos)[:2])) < 1.0:
        return None
    bearing = _bearing_cw(pos, fwd, objs[0])
    if task.startswith("future_"):
        turn = float(s["angle_deg"]) * (1 if s["turn"] == "left" else -1)  # type: ignore[arg-type]
        bearing = (bearing + turn) % 360.0
    if task == "rotate_to_face" and s["direction"] == "ccw":
        bearing = (360.0 - bearing) % 360.0
    if task.endswith("clock"):
        if abs((bearing % 30.0) - 15.0) < 3.0:
            return None
        hour = round(bearing / 30.0) % 12
        return {"kind": "clock", "value": float(12 if hour == 0 else hour)}
    if min(bearing, 360.0 - bearing) < 3.0:
        return None
    return {"kind": "deg", "value": bearing}
