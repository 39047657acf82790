"""RoboBench scoring: multiple choice, next-step (Q2), yes/no (Q3) and long-horizon plans (Q1).

Q1 combines NodeCorrectness (one-to-one matching of (arm, skill, arguments) against the reference nodes)
and TaskCompletion, measured by simulating the predicted plan over symbolic object states. The paper
leaves the world simulation to an MLLM; here it is deterministic code: a small STRIPS-like action model
for the skill templates (``pick_up(object)``, ``place(object, target)``, ``move_to(object, target)``,
``open(x)`` …). Milestones are the facts the reference plan creates; each must hold from when it is
achieved until every dependent action (its DAG successors) consumes it, and sink milestones must hold at
the end. Only reading the initial scene goes through a judge; without one the initial state is the
weakest one under which the reference plan runs.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from rynnec_ros.parsing import parse_yes_no

Fact = tuple[str, ...]

# ----------------------------------------------------------------------------------------------------
# Plans


@dataclass(frozen=True)
class Action:
    """One skill call; ``arm`` is "left"/"right" in dual-arm plans and "" otherwise."""

    skill: str
    args: tuple[str, ...]
    arm: str = ""

    def __str__(self) -> str:
        call = f"{self.skill}({', '.join(self.args)})"
        return f"{self.arm}:{call}" if self.arm else call


_CALL_RE = re.compile(r"(?:\b(left|right)\s*:\s*)?\b([A-Za-z_][A-Za-z0-9_]*)\s*\(([^()]*)\)")
_NO_OPS = {"no_ops", "noop", "no_op"}


def norm_name(text: str) -> str:
    """Canonical object/skill name: lower case, quotes and articles dropped, spaces as underscores."""
    t = text.strip().strip("'\"`").lower()
    t = re.sub(r"^(the|a|an)\s+", "", t)
    return re.sub(r"[\s\-]+", "_", t)


def parse_plan(text: str) -> list[Action]:
    """Every ``[left:|right:]skill(args)`` call in ``text`` in order (``no_ops`` dropped)."""
    actions = []
    for m in _CALL_RE.finditer(text):
        skill = norm_name(m.group(2))
        if skill in _NO_OPS:
            continue
        args = tuple(norm_name(a) for a in m.group(3).split(",") if a.strip())
        actions.append(Action(skill, args, (m.group(1) or "").lower()))
    return actions


def parse_dag(dag: object, n_nodes: int) -> set[tuple[int, int]]:
    """Precedence edges (0-based ``(before, after)``) from a released/assumed DAG description.

    Accepts ``{"edges": [[1, 3], ...]}`` (1-based step numbers), a list of such pairs, or text with
    ``1 -> 3`` arrows. ``None`` means a strict chain in reference order (no reordering allowed).
    """
    if dag is None:
        return {(i, i + 1) for i in range(n_nodes - 1)}
    pairs: list[tuple[int, int]] = []
    if isinstance(dag, Mapping):
        dag = dag.get("edges", [])
    if isinstance(dag, str):
        pairs = [(int(a), int(b)) for a, b in re.findall(r"(\d+)\s*-+>\s*(\d+)", dag)]
    elif isinstance(dag, Sequence):
        for e in dag:
            if isinstance(e, str):
                pairs += [(int(a), int(b)) for a, b in re.findall(r"(\d+)\s*-+>\s*(\d+)", e)]
            elif isinstance(e, Sequence) and len(e) == 2:
                pairs.append((int(e[0]), int(e[1])))
            else:
                raise ValueError(f"cannot read DAG edge {e!r}")
    else:
        raise ValueError(f"cannot read DAG {dag!r}")
    edges = set()
    for a, b in pairs:
        if not (1 <= a <= n_nodes and 1 <= b <= n_nodes) or a == b:
            raise ValueError(f"DAG edge {a}->{b} does not join two of the {n_nodes} reference steps")
        edges.add((a - 1, b - 1))
    return edges


# ----------------------------------------------------------------------------------------------------
# Symbolic action model


def fact_str(fact: Fact) -> str:
    return f"{fact[0]}({', '.join(a for a in fact[1:] if a)})"


def _holding(state: frozenset[Fact], arm: str) -> list[str]:
    return [f[2] for f in state if f[0] == "holding" and f[1] == arm]


def _at(state: frozenset[Fact], obj: str) -> set[Fact]:
    return {f for f in state if f[0] == "at" and f[1] == obj}


_TOOL_SKILLS = {"wipe", "stir", "cut", "draw", "scoop", "pour"}
_PLACE_SKILLS = {"place", "put", "insert", "put_in", "put_into"}
_GRASP_SKILLS = {"pick_up", "pick", "grasp", "grab"}
_TOGGLES = {
    "open": ("open", "closed"),
    "close": ("closed", "open"),
    "turn_on": ("on", "off"),
    "switch_on": ("on", "off"),
    "turn_off": ("off", "on"),
    "switch_off": ("off", "on"),
    "fold": ("folded", "unfolded"),
    "unfold": ("unfolded", "folded"),
}


def required_facts(action: Action) -> list[Fact]:
    """Positive facts an action needs; the initial-state inference adds missing ones."""
    s, a, arm = action.skill, action.args, action.arm
    if s in _PLACE_SKILLS and a:
        return [("holding", arm, a[0])]
    if s in _TOOL_SKILLS and a and a[0] != "none":
        return [("holding", arm, a[0])]
    if s == "press" and a and a[0] != "none":
        return [("holding", arm, a[0])]
    if s == "move_to" and len(a) >= 2 and a[0] != "none":
        return [("holding", arm, a[0])]
    if s == "hold" and a:
        return [("holding", arm, a[0])]
    if s == "transfer" and len(a) == 3:
        return [("holding", a[0], a[2])]
    if s in _TOGGLES and a:
        return [(_TOGGLES[s][1], a[0])]
    return []


def apply(state: frozenset[Fact], action: Action) -> tuple[frozenset[Fact] | None, str]:
    """Next state, or ``(None, why)`` when a precondition fails (the action then has no effect)."""
    s, a, arm = action.skill, action.args, action.arm
    st = set(state)
    for fact in required_facts(action):
        if fact not in st:
            return None, f"{action} needs {fact_str(fact)}"
    if s in _GRASP_SKILLS and a:
        if _holding(state, arm):
            return None, f"{action}: the {arm or 'gripper'} already holds {_holding(state, arm)[0]}"
        for f in _at(state, a[0]):
            if ("closed", f[2]) in st:
                return None, f"{action}: {a[0]} is inside closed {f[2]}"
        st -= _at(state, a[0])
        st.add(("holding", arm, a[0]))
    elif s in _PLACE_SKILLS and a:
        target = a[1] if len(a) > 1 else "somewhere"
        if ("closed", target) in st:
            return None, f"{action}: {target} is closed"
        st.discard(("holding", arm, a[0]))
        st -= _at(state, a[0])
        st.add(("at", a[0], target))
    elif s in _TOGGLES and a:
        now, before = _TOGGLES[s]
        st.discard((before, a[0]))
        st.add((now, a[0]))
    elif s in ("move_to", "mobile", "navigate", "go_to") and a:
        who = "base" if s != "move_to" else arm
        st = {f for f in st if not (f[0] == "near" and f[1] == who)}
        st.add(("near", who, a[-1]))
    elif s == "pour" and len(a) >= 3:
        st.add(("at", a[1], a[2]))
    elif s in ("push", "pull") and len(a) >= 2:
        st -= _at(state, a[0])
        st.add(("at", a[0], a[1]))
    elif s == "pullout" and a:
        if _holding(state, arm):
            return None, f"{action}: the {arm or 'gripper'} is not empty"
        st -= _at(state, a[0])
        st.add(("holding", arm, a[0]))
    elif s == "transfer" and len(a) == 3:
        if _holding(state, a[1]):
            return None, f"{action}: the {a[1]} hand is not empty"
        st.discard(("holding", a[0], a[2]))
        st.add(("holding", a[1], a[2]))
    elif s == "hold":
        pass
    elif s == "observation" and a:
        st.add(("seen", a[0]))
    else:  # tool use and unknown skills leave a record that they happened
        st.add(("done", s, *a))
    return frozenset(st), ""


@dataclass
class Trace:
    """States before each step (``states[k]``) and after the last (``states[-1]``)."""

    states: list[frozenset[Fact]]
    executed: list[bool]
    errors: list[str]


def simulate(initial: Iterable[Fact], plan: Sequence[Action]) -> Trace:
    state = frozenset(initial)
    states, executed, errors = [state], [], []
    for action in plan:
        nxt, why = apply(state, action)
        executed.append(nxt is not None)
        errors.append(why)
        state = nxt if nxt is not None else state
        states.append(state)
    return Trace(states, executed, errors)


def infer_initial_state(reference: Sequence[Action], given: Iterable[Fact] = ()) -> frozenset[Fact]:
    """The given facts plus the weakest additions that let the reference plan run end to end."""
    initial = set(given)
    for _ in range(len(reference) + 1):
        trace = simulate(initial, reference)
        if all(trace.executed):
            break
        k = trace.executed.index(False)
        missing = [f for f in required_facts(reference[k]) if f not in trace.states[k]]
        if not missing:
            raise ValueError(f"reference plan cannot run: step {k + 1} {reference[k]}: {trace.errors[k]}")
        initial |= set(missing)
    else:
        raise ValueError("reference plan cannot be made executable")
    return frozenset(initial)


# ----------------------------------------------------------------------------------------------------
# Scores


@dataclass
class PlanScore:
    node_correctness: float
    task_completion: float
    milestones: list[str] = field(default_factory=list)
    achieved: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        """Q1 on the paper's percentage scale: (NodeCorrectness + TaskCompletion) / 2 · 100."""
        return 100.0 * (self.node_correctness + self.task_completion) / 2.0


