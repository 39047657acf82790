"""A spatial request read once: ``Parsed`` (task, slots, stated objects), then ``SpatialPlan`` (objects
resolved, reading spelled out) or ``Unanswerable`` (why not), then ``solve``.

The router, the engine and the solver all work from the one plan: the question is parsed once, its
objects resolved once and its coverage checked once, and nothing writes back into the request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rynnec_ros.core.types import Answer
from rynnec_ros.spatial.lexicon import stated
from rynnec_ros.spatial.parse import (
    NOT_MEASURABLE,
    PARTLY_READ,
    STATED_SUBJECT,
    Question,
    Slots,
    TaskSyntaxError,
    another_thing,
    aside_cue,
    asked_unit,
    claimed_quantity,
    count_objects,
    fmt_slot,
    normalise,
    object_references,
    picks_one,
    question_proper,
    read_slots,
    stated_objects,
    unread_cue,
)
from rynnec_ros.spatial.solvers import UNIT_SCALE, Given, Scene, half_turn, turn_unsaid
from rynnec_ros.spatial.tasks import DECISIONS, TASK_BY_NAME, SpatialTask


@dataclass
class Parsed:
    """A task with its slots (defaults filled in) and the subject-first region indices, if stated."""

    task: str
    slots: Slots = field(default_factory=dict)
    objects: list[int] | None = None
    # a quantity the question claims and asks checked: (value, unit: "m" ... "in" or "deg"); the answer
    # is the measured quantity, and its text says whether the claim holds (``claim_check``)
    claim: tuple[float, str] | None = None
    # how words of another language were read ("read 'sinistra' as 'left'"), said with the answer
    glossed: str = ""

    @property
    def spec(self) -> SpatialTask:
        return TASK_BY_NAME[self.task]

    def reading(self, objects: list[int]) -> str:
        """Every slot with its value and the objects answered about (region indices, subject first):
        what a planner checks against what it meant, and sends back as ``task`` to ask it again."""
        parts = [self.task, *(f"{k}={fmt_slot(v)}" for k, v in self.slots.items() if v is not None)]
        if objects:
            parts.append("objects=" + ",".join(map(str, objects)))
        return " ".join(parts)

    def structured(self, half_turn_side: bool = False) -> str:
        """Canonical structured form: the task and the slots that differ from their defaults. A half
        turn's side is left out unless ``half_turn_side`` (a writer's label keeps what it said): it ends in
        the same pose either way (``solvers.half_turn``, as the solver turns it), so "after a 180" with no
        side said and "turn right 180" are one reading."""
        parts = [self.task]
        for key, default in self.spec.slots.items():
            value = self.slots.get(key, default)
            if key == "turn" and not half_turn_side and half_turn(self.slots.get("angle_deg")):
                continue
            if value != default and value is not None:
                parts.append(f"{key}={fmt_slot(value)}")
        if self.objects is not None:
            parts.append("objects=" + ",".join(str(k) for k in self.objects))
        return " ".join(parts)


def default_parse(task: str) -> Parsed:
    """``task`` with its default slots."""
    return Parsed(task, dict(TASK_BY_NAME[task].slots))


def parse_structured(text: str) -> Parsed:
    """Parse a planner's ``TASK [KEY=VALUE ...]`` string; raises ``TaskSyntaxError`` with the reason."""
    tokens = text.split()
    if not tokens:
        raise TaskSyntaxError("empty task")
    spec = TASK_BY_NAME.get(tokens[0])
    if spec is None:
        raise TaskSyntaxError(f"unknown spatial task {tokens[0]!r}; known: {', '.join(sorted(TASK_BY_NAME))}")
    slots, objects = read_slots(spec.name, tokens[1:], spec.slots, spec.values, spec.names_objects)
    return Parsed(spec.name, slots, objects)


def _decide(q: Question) -> Parsed | None:
    """The first cue, in rank order, that reads ``q``: its task with the slots it states (defaults for the
    rest); None when none does or a refusal cue reads it first."""
    for cue, task in DECISIONS[min(q.n, 2)]:
        stated = cue.read(q)
        if stated is None:
            continue
        if task is None:  # a refusal: no task, rather than a later cue's
            return None
        slots = dict(TASK_BY_NAME[task].slots)
        slots.update({k: v for k, v in stated.items() if k in slots})
        return Parsed(task, slots)
    return None


def parse_question(question: str, n_regions: int = 0) -> tuple[Parsed | None, str]:
    """Task and slots of a free-text spatial question, or ``(None, reason)`` when it maps to none.

    The number of objects is the number of distinct references (each anonymous ``<REGION>`` counts
    once); a question without references ("How far is it from me?") counts the request's ``n_regions``.
    """
    n = count_objects(question, n_regions)
    return _parse(question, question, n)


