"""RoboBench scoring: multiple choice, next-step (Q2), yes/no (Q3) and long-horizon plans (Q1).

The released scorer (``yulin-luo/RoboBench`` ``src/robobench/evaluation/``) hands Q1 to an MLLM "world
simulator" judge whose prompt spells out the rules; this module applies those rules in deterministic
code so a run needs no paid judge and gives the same number twice:

* **Nodes**: every ``[left:|right:]skill(args)`` call and every ``no_ops`` is a node (a dual-arm line
  holds two). NodeCorrectness = ``floor(matched / N_GT · 10)`` with a one-to-one match on identical
  (arm, skill, arguments); ``grasp`` (contact) and ``pick_up`` (lift) are different skills.
* **Critical states** ``S*``: object-level state changes only (location, open/closed, on/off, folded,
  orientation, pressed, wiped …); robot motions (``move_to``, ``grasp``, ``pick_up``, ``hold``,
  ``release``, ``observation``, ``no_ops`` …) are never critical states. For each object attribute the
  reference changes, its final value in the reference rollout is one critical state (the sauce a spoon
  scoops and then pours counts once, in the bowl). TaskCompletion = ``floor(|Ŝ| / |S*| · 10)``, 10 when
  ``S*`` is empty.
* **Rollout**: a symbolic action model over object facts. Missing robot motions are implied (``place``
  after only ``grasp`` still places: "implicit succession"); a hand holds one thing; nothing enters or
  leaves a closed container; a wrong object, target or direction changes a different fact. A critical
  state is achieved when a predicted action makes it true after the critical states of its DAG
  ancestors were achieved.

Only reading the initial scene goes through a judge; without one the initial state is the weakest one
under which the reference plan runs.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from rynnec_ros.core.parsing import parse_yes_no

Fact = tuple[str, ...]

# ----------------------------------------------------------------------------------------------------
# Plans


@dataclass(frozen=True)
class Action:
    """One node: a skill call or ``no_ops``; ``arm`` is "left"/"right" in dual-arm plans and "" otherwise."""

    skill: str
    args: tuple[str, ...]
    arm: str = ""

    def __str__(self) -> str:
        call = self.skill if self.skill == NO_OPS else f"{self.skill}({', '.join(self.args)})"
        return f"{self.arm}:{call}" if self.arm else call


NO_OPS = "no_ops"
_NODE_RE = re.compile(
    r"(?:\b(left|right)\s*:\s*)?"
    r"(?:\b(no_ops)\b(?:\s*\(\s*\))?|\b([A-Za-z_][A-Za-z0-9_]*)\s*\(([^()]*)\))",
    re.IGNORECASE,
)
_STEP_RE = re.compile(r"(?:^|(?<=[\s,;]))(\d+)\s*[-.)]\s*(?=[A-Za-z])")
_THINK_RE = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def norm_name(text: str) -> str:
    """Canonical object/skill name: lower case, quotes and articles dropped, spaces as underscores."""
    t = text.strip().strip("'\"`").lower()
    t = re.sub(r"^(the|a|an)\s+", "", t)
    return re.sub(r"[\s\-]+", "_", t)


def strip_think(text: str) -> str:
    """A reasoning model's ``<think>…</think>`` block is not its answer."""
    return _THINK_RE.sub("", text)


def parse_steps(text: str) -> list[list[Action]]:
    """Nodes grouped by numbered step (``1-left:grasp(l), right:grasp(r), 2-…``).

    Without step numbers every node is its own step. The DAG's step numbers refer to these groups;
    text before the first number (a preamble) forms a step only if it holds nodes.
    """
    text = strip_think(text)
    starts = [m.start() for m in _STEP_RE.finditer(text)]
    if not starts:
        return [[a] for a in _nodes(text)]
    bounds = [0, *starts, len(text)]
    steps = [_nodes(text[a:b]) for a, b in pairwise(bounds)]
    return [s for s in steps if s]


def _nodes(text: str) -> list[Action]:
    out = []
    for m in _NODE_RE.finditer(text):
        arm = (m.group(1) or "").lower()
        if m.group(2):
            out.append(Action(NO_OPS, (), arm))
            continue
        args = tuple(norm_name(a) for a in m.group(4).split(",") if a.strip())
        out.append(Action(norm_name(m.group(3)), args, arm))
    return out


def parse_plan(text: str) -> list[Action]:
    """Every node of ``text`` in order, ``no_ops`` included (RoboBench counts it as a node)."""
    return [a for step in parse_steps(text) for a in step]