def node_correctness(predicted: Sequence[Action], reference: Sequence[Action]) -> float:
    """Share of reference nodes matched one-to-one by an identical predicted (arm, skill, args)."""
    if not reference:
        raise ValueError("empty reference plan")
    matched = Counter(predicted) & Counter(reference)
    return sum(matched.values()) / len(reference)


def score_plan(
    predicted: Sequence[Action],
    reference: Sequence[Action],
    dag: object = None,
    initial: Iterable[Fact] = (),
) -> PlanScore:
    """NodeCorrectness and TaskCompletion of a predicted plan against a reference plan and its DAG."""
    nc = node_correctness(predicted, reference)
    edges = parse_dag(dag, len(reference))
    init = infer_initial_state(reference, initial)
    ref_trace = simulate(init, reference)
    successors = {i: {b for a, b in edges if a == i} for i in range(len(reference))}
    milestones: list[tuple[Fact, int]] = []
    for i in range(len(reference)):
        for fact in sorted(ref_trace.states[i + 1] - ref_trace.states[i]):
            if _protected(fact, successors[i], reference, ref_trace):
                milestones.append((fact, i))
    pred_trace = simulate(init, predicted)
    achieved = [
        (f, i) for f, i in milestones if _protected(f, successors[i], reference, pred_trace, predicted)
    ]
    tc = len(achieved) / len(milestones) if milestones else 1.0
    return PlanScore(
        nc,
        tc,
        [fact_str(f) for f, _ in milestones],
        [fact_str(f) for f, _ in achieved],
        [e for e in pred_trace.errors if e],
    )


