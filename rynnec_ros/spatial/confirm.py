"""A second, independent reading of a free-text question: the language model scores the rules' reading
against its neighbours in the task grammar, and a disagreement refuses the geometric answer.

The rules (``parse.py``) read a question by cue words; the model reads it as language. Neither is asked to
*produce* a reading here: the candidates are the rules' reading and the readings a slip of the rules
would give instead (the same task with one slot changed, the objects swapped, another task about as many
objects), each written in the structured grammar (``Parsed.reading``: every slot spelled out, so the
candidates are of like length), and the model's ``score_options`` gives each one's log-likelihood as the
continuation of a prompt that lists the grammar and the question. The rules' reading is confirmed when it
scores best per character (summed log-likelihoods favour short strings; characters stand in for tokens,
which the ``Predictor`` protocol does not expose). Anything else is an ``Unanswerable`` that names both
readings: under ``spatial_source: auto`` the model answers the question itself, under ``geometry`` it is
refused.

No model is imported here (``spatial`` sits below ``model``): the router passes the engine's scores in.
How to evaluate it on a real checkpoint: docs/spatial.md, "A second reader".
"""

from __future__ import annotations

from dataclasses import dataclass

from rynnec_ros.spatial.parse import PARTLY_READ, SLOT_VALUES
from rynnec_ros.spatial.plan import Parsed, SpatialPlan
from rynnec_ros.spatial.tasks import TASK_BY_NAME, TASKS

#: the most candidates scored per question (each is one short decoder pass of the model)
MAX_CANDIDATES = 24


def prompt(question: str) -> str:
    """The text the candidates continue: the grammar (each task, its slots and values) and the question."""
    lines = []
    for spec in TASKS:
        slots = " ".join(f"{k}={'|'.join(spec.values.get(k, SLOT_VALUES.get(k, ('NUMBER',))))}"
                         for k in spec.slots)
        lines.append(f"{spec.name} {slots}".rstrip())
    return (
        "Read the spatial question as one task of this grammar (objects=subject first):\n"
        + "\n".join(lines)
        + f"\nQuestion: {question}\nTask:"
    )


def _reading(task: str, slots: dict[str, str | float | None], objects: list[int]) -> str | None:
    """A candidate's reading, or None when a required slot (no default) has no value."""
    spec = TASK_BY_NAME[task]
    full = {**spec.slots, **{k: v for k, v in slots.items() if k in spec.slots}}
    if any(v is None and k != "side" for k, v in full.items()):
        return None
    return Parsed(task, full).reading(objects if spec.names_objects else [])


def candidates(plan: SpatialPlan) -> list[str]:
    """The rules' reading first, then its neighbours (distinct, at most ``MAX_CANDIDATES`` in all): the same
    task with one enumerable slot changed, the objects in the other order, other tasks about as many
    objects (their slots from the rules' reading where they share them, else their defaults)."""
    parsed, objects = plan.parsed, plan.objects
    spec = parsed.spec
    found = [plan.reading]
    for key, value in parsed.slots.items():
        for other in spec.values.get(key, SLOT_VALUES.get(key, ())):
            if other != value:
                found.append(_reading(parsed.task, {**parsed.slots, key: other}, objects) or "")
    if len(objects) == 2:
        found.append(_reading(parsed.task, parsed.slots, objects[::-1]) or "")
    for task in TASKS:
        if task.name != parsed.task and len(objects) in task.n_objects:
            found.append(_reading(task.name, dict(parsed.slots), objects) or "")
    return list(dict.fromkeys(r for r in found if r))[:MAX_CANDIDATES]


@dataclass(frozen=True)
class Confirmation:
    """The model's verdict on the rules' reading: ``best`` is the candidate it scored highest."""

    rules: str
    best: str
    scores: tuple[float, ...]

    @property
    def agreed(self) -> bool:
        return self.best == self.rules

    def reason(self, question: str) -> str:
        """Why the geometry does not answer (``PARTLY_READ``: the router treats it as a partial reading)."""
        return (f"{PARTLY_READ}: the rules read {question!r} as {self.rules}, "
                f"but the model reads it as {self.best}")


def judge(options: list[str], scores: list[float]) -> Confirmation:
    """The verdict from each candidate's summed log-likelihood (``options[0]`` is the rules' reading),
    compared per character."""
    if len(scores) != len(options) or not options:
        raise ValueError(f"{len(options)} candidates were scored as {scores}")
    per_char = [s / max(len(o), 1) for o, s in zip(options, scores, strict=True)]
    best = max(range(len(options)), key=per_char.__getitem__)
    return Confirmation(options[0], options[best], tuple(per_char))