def parse_dag(dag: object, n_steps: int) -> set[tuple[int, int]]:
    """Precedence edges (0-based ``(before, after)``) between reference steps.

    Accepts ``{"edges": [[1, 3], ...]}`` (1-based step numbers), a list of such pairs, or text with
    ``1 -> 3`` arrows. ``None`` means a strict chain in reference order.
    """
    if dag is None:
        return {(i, i + 1) for i in range(n_steps - 1)}
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
        if not (1 <= a <= n_steps and 1 <= b <= n_steps) or a == b:
            raise ValueError(f"DAG edge {a}->{b} does not join two of the {n_steps} reference steps")
        edges.add((a - 1, b - 1))
    return edges


def _ancestors(edges: set[tuple[int, int]], n_steps: int) -> list[set[int]]:
    parents: dict[int, set[int]] = {i: set() for i in range(n_steps)}
    for a, b in edges:
        parents[b].add(a)
    out: list[set[int]] = []
    for i in range(n_steps):
        seen: set[int] = set()
        stack = list(parents[i])
        while stack:
            p = stack.pop()
            if p not in seen:
                seen.add(p)
                stack.extend(parents[p])
        out.append(seen)
    return out


# ----------------------------------------------------------------------------------------------------
# Symbolic action model

# Robot-side facts: where the hands are and what they touch or carry. They are preconditions, never
# critical states (the released judge's exclusion list: move_to, grasp, hold, release, observation …).
_ROBOT_FACTS = {"holding", "contact", "near", "seen"}
# Skills the released judge names as robot motions (no object-level effect) beyond the ones modelled.
_MOTIONS = {"approach", "align", "retract", "look", "scan", "plan", "think"}
_LOCATION = {"at", "out_of"}
# tool skill -> the object-level fact it leaves: wipe(tool, object, target) -> wiped(object, target)
_TOOL_SKILLS = {"wipe": "wiped", "stir": "stirred", "draw": "drawn", "cut": "cut"}
_TOGGLES = {
    "open": ("open", "closed"),
    "close": ("closed", "open"),
    "turn_on": ("on", "off"),
    "turn_off": ("off", "on"),
}
_STATE_KEY = {"open": "openness", "closed": "openness", "on": "power", "off": "power"}


def fact_str(fact: Fact) -> str:
    return f"{fact[0]}({', '.join(a for a in fact[1:] if a)})"


def attribute(fact: Fact) -> tuple[str, ...] | None:
    """The object attribute a fact gives a value to (None for robot-side facts).

    Facts with the same attribute replace each other: an apple is in one place, a drawer open or closed.
    """
    kind = fact[0]
    if kind in _ROBOT_FACTS:
        return None
    if kind in _LOCATION:
        return ("location", fact[1])
    if kind in _STATE_KEY:
        return (_STATE_KEY[kind], fact[1])
    if kind in ("folded", "unfolded"):
        return ("fold", fact[1])
    if kind == "turned":
        return ("orientation", fact[1])
    return fact


def _held(state: set[Fact], arm: str) -> set[str]:
    return {f[2] for f in state if f[0] in ("holding", "contact") and f[1] == arm}


def _inside_closed(state: set[Fact], obj: str) -> str | None:
    for f in state:
        if f[0] == "at" and f[1] == obj and ("closed", f[2]) in state:
            return f[2]
    return None


def _set_location(state: set[Fact], obj: str, fact: Fact | None) -> None:
    for f in [f for f in state if f[0] in _LOCATION and f[1] == obj]:
        state.discard(f)
    if fact is not None:
        state.add(fact)


def _set(state: set[Fact], fact: Fact) -> None:
    key = attribute(fact)
    for f in [f for f in state if attribute(f) == key]:
        state.discard(f)
    state.add(fact)


def _take(state: set[Fact], arm: str, obj: str, who: str) -> str:
    """Pick ``obj`` up with ``arm`` unless it already holds it (implicit grasp + pick_up)."""
    if ("holding", arm, obj) in state:
        return ""
    busy = _held(state, arm) - {obj}
    if busy:
        return f"{who}: the {arm or 'gripper'} is busy with {sorted(busy)[0]}"
    closed = _inside_closed(state, obj)
    if closed is not None:
        return f"{who}: {obj} is inside closed {closed}"
    state.discard(("contact", arm, obj))
    _set_location(state, obj, None)
    state.add(("holding", arm, obj))
    return ""


