"""Markdown reports with the papers' table layouts, plus per-task bar and category radar plots.

Scores are sample-weighted means, which is what reproduces the published RynnEC-Bench means (e.g.
RynnEC-2B: 0.52·56.3 + 0.48·52.3 = 54.4 overall); RoboBench averages are unweighted means over tasks,
which is what its tables report.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rynnec_ros.eval.metrics import accuracy, group_scores, mean_or_none
from rynnec_ros.eval.runners import PROPERTY_TYPES, SPATIAL_ABILITY

Row = Sequence[object]


@dataclass
class Section:
    heading: str
    headers: list[str]
    rows: list[Row]
    note: str = ""


@dataclass
class Summary:
    """Everything a report shows; ``headline`` holds the numbers tests and callers read."""

    sections: list[Section]
    bars: dict[str, float]
    radar: dict[str, float]
    headline: dict[str, float | None] = field(default_factory=dict)


def pct(v: float | None) -> str:
    return "—" if v is None else f"{v:.1f}"


def md_table(headers: Sequence[str], rows: Sequence[Row]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join("---" for _ in headers) + " |"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------------
# RynnEC-Bench

# Paper Table 2: object columns, then spatial columns; the three means are placed around them.
OBJECT_COLUMNS = ["Object Properties", "Seg. DR", "Seg. SR"]
SPATIAL_COLUMNS = ["Ego His.", "Ego Pres.", "Ego Fut.", "World Size", "World Dis.", "World PR"]
MAIN_COLUMNS = OBJECT_COLUMNS + SPATIAL_COLUMNS


def _score_table(
    title: str, label: str, groups: Mapping[str, list[float]], order: Iterable[str] = ()
) -> Section:
    """Items and mean score per group: the paper's groups in its order first, any others sorted after."""
    known = [g for g in order if g in groups]
    names = known + sorted(set(groups) - set(known))
    rows = [[g, len(groups[g]), pct(mean_or_none(groups[g]))] for g in names]
    return Section(title, [label, "Items", "Score"], rows)


def _protocol_note(records: Iterable[Mapping]) -> str:
    used = sorted(
        {str(r.get("protocol", "unrecorded")) for r in records if r.get("score_kind") == "numerical"}
    )
    if not used:
        return "No numerical items."
    names = {"upstream": "upstream (the released numerical_score)", "paper": "paper (Eq. 1/2)"}
    return "Numerical items scored with the " + " + ".join(names.get(p, p) for p in used) + " protocol."