def _parse(asked: str, question: str, n: int) -> tuple[Parsed | None, str]:
    """``parse_question`` of the words ``asked`` of ``question`` (the whole question, or it without words
    set aside), about ``n`` objects; the reasons quote the whole question."""
    # a reading taken back or a fact stated before the question proper lends it no task or slot: the
    # question proper is read alone (the answer says what was set aside), or refused as it reads
    taken = _taken_back(asked)
    if taken is not None:
        return _read_apart(*taken, question, n, may_set_apart=True)
    fact = _stated_fact(asked)
    if fact is not None:
        # (where the question proper alone reads nothing whole, the statement may be the context it needs,
        # "OBJ and OBJ are stacked up there. Which is the lower one?": the question is read as a whole)
        parsed, why = _read_apart(*fact, question, n, may_set_apart=False)
        if parsed is not None or _UNSURE_OBJECTS in why:
            return parsed, why
    rest = _without_other_things(asked)
    if rest != asked:
        # a sentence that only describes another thing by its place ("The chair on the right is wobbly.")
        # lends the question no cue: the question is read without it, or refused as it then reads
        return _read(rest, question, n)
    parsed, why = _read(asked, question, n)
    # (a reading refused for words beside the question is not read again without the asides: read so, the
    # question proper would answer what the asker did not mean either way)
    if parsed is None and _BESIDE not in why:
        # read again without the sentences beside it that say nothing it asks (a trade's aside); a
        # number in one may be the slot of a reading that holds a number, so such a sentence stays then
        rest = _without_asides(asked, numbers=True)
        again = _decide(Question(normalise(rest), n))
        if again is not None and _NUMERIC & again.spec.slots.keys():
            rest = _without_asides(asked, numbers=False)
        if rest != asked:
            parsed = _read(rest, question, n)[0]
    return (parsed, "") if parsed is not None else (None, why)


# A reading negated or taken back before the question proper: "Not how tall OBJ is: how high above the
# floor is it?", "No wait, not its height: the width of OBJ", "Not in degrees, in clock hours: where is
# OBJ?". "not" opens the question (after "no", "wait", "sorry" ...) and negates a question, a quantity or a
# form ("not how / which / whether", "not the / its …", "not in / as …"), up to the first break: what the
# asker does not ask. ("Not counting OBJ", "not sure" negate no reading, and are not set aside.)
_TAKEN_BACK = re.compile(
    r"^\W*(?:(?:no|nope|wait|sorry|oh|oops|hmm|um|uh|actually)\b[\s,.!;:]*)*"
    r"not (?:how|what|which|where|whether|the|its|their|his|her|a|an|in|as|from|after|about|asking|relative"
    r"|o'?\s?clock|degrees|my|your)\b.*?(?:[:;,.!?](?=\s)|\s+[-\u2014\u2013]+\s+)",
    re.IGNORECASE)
# A statement about the named objects, by their place or a relation, before the question or joined to it
# by ", but": "OBJ is the one on the left. Is OBJ further away from you than it?", "OBJ is to the left of
# OBJ in your view, but is it also above it?". Opened by an object (or two) and its verb; no question
# word, "or", number, turn or correction (a claim to check, "OBJ is 2 m away, right?", is no statement
# set aside; nor is one the question confirms, "OBJ is on the left. Correct?", whose rest reads nothing).
_FACT_OPENS = r"^OBJ(?:,? (?:and|&) OBJ)? (?:is|are|'s|sits|sit|stands|stand|lies|lie|hangs|hang)\b"
_FACT_HOLDS = (r"\?|\d|\b(?:how|what|which|where|who|whose|whether|if|or|not|no|isn't|aren't|sorry|wait"
               r"|said|says|think|thinks|claim\w*|told|turn\w*|rotat\w*|spin\w*|spun|pivot\w*|swivel\w*"
               r"|yaw\w*|swing\w*|swung|twist\w*)\b")
_QUESTION_OPENS = (r"^\W*(?:but |and |so |now |then |tell me |please )*"
                   r"(?:is|are|does|do|can|could|would|will|was|has|have|which|what|how|where|who|whose)\b")


def _taken_back(asked: str) -> tuple[str, str] | None:
    """``(words, rest)`` of a question that opens with a reading it takes back (``_TAKEN_BACK``): the
    words set aside and the question proper after them; else None."""
    lead = _TAKEN_BACK.match(asked)
    if lead is None or not re.search(r"[^\W\d_]", asked[lead.end():]):
        return None
    return asked[:lead.end()].strip(" ,;:.!-\u2014\u2013"), asked[lead.end():].strip()