def _release(state: set[Fact], arm: str, obj: str) -> None:
    state.discard(("holding", arm, obj))
    state.discard(("contact", arm, obj))


def required_facts(action: Action) -> list[Fact]:
    """Object facts an action needs that no robot motion can supply; the initial-state inference adds them."""
    s, a = action.skill, action.args
    if s in _TOGGLES and a:
        return [(_TOGGLES[s][1], a[0])]
    if s in ("scoop", "pour") and len(a) >= 3 and a[1] != "unknown":
        source = a[2] if s == "scoop" else a[0]
        return [("at", a[1], source)]
    return []


def apply(state: frozenset[Fact], action: Action) -> tuple[frozenset[Fact] | None, str]:
    """Next state, or ``(None, why)`` when a precondition fails (the action then has no effect)."""
    s, a, arm = action.skill, action.args, action.arm
    st = set(state)
    for fact in required_facts(action):
        if fact not in st:
            return None, f"{action} needs {fact_str(fact)}"
    why = ""
    if s == NO_OPS or s in _MOTIONS:
        pass
    elif s == "move_to" and a:
        if len(a) >= 2 and a[0] != "none":
            why = _take(st, arm, a[0], str(action))
        st = {f for f in st if not (f[0] == "near" and f[1] == arm)}
        st.add(("near", arm, a[-1]))
    elif s == "mobile" and a:
        st = {f for f in st if not (f[0] == "near" and f[1] == "base")}
        st.add(("near", "base", a[0]))
    elif s == "observation" and a:
        st.add(("seen", a[0]))
    elif s == "grasp" and a:
        busy = _held(st, arm) - {a[0]}
        closed = _inside_closed(st, a[0])
        if busy:
            why = f"{action}: the {arm or 'gripper'} is busy with {sorted(busy)[0]}"
        elif closed is not None:
            why = f"{action}: {a[0]} is inside closed {closed}"
        elif ("holding", arm, a[0]) not in st:
            st.add(("contact", arm, a[0]))
    elif s in ("pick_up", "hold") and a:
        why = _take(st, arm, a[0], str(action))
    elif s == "release" and a:
        _release(st, arm, a[0])
    elif s in ("place", "insert") and a:
        target = a[1] if len(a) > 1 else "somewhere"
        if ("closed", target) in st:
            why = f"{action}: {target} is closed"
        else:
            why = _take(st, arm, a[0], str(action))
            if not why:
                _release(st, arm, a[0])
                _set_location(st, a[0], ("at", a[0], target))
    elif s == "pullout" and len(a) >= 2:
        busy = _held(st, arm) - {a[0]}
        if busy:
            why = f"{action}: the {arm or 'gripper'} is busy with {sorted(busy)[0]}"
        else:
            st.discard(("contact", arm, a[0]))
            _set_location(st, a[0], ("out_of", a[0], a[1]))
            st.add(("holding", arm, a[0]))
    elif s in ("push", "pull") and len(a) >= 2:
        _set_location(st, a[0], ("at", a[0], a[1]))
    elif s in _TOGGLES and a:
        _set(st, (_TOGGLES[s][0], a[0]))
    elif s in ("fold", "unfold") and a:
        _set(st, (s + "ed", a[0], a[1] if len(a) > 1 else ""))
    elif s == "turn" and a:
        _set(st, ("turned", *a))
    elif s == "transfer" and len(a) == 3:
        src, dst, obj = a
        why = _take(st, src, obj, str(action))
        if not why and _held(st, dst) - {obj}:
            why = f"{action}: the {dst} hand is busy"
        if not why:
            _release(st, src, obj)
            st.add(("holding", dst, obj))
    elif s == "press" and a:
        if len(a) >= 2 and a[0] != "none":
            why = _take(st, arm, a[0], str(action))
        if not why:
            st.add(("pressed", a[-1]))
    elif s == "scoop" and len(a) >= 3:
        why = _take(st, arm, a[0], str(action))
        if not why:
            _set_location(st, a[1], ("at", a[1], a[0]))
    elif s == "pour" and len(a) >= 3:
        why = _take(st, arm, a[0], str(action))
        if not why:
            _set_location(st, a[1], ("at", a[1], a[2]))
    elif s in _TOOL_SKILLS and len(a) >= 2:
        if a[0] != "none":
            why = _take(st, arm, a[0], str(action))
        if not why:
            st.add((_TOOL_SKILLS[s], *a[1:]))
    else:  # a skill outside the vocabulary: its call is the state change it claims
        st.add(("done", s, *a))
    if why:
        return None, why
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
    """The given facts plus the weakest additions that let the reference plan run end to end.

    Raises ValueError when the reference cannot run whatever is added (the item is then reported as
    an error, not scored).
    """
    initial = set(given)
    for _ in range(len(reference) + 1):
        trace = simulate(initial, reference)
        if all(trace.executed):
            return frozenset(initial)
        k = trace.executed.index(False)
        missing = [f for f in required_facts(reference[k]) if f not in trace.states[k]]
        if not missing:
            raise ValueError(f"reference plan cannot run: step {k + 1} {reference[k]}: {trace.errors[k]}")
        initial |= set(missing)
    raise ValueError("reference plan cannot be made executable")