def rynnec_summary(records: list[dict], model_name: str) -> Summary:
    """Table 2 of the paper and its breakdowns.

    Segmentation items whose inference failed (``score`` None) are left out of the segmentation
    columns, as the released ``eval_seg.py`` drops them, and count 0 in Object Mean, which is how the
    paper's Table 2 treats a model without segmentation (GPT-4o: 41.1 properties → 33.9 Object Mean).
    Without any segmentation items in the run, Object Mean and Overall Mean cannot be formed ("—").
    """
    scored = [r for r in records if r.get("score") is not None]
    cols = group_scores(scored, "column", scale=100.0)
    props = [100.0 * r["score"] for r in scored if r["subset"] == "object_cognition"]
    seg_recs = [r for r in records if r["subset"] == "object_segmentation"]
    seg = [100.0 * r["score"] if r.get("score") is not None else 0.0 for r in seg_recs]
    spa = [100.0 * r["score"] for r in scored if r["subset"] == "spatial_cognition"]
    obj = mean_or_none(props + seg) if seg_recs or not props else None
    overall = None if obj is None and props else mean_or_none(props + seg + spa)
    head = {c: mean_or_none(cols.get(c, [])) for c in MAIN_COLUMNS}
    head.update({"Overall Mean": overall, "Object Mean": obj, "Spatial Mean": mean_or_none(spa)})
    order = ["Overall Mean", *OBJECT_COLUMNS, "Object Mean", *SPATIAL_COLUMNS, "Spatial Mean"]
    failed = sum(r.get("score") is None for r in seg_recs)
    protocol = _protocol_note(records)
    main_note = "Object/Spatial/Overall means are sample-weighted, as in the paper."
    if failed:
        main_note += (
            f" {failed} segmentation item(s) failed: left out of Seg. columns (released eval_seg.py), "
            "0 in Object Mean (paper Table 2)."
        )
    if props and not seg_recs:
        main_note += " No segmentation items: Object/Overall Mean need them (the paper counts them as 0)."
    sections = [
        Section(
            "Main results (paper Table 2 layout)",
            ["Model", *order],
            [[model_name, *(pct(head[c]) for c in order)]],
            f"{main_note} {protocol}",
        ),
        Section(
            "Items per column",
            ["Column", "Items"],
            [[c, len(cols.get(c, []))] for c in MAIN_COLUMNS],
            protocol,
        ),
    ]
    by_type = group_scores([r for r in scored if r["subset"] == "object_cognition"], "type", scale=100.0)
    if by_type:
        table = _score_table("Object properties by type (Fig. 5a)", "Type", by_type, PROPERTY_TYPES)
        table.note = protocol
        sections.append(table)
        classes = group_scores(
            [r for r in scored if r["subset"] == "object_cognition"], "class_name", scale=100.0
        )
        if classes:
            table = _score_table("Object properties by object class", "Class", classes)
            table.note = protocol
            sections.append(table)
    seg_ok = [r for r in seg_recs if r.get("score") is not None]
    if seg_recs:
        rows = []
        for name, group in [*sorted(_group(seg_recs, "type").items()), ("total", seg_recs)]:
            ok = [r for r in group if r.get("score") is not None]
            j = mean_or_none(100 * r["j"] for r in ok)
            f = mean_or_none(100 * r["f"] for r in ok)
            jf = mean_or_none(100 * r["score"] for r in ok)
            rows.append([name, len(ok), len(group) - len(ok), pct(j), pct(f), pct(jf)])
        sections.append(
            Section(
                "Referring segmentation",
                ["Type", "Items", "Failed", "J", "F", "J&F"],
                rows,
                "J: global IoU over all frames; F: DAVIS boundary F on annotated frames; failed "
                "inferences are left out, as in the released eval_seg.py.",
            )
        )
    abil = group_scores([r for r in scored if r["subset"] == "spatial_cognition"], "ability", scale=100.0)
    if abil:
        title = "Spatial cognition by ability (Fig. 5b)"
        table = _score_table(title, "Ability", abil, SPATIAL_ABILITY)
        table.note = protocol
        sections.append(table)
    bars = {f"prop: {t}": mean_or_none(v) for t, v in by_type.items()}
    bars.update(
        {f"seg: {t}": mean_or_none(100 * r["score"] for r in g) for t, g in _group(seg_ok, "type").items()}
    )
    bars.update({f"spatial: {a}": mean_or_none(v) for a, v in abil.items()})
    radar = {c: head[c] for c in MAIN_COLUMNS if head[c] is not None}
    return Summary(sections, {k: v for k, v in bars.items() if v is not None}, radar, head)  # type: ignore[misc]


def _group(records: Iterable[Mapping], key: str) -> dict[str, list[Mapping]]:
    out: dict[str, list[Mapping]] = defaultdict(list)
    for r in records:
        out[str(r.get(key))].append(r)
    return out


# ----------------------------------------------------------------------------------------------------
# EmbSpatial-Bench

EMB_SOURCES = ["MP3D", "AI2-THOR", "ScanNet"]
EMB_RELATIONS = ["above", "below", "under", "left", "right", "close", "far"]