def _stated_fact(asked: str) -> tuple[str, str] | None:
    """``(words, rest)`` of a question whose first sentence (or a clause before ", but") states a fact
    about the named objects (``_FACT_OPENS``) and whose rest asks (``_QUESTION_OPENS``): the statement set
    aside and the question proper, its "it" standing for the objects the statement names and it does not
    (in the order named: "OBJ is left of OBJ, but is it above it?" asks whether the first is above the
    second); else None."""
    spans = _sentence_spans(asked)
    head = asked[spans[0][0]:spans[0][1]]
    but = re.search(r",\s+but\b", head)
    end = spans[0][0] + but.start() if but is not None else spans[0][1]
    if len(spans) < 2 and but is None:
        return None
    fact, rest = asked[:end], asked[end:].lstrip(" ,.;:!")
    # (a statement opens with the object as written: only such a question is normalised here)
    if not _OBJ_REF.match(fact.lstrip()):
        return None
    t = normalise(fact)
    if (not re.search(_FACT_OPENS, t) or re.search(_FACT_HOLDS, t)
            or not re.search(_QUESTION_OPENS, normalise(rest))):
        return None
    in_rest = set(object_references(rest))
    unsaid = list({ref: None for ref in (m.group(0) for m in _OBJ_REF.finditer(fact))
                   if object_references(ref)[0] not in in_rest})
    pronouns = list(re.finditer(r"\bit\b", rest, re.IGNORECASE))
    if len(pronouns) == len(unsaid):
        for pronoun, ref in reversed(list(zip(pronouns, unsaid, strict=True))):
            rest = rest[:pronoun.start()] + ref + rest[pronoun.end():]
    return fact.strip(" ,"), rest


# An object reference as written ("<object2>"): the words a pronoun of the question proper stands for
_OBJ_REF = re.compile(r"<\s*object\s*_?\s*\d+\s*>", re.IGNORECASE)


# The words of a refusal for words set aside that name an object the question proper may mean: such a
# question is not read as a whole either (``_parse``)
_UNSURE_OBJECTS = "the words set aside name an object the question proper may mean"


def _read_apart(
        words: str, rest: str, question: str, n: int, may_set_apart: bool) -> tuple[Parsed | None, str]:
    """The question proper ``rest`` of ``question`` read alone, ``words`` set aside before it: answered
    saying so, or refused. Refused too where the words set aside name an object the question proper does
    not name while it names another or says "it" of one of several, or, where they ``may_set_apart``
    objects (a negation), name an object (or "the one on the left") before a choice: "not OBJ: which of
    them is the tallest" sets it apart, and no reading knows whether it is meant so."""
    named = list(dict.fromkeys(r for r in object_references(question) if r is not None))
    in_rest = list(dict.fromkeys(r for r in object_references(rest) if r is not None))
    unsure = (f"{PARTLY_READ}: I read {question!r} without {words!r}, set aside, but {_UNSURE_OBJECTS}")
    if (in_rest and set(in_rest) != set(named)) or (
            not in_rest and len(named) > 1 and re.search(r"\bits?\b", rest, re.IGNORECASE)):
        return None, unsure
    parsed, why = _parse(rest, question, n)
    if parsed is None:
        return None, f"{why} (read without {words!r}, set aside)"
    names_one = object_references(words) or re.search(r"(?<!est )(?<!which )\bones?\b", words.lower())
    choice = picks_one(parsed.slots, parsed.spec.uses)
    if may_set_apart and names_one and choice:
        return None, unsure
    if parsed.objects is None and not choice and len(in_rest) > 1 and in_rest != named:
        parsed.objects = in_rest  # the question proper names its subject first, as it names them
    parsed.glossed = "; ".join(x for x in (parsed.glossed, f"read it without {words!r}, set aside") if x)
    return parsed, ""


def _read(asked: str, question: str, n: int) -> tuple[Parsed | None, str]:
    """``parse_question`` of the words ``asked`` of ``question`` (the whole question, or it without its
    asides), about ``n`` objects; the reasons quote the whole question."""
    t = normalise(asked)
    parsed = _decide(Question(t, n))
    said = stated(question)
    if parsed is None:
        return None, f"{NOT_MEASURABLE}: no spatial task matches {question!r} with {n} object(s)" + (
            f" ({said})" if said else "")
    claim = claimed_quantity(t)
    if claim is not None and _checks(parsed, claim[1]):
        # the claimed value is the reading's too: it is measured in the claim's unit unless one is asked
        t = t.replace(claim[2], " ")
        if "unit" in parsed.slots and asked_unit(t) == "m" and not re.search(r"\bmeters?\b", t):
            parsed.slots["unit"] = claim[1]
        parsed.claim = claim[:2]
    unread = unread_cue(t, parsed.slots, parsed.spec.uses)
    if unread is not None:
        return None, (f"{PARTLY_READ}: I read {question!r} as {parsed.structured()}"
                      + (f" ({said})" if said else "") + f", but that reading does not use {unread!r}")
    mismatch = (unused_unit(t, parsed) or answer_type_mismatch(t, parsed)
                or _aside_changes(asked, n, parsed) or _height_in_height(t, parsed)
                or _turn_to_face(t, parsed) or _side_unread(t, parsed) or _turn_unsaid(parsed)
                or _high_for_tall(asked, t, parsed) or _said_beside(t, n, parsed))
    if mismatch is not None:
        return None, (f"{PARTLY_READ}: I read {question!r} as {parsed.structured()}"
                      + (f" ({said})" if said else "") + f", but {mismatch}")
    parsed.objects = stated_objects(asked, t)
    parsed.glossed = said
    return parsed, ""