def _protected(
    fact: Fact,
    dependents: set[int],
    reference: Sequence[Action],
    trace: Trace,
    plan: Sequence[Action] | None = None,
) -> bool:
    """Milestone rule: the plan achieves ``fact`` and it still holds whenever a dependent consumes it.

    Achieving means some executed step makes the fact true (a fact the scene already showed, e.g. a
    drawer that starts closed, is no credit to an idle plan). A dependent that the plan performs must
    find the fact true when it executes (at least once); when none of the dependents is performed (or
    the milestone is a sink) the fact must hold at the end.
    """
    steps = reference if plan is None else plan
    if not any(fact not in trace.states[k] and fact in trace.states[k + 1] for k in range(len(steps))):
        return False
    consumed = False
    for d in dependents:
        times = [k for k, act in enumerate(steps) if act == reference[d] and trace.executed[k]]
        if not times:
            continue
        if not any(fact in trace.states[k] for k in times):
            return False
        consumed = True
    return consumed or fact in trace.states[-1]


def next_step_score(prediction: str, reference: str) -> tuple[float, dict[str, float]]:
    """NextStep = (s_skill + s_obj + s_param)/3 · 100, skill ∈ {0,1}, object/parameters ∈ {0, ½, 1}.

    The paper's judge grades object and parameters by visual reasonableness; this deterministic version
    gives 1 for the same name, ½ for a shared word (``red_cup`` vs ``cup``) and 0 otherwise, and, like the
    released scorer, zeroes the parameters when the skill or the object is wrong.
    """
    ref = parse_plan(reference.split("-", 1)[-1] if re.match(r"^\s*\d+\s*-", reference) else reference)
    if not ref:
        raise ValueError(f"reference next step {reference!r} holds no skill call")
    pred = parse_plan(prediction)
    if not pred:
        return 0.0, {"skill": 0.0, "object": 0.0, "parameters": 0.0}
    p, r = pred[0], ref[0]
    s_skill = 1.0 if p.skill == r.skill else 0.0
    s_obj = _name_score(p.args[0] if p.args else "", r.args[0] if r.args else "")
    s_param = _params_score(p.args[1:], r.args[1:])
    if s_skill == 0 or s_obj == 0:
        s_param = 0.0
    parts = {"skill": s_skill, "object": s_obj, "parameters": s_param}
    return 100.0 * (s_skill + s_obj + s_param) / 3.0, parts


