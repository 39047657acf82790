"""``eval spatial``: answer every question of a spatial QA file through the geometric engine and score it.

Scores follow RynnEC-Bench (``rynnec_ros.eval.metrics``, paper protocol): MRA over θ ∈ {0.50…0.95} for
lengths, RoA (1 − wrapped error / 90°, o'clock as 30° per hour) for directions, accuracy for choices and
yes/no. A question the geometry cannot answer scores 0 and is counted as ``unanswered``. By default
the task is recognised from the question text (so routing is evaluated too); ``use_task`` passes the
file's task as the structured field instead.
"""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from rynnec_ros.core.types import Answer
from rynnec_ros.spatial.bagio import read_frames
from rynnec_ros.spatial.dataset import QA_FORMAT, build_request, load_json
from rynnec_ros.spatial.engine import SpatialEngine, SpatialParams
from rynnec_ros.spatial.templates import TASK_BY_NAME

_DEG_PER_HOUR = 30.0


def score_answer(question: dict[str, Any], answer: Answer) -> float:
    """Score of one geometric answer against the question's ground truth."""
    from rynnec_ros.eval.metrics import mean_relative_accuracy, rotational_accuracy

    spec = TASK_BY_NAME[question["task"]]
    if spec.kind == "choice":
        if not answer.object_ids:
            return 0.0
        return float(answer.object_ids[0] == question["objects"][question["answer_index"]]["object_id"])
    if spec.kind == "yesno":
        said = answer.text.strip().lower()
        want = question["options"][question["answer_index"]].lower()
        return float(said.startswith(want))
    if answer.value is None or answer.unit != question["unit"]:
        return 0.0
    gt = float(question["value"])
    if spec.metric == "mra":
        return mean_relative_accuracy(float(answer.value), gt)
    scale = _DEG_PER_HOUR if question["unit"] == "oclock" else 1.0
    return rotational_accuracy(float(answer.value) * scale, gt * scale)


def evaluate(
    bag: Path | str,
    questions_file: Path | str,
    params: SpatialParams | None = None,
    use_task: bool = False,
    world_frame: str = "odom",
) -> dict[str, Any]:
    """Per-question records and per-task summary (metric, mean score, counts, routing accuracy)."""
    data = load_json(questions_file, QA_FORMAT)
    params = params or SpatialParams(arm_length_m=float(data.get("arm_length_m", 0.8)))
    frames = read_frames(bag, world_frame=world_frame)
    by_stamp = {f.stamp_ns: f for f in frames}
    engine = SpatialEngine(params)
    records = []
    for q in data["questions"]:
        request = build_request(q, by_stamp, use_task)
        t0 = time.perf_counter()
        parsed, why = engine.understand(request)
        recognised = None if parsed is None else parsed.task
        answer = Answer(text="", reason=why) if parsed is None else engine.answer(request)
        records.append(
            {
                "id": q["id"],
                "task": q["task"],
                "recognised": recognised,
                "question": q["question"],
                "gt": q["answer"],
                "gt_value": q["value"],
                "unit": q["unit"],
                "pred": answer.text,
                "pred_value": answer.value,
                "pred_unit": answer.unit,
                "reason": answer.reason,
                "score": score_answer(q, answer) if recognised == q["task"] else 0.0,
                "seconds": round(time.perf_counter() - t0, 4),
            }
        )
    return {"per_task": summarise(records), "records": records}


def summarise(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Mean score per task with the metric name, counts, unanswered and mis-routed questions."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        groups[r["task"]].append(r)
    out = {}
    for task in [t for t in TASK_BY_NAME if t in groups]:
        rs = groups[task]
        out[task] = {
            "metric": {"mra": "MRA", "roa": "RoA", "accuracy": "accuracy"}[TASK_BY_NAME[task].metric],
            "n": len(rs),
            "score": sum(r["score"] for r in rs) / len(rs),
            "unanswered": sum(1 for r in rs if r["reason"]),
            "misrouted": sum(1 for r in rs if r["recognised"] != task),
        }
    return out


def format_table(per_task: dict[str, dict[str, Any]]) -> str:
    lines = [f"{'task':<26}{'metric':<10}{'n':>5}{'score':>8}{'unans.':>8}{'misrouted':>10}"]
    for task, s in per_task.items():
        lines.append(
            f"{task:<26}{s['metric']:<10}{s['n']:>5}{s['score']:>8.3f}{s['unanswered']:>8}{s['misrouted']:>10}"
        )
    return "\n".join(lines)