def _height_in_height(t: str, parsed: Parsed) -> str | None:
    """Why "lowest / highest in height" or "top to bottom" is not read as a placement, else None: "in
    height" and "top to bottom" name the object's own extent, "low / high" its placement; writers label
    "highest in height" either way, and "how tall … top to bottom" is the object's own height."""
    both = re.search(r"\b(?:high|low)(?:er|est)? in height\b|\b(?:top to bottom|bottom to top)\b", t)
    if both and parsed.task in {"higher_choice", "height_from_ground", "height_difference"}:
        return f"{both.group(0)!r} may mean the object's own height, and that reading is a placement"
    return None


# A learner's "less high" or "not as high as" ("OBJ is less high than OBJ, yes or no?"): "high" for "tall"
# in many first languages. Writers of the development set who meant the placement said where it is
# measured or how the object is placed ("less high off the floor", "not mounted as high", "positioned less
# high", 33 of them); the one who said neither meant the shorter object. A bare "higher / lower than" (175
# development questions) is a placement, as are "higher up" and "the highest".
_LESS_HIGH = r"\b(?:less|least) high\b|\b(?:not|n't) (?:\w+ )?(?:as|so) high\b"
_PLACED = (
    r"\b(?:floor|ground|deck|top|bottom|center|middle|base|underside|up|off|above|below|over|under|point"
    r"|edge|level|mounted|placed|positioned|located|hung|hanging|hangs|sits?|sitting|set|installed|reach\w*"
    r"|elevat\w*)\b"
)


def _high_for_tall(asked: str, t: str, parsed: Parsed) -> str | None:
    """Why a learner's "less high" with no floor, point or placement word is not read as a placement, else
    None: it may ask for the shorter object, and a choice or yes/no of the lower one would answer another
    question. (An amount, "by how much is OBJ less high", is the height difference: no reading subtracts
    two objects' own heights.)"""
    said = re.search(_LESS_HIGH, asked.lower())
    # (the rewrites drop the verb of "not mounted as high as": it is looked for in the words as asked too)
    if said and parsed.task == "higher_choice" and not re.search(_PLACED, f"{t} {asked.lower()}"):
        return (f"{said.group(0)!r} may mean the shorter object (its own height), and that reading is a "
                "placement")
    return None


# Words that put an object in front ("point yourself at OBJ", "till OBJ's dead ahead", "so OBJ is in
# front of me"): the turn that does so is the turn to face it
_FACES = (r"\b(?:point (?:yourself|itself|the camera|your \w+) at|face|facing) OBJ\b"
          r"|\bOBJ(?:'s| is| be) (?:dead|straight|directly|right) ahead\b|\bOBJ is in front of (?:me|you)\b"
          r"|\bOBJ (?:is|gets|will be) faced\b")


def _turn_to_face(t: str, parsed: Parsed) -> str | None:
    """Why a turn read with a default amount is not the turn to face an object the question names, else
    None: "rotate counterclockwise till OBJ's dead ahead: how many degrees?" asks the turn to face it,
    and a quarter turn then a bearing would answer a different question."""
    faces = re.search(_FACES, t)
    if faces and parsed.task.startswith("future_direction"):
        return f"{faces.group(0)!r} asks the turn to face it, and that reading turns by a set amount"
    return None


def _side_unread(t: str, parsed: Parsed) -> str | None:
    """Why a side the reading does not measure toward is in the question, else None: a clockwise bearing
    (0 to 360) answers "how many degrees left of straight ahead" with 330 for 30 to the left, unless the
    question states the clockwise convention; a lone side word after the question ("...? left") is one
    no reading of a distance, size or height uses."""
    if parsed.task == "direction_degrees" and re.search(r"\bleft\b", t) and not re.search(
            r"\bclockwise\b|\d+ (?:degrees )?(?:to|on) (?:the |your |my )?right\b", t):
        return "'left' asks the angle toward the left, and that reading is the clockwise bearing"
    lone = re.search(r"\?\s*(left|right)\s*[.!]?\s*$", t)
    if lone and not (parsed.spec.uses & {"horizontal", "turn", "direction"}):
        return f"{lone[1]!r} after the question names a side, and that reading measures none"
    return None


