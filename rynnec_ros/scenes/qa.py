"""Template-based spatial QA generation (RynnEC appendix A.3) over windows of a recording.

The same generator serves two oracles: the exact scene model of a synthetic scene (``gen-scene``) and
the geometric estimate from a real RGB-D bag with masks (``gen-spatial-qa``, for fine-tuning sets
from a robot's own recordings, or consistency checks). The answer *text* comes from the task solvers
in both cases. For a scene model the *label* (``value``, ``answer_index``) comes from ``truth``
(``spatial.truth``: the definitions implemented a second time on the generator's boxes and poses,
never through the solvers), so an evaluation against it cannot agree with the answering code by
construction; a question whose solver answer on the exact scene disagrees with that label is left out
and counted (``GenStats.disagreements``: a definition bug to look at, expected 0). Questions whose
answer is a close call (choices within a small margin, directions on a clock boundary) are skipped
because their labels would be noise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rynnec_ros.core import masks as rle_codec
from rynnec_ros.core.types import Frame, Region, Request
from rynnec_ros.scenes.bagio import DEFAULT_DEPTH_SCALE, read_frames
from rynnec_ros.scenes.dataset import MASKS_FORMAT, load_json
from rynnec_ros.spatial.egocentric import after_turn, bearing_cw_deg, heading, lateral_and_forward
from rynnec_ros.spatial.engine import SpatialEngine
from rynnec_ros.spatial.plan import Parsed, default_parse, parse_question, solve
from rynnec_ros.spatial.solvers import Scene, Undeterminable
from rynnec_ros.spatial.tasks import TASKS, SpatialTask, turn_phrase

_SIZE_TASKS = {"object_height", "object_width", "object_length", "tallest_choice"}
_DIRECTION_TASKS = {
    "direction_clock",
    "direction_degrees",
    "rotate_to_face",
    "future_direction_clock",
    "future_direction_degrees",
}
_TURNS = (90.0, -90.0, 180.0, 45.0, -45.0, 135.0)


@dataclass
class Visibility:
    """Masks of one object on the frames where it is visible (frame index → bool mask)."""

    object_id: int
    label: str
    masks: dict[int, np.ndarray]


@dataclass
class GenParams:
    per_task: int = 5
    min_window: int = 4
    arm_length_m: float = 0.8
    min_mask_pixels: int = 30
    min_direction_distance_m: float = 1.0
    full_window: bool = False
    max_window: int | None = None


@dataclass
class GenStats:
    """What ``generate`` left out because the solver's answer on the exact scene contradicted ``truth``."""

    disagreements: int = 0
    examples: list[dict[str, Any]] = field(default_factory=list)


# ``truth(window, object_ids, parsed)`` → label in ``spatial.truth`` form, or None for a close call.
Truth = Callable[[list[int], list[int], Parsed], "dict[str, Any] | None"]


def _agrees(label: dict[str, Any], ans: Any, order: list[int]) -> bool:
    """Whether a solver answer says what the label says (values within 0.5 %, the same hour, ±0.5°)."""
    kind = label["kind"]
    if kind == "index":
        want = [] if label["index"] is None else [order[label["index"]]]
        return list(ans.object_ids[:1]) == want
    if kind == "word":
        return bool(ans.text.strip().lower().startswith(label["word"]))
    if ans.value is None:
        return False
    if kind == "mra":
        return abs(float(ans.value) - label["value"]) <= 0.005 * abs(label["value"]) + 1e-6
    period = 12.0 if kind == "clock" else 360.0
    d = abs(float(ans.value) - label["value"]) % period
    return min(d, period - d) <= (1e-6 if kind == "clock" else 0.5)


def _touches_border(mask: np.ndarray) -> bool:
    return bool(mask[0].any() or mask[-1].any() or mask[:, 0].any() or mask[:, -1].any())


