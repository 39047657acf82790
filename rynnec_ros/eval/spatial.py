"""Spatial evaluation of the geometric engine: one scorer and one aggregation for every spatial test set.

Two sources of questions, scored the same way (``score``, ``summarise``, ``format_table``):

* ``evaluate_paraphrases(half)`` (``rynnec-ros eval-paraphrases``): the paraphrase sets
  (``eval/data/paraphrases``: ``dev`` = the parser's development set, ``heldout`` = the second set written
  blind) asked on scenes rendered in memory; labels from the scene model (``spatial.truth``).
* ``evaluate(bag, questions)`` (``rynnec-ros eval spatial``): a question file. Files written by
  ``gen-scene`` (``"source": "scene_model"``) carry labels from ``spatial.truth`` on the generator's
  scene model, so their scores are **accuracy**. Files written by ``gen-spatial-qa`` (``"source":
  "geometry"``) carry labels that the same engine estimated from the same bag: scoring the engine on
  them measures only **consistency** (routing of the template phrasings, determinism), never accuracy;
  the result says so (``"labels"``).

Scores follow RynnEC-Bench (``rynnec_ros.eval.metrics``, paper protocol): MRA over θ ∈ {0.50…0.95} for
lengths, RoA (1 − wrapped error / 90°, o'clock with period 12 and 3 h reference) for directions,
accuracy for choices and yes/no. A question is scored only when it was routed to its task with its
slots (the whole canonical structured form matches); otherwise, or when the geometry cannot answer,
it scores 0. Heights are reported per reference point (``height_from_ground point=top`` …).
"""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from rynnec_ros.core.types import Answer, Frame, Predictor, Region, Request
from rynnec_ros.eval.metrics import mean_relative_accuracy, rotational_accuracy
from rynnec_ros.scenes.bagio import read_frames
from rynnec_ros.scenes.dataset import QA_FORMAT, build_request, load_json
from rynnec_ros.scenes.scene import Scene, SceneObject, degrade_depth, make_scene, render
from rynnec_ros.scenes.synth import observability
from rynnec_ros.scenes.truth import ARM_LENGTH_M, ground_truth
from rynnec_ros.spatial import confirm
from rynnec_ros.spatial.engine import SpatialEngine, SpatialParams
from rynnec_ros.spatial.parse import object_references
from rynnec_ros.spatial.plan import (
    Parsed,
    SpatialPlan,
    Unanswerable,
    parse_question,
    parse_structured,
    resolve_objects,
)
from rynnec_ros.spatial.points import backproject, transform
from rynnec_ros.spatial.tasks import TASK_BY_NAME

from .paraphrases import families, manifest, split

LABELS = {
    "scene_model": "accuracy (labels from the scene generator's model)",
    "geometry": "consistency only (labels estimated by this engine from the same bag; not accuracy)",
}


# ------------------------------------------------------------------ scoring (one implementation)
def score(gt: dict[str, Any], answer: Answer, object_ids: list[int]) -> float:
    """Score of a geometric answer against a label (``spatial.truth`` form).

    ``object_ids[i]`` is the object id of label index ``i``. A label with a ``unit`` scores 0 when the
    answer comes in another unit.
    """
    kind = gt["kind"]
    if kind == "word":
        return float(answer.text.strip().lower().startswith(gt["word"]))
    if kind == "index":
        want = [] if gt["index"] is None else [object_ids[gt["index"]]]
        return float(list(answer.object_ids[:1]) == want)
    if answer.value is None or ("unit" in gt and answer.unit != gt["unit"]):
        return 0.0
    if kind == "mra":
        return mean_relative_accuracy(float(answer.value), float(gt["value"]))
    if kind == "clock":
        return rotational_accuracy(float(answer.value), float(gt["value"]), 12.0, 3.0)
    return rotational_accuracy(float(answer.value), float(gt["value"]), 360.0, 90.0)