def _turn_unsaid(parsed: Parsed) -> str | None:
    """Why a turn whose way or amount the question does not say is not read, else None: "if you rotate 60
    degrees" gives no side, and the geometry cannot turn by an unsaid one (it would refuse at answer time;
    said here, the reason comes with the reading; ``solvers.turn_unsaid`` is the one rule for both)."""
    if parsed.task.startswith("future_direction") and turn_unsaid(parsed.slots):
        return "it does not say which way or how far I turn"
    return None


# The words of a refusal for words beside the question proper (``_said_beside``): such a question is not
# read again without its asides (``parse_question``)
_BESIDE = "beside the question"


def _said_beside(t: str, n: int, parsed: Parsed) -> str | None:
    """Why the reading takes its task or a slot from words beside the question proper, else None: "is OBJ
    mounted higher up than OBJ? I'd have to reach up to leave a note there." read with the aside's "reach
    up" compares the tops, and the question proper, read alone (``parse.question_proper``), the centres. A
    reading is answered only where the question proper alone reads it, or reads nothing (then the words
    set apart carry the question: "The taller of the two: OBJ or OBJ?")."""
    proper, beside = question_proper(t)
    if not beside:
        return None
    alone = _decide(Question(proper, n))
    if alone is None:
        return None
    if alone.task != parsed.task:
        return f"it is read so only with {'; '.join(beside)!r} {_BESIDE}"
    changed = next((k for k, v in parsed.slots.items() if alone.slots.get(k) != v), None)
    if changed is None:
        return None
    value = parsed.slots[changed]
    said = "unsaid" if value is None else f"={fmt_slot(value)}"
    return f"its {changed}{said} is said only in {'; '.join(beside)!r} {_BESIDE}"


# Where a sentence or fragment ends inside a question: a full stop, "!", "?", an ellipsis or a colon
# before a space, or a dash between spaces
_SENTENCE_END = r"(?<=[.!?…:])\s+|\.{2,}\s*|…\s*|\s+[—–]+\s+|\s+-{1,2}\s+"
_NUMERIC = {"arm_length_m", "angle_deg"}


def _sentence_spans(question: str) -> list[tuple[int, int]]:
    """Where each sentence of ``question`` (as written) starts and ends, the breaks between them left out."""
    breaks = (x for m in re.finditer(_SENTENCE_END, question) for x in (m.start(), m.end()))
    ends = [0, *breaks, len(question)]
    return [(ends[i], ends[i + 1]) for i in range(0, len(ends), 2)]


def _without_asides(question: str, numbers: bool) -> str:
    """``question`` without the sentences before or after it that say nothing it asks: a trade's aside
    ("Hold that.", "Next one's waiting") names no object, is no question, alone reads no task, and holds no
    word that could fill or change a slot (``parse.aside_cue``); a number in one ("Bay 12 is clear.") is
    an aside's only where the reading holds no number (``numbers``). The question itself is the run
    from the first sentence that is no aside to the last; one that is all asides is left as it is."""
    spans = _sentence_spans(question)
    keep = [not _is_aside(question[a:b], numbers) for a, b in spans]
    if not any(keep) or all(keep):
        return question
    first, last = keep.index(True), len(keep) - 1 - keep[::-1].index(True)
    return question[spans[first][0]:spans[last][1]]


_OPENS_THING = r"\s*(?:the|a|an|my|our|this|that|these|those)\b"


def _without_other_things(question: str) -> str:
    """``question`` without its sentences that only describe another thing by its place
    (``parse.another_thing``: "The exit on the left is blocked."), where the rest names an object; else
    ``question`` as it is."""
    spans = [question[a:b] for a, b in _sentence_spans(question)]
    # (a sentence about a thing opens with its article and holds no object reference, question mark or
    # number: only those are normalised and looked at)
    kept = [span for span in spans
            if not (re.match(_OPENS_THING, span, re.IGNORECASE) and not re.search(r"[<\[?\d]", span)
                    and another_thing(normalise(span)))]
    rest = " ".join(kept)
    return rest if len(kept) < len(spans) and "OBJ" in normalise(rest) else question


def _is_aside(sentence: str, numbers: bool) -> bool:
    """Whether ``sentence`` is an aside (``_without_asides``): it names no object, so alone, about none,
    it reads no task."""
    t = normalise(sentence)
    return (bool(re.search(r"[^\W\d_]", t)) and not sentence.rstrip().endswith("?")
            and aside_cue(t) is None and (numbers or not re.search(r"\d", t))
            and _decide(Question(t, 0)) is None)


# A tail that asks again, corrects or names the answer's form is part of the question, not an aside: a
# second question, a question word, a correction, the answers offered ("left or right"), a unit or the
# clock / degrees asked
# ("say" as asked, "Say it in feet", not as told: "the kids say the top one wobbles")
_ASKS_AGAIN = (r"\?|(?<![a-z] )say\b"
               r"|\b(?:how|what|which|where|who|whose|tell|give|answer|reply|no|or|options?|degrees?"
               r"|o'?\s?clock|clock|hours?|units?|meters?|metres?|cm|mm|ft|feet|foot|inch(?:es)?|centimet\w*"
               r"|millimet\w*)\b")