# ----------------------------------------------------------------------------------------------------
# Scores


@dataclass
class PlanScore:
    """Both Q1 components on the released 0–10 integer scale, and how they were reached."""

    node_correctness: int
    task_completion: int
    critical_states: list[str] = field(default_factory=list)
    achieved: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        """Q1 as the released scorer combines it: (Node + Completion) / 20 · 100."""
        return (self.node_correctness + self.task_completion) / 20.0 * 100.0


def node_correctness(predicted: Sequence[Action], reference: Sequence[Action]) -> int:
    """``floor(matched / N_GT · 10)``: one-to-one matches of identical (arm, skill, args) nodes.

    With identity as the match rule the released greedy left-to-right walk matches exactly the
    multiset intersection.
    """
    if not reference:
        raise ValueError("empty reference plan")
    matched = sum((Counter(predicted) & Counter(reference)).values())
    return matched * 10 // len(reference)


def critical_states(reference: Sequence[Action], trace: Trace) -> list[tuple[Fact, int]]:
    """``S*`` with the reference step index that last made each true.

    The final value of every object attribute the reference changes; robot-side facts never count.
    """
    changed: set[tuple[str, ...]] = set()
    made: dict[Fact, int] = {}
    for k in range(len(reference)):
        before, after = trace.states[k], trace.states[k + 1]
        for f in before ^ after:
            key = attribute(f)
            if key is not None:
                changed.add(key)
        for f in after - before:
            made[f] = k
    final = trace.states[-1]
    return sorted(
        ((f, made[f]) for f in final if attribute(f) in changed and f in made), key=lambda x: (x[1], x[0])
    )


def score_plan(
    predicted: Sequence[Action],
    reference_steps: Sequence[Sequence[Action]],
    dag: object = None,
    initial: Iterable[Fact] = (),
) -> PlanScore:
    """Q1 of a predicted plan against reference steps (from :func:`parse_steps`) and their DAG."""
    pred = list(predicted)
    reference = [a for step in reference_steps for a in step]
    step_of = [i for i, step in enumerate(reference_steps) for _ in step]
    nc = node_correctness(pred, reference)
    ancestors = _ancestors(parse_dag(dag, len(reference_steps)), len(reference_steps))
    init = infer_initial_state(reference, initial)
    goal = critical_states(reference, simulate(init, reference))
    prereq = {f: {g for g, j in goal if step_of[j] in ancestors[step_of[i]]} for f, i in goal}
    trace = simulate(init, pred)
    achieved: list[Fact] = []
    for t in range(len(pred)):
        done_before = set(achieved)
        for f, _ in goal:
            if f in done_before or f in achieved:
                continue
            if f not in trace.states[t] and f in trace.states[t + 1] and prereq[f] <= done_before:
                achieved.append(f)
    tc = 10 if not goal else len(achieved) * 10 // len(goal)
    return PlanScore(
        nc,
        tc,
        [fact_str(f) for f, _ in goal],
        [fact_str(f) for f in achieved],
        [e for e in trace.errors if e],
    )


def reference_step(reference: str) -> str:
    """The reference next step as the released scorer cuts it: the text after the last ``-``."""
    return reference.split("-")[-1]


def next_step_score(prediction: str, reference: str) -> tuple[float, dict[str, float]]:
    """NextStep = (s_skill + s_obj + s_param)/3 · 100, skill ∈ {0,1}, object/parameters ∈ {0, ½, 1}.

    The released judge grades object and parameters by semantic similarity; this deterministic version
    gives 1 for the same name, ½ for a shared word (``red_cup`` vs ``cup``) and 0 otherwise, and, like the
    released scorer, zeroes the parameters when the skill or the object is wrong.
    """
    ref = parse_plan(reference_step(reference))
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
    return (s_skill + s_obj + s_param) / 3.0 * 100.0, parts


