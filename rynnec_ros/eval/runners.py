"""Run a benchmark against the engine or the running node, resumably, and score every item.

Results are appended to ``results.jsonl`` one item at a time (with their scores), so an interrupted
run resumes where it stopped and a finished one can be re-reported without touching the model.
Items run in dataset order; ``limit`` keeps the first N of each file (each RynnEC-Bench subset, each
RoboBench task folder) so a small run still covers every part of the benchmark.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rynnec_ros.core.parsing import parse_option
from rynnec_ros.core.types import Answer, Frame, Predictor, Region, Request
from rynnec_ros.eval import metrics, robobench
from rynnec_ros.eval.datasets import EmbSpatialItem, RoboBenchItem, RynnECItem
from rynnec_ros.eval.judges import BINARY, GRADED, Judge

# ----------------------------------------------------------------------------------------------------
# Results file


class ResultsFile:
    """Append-only JSONL of scored items keyed by ``key``; the keys already present are skipped."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: dict[str, dict] = {}
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        lines = text.splitlines()
        rewrite = bool(text) and not text.endswith("\n")
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                if n < len(lines):
                    raise ValueError(f"{path}:{n} is not valid JSON: {exc}") from exc
                lines.pop()  # cut short by an interrupted run: dropped, so the item is run again
                rewrite = True
                break
            self.records[str(rec["key"])] = rec
        if rewrite:
            path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")

    def done(self, key: str) -> bool:
        return key in self.records

    def add(self, record: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.records[str(record["key"])] = record

    def in_order(self, keys: Iterable[str]) -> list[dict]:
        return [self.records[k] for k in keys if k in self.records]


def _progress(items: Sequence[Any], desc: str, enabled: bool) -> Iterator[Any]:
    from tqdm import tqdm

    yield from tqdm(items, desc=desc, unit="item", disable=not enabled)


def _first_n(groups: dict[str, list[Any]], limit: int | None) -> list[Any]:
    out: list[Any] = []
    for name in groups:
        out.extend(groups[name] if limit is None else groups[name][:limit])
    return out


def _safe_call(fn: Callable[[], Answer]) -> tuple[Answer, str]:
    """Upstream scores an item whose inference fails as an empty answer; keep the reason visible."""
    try:
        return fn(), ""
    except ValueError as exc:
        return Answer(text=""), str(exc)


# ----------------------------------------------------------------------------------------------------
# RynnEC-Bench

NUMERICAL_TYPES = {
    "camera_rotation",
    "camerall_distance",
    "distance_to_camera",
    "distance_to_camera_2",
    "future_direction_to_camera_rotate",
    "height_data",
    "height_from_ground",
    "center_distance",
}
# RynnEC-Bench object-property types in the paper's Fig. 5a order (reports list them in this order).
PROPERTY_TYPES = [
    "category",
    "color",
    "material",
    "shape",
    "state",
    "position",
    "function",
    "surface detail",
    "size",
    "counting",
]
# Open answers are judged 0-5; counting has one right number and is judged binary, like the
# remaining close-ended types.
GRADED_TYPES = {*PROPERTY_TYPES, "universal"} - {"counting"}
SPATIAL_ABILITY = {
    "Trajectory Review": ["camera_rotation", "camerall_distance"],
    "Ego Direction": [
        "relative_direction_to_camera",
        "distance_to_camera",
        "direction_to_camera",
        "direction_to_camera_3",
        "relative_direction_to_camera_2",
    ],
    "Ego Distance": [
        "distance_to_camera_choice_3",
        "distance_to_camera_2",
        "relative_distance_to_object_choice_2",
    ],
    "Movement Imagery": ["future_direction_to_camera", "future_direction_to_camera_rotate"],
    "Spatial Imagery": ["future_direction_object_3"],
    "Object Size": [
        "height_data",
        "tall_choice_3",
        "small_predicate_3",
        "tall_predicate",
        "tall_choice",
        "short_predicate",
        "short_choice",
        "big_predicate",
        "small_predicate",
    ],
    "Object Height": ["height_from_ground"],
    "Object Distance": ["distance_compare", "center_distance"],
    "Absolute Position": ["above_predicate", "above_choice", "below_predicate", "below_choice"],
    "Relative Position": ["between", "directly_above"],
}
TABLE_COLUMN = {  # Table 2 of the paper: fine abilities → reported columns
    "Trajectory Review": "Ego His.",
    "Ego Direction": "Ego Pres.",
    "Ego Distance": "Ego Pres.",
    "Movement Imagery": "Ego Fut.",
    "Spatial Imagery": "Ego Fut.",
    "Object Size": "World Size",
    "Object Height": "World Size",
    "Object Distance": "World Dis.",
    "Absolute Position": "World PR",
    "Relative Position": "World PR",
}
_ABILITY_OF = {t: a for a, types in SPATIAL_ABILITY.items() for t in types}
SEG_COLUMN = {"direct referring": "Seg. DR", "situational referring": "Seg. SR"}


def spatial_ability(type_: str) -> str:
    return _ABILITY_OF.get(type_, "Other")


# Every type the released ``SCORE_TYPE`` table routes; the released scorer gives any other type 0.
RELEASED_TYPES = (
    {t for types in SPATIAL_ABILITY.values() for t in types} | set(PROPERTY_TYPES) | {"universal"}
)


def score_kind(type_: str, protocol: str = "upstream") -> str | None:
    """How an item is scored (the released ``evaluate`` routing): numerical, binary or graded judge.

    Under the upstream protocol a type outside the released table has no route (None: scored 0, as
    the released ``calculate_score`` raises a KeyError that its loop turns into 0).
    """
    if protocol == "upstream" and type_ not in RELEASED_TYPES:
        return None
    if type_ in NUMERICAL_TYPES:
        return "numerical"
    return GRADED if type_ in GRADED_TYPES else BINARY


def _regions(item: RynnECItem) -> tuple[list[np.ndarray], list[int], list[int]]:
    masks = item.decode_masks()
    return masks, item.mask_frame_indices, [m.object_index for m in item.masks]


def run_rynnec_item(
    item: RynnECItem, model: Predictor, judge: Judge, protocol: str, max_new_tokens: int
) -> dict:
    frames = item.load_frames()
    base = {"key": item.key, "subset": item.subset, "type": item.type, "video_id": item.video_id}
    if item.subset == "object_segmentation":
        return {**base, **_score_segmentation(item, frames, model)}
    if item.answer is None:
        raise ValueError(f"{item.key} has no reference answer")
    masks, frame_idx, obj_ids = _regions(item) if item.masks else ([], [], [])
    ans, error = _safe_call(
        lambda: model.answer(
            Request(
                item.question,
                [Frame(f) for f in frames],
                regions=[
                    Region(o, {fi: m for m, fi, oo in zip(masks, frame_idx, obj_ids, strict=True) if oo == o})
                    for o in dict.fromkeys(obj_ids)
                ],
                max_new_tokens=max_new_tokens,
            )
        )
    )
    rec: dict[str, Any] = {
        **base,
        "class_name": item.class_name,
        "question": item.question,
        "answer": item.answer,
        "prediction": ans.text,
        "error": error,
    }
    if item.subset == "spatial_cognition":
        rec["ability"] = spatial_ability(item.type)
        rec["column"] = TABLE_COLUMN.get(rec["ability"], "Other")
    else:
        rec["column"] = "Object Properties"
    return {**rec, **score_rynnec_answer(rec, judge, protocol)}


def score_rynnec_answer(rec: dict, judge: Judge, protocol: str) -> dict:
    """Score fields of a textual/numerical record under ``protocol`` (also used to re-score on resume)."""
    kind = score_kind(rec["type"], protocol)
    out: dict[str, Any] = {"score_kind": kind, "protocol": protocol}
    if kind is None:
        return {**out, "score": 0.0, "judge": "none", "detail": "type not in the released SCORE_TYPE: 0"}
    if kind == "numerical":
        ns = metrics.numeric_score(rec["prediction"], rec["answer"], protocol)
        return {
            **out,
            "score": ns.score,
            "metric": ns.metric,
            "detail": ns.reason,
            "judge": "numeric:" + protocol,
        }
    verdict = judge.judge(rec["question"], rec["answer"], rec["prediction"], kind)
    return {
        **out,
        "score": verdict.score,
        "detail": verdict.raw,
        "judge": judge.name,
        "judge_parsed": verdict.parsed,
    }


def _score_segmentation(item: RynnECItem, frames: list[np.ndarray], model: Predictor) -> dict:
    """J, F and J&F of one referring expression; a failed inference has ``score: None``.

    The released ``eval_seg.py`` drops an item whose inference raises from its J&F means; the reports
    do the same for the segmentation columns and count it as 0 in Object Mean, as the paper's Table 2
    does for a model without segmentation.
    """
    gt: list[np.ndarray | None] = [None] * len(frames)
    for m, mask in zip(item.masks, item.decode_masks(), strict=True):
        h, w = frames[m.frame_index].shape[:2]
        if mask.shape != (h, w):
            raise ValueError(
                f"{item.key}: mask {mask.shape} does not match frame {m.frame_index} size {(h, w)}"
            )
        prev = gt[m.frame_index]
        gt[m.frame_index] = mask if prev is None else (prev | mask)
    for i, f in enumerate(frames):
        if gt[i] is None:
            gt[i] = np.zeros(f.shape[:2], dtype=bool)
    rec: dict[str, Any] = {
        "question": item.question,
        "column": SEG_COLUMN.get(item.type.lower(), "Seg. " + item.type),
        "score_kind": "J&F",
    }
    ans, error = _safe_call(
        lambda: model.segment(Request(item.question, [Frame(f) for f in frames], max_new_tokens=64))
    )
    if error:
        return {**rec, "prediction": "", "j": None, "f": None, "score": None, "error": error}
    pred: list[np.ndarray | None] = list(ans.masks) if ans.masks else [None] * len(frames)
    if len(pred) != len(frames):
        raise ValueError(f"{item.key}: {len(pred)} predicted masks for {len(frames)} frames")
    pred = [_fit(p, g.shape) for p, g in zip(pred, gt, strict=True)]  # type: ignore[union-attr]
    j = metrics.global_iou(pred, gt)
    f = metrics.mean_boundary_f(pred, gt, item.mask_frame_indices)
    return {
        **rec,
        "prediction": ans.text,
        "j": j,
        "f": f,
        "score": metrics.j_and_f(j, f),
        "error": ans.reason,
    }


def _fit(mask: np.ndarray | None, shape: tuple[int, ...]) -> np.ndarray | None:
    """Predictions are resized to the ground-truth size (nearest), as the released scorer does."""
    if mask is None or mask.shape == shape:
        return mask
    import cv2

    return cv2.resize(mask.astype(np.uint8), (shape[1], shape[0]), interpolation=cv2.INTER_NEAREST).astype(
        bool
    )


def run_rynnec_bench(
    subsets: dict[str, list[RynnECItem]],
    model: Predictor,
    judge: Judge,
    results: ResultsFile,
    limit: int | None = None,
    protocol: str = "upstream",
    max_new_tokens: int = 128,
    progress: bool = True,
) -> list[dict]:
    """Run and score every item; numerical items scored before under another protocol are re-scored
    from their stored prediction (no model, no judge), so one report never mixes protocols."""
    items = _first_n(subsets, limit)
    for item in _progress(items, "RynnEC-Bench", progress):
        old = results.records.get(item.key)
        if old is None:
            results.add(run_rynnec_item(item, model, judge, protocol, max_new_tokens))
        elif item.subset != "object_segmentation" and old.get("protocol") != protocol:
            kind = score_kind(old["type"], protocol)
            if kind in (BINARY, GRADED) and old.get("score_kind") == kind:
                results.add({**old, "protocol": protocol})  # a judge's verdict does not depend on it
            else:
                results.add({**old, **score_rynnec_answer(old, judge, protocol)})
    return results.in_order(i.key for i in items)


# ----------------------------------------------------------------------------------------------------
# EmbSpatial-Bench

STRATEGIES = ("generation", "likelihood")
_LETTERS = "ABCDEFGH"


def mc_prompt(question: str, options: Sequence[str]) -> str:
    lines = [question.strip()] + [f"{_LETTERS[i]}. {o}" for i, o in enumerate(options)]
    return "\n".join(lines) + "\nAnswer with the option's letter from the given choices directly."


def run_embspatial_item(item: EmbSpatialItem, model: Predictor, strategies: Sequence[str]) -> dict:
    frames = item.load_frames()
    rec: dict[str, Any] = {
        "key": item.key,
        "relation": item.relation,
        "source": item.source,
        "answer": item.answer,
        "options": item.options,
    }
    if "generation" in strategies:
        ans, error = _safe_call(
            lambda: model.answer(
                Request(mc_prompt(item.question, item.options), [Frame(f) for f in frames], max_new_tokens=16)
            )
        )
        choice = parse_option(ans.text, item.options)
        rec.update(
            prediction=ans.text,
            generation_choice=choice,
            generation=float(choice == item.answer),
            error=error,
        )
    if "likelihood" in strategies:
        scores = model.score_options(
            Request(item.question, [Frame(f) for f in frames], options=list(item.options))
        )
        choice = int(np.argmax(scores))
        rec.update(
            option_loglik=[float(s) for s in scores],
            likelihood_choice=choice,
            likelihood=float(choice == item.answer),
        )
    return rec


def run_embspatial(
    items: list[EmbSpatialItem],
    model: Predictor,
    results: ResultsFile,
    strategies: Sequence[str] = STRATEGIES,
    limit: int | None = None,
    progress: bool = True,
) -> list[dict]:
    for s in strategies:
        if s not in STRATEGIES:
            raise ValueError(f"unknown EmbSpatial strategy {s!r}; expected {STRATEGIES}")
    chosen = items if limit is None else items[:limit]
    for item in _progress(chosen, "EmbSpatial-Bench", progress):
        rec = results.records.get(item.key)
        if rec is None or any(s not in rec for s in strategies):
            results.add(run_embspatial_item(item, model, strategies))
    return results.in_order(i.key for i in chosen)


# ----------------------------------------------------------------------------------------------------
# RoboBench


def run_robobench_item(item: RoboBenchItem, model: Predictor, judge: Judge, max_new_tokens: int) -> dict:
    """One scored record; an item that cannot be scored keeps ``score: None`` and says why in ``error``.

    The released scorer leaves unparsed items out of its means and counts them; so do the reports. A
    multiple-choice answer neither the letter rule nor the judge can read is wrong (``unreadable``),
    where the released scorer would stop the whole run.
    """
    rec: dict[str, Any] = {
        "key": item.key,
        "kind": item.kind,
        "dimension": item.dimension,
        "task": item.task,
        "answer": item.gt_answer,
        "system_prompt": item.system_prompt,
    }
    try:
        frames = item.load_frames()
    except ValueError as exc:
        return {**rec, "prediction": "", "score": None, "error": str(exc)}
    ans, error = _safe_call(
        lambda: model.answer(Request(item.prompt, [Frame(f) for f in frames], max_new_tokens=max_new_tokens))
    )
    rec.update(prediction=ans.text, error=error)
    try:
        rec.update(_score_robobench(item, ans.text, frames, judge))
    except ValueError as exc:
        rec.update(score=None, error="; ".join(e for e in (error, str(exc)) if e))
    return rec


def _score_robobench(item: RoboBenchItem, text: str, frames: list[np.ndarray], judge: Judge) -> dict:
    if item.kind == "mc":
        gt = robobench.option_letters(item.gt_answer)
        if not gt:
            raise ValueError(f"reference {item.gt_answer!r} names no option letter A-D")
        letters = robobench.response_letters(text)
        how = "letter rule"
        if letters is None:  # the released scorer asks its judge for the final letter
            letters, how = judge.choose_letter(text), judge.name
            if letters is None:  # the model's fault, not the item's: wrong, and said so
                return {"score": 0.0, "chosen": "", "chosen_by": how, "unreadable": True}
        return {"score": 100.0 * (letters == gt), "chosen": letters, "chosen_by": how}
    if item.kind == "q3":
        extracted = judge.extract_yes_no(text)
        return {"score": 100.0 * robobench.yes_no_correct(extracted, item.gt_answer), "extracted": extracted}
    if item.kind == "q2":
        score, parts = robobench.next_step_score(text, item.gt_answer)
        return {"score": score, "parts": parts}
    reference = robobench.parse_steps(item.gt_answer)
    if not reference:
        raise ValueError(f"reference plan {item.gt_answer!r} holds no skill call")
    flat = [a for step in reference for a in step]
    given = {robobench.parse_fact(s) for s in item.initial_state}
    seen = judge.read_initial_state(frames, item.question, robobench.initial_state_candidates(flat))
    if seen is not None:
        given |= {robobench.parse_fact(s) for s in seen}
    ps = robobench.score_plan(robobench.parse_plan(text), reference, item.dag, given)
    return {
        "score": ps.score,
        "node_correctness": ps.node_correctness,
        "task_completion": ps.task_completion,
        "critical_states": ps.critical_states,
        "achieved": ps.achieved,
        "sim_errors": ps.errors,
        "initial_state_source": judge.name if seen is not None else "reference preconditions",
    }


def run_robobench(
    items: list[RoboBenchItem],
    model: Predictor,
    judge: Judge,
    results: ResultsFile,
    limit: int | None = None,
    max_new_tokens: int = 256,
    progress: bool = True,
) -> list[dict]:
    groups: dict[str, list[RoboBenchItem]] = {}
    for it in items:
        groups.setdefault(f"{it.dimension}/{it.task}", []).append(it)
    chosen = _first_n(groups, limit)
    for item in _progress(chosen, "RoboBench", progress):
        if not results.done(item.key):
            results.add(run_robobench_item(item, model, judge, max_new_tokens))
    return results.in_order(i.key for i in chosen)