def _aside_changes(question: str, n: int, parsed: Parsed) -> str | None:
    """Why the words after a complete question change its reading, else None.

    An aside after the question mark ("... ? The bunting goes above the higher one.") may carry a cue
    word about something else; the question before it, read alone, is what was asked. A tail that only
    adds a unit, a form or a tag leaves the task as it was; one that changes the task is refused.
    """
    head, mark, tail = question.partition("?")
    if not mark or not re.search(r"[^\W\d_]", tail) or re.search(_ASKS_AGAIN, tail.lower()):
        return None
    alone = _decide(Question(normalise(head + mark), count_objects(head, 0) or n))
    if alone is None or alone.task == parsed.task:
        return None
    return (f"the question before the '?' reads as {alone.task} alone, and the words after it "
            f"({tail.strip()!r}) change that")


# What a question asks for, by its question words (normalised text): one of named objects or sides
# ("which of / which one / which hand / which side"; "which of the following" picks among values), an
# amount ("how many / how much / how far / what angle / what distance" opening a clause), or a yes or no
# to a statement put to confirm ("..., true?", "you would agree that ...?"; the rewrites turn "true?"
# into "is that so?").
_ASKS_WHICH = (r"\bwhich (?:one|ones|of(?! the following)|hand|side)\b"
               # the one with an extreme ("which has the largest distance", a planner's argmax)
               r"|\bwhich (?:has|have) the (?:largest|smallest|greatest|least|biggest|highest|lowest)\b"
               r"|^(?:of|between|among) OBJ\b[^?]*\bwhich\b"
               # a choice without "which": an order to pick one of the named ("identify the object at ...",
               # "select the one ...", "name the item that ..."), "OBJ or OBJ?", "the first / last / -est /
               # -er of OBJ and OBJ"
               r"|\b(?:identify|select|name|pick|point out|tell me|determine|choose|find|indicate|say)"
               r" (?:out )?(?:the|which) (?:\w+ )?(?:object|one|item|thing)s?\b(?! of OBJ\b)"
               r"|\bOBJ,? or OBJ\W*\?"
               r"|(?:^|[.?!,;:] )(?:(?:which|who|what) (?:is|are|was|comes|goes) )?(?:the )?"
               r"(?:first|last|\w+est|(?!center\b|meter\b|millimeter\b|centimeter\b|under\b|over\b)\w{3,}er)"
               r" (?:one )?of (?:OBJ,? (?:and|or) OBJ|the two|both)\b")
_ASKS_AMOUNT = (r"(?:^|[.?!,;:] )(?:how (?:many|much|far)|what (?:angle|distance)"
                r"|what(?:'s| is) the (?:distance|angle|separation|spacing|gap) (?:between|from|to)\b)\b")
_ASKS_CONFIRM = r"(?:,|\bor not)\s+(?:is that so|true)\?\s*$|^(?:you would|would you) agree\b"
# An answer asked for as yes or no in so many words ("Yes or no: which of OBJ and OBJ is taller?" offers
# no answer a choice gives; the rewrites turn "y/n", "yes/no" into "yes or no")
_ASKS_YES_OR_NO = r"\byes or no\b|\btrue or false\b"
# "who" among named objects asks which of them, as "which" does ("of OBJ and OBJ, who is nearer?")
_ASKS_WHO = (r"(?:^|[.?!,;:] )(?:(?:out of|from|of|between|among) OBJ[^?]*?)?"
             r"\bwho(?:'s| is| are| comes| stands)\b")
# A comparison stated with a question mark and no question word ("OBJ is less wide than OBJ?"): a
# statement put to confirm, asked yes or no
_STATED_QUESTION = (rf"^{STATED_SUBJECT}"
                    r" (?:is|are|sits|stands|looks)\b(?![^?]*\b(?:which|what|who|whose|how|where)\b)"
                    r"[^?]*\b(?:than|as)\b[^?]*\?")
# Two relations offered as the answers ("is OBJ above OBJ or below it?"): a choice between them, which a
# yes or no to the first one does not answer.
_RELATION = (r"above|below|under|over|beneath|underneath|left|right|higher|lower|nearer|closer|farther"
             r"|further|taller|shorter|in front|behind")
_OFFERS_TWO = (rf"\b({_RELATION})\b[^?.,;:]*?\bor (?:is it |it is |is OBJ )?(?:on |to |at )?"
               rf"(?:the |your |my )?({_RELATION})\b")


