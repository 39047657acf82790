"""The spatial task registry (issue 21): one entry per task, with everything that lives elsewhere by its
name checked here, so that a registered task cannot lack its ground truth, its documentation or a
place in the decision list.

Expected values come from outside the registry: the task table and the slot table of docs/spatial.md
(what planners read), the scene model's labels (``scenes/truth.py``, tooling the runtime may not import).
"""

from __future__ import annotations

import re
from pathlib import Path

from rynnec_ros.scenes.truth import LABELS
from rynnec_ros.spatial.parse import USES
from rynnec_ros.spatial.plan import default_parse, parse_structured
from rynnec_ros.spatial.tasks import DECISIONS, REFUSALS, TASK_BY_NAME, TASKS

DOCS = (Path(__file__).resolve().parents[2] / "docs" / "spatial.md").read_text(encoding="utf-8")


def _table(header: str) -> list[list[str]]:
    """The cells of each row of the docs table whose header row starts with ``header``."""
    lines = DOCS.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(re.split(r"(?<!\\)\|", line)[1:-1])  # "\|" is a pipe inside a cell
    return rows


def test_every_task_has_a_label_from_the_scene_model_and_nothing_else_has() -> None:
    assert len(TASK_BY_NAME) == len(TASKS) == 26
    assert set(LABELS) == set(TASK_BY_NAME)


def test_every_task_has_its_rows_in_the_docs() -> None:
    """The task table names each task once; the slot table lists each task with its slots."""
    tasks = _table("| task | kind / metric |")
    slots = _table("| task | slots (default) |")
    for spec in TASKS:
        named = [r for r in tasks if f"`{spec.name}`" in r[0]]
        assert len(named) == 1, spec.name
        row = [r for r in slots if f"`{spec.name}`" in r[0]]
        assert len(row) == 1, spec.name
        for slot in spec.slots:
            assert f"`{slot}" in row[0][1], (spec.name, slot)


def test_every_task_is_in_the_decision_list_once_per_cue() -> None:
    """Each task has a cue for each number of objects it is asked about, ranks are unique, and the cues'
    groups match the objects (0, 1, 2 = two or more)."""
    for spec in TASKS:
        assert spec.cues, spec.name
        groups = {min(n, 2) for n in spec.n_objects}
        assert {c.objects for c in spec.cues} == groups, spec.name
        assert spec.uses <= USES, spec.name
    ranks = [c.rank for spec in TASKS for c in spec.cues] + [c.rank for c in REFUSALS]
    assert len(ranks) == len(set(ranks))
    for n, decisions in DECISIONS.items():
        assert [c.rank for c, _ in decisions] == sorted(c.rank for c, _ in decisions)
        assert all(c.objects == n for c, _ in decisions)


def test_structured_form_round_trips_for_every_task() -> None:
    """The ``task`` grammar: a task with its defaults is its bare name, and parses back to itself."""
    for spec in TASKS:
        parsed = default_parse(spec.name)
        assert parsed.structured() == spec.name
        assert parse_structured(spec.name) == parsed