def label_of_question(question: dict[str, Any]) -> tuple[dict[str, Any], list[int]]:
    """A question file entry's label in ``spatial.truth`` form, with the object ids its indices name."""
    ids = [int(o["object_id"]) for o in question.get("objects", [])]
    kind = TASK_BY_NAME[question["task"]].kind
    if kind == "choice":
        return {"kind": "index", "index": question["answer_index"]}, ids
    if kind == "yesno":
        return {"kind": "word", "word": question["options"][question["answer_index"]].lower()}, ids
    unit = question["unit"]
    metric = {"oclock": "clock", "deg": "deg"}.get(unit, "mra")
    return {"kind": metric, "value": float(question["value"]), "unit": unit}, ids


def _metric(task: str) -> str:
    return {"mra": "MRA", "roa": "RoA"}.get(TASK_BY_NAME[task].metric, "accuracy")


def _record(
    task: str, expected: str, question: str, parsed: Parsed | None, answer: Answer, value: float
) -> dict[str, Any]:
    got = None if parsed is None else parsed.structured()
    return {
        "task": task,
        "question": question,
        "expected": expected,
        "parsed": got,
        "routed": parsed is not None and parsed.task == task,
        "slots_ok": got == expected,
        "metric": _metric(task),
        "score": value if got == expected else 0.0,
        "answer": answer.text,
        "value": answer.value,
        "unit": answer.unit,
        "reason": answer.reason,
    }


# ------------------------------------------------------------------ question files (eval spatial)
def evaluate(
    bag: Path | str,
    questions_file: Path | str,
    params: SpatialParams | None = None,
    use_task: bool = False,
    world_frame: str = "odom",
) -> dict[str, Any]:
    """Per-question records and per-task summary of one bag's question file; ``labels`` says what the
    scores mean (accuracy for ``gen-scene`` files, consistency only for ``gen-spatial-qa`` files)."""
    data = load_json(questions_file, QA_FORMAT)
    params = params or SpatialParams(arm_length_m=float(data.get("arm_length_m", 0.8)))
    frames = read_frames(bag, world_frame=world_frame)
    by_stamp = {f.stamp_ns: f for f in frames}
    engine = SpatialEngine(params)
    records = []
    for q in data["questions"]:
        request = build_request(q, by_stamp, use_task)
        # Files from gen-scene name the slots (``structured``); older files only the task.
        expected = parse_structured(q.get("structured") or q["task"]).structured()
        t0 = time.perf_counter()
        planned = engine.plan(request)
        parsed = planned.parsed
        if isinstance(planned, Unanswerable) and parsed is None:
            answer = Answer(text="", reason=planned.reason)
        else:
            answer = engine.solve(request, planned, t0)
        if "structured" not in q and parsed is not None and parsed.task == q["task"]:
            expected = parsed.structured()  # the slots cannot be checked: routing is
        gt, ids = label_of_question(q)
        rec = _record(q["task"], expected, q["question"], parsed, answer, score(gt, answer, ids))
        rec.update(
            id=q["id"], gt=q["answer"], gt_value=q["value"], seconds=round(time.perf_counter() - t0, 4)
        )
        records.append(rec)
    source = str(data.get("source", "geometry"))
    return {
        "labels": LABELS.get(source, LABELS["geometry"]),
        "per_task": summarise(records),
        "records": records,
    }


# ------------------------------------------------------------------ paraphrase sets on rendered scenes
def _frames(
    scene: Scene, noise: float, holes: float, seed: int
) -> tuple[list[Frame], list[np.ndarray], dict[int, dict[int, np.ndarray]]]:
    """Degraded frames, the instance ids per frame and each object's visible surface (clean depth)."""
    rng = np.random.default_rng(seed + 7)
    frames, ids = [], []
    seen: dict[int, dict[int, np.ndarray]] = {o.object_id: {} for o in scene.objects}
    for i in range(len(scene.base_poses)):
        T = scene.world_T_camera(i)
        r = render(scene, T)
        depth = degrade_depth(r.depth, noise, holes, rng)
        frames.append(Frame(rgb=r.rgb, stamp_ns=i, depth=depth, K=scene.camera.K, world_T_camera=T))
        ids.append(r.ids)
        for oid in seen:
            rows, cols = np.nonzero(r.ids == oid)
            if rows.size:
                seen[oid][i] = transform(T, backproject(r.depth, scene.camera.K, rows, cols))
    return frames, ids, seen