def answer_type_mismatch(t: str, parsed: Parsed) -> str | None:
    """Why the reading's type of answer is not the one normalised question ``t`` asks for, else None.

    A structural check over every reading, whatever cue chose it: a choice among named objects or sides
    is never answered by a number, an amount is never answered by a choice or a yes/no, and a statement
    put to confirm is answered yes or no where the task has that form (a claimed quantity is checked by
    its measurement, ``claim_check``; a claimed choice or clock hour by the one measured). A mismatch is
    refused: the cue that chose the reading misread the question, and an answer of the wrong type would
    be a silent wrong one.
    """
    spec = parsed.spec
    number = spec.kind == "quantity" and spec.unit != "oclock"
    # (a yes/no task whose question picks between named answers, left_right_choice, answers with the
    # side itself, as a side_of_me asked "which side" does)
    yesno = parsed.slots.get("form") == "yesno" or (
        spec.kind == "yesno" and "choice" not in spec.uses
        and not ("side" in parsed.slots and parsed.slots["side"] is None))
    which, amount = re.search(_ASKS_WHICH, t), re.search(_ASKS_AMOUNT, t)
    if which and not amount and number:
        return f"{which.group(0)!r} asks which one, and that reading answers with a number"
    who = re.search(_ASKS_WHO, t)
    if who and yesno:
        return f"{who.group(0)!r} asks which one, and that reading answers yes or no"
    said = re.search(_STATED_QUESTION, t)
    has_yesno = "form" in spec.slots or ("side" in spec.slots and spec.slots["side"] is None)
    if said and not which and not amount and has_yesno and not yesno:
        return f"{said.group(0)!r} states a comparison to confirm, and that reading does not answer yes or no"
    if amount and not which and spec.kind != "quantity":
        return f"{amount.group(0)!r} asks for an amount, and that reading does not answer with one"
    confirm = re.search(_ASKS_CONFIRM, t) or re.search(_ASKS_YES_OR_NO, t)
    if confirm and has_yesno and not yesno:
        return f"{confirm.group(0).strip(' ,')!r} asks yes or no, and that reading does not answer so"
    two = re.search(_OFFERS_TWO, t)
    if two and yesno and two.group(1) != two.group(2):
        return f"{two.group(0)!r} offers two answers, and that reading answers yes or no"
    return None


# A length or angle unit as it is written (normalised text: "metre" is "meter", "deg" "degrees"): names,
# plurals, abbreviations with and without a dot or an "s", and units the readings never answer in. A bare
# "m", "foot" or "in." names a unit only where a unit is asked ("in m", "how many foot"): "I m", "on
# foot" and the preposition do not; nor do "steps" or "paces" ("step 2", "a few paces away"), a count no
# reading answers, but where asked ("how many steps").
_UNIT_WORDS = {
    "m": r"meters?|mtrs?|mts?", "cm": r"centimeters?|cms?|cm\.", "mm": r"millimeters?|mms?|mm\.",
    "ft": r"feet|fts?\.?|foots?", "in": r"inch(?:es)?|ins\.?|in\.", "deg": r"degrees?|degs?",
    "other": r"yards?|yds?|kilometers?|kms?|miles?|radians?|rads?",
}
_ASKED_BY = r"(?:\bin|\bhow (?:many|much)|\bnumber of|\bas|\bto)"
_SHORT_UNITS = {"m": r"m", "ft": r"foot|ft\.?", "in": r"in\.", "other": r"steps|paces|strides"}


def _asked_units(t: str) -> list[tuple[str, str]]:
    """``(unit, word)`` of every unit normalised question ``t`` names without a number before it: the
    units it asks its answer in (a unit after a number states a quantity, whose number is checked as
    one: ``parse.unread_cue``)."""
    found = []
    for unit, words in _UNIT_WORDS.items():
        short = _SHORT_UNITS.get(unit)
        pattern = rf"(?<![\w.'])({words})(?![\w'])" + (rf"|{_ASKED_BY} ({short})(?![\w'])" if short else "")
        for m in re.finditer(pattern, t):
            start = m.start(1) if m.group(1) else m.start(2)
            word = m.group(1) or m.group(2)
            if unit == "ft" and word == "foot" and m.group(1):
                continue  # "foot" alone: a unit only where asked ("how many foot"), not "on foot"
            if word == "feet" and re.search(r"\b(?:my|your|his|her|their|our|its|the|on|at) $", t[:start]):
                continue  # the body's: "without moving your feet", "on my feet"
            # (the unit repeated after a stated quantity, "180 degrees degree turn", is that quantity's; a
            # unit denied, "not degrees", "no inches", asks for another)
            if not re.search(rf"\d\s?(?:(?:{words}) )?$|\b(?:not|no|never|without)(?: in)? $", t[:start]):
                found.append((unit, word))
    return found