def embspatial_summary(records: list[dict], model_name: str, strategies: Sequence[str]) -> Summary:
    head: dict[str, float | None] = {}
    main_row: list[object] = [model_name]
    for s in ("generation", "likelihood"):
        outcomes = [r[s] for r in records if s in r] if s in strategies else []
        v = 100.0 * accuracy(outcomes) if outcomes else None
        head[s] = v
        main_row.append(pct(v))
    sections = [
        Section(
            "Zero-shot accuracy (paper Table 2 layout)", ["Model", "Generation", "Likelihood"], [main_row]
        )
    ]
    sources = [s for s in EMB_SOURCES if any(r["source"] == s for r in records)]
    sources += sorted({r["source"] for r in records} - set(EMB_SOURCES))
    rows = []
    for s in strategies:
        by_src = group_scores(records, "source", s, 100.0)
        rows.append([s, *(pct(mean_or_none(by_src.get(src, []))) for src in sources), pct(head[s])])
    sections.append(
        Section("Accuracy by environment (paper Table 3 layout)", ["Strategy", *sources, "All"], rows)
    )
    relations = [x for x in EMB_RELATIONS if any(r["relation"] == x for r in records)]
    relations += sorted({r["relation"] for r in records} - set(EMB_RELATIONS))
    rows = []
    for s in strategies:
        for src in sources:
            sub = [r for r in records if r["source"] == src]
            by_rel = group_scores(sub, "relation", s, 100.0)
            rows.append([s, src, *(pct(mean_or_none(by_rel.get(x, []))) for x in relations)])
    sections.append(
        Section("Accuracy by relation (paper Table 4 layout)", ["Strategy", "Environment", *relations], rows)
    )
    bars: dict[str, float] = {}
    radar: dict[str, float] = {}
    for s in strategies:
        for rel, vals in group_scores(records, "relation", s, 100.0).items():
            if (v := mean_or_none(vals)) is not None:
                bars[f"{s}: {rel}"] = v
    for rel, vals in group_scores(records, "relation", strategies[0], 100.0).items():  # the six relations
        if (v := mean_or_none(vals)) is not None:
            radar[rel] = v
    return Summary(sections, bars, radar, head)


# ----------------------------------------------------------------------------------------------------
# RoboBench

KIND_NAMES = {
    "mc": "Multiple choice (acc.)",
    "q1": "Q1 long-horizon plan",
    "q2": "Q2 next step",
    "q3": "Q3 yes/no (acc.)",
}


def _mean_scored(recs: Iterable[Mapping]) -> float | None:
    return mean_or_none(float(r["score"]) for r in recs if r.get("score") is not None)


def robobench_summary(records: list[dict], model_name: str) -> Summary:
    """Per-dimension tables (tasks as columns, unweighted Avg as in the paper) plus the released
    planning aggregation; items that could not be scored are left out of every mean and counted."""
    sections: list[Section] = []
    head: dict[str, float | None] = {}
    bars: dict[str, float] = {}
    for dim, recs in sorted(_group(records, "dimension").items()):
        tasks = sorted({r["task"] for r in recs})
        rows = []
        for kind in ("mc", "q1", "q2", "q3"):
            sub = [r for r in recs if r["kind"] == kind]
            if not sub:
                continue
            per_task = {t: _mean_scored(r for r in sub if r["task"] == t) for t in tasks}
            avg = mean_or_none(v for v in per_task.values() if v is not None)
            head[f"{dim}/{kind}"] = avg
            errors = sum(r.get("score") is None for r in sub)
            rows.append([KIND_NAMES[kind], *(pct(per_task[t]) for t in tasks), pct(avg), errors])
            bars.update({f"{t} ({kind})": v for t, v in per_task.items() if v is not None})
        sections.append(
            Section(
                f"{dim} — {model_name}",
                ["Question type", *tasks, "Avg", "Not scored"],
                rows,
                "Avg is the unweighted mean over tasks, as in the paper's tables; items that could not "
                "be scored (see their `error`) are left out of the means.",
            )
        )
        planning = [r for r in recs if r["kind"] in ("q1", "q2", "q3")]
        if planning:
            sections.append(_released_planning(dim, planning))
        q1 = [r for r in recs if r["kind"] == "q1" and r.get("score") is not None]
        if q1:
            sections.append(
                Section(
                    f"{dim} — Q1 components",
                    ["Task", "Items", "NodeCorrectness (0-10)", "TaskCompletion (0-10)", "Q1"],
                    [
                        [
                            t,
                            len(g),
                            _num(mean_or_none(r["node_correctness"] for r in g)),
                            _num(mean_or_none(r["task_completion"] for r in g)),
                            pct(_mean_scored(g)),
                        ]
                        for t, g in sorted(_group(q1, "task").items())
                    ],
                    "Both components floored to whole tenths (0-10) per item; "
                    "Q1 = (Node + Completion)/20·100.",
                )
            )
    radar = {}
    for dim in sorted({r["dimension"] for r in records}):
        vals = [v for k, v in head.items() if k.startswith(dim + "/") and v is not None]
        if vals:
            radar[dim] = sum(vals) / len(vals)
    return Summary(sections, bars, radar, head)