def _well_seen(scene: Scene, ids: list[np.ndarray], min_px: int) -> list[SceneObject]:
    """Objects seen with a sizeable mask on several frames away from the image border on one."""
    out = []
    for o in scene.objects:
        masks = [m == o.object_id for m in ids]
        big = [m for m in masks if m.sum() >= min_px]
        inner = [m for m in big if not (m[0].any() or m[-1].any() or m[:, 0].any() or m[:, -1].any())]
        if len(big) >= 3 and inner:
            out.append(o)
    return out


def evaluate_paraphrases(
    half: str,
    seeds: tuple[int, ...] = (0, 1, 2),
    noise: float = 0.0,
    holes: float = 0.0,
    frames: int = 10,
    width: int = 320,
    height: int = 240,
) -> dict[str, Any]:
    """Ask every paraphrase of one set on every seed's scene; per-task scores and routing errors."""
    engine = SpatialEngine(SpatialParams(arm_length_m=ARM_LENGTH_M))
    records: list[dict[str, Any]] = []
    for seed in seeds:
        scene = make_scene(seed, frames, width, height)
        fr, ids, surfaces = _frames(scene, noise, holes, seed)
        # As in gen-scene: a size or height is asked only when the views span 90 % of it (the width of
        # a cabinet against a wall is seen from nowhere).
        observable = observability(scene, surfaces)
        seen = _well_seen(scene, ids, max(20, width * height // 1500))
        rng = np.random.default_rng(seed)
        vase = next((o for o in seen if o.label == "vase"), None)
        table = next((o for o in seen if o.label == "table"), None)
        for family, expected, question in split(half):
            want = parse_structured(expected)
            named = list(dict.fromkeys(r for r in object_references(question) if r is not None))
            # The request holds regions 0 .. the highest index named (a question may name <object2> alone).
            n = 1 + max(named, default=-1)
            if want.task != "walked_distance" and len(seen) < n:
                continue
            if (
                family == "above_below"
                and len(named) == 2
                and vase is not None
                and table is not None
                and rng.random() < 0.6
            ):
                chosen = [vase, table] if rng.random() < 0.5 else [table, vase]
            elif want.task == "height_from_ground" and want.slots["point"] == "bottom" and vase is not None:
                chosen = [vase]  # everything else stands on the floor: a bottom height of 0 has no MRA
            else:
                chosen = [seen[i] for i in rng.choice(len(seen), len(named), replace=False)] if named else []
            # The named indices get the chosen objects in index order; unnamed ones other seen objects.
            others = iter(o for o in seen if all(o is not c for c in chosen))
            by_index = dict(zip(sorted(named), chosen, strict=True))
            pick = [by_index[k] if k in by_index else next(others) for k in range(n)]
            regions = [
                Region(
                    o.object_id, {i: m == o.object_id for i, m in enumerate(ids) if (m == o.object_id).any()}
                )
                for o in pick
            ]
            order = want.objects if want.objects is not None else named
            gt = ground_truth(want, scene, [pick[k] for k in order], len(fr) - 1)
            if gt is None or not observable(want.task, list(range(len(fr))), [o.object_id for o in chosen]):
                continue
            request = Request(question=question, frames=fr, regions=regions)
            t0 = time.perf_counter()
            planned = engine.plan(request)
            answer = engine.solve(request, planned, t0)
            parsed = planned.parsed
            seconds = time.perf_counter() - t0
            value = score(gt, answer, [pick[k].object_id for k in order])
            rec = _record(want.task, want.structured(), question, parsed, answer, value)
            rec.update(seed=seed, family=family, seconds=round(seconds, 4))
            records.append(rec)
    return {"half": half, "noise": noise, "holes": holes, "per_task": summarise(records), "records": records}


def readings(half: str) -> dict[str, dict[str, Any]]:
    """How each set of one split is read, scene-free: per set the questions read as labelled, the
    *silent wrong* ones (read as another task, slot or subject: answered confidently, wrongly) and the
    refusals (no reading), with the wrong and refused questions listed. Issue 24 counts the two apart:
    a refusal goes to the model or back to the planner, a silent wrong answer goes to the robot."""
    out: dict[str, dict[str, Any]] = {}
    for name in manifest()["splits"][half]:
        wrong: list[dict[str, str]] = []
        refused: list[dict[str, str]] = []
        n = 0
        for family, entries in families(name).items():
            for expected, question in entries:
                n += 1
                parsed, why = parse_question(question)
                want = parse_structured(expected).structured()
                if parsed is None:
                    refused.append({"family": family, "expected": want, "question": question, "why": why})
                elif parsed.structured() != want:
                    wrong.append({"family": family, "expected": want, "read": parsed.structured(),
                                  "question": question})
        out[name] = {"n": n, "right": n - len(wrong) - len(refused), "silent_wrong": len(wrong),
                     "refused": len(refused), "wrong": wrong, "refusals": refused}
    return out


def confirmed_readings(half: str, reader: Predictor, every: int = 1) -> dict[str, Any]:
    """What a second reader (``spatial.confirm``: the model scores the rules' reading against its
    neighbours) does to one split's readings, on every ``every``-th question the rules read: how many
    right readings it confirms and how many it vetoes (the refusals it would add), how many silent wrong
    ones it vetoes (caught) and how many it lets through. The question is asked on one blank frame with a
    whole-frame region per object it names: this measures reading the words, not the video."""
    frame = Frame(rgb=np.zeros((224, 224, 3), np.uint8))
    counts = {"asked": 0, "right_confirmed": 0, "right_vetoed": 0, "wrong_vetoed": 0, "wrong_confirmed": 0}
    for i, (_, expected, question) in enumerate(split(half)):
        parsed, _why = parse_question(question)
        if parsed is None or i % every:
            continue
        n = max((r + 1 for r in object_references(question) if r is not None), default=0)
        regions = [Region(k, {0: np.ones((224, 224), bool)}) for k in range(n)]
        objects = resolve_objects(parsed, question, n)
        options = confirm.candidates(SpatialPlan(parsed, objects, parsed.reading(objects)))
        request = Request(confirm.prompt(question), [frame], regions, options=[" " + o for o in options])
        verdict = confirm.judge(options, list(reader.score_options(request)))
        right = parsed.structured() == parse_structured(expected).structured()
        key = ("right_" if right else "wrong_") + ("confirmed" if verdict.agreed else "vetoed")
        counts[key] += 1
        counts["asked"] += 1
    return {"half": half, "every": every, **counts}


# ------------------------------------------------------------------ aggregation (one implementation)
def _row(record: dict[str, Any]) -> str:
    """Table row of a record: its task, split by reference point for heights (top/centre/bottom each)."""
    want = parse_structured(record["expected"])
    if "point" in want.slots:
        return f"{want.task} point={want.slots['point']}"
    return want.task


def summarise(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per task (heights per reference point): metric, n, mean score, unanswered, mis-routed, slot errors.

    ``unanswered``: routed with the right slots but no answer (the geometry gave a reason);
    ``misrouted``: a different task or none; ``slot_errors``: the right task with a wrong slot.
    """
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        groups[_row(r)].append(r)
    return {
        task: {
            "metric": rs[0]["metric"],
            "n": len(rs),
            "score": round(sum(r["score"] for r in rs) / len(rs), 4),
            "unanswered": sum(1 for r in rs if r["slots_ok"] and r.get("reason")),
            "misrouted": sum(1 for r in rs if not r["routed"]),
            "slot_errors": sum(1 for r in rs if r["routed"] and not r["slots_ok"]),
        }
        for task, rs in sorted(groups.items())
    }


def overall(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Mean score and count per metric over all records."""
    out: dict[str, dict[str, float]] = {}
    for metric in ("MRA", "RoA", "accuracy"):
        rs = [r["score"] for r in records if r["metric"] == metric]
        if rs:
            out[metric] = {"n": len(rs), "score": round(sum(rs) / len(rs), 4)}
    return out


def format_table(per_task: dict[str, dict[str, Any]]) -> str:
    """Plain-text per-task table (the issue's report form)."""
    lines = [f"{'task':<34}{'metric':<10}{'n':>5}{'score':>8}{'unans.':>8}{'misrouted':>10}{'slot err':>9}"]
    for task, s in per_task.items():
        lines.append(
            f"{task:<34}{s['metric']:<10}{s['n']:>5}{s['score']:>8.3f}{s['unanswered']:>8}"
            f"{s['misrouted']:>10}{s['slot_errors']:>9}"
        )
    return "\n".join(lines)