def _name_score(a: str, b: str) -> float:
    if a == b:
        return 1.0
    return 0.5 if set(a.split("_")) & set(b.split("_")) - {"", "of", "the"} else 0.0


def _params_score(a: Sequence[str], b: Sequence[str]) -> float:
    if tuple(a) == tuple(b):
        return 1.0
    return 0.5 if any(_name_score(x, y) > 0 for x, y in zip(a, b, strict=False)) else 0.0


def yes_no_correct(prediction: str, reference: str) -> bool:
    gt = parse_yes_no(reference)
    if gt is None:
        raise ValueError(f"reference {reference!r} is not a yes/no answer")
    return parse_yes_no(prediction) == gt


_LETTER_ANSWER_RE = re.compile(r"answer\s*(?:is|:)?\s*\(?([A-F](?:\s*,\s*[A-F])*)\)?", re.IGNORECASE)
_LETTER_RE = re.compile(r"(?<![A-Za-z])\(?([A-F])\)?(?![A-Za-z'])")


def choice_letters(text: str) -> frozenset[str]:
    """Letters chosen in a multiple-choice answer (``"B"``, ``"(A), (C)"``, ``"The answer is D"``)."""
    m = _LETTER_ANSWER_RE.search(text)
    if m:
        return frozenset(re.findall(r"[A-F]", m.group(1).upper()))
    return frozenset(_LETTER_RE.findall(text))


def choice_correct(prediction: str, reference: str) -> bool:
    """Exact set match of chosen letters (RoboBench's multi-answer questions need all of them)."""
    gt = choice_letters(reference)
    if not gt:
        raise ValueError(f"reference {reference!r} names no option letter")
    return choice_letters(prediction) == gt


def parse_fact(text: str) -> Fact:
    """``closed(drawer)`` → ``("closed", "drawer")``; arm-indexed facts get an empty arm if none is named."""
    m = re.fullmatch(r"\s*([A-Za-z_]+)\s*\(([^()]*)\)\s*", text)
    if m is None:
        raise ValueError(f"cannot read fact {text!r}; expected name(arg, ...)")
    name = norm_name(m.group(1))
    args = tuple(norm_name(a) for a in m.group(2).split(",") if a.strip())
    if name in ("holding", "near") and len(args) == 1:
        args = ("", *args)
    return (name, *args)


def initial_state_candidates(reference: Sequence[Action]) -> list[str]:
    """Facts a scene reader is asked about: what the reference plan assumes, and their opposites."""
    assumed = infer_initial_state(reference)
    opposite = {b: a for a, b in _TOGGLES.values()}
    out = {fact_str(f) for f in assumed}
    out |= {fact_str((opposite[f[0]], *f[1:])) for f in assumed if f[0] in opposite}
    return sorted(out)