def is_clear(task: str, scene: Scene, slots: dict, arm_length_m: float, min_dir_m: float) -> bool:
    """Whether the answer is unambiguous enough to be a label (margins on the deciding quantities)."""
    me = scene.me[:3, 3]
    objs = list(scene.objects.values())
    if task in ("closer_to_camera", "closest_to_camera"):
        d = sorted(float(np.linalg.norm(o.center - me)) for o in objs)
        return d[1] - d[0] >= max(0.25, 0.1 * d[0])
    if task == "tallest_choice":
        h = sorted((o.height for o in objs), reverse=True)
        return h[0] - h[1] >= max(0.1, 0.15 * h[1])
    if task == "center_distance":
        return float(np.linalg.norm(objs[0].center - objs[1].center)) >= 0.3
    if task == "height_difference":
        return abs(float(objs[0].center[2] - objs[1].center[2])) >= 0.15
    if task in ("above_predicate", "below_predicate"):
        return abs(float(objs[0].center[2] - objs[1].center[2])) >= 0.2
    if task == "walked_distance":
        return scene.camera_path is not None and len(scene.camera_path) >= 2
    if task == "reachability":
        return abs(objs[0].nearest_distance(me) - arm_length_m) >= 0.15
    fwd = heading(scene.me)
    if task in ("left_predicate", "right_predicate"):
        ra, _ = lateral_and_forward(me, fwd, objs[0].center)
        rb, _ = lateral_and_forward(me, fwd, objs[1].center)
        return abs(ra - rb) >= 0.3
    if task in _DIRECTION_TASKS:
        if float(np.linalg.norm((objs[0].center - me)[:2])) < min_dir_m:
            return False
        b = bearing_cw_deg(me, fwd, objs[0].center)
        if task.startswith("future_"):
            if slots.get("turn") is None or slots.get("angle_deg") is None:
                return False
            angle = float(slots["angle_deg"])
            b = after_turn(b, angle if slots["turn"] == "left" else -angle)
        if task.endswith("clock"):
            return abs((b % 30.0) - 15.0) >= 3.0  # not within 3° of a half-hour boundary
        return min(b, 360.0 - b) >= 3.0  # wrap at 0/360 makes "0 vs 359" unstable
    return True


def _fill(spec: SpatialTask, rng: np.random.Generator, n: int) -> str:
    """A random phrasing of ``spec`` that names exactly ``n`` objects, filled with ``<objectK>``."""
    fitting = [p for p in spec.phrasings if sum(f"{{{k}}}" in p for k in "ABC") == n]
    if not fitting:
        raise ValueError(f"task {spec.name} has no phrasing for {n} objects")
    phrasing = fitting[int(rng.integers(len(fitting)))]
    refs = {k: f"<object{i}>" for i, k in enumerate("ABC")}
    turn = float(_TURNS[int(rng.integers(len(_TURNS)))])
    return phrasing.format(**refs, turn=turn_phrase(turn)).strip()