def _name_score(a: str, b: str) -> float:
    if a == b:
        return 1.0
    return 0.5 if set(a.split("_")) & set(b.split("_")) - {"", "of", "the"} else 0.0


def _params_score(a: Sequence[str], b: Sequence[str]) -> float:
    if tuple(a) == tuple(b):
        return 1.0
    return 0.5 if any(_name_score(x, y) > 0 for x, y in zip(a, b, strict=False)) else 0.0


# ----------------------------------------------------------------------------------------------------
# Q3 and multiple choice


def offline_yes_no(prediction: str) -> str:
    """Deterministic stand-in for the released Q3 extraction ("return ONLY yes or no").

    A bare one-word answer is taken as written ("Left." → "left", which the released comparison needs
    for its equal/left/right references); otherwise the first yes/no word; "" when there is none.
    """
    text = strip_think(prediction).strip().lower().strip(".!,;:\"'` ")
    if re.fullmatch(r"[a-z]+", text):
        return text
    yn = parse_yes_no(text)
    return "" if yn is None else ("yes" if yn else "no")


def yes_no_correct(extracted: str, reference: str) -> bool:
    """The released comparison: the extracted answer equals the lower-cased, stripped reference."""
    return extracted.strip().lower() == reference.lower().strip()


_CLEAN_CHOICE_RE = re.compile(r"\s*([A-D])(?:\s*[,/&+]\s*([A-D]))*\s*[.)]?\s*", re.IGNORECASE)
_ANSWER_TAG_RE = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)


def option_letters(text: str) -> str:
    """Sorted distinct A–D letters in ``text`` (how the released scorer reads a reference)."""
    return "".join(sorted(set(re.findall(r"[A-D]", text.upper()))))


def response_letters(response: str) -> str | None:
    """Chosen letters as the released scorer reads a response; None when it would ask its judge.

    ``<answer>…</answer>`` wins; else ``<think>`` blocks are dropped. Only a bare letter list ("b",
    "A, C", "B.") is read directly; "" for an empty response.
    """
    m = _ANSWER_TAG_RE.search(response.strip())
    text = m.group(1).strip() if m else strip_think(response.strip()).strip()
    if _CLEAN_CHOICE_RE.fullmatch(text):
        return option_letters(text)
    return "" if not text else None


_FINAL_ANSWER_RE = re.compile(r"\banswer\s*(?:is|:)\s*\(?([A-D])\b(?![\w'])", re.IGNORECASE)
_LEADING_LABEL_RE = re.compile(r"^\s*\(?([A-D])(?:\)|[.:]\s)")


def offline_choice(response: str) -> str | None:
    """Deterministic stand-in for the released judge's "return only A, B, C, or D" extraction.

    The last announced answer ("the final answer is C") or a leading option label ("(B) a red cup",
    "B. a robot arm"); None when neither is there. One letter, as the released judge returns.
    """
    text = strip_think(response)
    announced = _FINAL_ANSWER_RE.findall(text)
    if announced:
        return announced[-1].upper()
    m = _LEADING_LABEL_RE.match(text)
    return m.group(1).upper() if m else None


# ----------------------------------------------------------------------------------------------------
# Initial scene facts


def parse_fact(text: str) -> Fact:
    """``closed(drawer)`` → ``("closed", "drawer")``; arm-indexed facts get an empty arm if none is named."""
    m = re.fullmatch(r"\s*([A-Za-z_]+)\s*\(([^()]*)\)\s*", text)
    if m is None:
        raise ValueError(f"cannot read fact {text!r}; expected name(arg, ...)")
    name = norm_name(m.group(1))
    args = tuple(norm_name(a) for a in m.group(2).split(",") if a.strip())
    if name in ("holding", "contact", "near") and len(args) == 1:
        args = ("", *args)
    return (name, *args)


def initial_state_candidates(reference: Sequence[Action]) -> list[str]:
    """Facts a scene reader is asked about: what the reference plan assumes, and their opposites."""
    assumed = infer_initial_state(reference)
    opposite = {b: a for a, b in _TOGGLES.values()}
    out = {fact_str(f) for f in assumed}
    out |= {fact_str((opposite[f[0]], *f[1:])) for f in assumed if f[0] in opposite}
    return sorted(out)