def _num(v: float | None) -> str:
    return "—" if v is None else f"{v:.2f}"


def _released_planning(dim: str, recs: Sequence[Mapping]) -> Section:
    """The released ``PlanningEvaluator`` statistics: per question type the mean over scored items
    (rounded to 2 decimals) and an overall mean weighted by item counts that include unscored items."""
    rows = []
    total = weighted = 0.0
    for kind in ("q1", "q2", "q3"):
        sub = [r for r in recs if r["kind"] == kind]
        mean = round(_mean_scored(sub) or 0.0, 2)
        total += len(sub)
        weighted += mean * len(sub)
        rows.append([kind.upper(), len(sub), sum(r.get("score") is not None for r in sub), f"{mean:.2f}"])
    overall = round(weighted / total, 2) if total else 0.0
    rows.append(["overall", int(total), "", f"{overall:.2f}"])
    return Section(
        f"{dim} — released planning aggregation",
        ["Type", "Count", "Scored", "Mean"],
        rows,
        "As the released scorer reports it: a type without items shows 0.00.",
    )


# ----------------------------------------------------------------------------------------------------
# Writing


def _plot_bars(values: Mapping[str, float], title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(values)
    fig, ax = plt.subplots(figsize=(8, 0.35 * len(names) + 1.2))
    ax.barh(range(len(names)), [values[n] for n in names], color="#4c72b0")
    ax.set_yticks(range(len(names)), names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("score (%)")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _plot_radar(values: Mapping[str, float], title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    names = list(values)
    angles = np.linspace(0, 2 * np.pi, len(names), endpoint=False).tolist()
    vals = [values[n] for n in names]
    fig = plt.figure(figsize=(5.5, 5.5))
    ax = fig.add_subplot(111, polar=True)
    ax.plot([*angles, angles[0]], [*vals, vals[0]], color="#dd8452")
    ax.fill([*angles, angles[0]], [*vals, vals[0]], color="#dd8452", alpha=0.25)
    ax.set_xticks(angles, names, fontsize=8)
    ax.set_ylim(0, 100)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


OFFLINE_JUDGE_NOTE = (
    "textual answers were graded by the offline judge (exact match, numbers, synonyms, sentence-embedding "
    "similarity), not by the GPT judge the paper uses. Do not compare these numbers with published ones."
)
OFFLINE_SCENE_NOTE = (
    "no MLLM read the initial scenes: Q1 simulations start from the reference plan's preconditions; Q2 "
    "object/parameter credit uses name overlap instead of a judge's semantic similarity; ambiguous MC "
    "answers and Q3 answers are read by rules instead of the released judge prompts."
)


def write_report(
    out_dir: Path, title: str, meta: Mapping[str, object], summary: Summary, approximate: str = ""
) -> Path:
    """``report.md`` (+ ``tasks.png`` bars, ``radar.png``) in ``out_dir``; returns the markdown path.

    ``approximate`` (when not empty) says why the scores differ from the paper's protocol; it is shown
    as a banner at the top so nobody mistakes the numbers for published-comparable ones.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    parts = [f"# {title}", ""]
    if approximate:
        parts += [f"> **APPROXIMATE SCORES**: {approximate}", ""]
    parts += [f"- **{k}**: {v}" for k, v in meta.items()] + [""]
    for s in summary.sections:
        parts += [f"## {s.heading}", "", md_table(s.headers, s.rows), ""]
        if s.note:
            parts += [f"_{s.note}_", ""]
    if summary.bars:
        _plot_bars(summary.bars, title, out_dir / "tasks.png")
        parts += ["## Plots", "", "![per-task scores](tasks.png)", ""]
    if len(summary.radar) >= 3:
        _plot_radar(summary.radar, title, out_dir / "radar.png")
        parts += ["![category radar](radar.png)", ""]
    elif summary.radar:
        parts += ["_Radar plot skipped: fewer than three categories have scores._", ""]
    path = out_dir / "report.md"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path