def generate(
    n_frames: int,
    stamps: Sequence[int],
    visibility: list[Visibility],
    oracle: Callable[[list[int], list[int]], Scene | None],
    params: GenParams,
    rng: np.random.Generator,
    id_prefix: str = "q",
    tasks: Sequence[SpatialTask] = TASKS,
    observable: Callable[[str, list[int], list[int]], bool] | None = None,
    truth: Truth | None = None,
    stats: GenStats | None = None,
) -> list[dict[str, Any]]:
    """Questions per task: random window, random visible objects, random phrasing, oracle answer.

    ``oracle(window_frame_indices, object_ids)`` returns the scene facts with objects keyed 0..n−1
    in the given order, or ``None`` when it cannot describe them. ``observable(task, window,
    object_ids)`` can veto questions about quantities the window does not show (used with the
    scene model, which knows what is hidden). ``truth(window, object_ids, parsed)`` gives the label
    (see the module notes); without it the label is the oracle's answer. Every entry names its
    structured task (``structured``: task and slots, objects subject first).
    """
    out: list[dict[str, Any]] = []
    seen: set[tuple] = set()
    for spec in tasks:
        made = 0
        for _ in range(params.per_task * 12):
            if made >= params.per_task:
                break
            if params.full_window or n_frames <= params.min_window:
                i0, i1 = 0, n_frames - 1
            else:
                hi = min(n_frames, params.max_window or n_frames)
                length = int(rng.integers(min(hi, max(params.min_window, n_frames // 2)), hi + 1))
                i0 = int(rng.integers(0, n_frames - length + 1))
                i1 = i0 + length - 1
            window = list(range(i0, i1 + 1))
            n_obj = int(spec.n_objects[int(rng.integers(len(spec.n_objects)))])
            candidates = []
            for vis in visibility:
                seen_frames = [
                    f for f in window if f in vis.masks and vis.masks[f].sum() >= params.min_mask_pixels
                ]
                if not seen_frames:
                    continue
                if spec.name in _SIZE_TASKS and (
                    len(seen_frames) < 2 or all(_touches_border(vis.masks[f]) for f in seen_frames)
                ):
                    continue
                candidates.append(vis)
            if len(candidates) < n_obj:
                continue
            chosen = (
                [candidates[i] for i in rng.choice(len(candidates), n_obj, replace=False)] if n_obj else []
            )
            key = (spec.name, i0, i1, tuple(v.object_id for v in chosen))
            if key in seen:
                continue
            seen.add(key)
            if observable is not None and not observable(spec.name, window, [v.object_id for v in chosen]):
                continue
            question = _fill(spec, rng, n_obj)
            parsed, _ = parse_question(question, n_obj)
            if parsed is None or parsed.task != spec.name:
                parsed = default_parse(spec.name)
            slots = parsed.slots
            order = parsed.objects if parsed.objects is not None else list(range(n_obj))
            scene = oracle(window, [v.object_id for v in chosen])
            if scene is None or len(scene.objects) != n_obj:
                continue
            try:
                if not is_clear(
                    spec.name, scene, slots, params.arm_length_m, params.min_direction_distance_m
                ):
                    continue
                ans = solve(spec.name, scene, slots, params.arm_length_m)
            except (Undeterminable, ValueError):
                continue
            if spec.kind == "choice" and not ans.object_ids:  # "neither is above the other": no label
                continue
            label = None
            if truth is not None:
                label = truth(window, [chosen[k].object_id for k in order], parsed)
                if label is None:  # a close call by the scene model's own margins
                    continue
                if not _agrees(label, ans, order):
                    if stats is not None:
                        stats.disagreements += 1
                        stats.examples.append({"question": question, "label": label, "solver": ans.text})
                    continue
            entry: dict[str, Any] = {
                "id": f"{id_prefix}{len(out):04d}",
                "task": spec.name,
                "structured": parsed.structured(),
                "question": question,
                "frames": [int(stamps[f]) for f in window],
                "objects": [
                    {
                        "object_id": v.object_id,
                        "label": v.label,
                        "masks": {
                            str(int(stamps[f])): rle_codec.encode(v.masks[f])
                            for f in window
                            if f in v.masks and v.masks[f].any()
                        },
                    }
                    for v in chosen
                ],
                "answer": ans.text,
                "value": None if ans.value is None else round(float(ans.value), 4),
                "unit": ans.unit,
                "options": None,
                "answer_index": None,
            }
            if spec.kind == "choice":
                entry["value"], entry["unit"] = None, None
                entry["answer_index"] = int(ans.object_ids[0])
            elif spec.kind == "yesno":
                entry["options"] = (
                    ["Left", "Right"] if ans.text.startswith(("Left", "Right")) else ["Yes", "No"]
                )
                entry["answer_index"] = 0 if ans.text.startswith(("Yes", "Left")) else 1
            if label is not None:  # the label is the scene model's (it agrees with the text, checked above)
                if label["kind"] == "index":
                    entry["answer_index"] = int(order[label["index"]])
                elif label["kind"] == "word":
                    words = [o.lower() for o in entry["options"]]
                    entry["answer_index"] = words.index(label["word"])
                else:
                    entry["value"] = round(float(label["value"]), 4)
            out.append(entry)
            made += 1
    return out


def geometry_oracle(frames: list[Frame], visibility: list[Visibility], engine: SpatialEngine):
    """Facts of a window estimated by the engine from depth, poses and masks (for real recordings)."""
    by_id = {v.object_id: v for v in visibility}

    def oracle(window: list[int], object_ids: list[int]) -> Scene | None:
        index = {f: i for i, f in enumerate(window)}
        regions = [
            Region(
                object_id=oid,
                label=by_id[oid].label,
                masks={index[f]: m for f, m in by_id[oid].masks.items() if f in index},
            )
            for oid in object_ids
        ]
        request = Request(question="", frames=[frames[f] for f in window], regions=regions)
        try:
            return engine.describe(request)
        except ValueError:
            return None

    return oracle


def generate_from_bag(
    bag: Path | str,
    masks_file: Path | str,
    params: GenParams,
    engine: SpatialEngine,
    seed: int = 0,
    world_frame: str = "odom",
    depth_scale: float = DEFAULT_DEPTH_SCALE,
) -> list[dict[str, Any]]:
    """RynnEC-style spatial QA from a recorded RGB-D bag (MCAP or sqlite3) and per-object masks, answered
    geometrically; ``depth_scale`` is the metres per unit of 16UC1 depth."""
    frames = read_frames(bag, world_frame=world_frame, depth_scale=depth_scale)
    if not frames:
        raise ValueError(f"bag {bag} holds no colour frames")
    data = load_json(masks_file, MASKS_FORMAT)
    index = {f.stamp_ns: i for i, f in enumerate(frames)}
    visibility = []
    for obj in data["objects"]:
        masks = {index[int(s)]: rle_codec.decode(rle) for s, rle in obj["masks"].items() if int(s) in index}
        visibility.append(Visibility(int(obj["object_id"]), obj.get("label", ""), masks))
    stamps = [f.stamp_ns for f in frames]
    return generate(
        len(frames),
        stamps,
        visibility,
        geometry_oracle(frames, visibility, engine),
        params,
        np.random.default_rng(seed),
        id_prefix="g",
    )