def unused_unit(t: str, parsed: Parsed) -> str | None:
    """Why a unit normalised question ``t`` asks in is not the one the reading answers in, else None.

    A structural check over every reading, like ``answer_type_mismatch``: a length unit named without a
    number is the unit asked ("how many ins", "in mtrs"), so a reading must answer in it; an angle unit
    is asked of a reading in degrees. A unit no reading answers in (yards, miles) is refused by name, not
    converted silently, and so is one the reading leaves aside (inches asked, metres answered).
    """
    answers = parsed.slots.get("unit")
    claimed = parsed.claim[1] if parsed.claim else None
    for unit, word in _asked_units(t):
        if unit == "deg":
            if parsed.spec.unit != "deg" and claimed != "deg":
                return f"{word!r} asks for degrees, and that reading does not answer in degrees"
        elif unit == "other":
            return f"{word!r} names a unit no reading answers in"
        elif unit != answers and unit != claimed:
            return (f"{word!r} asks for a length in {unit}, and that reading " + (
                f"answers in {answers}" if answers else "does not answer with a length"))
    return None


_SYMBOL = {"m": "m", "cm": "cm", "mm": "mm", "ft": "ft", "in": "in", "deg": "degrees"}


def _checks(parsed: Parsed, unit: str) -> bool:
    """Whether ``parsed`` measures a quantity a claim in ``unit`` can be checked against: a length for a
    length, the turn to face an object for degrees (a bearing's side is not in a claim of degrees)."""
    return "unit" in parsed.slots if unit != "deg" else parsed.task == "rotate_to_face"


def claim_check(answer: Answer, claim: tuple[float, str]) -> str:
    """Whether a claimed ``(value, unit)`` holds for the measured ``answer``: within 10 % of the claim or
    two standard uncertainties of the measurement, whichever is larger (claims are said "about")."""
    value, unit = claim
    if answer.value is None or answer.unit is None:
        return ""
    if unit != "deg":
        value = value * UNIT_SCALE[answer.unit] / UNIT_SCALE[unit]
    sigma = answer.uncertainty or 0.0
    tolerance = max(0.1 * abs(value), 2.0 * sigma)
    holds = abs(answer.value - value) <= tolerance
    return (f"The claimed {claim[0]:g} {_SYMBOL[unit]} {'holds' if holds else 'does not hold'}: the measured "
            f"{answer.value:.2f} {_SYMBOL[answer.unit]} is {'within' if holds else 'more than'} "
            f"{tolerance:.2f} {_SYMBOL[answer.unit]} (10 % of the claim or two standard uncertainties, "
            f"whichever is larger) of it, read as {answer.reading}.")


def resolve_objects(parsed: Parsed, question: str, n_regions: int) -> list[int]:
    """Region indices the request is about, subject first (``<objectK>`` → regions[K]); ``ValueError``
    when they do not fit the task's number of objects."""
    spec = parsed.spec
    if parsed.objects is not None:
        refs = parsed.objects
    else:
        refs = list(dict.fromkeys(r for r in object_references(question) if r is not None))
    if refs and all(0 <= r < n_regions for r in refs) and len(refs) in spec.n_objects:
        return refs
    if not refs and n_regions in spec.n_objects:
        return list(range(n_regions))
    if 0 in spec.n_objects:
        return []
    raise ValueError(
        f"task {parsed.task} needs {' or '.join(map(str, spec.n_objects))} objects; the request has "
        f"{n_regions} regions and the question references {refs or 'none'}"
    )


@dataclass(frozen=True)
class SpatialPlan:
    """What to measure for one request: the parse, the objects (region indices, subject first) and the
    reading reported with the answer (``Answer.reading``)."""

    parsed: Parsed
    objects: list[int]
    reading: str

    @property
    def task(self) -> str:
        return self.parsed.task

    @property
    def slots(self) -> Slots:
        return self.parsed.slots


@dataclass(frozen=True)
class Unanswerable:
    """Why the geometry will not answer a request. ``plan`` is set when the request was read as a task
    that the data cannot answer (no depth, pose or mask where needed); ``malformed`` when that is the
    caller's error (masks or depth of the wrong size, masks outside the window, no frames)."""

    reason: str
    plan: SpatialPlan | None = None
    malformed: bool = False

    @property
    def parsed(self) -> Parsed | None:
        """The parse, when the request was read as a task."""
        return None if self.plan is None else self.plan.parsed

    @property
    def partly_read(self) -> bool:
        """Read as a task, but with words that reading does not use (``parse.PARTLY_READ``)."""
        return self.reason.startswith(PARTLY_READ)


def solve(task: str, scene: Scene, slots: Slots, arm_length_m: float) -> Answer:
    """Answer ``task`` on ``scene`` with its registry entry's solver (the entry's defaults fill missing
    slots)."""
    spec = TASK_BY_NAME.get(task)
    if spec is None:
        raise ValueError(f"no solver for task {task!r}")
    return spec.solve(Given(scene, {**spec.slots, **slots}, arm_length_m))
