"""Spatial question understanding: the words of a question, and a planner's structured task syntax.

Two inputs reach the geometry. People ask in free text ("How high is the top of <object0> above the
floor?"); planners send a structured task in ``AskQuestion.task``::

    TASK [KEY=VALUE ...]        e.g.  height_from_ground point=top
                                      reachability arm_length_m=1.5
                                      future_direction_clock turn=left angle_deg=90
                                      tallest_choice dim=width order=min objects=1,0

Slots a task does not list are rejected, as are values outside a slot's set (``read_slots``); ``objects``
(region indices, subject first) is accepted by every task that names objects. Each task's slots and
defaults are in its registry entry (``tasks.py``); docs/spatial.md repeats them for planner authors.

Free text is read by rules, not one regular expression per phrasing: the question is normalised
(object references → ``OBJ``, lower case, British/American spelling, hyphens) into a ``Question``, whose
features (asked unit, yes/no form, side words, a turn clause) are computed once; each task's registry
entry lists its cues, the ``cue_*`` readers below, with a rank, and the first cue in rank order that
reads the question decides the task (the order resolves overlaps: a turn clause before a clock word,
"above OBJ" before "above the floor", "closer to the floor" before "closer"). Slots (reference point,
units, arm length, turn, order, subject) are read from the same words independently of the task.
Nothing here measures anything; ``plan.py`` puts the pieces together.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Iterator, Mapping
from functools import cached_property
from importlib import resources
from types import CodeType, FunctionType

import yaml

from rynnec_ros.core.types import RequestError
from rynnec_ros.spatial.lexicon import english_words, translate

Slots = dict[str, str | float | None]

# Values of each slot in a structured task; a task may narrow one (its registry entry's ``values``).
SLOT_VALUES: dict[str, tuple[str, ...]] = {
    "unit": ("m", "cm", "mm", "ft", "in"),
    "point": ("top", "center", "bottom"),
    "order": ("max", "min"),
    "form": ("choice", "yesno"),
    "dim": ("height", "length", "width"),
    "relation": ("above", "below"),
    "side": ("left", "right"),
    "direction": ("cw", "ccw"),
    "turn": ("left", "right"),
}
_NUMERIC = {"arm_length_m", "angle_deg"}

NOT_MEASURABLE = "not a spatial question I can measure"
# A question read as a task, but with words the reading does not use (see ``unread_cue``).
PARTLY_READ = "not fully understood"


def fmt_slot(value: str | float) -> str:
    """A slot value as the structured syntax writes it (numbers in ``%g``)."""
    return f"{value:g}" if isinstance(value, float) else str(value)


class TaskSyntaxError(RequestError):
    """A structured task string that does not follow the ``TASK KEY=VALUE`` syntax (says what is wrong)."""


def read_slots(
    task: str,
    tokens: list[str],
    defaults: Mapping[str, str | float | None],
    values: Mapping[str, tuple[str, ...]],
    names_objects: bool,
) -> tuple[Slots, list[int] | None]:
    """The slots (``defaults`` overridden) and the ``objects=`` of a structured task's ``KEY=VALUE``
    tokens; raises ``TaskSyntaxError`` with the reason. ``values`` narrows a slot's ``SLOT_VALUES``."""
    slots = dict(defaults)
    objects: list[int] | None = None
    for tok in tokens:
        key, sep, value = tok.partition("=")
        if not sep or not value:
            raise TaskSyntaxError(f"{tok!r} is not KEY=VALUE")
        if key == "objects" and names_objects:
            try:
                objects = [int(v) for v in value.split(",")]
            except ValueError:
                raise TaskSyntaxError(
                    f"objects must be comma-separated region indices, got {value!r}"
                ) from None
            if any(k < 0 for k in objects) or len(set(objects)) != len(objects):
                raise TaskSyntaxError(f"objects must be distinct non-negative indices, got {value!r}")
            continue
        if key not in slots:
            allowed = sorted(defaults) + (["objects"] if names_objects else [])
            raise TaskSyntaxError(
                f"task {task} has no slot {key!r}; its slots: {', '.join(allowed) or 'none'}"
            )
        if key in _NUMERIC:
            try:
                number = float(value)
            except ValueError:
                raise TaskSyntaxError(f"{key} must be a number, got {value!r}") from None
            if not (number > 0 if key == "arm_length_m" else 0 <= number <= 360):
                raise TaskSyntaxError(f"{key}={value} is out of range")
            slots[key] = number
            continue
        allowed_values = values.get(key, SLOT_VALUES[key])
        if value not in allowed_values:
            raise TaskSyntaxError(f"{key} must be one of {', '.join(allowed_values)}, got {value!r}")
        slots[key] = value
    return slots, objects


# ------------------------------------------------------------------------------ free text
_OBJ_RE = re.compile(r"\[\s*(?:<REGION>\s*)+\]|<\s*region\s*>|<\s*object\s*_?\s*(\d+)\s*>", re.IGNORECASE)
# Spelled-out numbers ("forty five", "one hundred and twenty", "a hundred eighty"), read after hyphens
# become spaces: turn angles and arm lengths are said in words as often as in digits.
_ONES = {
    w: i
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
        ]
    )
}
_TENS = {
    w: 10 * i
    for i, w in enumerate(("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"), 2)
}
# The start of a length unit's word (after spelling is unified), for lookaheads.
_LENGTH_UNIT = r"(?:meter|centimeter|millimeter|foot|inch)"
_DIGIT_WORD = "zero|one|two|three|four|five|six|seven|eight|nine"
_NUMBER_WORD = "|".join(sorted([*_ONES, *_TENS, "hundred"], key=len, reverse=True))
# What makes the number before it a mixed number: "and (a) half", "and a quarter", "and 1/2"
_FRACTION_AFTER = r"^ and (?:(?:a |one )?(?:half|quarter)|three quarters|\d/\d)\b"
_NUMBER_RUN = re.compile(
    rf"\b(?:a (?=hundred))?(?:{_NUMBER_WORD})(?:(?: and | )(?:{_NUMBER_WORD})(?! quarters))*\b")


def _fraction(said: str) -> float:
    """The value of a mixed number's fraction as said: "half", "quarter", "three" (quarters) or "1/2"."""
    if "/" in said:
        top, bottom = said.split("/")
        return int(top) / int(bottom)
    return {"half": 0.5, "quarter": 0.25, "three": 0.75}[said]


def _spell_out(match: re.Match[str]) -> str:
    """Digits of a run of number words; the run unchanged when it is not one number, or is a lone word
    under ten that no unit follows ("which one", "the two objects", but "two meters")."""
    words = [w for w in match.group(0).split() if w not in ("a", "and")]
    total, current = 0, 0
    for word in words:
        if word == "hundred":
            if current >= 10:
                return match.group(0)
            total, current = total + max(current, 1) * 100, 0
        elif word in _TENS:
            if current:
                return match.group(0)
            current = _TENS[word]
        else:
            if current % 10 or (current and _ONES[word] >= 10):
                return match.group(0)
            current += _ONES[word]
    value = total + current
    after = match.string[match.end() :]
    # (a word before "and (a) half / quarter" is the whole part of a spoken mixed number, "one and half
    # meter", whatever follows: read as a pronoun, "one" would leave the half alone as the number)
    unit_follows = _has(
        after, rf"^ (?:and (?:a half|a quarter|three quarters) )?(?:degree|{_LENGTH_UNIT}|feet|cm|mm|ft)"
    ) or _has(after, _FRACTION_AFTER)
    return match.group(0) if len(words) == 1 and value < 10 and not unit_follows else str(value)


def object_references(question: str) -> list[int | None]:
    """Object indices referenced in order (``None`` for anonymous ``<REGION>`` references)."""
    return [int(m.group(1)) if m.group(1) is not None else None for m in _OBJ_RE.finditer(question)]


# An extent compared in notation ("OBJ.height > OBJ.height"), by its comparison sign, as words.
_ATTRIBUTE_COMPARED = {
    "height": {">": "taller", "<": "less tall"},
    "width": {">": "wider", "<": "less wide"},
    "length": {">": "longer", "<": "less long"},
}

# Planner shorthand and spelling variants, each to the one word the rules read.
_SHORTHAND = {
    r"\bdist\b": "distance",
    r"\blen\b": "length",
    r"\bwid\b": "width",
    # an annotator's or planner's keys for the families' quantities: "d(cam, OBJ)", "dist2cam OBJ", "h_top
    # OBJ", "h_bot", "ctr-ctr", "clk pos OBJ", "top_max: OBJ/OBJ", "... ? y/n"
    r"\bd(?= (?:camera|OBJ)\b)": "distance",
    r"\b(?:dist|d) ?2 ?(?:cam|camera)\b": "distance to camera",
    r"(?<=\bh )(?:bot|btm)\b|\b(?:bot|btm)(?= (?:max|min|z)\b)": "bottom",
    r"\bctr\b": "center",
    # an object's underside in other words: "the under side of OBJ", "OBJ underneath part", "its lower side"
    # (a side "lower" than another, "on the lower side", is no point of an object)
    r"\bunder sides?\b|\bunder(?:neath)? (?:part|surface)s?\b|\bunderneath sides?\b"
    r"|\blower sides?(?= of (?:OBJ|it|them)\b)|(?<=\bOBJ's )lower sides?\b"
    r"|(?<=\bits )lower sides?\b": "underside",
    r"\bcenter center\b": "center to center distance",  # "ctr-ctr"
    r"\bh (top|bottom|center|mid) OBJ\b": r"height above the floor of the \1 of OBJ",
    r"\bclk\b": "clock",
    r"\b(top|bottom|center) max\b|\bmax (top|bottom|center)\b": r"highest \1\2",
    r"\b(top|bottom|center) min\b|\bmin (top|bottom|center)\b": r"lowest \1\2",
    r"\bon (?:the )?camera'?s? (left|right)\b": r"on the \1",
    # a yes/no tag spelled in full or by its letters ("y/n", "Y or N", "yes/no", "y|n"), or as a verdict
    # ("pass/fail", "true/false", "t/f"): the question asks yes or no, offering no choice of objects
    r"\b(?:y(?:es)?|pass|true|t) ?(?:/|\||or) ?(?:n(?:o)?|fail|false|f)\b": "yes or no",
    r"\bbreadth\b": "width",
    r"\btrav\b": "travel",
    # units as a speech transcript spells them: "sent a meters", "milli meters"
    r"\b(?:sent|cent|centi|senti|santi)(?: a| i)? ?meter": "centimeter",
    r"\b(?:milli|mili|mil ?li) ?meter": "millimeter",
    # the unit's prefix alone, as many languages shorten it: "in centi", "30 senti", "how many milli"
    r"\b(?:centi|senti|santi)\b(?! ?meter)": "centimeters",
    r"\b(?:milli|mili)\b(?! ?meter)": "millimeters",
    r"\bsep\b": "separation",
    r"\brot\b": "rotate",
    r"\bdir\b": "direction",
    r"\bdiff\b": "difference",
    # rotation-sense words and their split spellings: "clock wise", "counter clock wise", "widdershins"
    r"\bclock ?wise\b": "clockwise",
    r"\b(?:anti ?|counter ?|contra ?)clockwise\b|\b(?:widdershins|withershins)\b": "counterclockwise",
    r"\b(?:deasil|sunwise)\b": "clockwise",
    # the sense said by the clock's hands: "against the clock", "with the clock"
    r"\bagainst (?:the )?clocks?(?:'s? hands)?\b": "counterclockwise",
    r"\bwith (?:the )?clocks?(?:'s? hands)?\b": "clockwise",
    r"\bht\b": "height",
    r"\bdegs?\b": "degrees",
    r"\bccw\b": "counterclockwise",
    r"\bcw\b": "clockwise",
    r"\bapprox\b\.?": "approximately",
    r"\b(left|right)wards?\b": r"\1",
    r"\blengthi(er|est)\b": r"long\1",
    r"\bupon\b": "on",
    r"\b(?:trun|tunr|tern)\b": "turn",
    r"\b(?:lfet|letf)\b": "left",
    r"\bhwo\b": "how",
    r"\bw(?:ich|hch)\b": "which",
    r"\bclok\b": "clock",
    r"\bneerer\b": "nearer",
    r"\bneerest\b": "nearest",
    r"\brite\b": "right",
    # a ship's or vehicle's sides ("to starboard" names a side as "to the right" does)
    r"\bto (port|starboard)\b": r"to the \1",
    r"\bstarboard\b": "right",
    r"(?<=\bto )port\b|(?<=\bto the )port\b|(?<=\bon )port\b|(?<=\bon the )port\b|(?<=\btowards )port\b"
    r"|\bport(?= (?:side|or right)\b)": "left",
    r"\blft\b": "left",
    r"\bho+w\b": "how",
    r"\bvert\b\.?": "vertical",
    r"\brel\b\.? (?=OBJ)": "relative to ",
    r"\brgt\b|\brght\b": "right",
    # a side heard or typed as its homophone: "turn write", "to the write of", "left or write"
    r"\b(turn(?:s|ed|ing)?|to the|on the|on my|on your|to my|to your|left or|left and) write\b": r"\1 right",
    r"\bwear'?s\b": "where's",
    # a side by its letter, as in notation: "on your L", "R of OBJ", "L/R"
    r"\b(on|to) (your|my|the) l\b": r"\1 \2 left",
    r"\b(on|to) (your|my|the) r\b": r"\1 \2 right",
    r"\bl(?= of OBJ\b)": "left",
    r"\br(?= of OBJ\b)": "right",
    r"\bl ?[/|] ?r\b": "left or right",
    r"\bskinnier\b": "narrower",
    r"\bskinniest\b": "narrowest",
    r"\b(bottom|base) (?:until|till|up till|up until) (?:the |its )?top\b": r"\1 to top",
    r"\btallness\b": "height",
    # an angle's name: "turn by a right angle" is a turn by 90 degrees, and its "right" no side
    r"\b(?:a |one )?right angle\b": "90 degrees",
    r"\bya (?=(?:left|right)\b)": "your ",
    r"\bontop\b": "on top",
    r"\bhihg\b": "high",
    r"\bflor\b": "floor",
    r"\btal\b": "tall",
    r"\bangel\b": "angle",
    r"\bwhich 1\b": "which one",
    r"\b2 (?=(?:turn|face|reach|get|go|be)\b)": "to ",
    r"\bfare?st\b": "farthest",
    r"\bleftest\b": "leftmost",
    r"\b(?:the )?extreme (left|right)\b": r"\1most",
    r"\b(left|right) most\b": r"\1most",  # "right-most", its hyphen a space by now
    # a side without its article, as many first languages have none: "is on left from you", "to right of"
    r"\b(on|to) (left|right)\b": r"\1 the \2",
    r"\brightest\b": "rightmost",
    r"\b(?:truned|turnd)\b": "turned",
    # learners' comparatives of distance: "more far", "less far" (nearer), "least near" (farthest)
    r"\bmore (?:near|close)\b": "nearer",
    r"\bmost (high|low)\b": r"\1est",
    r"\bmore (high|low)\b(?= than\b)": r"\1er",
    r"\bhow much (far|close|near|distant|high|tall|long|wide)\b": r"how \1",
    # the extremes of a distance: "max distance from camera" is the farthest, "min range" the nearest
    r"\bmax(?:imum)?\b\.?(?= (?:camera )?(?:distance|range)\b)": "greatest",
    r"\bmin(?:imum)?\b\.?(?= (?:camera )?(?:distance|range)\b)": "smallest",
    # the camera's distance said as one noun: "the minimum camera range", "the greatest lens distance"; the
    # lens is the camera
    r"\b(greatest|smallest) (?:camera|lens|sensor) (distance|range)\b": r"\1 \2 from the camera",
    r"\bthe lens\b": "the camera",
    # a learner's superlative of a side: "the most right one", "most left?", "the most left of OBJ and OBJ"
    # (not "most left of OBJ" alone, a side of one object)
    r"\bmost (left|right)\b(?! (?:side|hand)\b)(?! of OBJ\b(?!,? (?:and|or) OBJ|, OBJ))": r"\1most",
    # "more up" and "more down" are a learner's "higher" and "lower"; "OBJs bottom" a possessive
    r"\bmore up\b": "higher",
    r"\bmore down\b": "lower",
    r"\bOBJs\b": "OBJ's",
    r"\bmost (?:near|close)\b": "nearest",
    r"\bless far\b": "nearer",
    r"\bleast far\b": "nearest",
    r"\bless (?:near|close)\b": "farther",
    r"\bleast (?:near|close)\b": "farthest",
    # chat spelling
    r"\bu\b": "you",
    r"\bur\b": "your",
    r"\babt\b": "about",
    r"\bwhats\b": "what is",
    r"\bhows\b": "how is",
    r"\bthru\b": "through",
    r"\bpl(?:s|z)\b": "please",
    # a vertical extent is a height (also "compare the vertical extents and return the largest")
    r"\bvertical (?:size|extent|span|dimension)(s?)\b": r"height\1",
    r"\bminus\b": "difference",
    # "the way the hands of a clock go": clockwise
    r"\b(?:the )?way (?:the )?(?:hands of an? clock|clock hands|an? clock'?s hands)"
    r" (?:go|goes|move|moves|turn)\b": "clockwise",
    # a unit's plural made regular: "feets", "foots", "inchs", "inchies"
    r"\b(?:feets|foots)\b": "feet",
    r"\binch(?:s|ies)\b": "inches",
    # "right" as an adverb of time: "where you are right now" names no side
    r"\bright (?=now\b)": "",
    # other words for an object's top and bottom: "the crown of OBJ", "its summit", "the foot of OBJ"
    r"\b(?:crown|summit|apex|crest|pinnacle)(s?)\b": r"top\1",
    r"\b(?:underbelly|underbody)\b|(?<=\bthe |\bits )foot(?= of OBJ\b)": "bottom",
    # a claim then a request to check it, alone in its clause ("... . Check pls.", "..., please verify"), or
    # "could that be right?": asked whether it holds
    r"[,.;:!]\s*(?:(?:please|can you|could you|would you|kindly) )?(?:double ?)?(?:check|confirm|verify)"
    r"(?: (?:it|that|this|please|for me|quick|quickly))*\s*[?.!]?\s*$": ", is that so?",
    r"\b(?:could|would|can|might|may) (?:that|this|it|he|she|they) (?:really )?be"
    r" (?:right|correct|true|so)\b(?! (?:of|to|side|hand)\b)": "is that so",
    # a hedge after the question: "? I not sure."
    r"([.?!]) *(?:but )?(?:i'm |im |i am |i )?not (?:so |very |too |quite )?sure\.?$": r"\1",
    # archaic and literary words of place: "betwixt" is between, "atop" on top of
    r"\bbetwixt\b": "between",
    # a builder's datum: "AFF" is above the finished floor, "FFL" the finished floor level; the datum is
    # the floor
    r"\ba\.?f\.?f\b\.?": "above the floor",
    r"\b(?:the )?datum\b": "the floor",
    # an opening's sill height is its bottom's height above the floor, its head height its top's
    r"\bsill height of OBJ\b|\bOBJ'?s sill height\b": "height of the bottom of OBJ above the floor",
    r"\bhead height of OBJ\b|\bOBJ'?s head height\b": "height of the top of OBJ above the floor",
    r"\bfinished floor(?: level)?\b|\bffl\b": "floor",
    r"\batop\b": "on top of",
    # the least distant is the nearest, the least distant of two the nearer
    r"\bleast distant\b": "nearest",
    r"\bless distant\b": "nearer",
    r"\bl or r\b": "left or right",
}
# Fractions of a full turn ("an eighth of a turn" is 45 degrees), and the counts before them.
_TURN_PARTS = {"half": 2, "third": 3, "quarter": 4, "sixth": 6, "eighth": 8, "twelfth": 12}


def _count(word: str | None) -> int:
    return (
        int(word)
        if word and word.isdigit()
        else {"two": 2, "three": 3, "five": 5, "seven": 7}.get(word or "", 1)
    )


# "more tall", "most long": the comparative and superlative the rules read.
_COMPARATIVE = {
    "tall": "taller",
    "high": "higher",
    "low": "lower",
    "long": "longer",
    "wide": "wider",
    "short": "shorter",
    "narrow": "narrower",
    "small": "smaller",
    "big": "bigger",
    "large": "larger",
}


_ENGLISH = english_words()
# Typed questions carry typos ("distnace", "heigth", "clockwsie"): a word of four letters or more that is
# one adjacent swap, one dropped letter or one extra letter away from exactly one of the words the rules
# read is read as that word (words of four or five letters such as "right" only by a swap: "rigth",
# "lnog"). A substituted letter is corrected only in words of seven letters or more ("distence"; "closet"
# is a word, not "closer"), never at the start; nor a letter dropped or added at the end, which makes
# real words ("degree", "compare", "rotated"), nor the real words a slip makes (the English list's).
_CUE_WORDS = [
    *("distance", "distant", "centimeter", "centimeters", "millimeter", "millimeters", "meters"),
    *("centimetre", "centimetres", "millimetre", "millimetres", "metres", "centre", "centres"),
    *("height", "heights", "higher", "highest", "taller", "tallest", "shorter", "shortest"),
    *("closer", "closest", "nearer", "nearest", "farther", "farthest", "further", "furthest"),
    *("clockwise", "counterclockwise", "degrees", "direction", "bearing", "rotate", "rotation"),
    *("turning", "reachable", "length", "longer", "longest", "narrower", "narrowest", "widest"),
    *("beneath", "underneath", "between", "center", "centers", "bottom", "ground", "camera"),
    *("walked", "travelled", "traveled", "relative", "compared", "vertical", "vertically"),
    *("difference", "facing", "inches", "travel", "lowest", "upper", "lower"),
    *("above", "below", "right", "width", "which", "clock", "under", "wider", "front", "angle", "angles"),
    *("leftmost", "rightmost", "long", "left", "tall", "high", "wide", "near"),
]
# Words one edit from a cue word or a unit's name that are words, not slips: English ones the short
# English list lacks, and words of other languages a mixed question carries (Italian/Spanish "foto",
# French "météo", Dutch "meer"); read as a unit, "how much food" or "in foto" would be asked in feet.
_REAL_WORDS = {
    "loner", "waked", "metes", "eight", "loser", "angel", "angels",
    *("beet", "boot", "coot", "decree", "deter", "deters", "fee", "feed", "fees", "feat", "felt", "fest"),
    *("fete", "fleet", "food", "fool", "fort", "fret", "hoot", "itch", "loot", "meet", "mere", "mete"),
    *("mitre", "moot", "peter", "pinch", "cinch", "finch", "winch", "root", "soot", "toot"),
    *("foto", "meteo", "meer", "mater", "feit"),
}


def _one_edit(word: str) -> Iterator[tuple[str, int, str]]:
    """Every slip one edit from ``word``, as (kind, position, slip): two adjacent letters swapped, a
    letter dropped, added (before ``position``) or changed. The corrector (``_typo_table``), the check
    for slips it leaves (``_near_cue``) and the units' slips (``_unit_slips``) each keep the kinds and
    positions they trust."""
    for i in range(len(word) - 1):
        yield "swap", i, word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    for i in range(len(word)):
        yield "drop", i, word[:i] + word[i + 1 :]
    for i in range(len(word) + 1):
        for c in "abcdefghijklmnopqrstuvwxyz":
            yield "add", i, word[:i] + c + word[i:]
            if i < len(word):
                yield "change", i, word[:i] + c + word[i + 1 :]


def _typo_table(words: list[str]) -> dict[str, str]:
    variants: dict[str, set[str]] = {}
    for w in words:
        for kind, i, v in _one_edit(w):
            if kind == "swap" or (len(w) >= 6 and (
                    (kind == "drop" and i < len(w) - 1 and (i > 0 or len(w) > 6))
                    or (kind == "add" and i < len(w)))):
                variants.setdefault(v, set()).add(w)
    for w in words:  # a letter changed in a long word ("distence"), where no other slip reads that way
        if len(w) >= 7:
            for kind, i, v in _one_edit(w):
                if kind == "change" and i >= 1 and v != w and (v not in variants or w in variants[v]):
                    variants.setdefault(v, set()).add(w)
    known = set(words) | _REAL_WORDS | _ENGLISH
    # (a slip as close to a word's plural as to the word, "degres", is that word either way)
    one_word = {v: min(ws, key=len) for v, ws in variants.items()
                if len({re.sub(r"e?s$", "", w) for w in ws}) == 1}
    return {v: w for v, w in one_word.items() if v not in known and len(v) >= 4}


_TYPOS = _typo_table(_CUE_WORDS)
# The names of the units a reading converts to, each spelling with its unit.
_UNIT_SPELLINGS = {
    **dict.fromkeys(("inch", "inches"), "in"), **dict.fromkeys(("foot", "feet"), "ft"),
    **dict.fromkeys(("meter", "meters", "metre", "metres"), "m"),
    **dict.fromkeys(("centimeter", "centimeters", "centimetre", "centimetres"), "cm"),
    **dict.fromkeys(("millimeter", "millimeters", "millimetre", "millimetres"), "mm"),
    **dict.fromkeys(("degree", "degrees"), "deg"),
}


def _unit_slips() -> tuple[dict[str, str], frozenset[str]]:
    """A unit misspelt is still a unit ("how many inchis" asks inches; skipped, the answer came in
    meters): a word one edit from a unit's name, any kind and place, that is no English word, is read as
    that unit's name where every word of the rules (``_CUE_WORDS``) and unit name that near is a spelling
    of that one unit (the shortest), and is refused where two are ("frot": foot or front, "menter": meter
    or center). Returns the slips read and the slips refused."""
    near: dict[str, set[str]] = {}
    for w in {*_UNIT_SPELLINGS, *_CUE_WORDS}:
        for _kind, _i, v in _one_edit(w):
            near.setdefault(v, set()).add(w)
    known = _ENGLISH | _REAL_WORDS | set(_CUE_WORDS) | set(_UNIT_SPELLINGS)
    read, refused = {}, set()
    for v, words in near.items():
        if v in known or len(v) < 3 or not words & _UNIT_SPELLINGS.keys() or v in _TYPOS:
            continue
        if len({_UNIT_SPELLINGS.get(w) for w in words}) == 1:
            read[v] = min(sorted(words), key=len)
        else:
            refused.add(v)
    return read, frozenset(refused)


_UNIT_SLIPS, _UNIT_SLIPS_REFUSED = _unit_slips()
# Where a word names a unit: after a number, "in", "into", "how many / much", or alone closing a clause
# after a comma ("..., inchis?"). Only there is a slip read as a unit: the hand-written English list is
# short, and "food" or "meet" elsewhere are those words.
_UNIT_PLACE = (
    r"(?:(?<=\d)|(?<=\d )|(?<=\bin )|(?<=\binto )|(?<=\bmany )|(?<=\bmuch ))[a-z]{3,}\b"
    r"|(?<=, )[a-z]{3,}(?=\s*(?:please\s*)?[?.!;]*$)"
)


# Whole phrasings rewritten to the form the rules read, in order (after dashes became commas): the table is
# data/phrase_rewrites.yaml; these are the words some of its rewrites look up.
_TRIP = {"shorter": "nearer", "shortest": "nearest", "longer": "farther", "longest": "farthest"}
_UNIT_NAMES = {"m": "meters", "cm": "centimeters", "mm": "millimeters", "ft": "feet", "in": "inches"}
_PLAIN_TO_MORE = {"high": "higher", "tall": "taller", "far": "farther", "near": "nearer", "nearby": "nearer",
                  "close": "closer", "long": "longer", "wide": "wider", "big": "bigger", "low": "lower",
                  "short": "shorter", "small": "smaller"}
# "not as tall as" is "shorter than"; "not taller than" is "shorter than" too
_NOT_AS = {"tall": "shorter", "high": "lower", "long": "less long", "wide": "less wide", "far": "nearer",
           "near": "farther", "close": "farther"}
_DENIED = {"taller": "shorter", "higher": "lower", "lower": "higher", "farther": "nearer",
           "further": "nearer",
           "nearer": "farther", "closer": "farther", "longer": "less long", "wider": "less wide",
           "narrower": "wider", "bigger": "smaller", "larger": "smaller", "smaller": "bigger"}

# Replacement functions the rewrite table names (``call:``): the rewrites that look a word up or choose
# by a group.
_REWRITE_CALLS: dict[str, Callable[[re.Match[str]], str]] = {
    "unit_slot": lambda m: "in " + _UNIT_NAMES[m.group(1)],
    "tolerance": lambda m: ", in " + {**_UNIT_NAMES, "deg": "degrees", "°": "degrees"}.get(m[1], m[1]),
    "argmax_z": lambda m: f"which is {'highest' if m[1] == 'max' else 'lowest'} by the {m[2] or 'center'}",
    "attribute_call_compared":
        lambda m: f"is OBJ {'greater' if m.group(2) == '>' else 'less'} in {m.group(1)} than OBJ",
    "distances_compared": lambda m: f"is OBJ {'farther' if m.group(1) == '>' else 'nearer'} than OBJ",
    "closing_unit": lambda m: ", in " + (_UNIT_NAMES[m[1]] if m[1] else _UNIT_NAMES.get(m[2], m[2])),
    "attribute_compared": lambda m: f"is OBJ {_ATTRIBUTE_COMPARED[m[1]][m[2]]} than OBJ",
    "inches_abbreviated": lambda m: f"{m[1]} inches" if m[1] else "in inches",
    "call_arguments": lambda m: " " + m.group(1).replace(",", " ") + " ",
    "not_as": lambda m: (f"{m[1]} " if m[1] else "") + "NOTAS " + _NOT_AS[m[2]] + m[3] + " than",
    "denied": lambda m: (f"{m[1]} " if m[1] else "") + "DENIED " + _DENIED[m[2]],
    "rounding": lambda m: f" in {m[1]}" if m[1] else "",
    "text_place": lambda m: m[1] or "",
    "not_as_far":
        lambda m: "is NOTAS " + {"far": "nearer", "near": "farther", "close": "farther"}[m.group(1)],
    "trip": lambda m: _TRIP[m[1]],
    "turn_abbreviated": lambda m: f"{m[1]} {'left' if m[2][0] == 'l' else 'right'}",
    "turn_abbreviated_before": lambda m: "left " if m[1][0] == "l" else "right ",
    "own_height": lambda m: f"{m[1]} the {'smallest' if m[2] == 'lowest' else 'greatest'} height",
    "plain_to_more": lambda m: f"{m[1]} {_PLAIN_TO_MORE[m[2]]}",
    "extent_compared": lambda m: (
        (f"{m['verb']} OBJ" if m.start("verb") < m.start("dim") else f"OBJ {m['verb']}")
        + f" {'less' if m['less'] else 'greater'} in {m['dim']} than OBJ"),
    "extremum_distance": lambda m: "which is " + ("farthest" if m[1].startswith("maxi") else "nearest"),
    # a theatre's "stage left" is the performer's left, the camera's right when it faces the stage: denied
    # beside the camera's view said ("camera's view, not stage left", "not stage left, camera left") it
    # asks nothing; else it stays, and is refused as unread
    "stage_denied": lambda m: "" if re.search(r"\bcamera(?:'s)? (?:view|left|right)\b", m.string) else m[0],
    "other_side": lambda m: (
        f"{m[1]} or {_OTHER_SIDE[m[1]]}" if _unknown(m[2]) and _like_a_side(m[2]) else m[0]),
}


def _load_rewrites() -> list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]]:
    """The rewrite table (data/phrase_rewrites.yaml), compiled once: phrasings are data; the functions
    that pick a replacement by a looked-up word stay code."""
    data = resources.files("rynnec_ros.spatial").joinpath("data/phrase_rewrites.yaml")
    raw = yaml.safe_load(data.read_text(encoding="utf-8"))

    def joined(pieces: str | list[str]) -> str:
        return pieces if isinstance(pieces, str) else "".join(pieces)

    parts = {name: joined(pieces) for name, pieces in raw["parts"].items()}
    parts |= {"denied": "|".join(_DENIED), "plain_to_more": "|".join(_PLAIN_TO_MORE)}
    table: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = []
    for entry in raw["rewrites"]:
        pattern = re.sub(r"\$\{(\w+)\}", lambda m: parts[m[1]], joined(entry["re"]))
        table.append((re.compile(pattern), entry["to"] if "to" in entry else _REWRITE_CALLS[entry["call"]]))
    return table


_PHRASE_REWRITES = _load_rewrites()


# "Bai or no: ...", "..., já or nei?", "..., iä/no?": a clause of two words joined by "or" (or a slash), the
# second a "no" of English or another language, the first a word no English list or rule knows, is a
# yes-or-no tag in the asker's own words (Basque "bai", Icelandic "já", Kazakh "iä", Sinhala "ow" are
# "yes"); neither side names an object, so it offers no choice of them. (A known word, "left or no",
# stays as said.)
_NO_WORDS = ("no", "nope", "nah", "not", "nei", "nein", "nee", "nie", "ne", "nej", "ez", "non", "não", "nao",
             "ei", "hayır", "hayir", "жоқ", "жок", "нет", "ні", "не", "όχι", "oxi", "tidak", "hindi", "không",
             "khong", "nahi", "nahin", "naha", "nae")
_YES_OR_NO_TAG = re.compile(rf"(?:^|(?<=[,.;:?!(]))(\s*)([^\W\d_]+) ?(?:or|/) ?(?:{'|'.join(_NO_WORDS)})"
                            r"(?=\s*(?:[,.;:?!)]|$))")


def _yes_or_no_tag(m: re.Match[str]) -> str:
    """``_YES_OR_NO_TAG`` as "yes or no" where its first word is unknown (``_unknown``), else as said."""
    return f"{m[1]}yes or no" if _unknown(m[2]) else m[0]


def normalise(question: str) -> str:
    """Lower-case text, references → ``OBJ``, one spelling (center, meter), shorthand spelled out ("dist",
    "deg", "ccw"), number words and halves as digits, arrows as clause breaks, hyphens and quotes unified."""
    t = _OBJ_RE.sub("\x00", question).lower().replace("\x00", "OBJ")
    t = translate(t)[0]  # words of other languages (lexicon.py) first: no typo rule makes them English
    t = re.sub(r"[a-z]{4,}", lambda m: _TYPOS.get(m.group(0), m.group(0)), t)
    t = re.sub(_UNIT_PLACE, lambda m: _UNIT_SLIPS.get(m.group(0), m.group(0)), t)
    t = t.replace("’", "'").replace("‘", "'")
    t = re.sub(r"\s*(?:->|=>|→|—|–)\s*|\s+-+\s+", ", ", t).replace("-", " ")
    t = _YES_OR_NO_TAG.sub(_yes_or_no_tag, t)
    for rewrite, replacement in _PHRASE_REWRITES:
        t = rewrite.sub(replacement, t)
    t = re.sub(r"(\d)\s*°", r"\1 degrees", t)
    t = re.sub(r"\bcentre", "center", t)
    t = re.sub(r"metres?\b", lambda m: m.group(0).replace("metre", "meter"), t)
    for pattern, word in _SHORTHAND.items():
        t = re.sub(pattern, word, t)
    t = re.sub(
        rf"\b(more|most) ({'|'.join(_COMPARATIVE)})\b",
        lambda m: _COMPARATIVE[m.group(2)] if m.group(1) == "more" else _COMPARATIVE[m.group(2)][:-1] + "st",
        t,
    )
    # digits said one by one, as on the radio: "two seven zero degrees", "zero niner zero", "five zero"
    t = re.sub(r"\bniner\b", "nine", t)
    t = re.sub(rf"\b(?:{_DIGIT_WORD})(?: (?:{_DIGIT_WORD}))+\b",
               lambda m: str(int("".join(str(_ONES[w]) for w in m.group(0).split()))), t)
    # tens a transcript split in two: "for ty five", "twen ty"
    t = re.sub(r"\b(twen|thir|for|fif|six|seven|eigh|nine) ty\b", r"\1ty", t)
    # a decimal said aloud: "one point five", "0 point 75"
    t = re.sub(rf"\b({_DIGIT_WORD}|\d+) point ((?:(?:{_DIGIT_WORD}|\d+)\b ?)+)",
               lambda m: "".join(str(_ONES.get(w, w)) for w in m[1].split()) + "."
               + "".join(str(_ONES.get(w, w)) for w in m[2].split()) + " ", t)
    t = _NUMBER_RUN.sub(_spell_out, t)
    t = re.sub(rf"\b(?:a|one) quarter of an? (?={_LENGTH_UNIT})", "0.25 ", t)  # "a quarter of a meter"
    t = re.sub(rf"\bthree quarters of an? (?={_LENGTH_UNIT})", "0.75 ", t)
    # "one and a half meters", "one and half", "1 and 1/2", "two and a quarter", "1 and 3/4"
    t = re.sub(r"\b(\d+) and (?:(?:a |one )?(half|quarter)|(three) quarters|([1-9])/([1-9]))\b",
               lambda m: f"{int(m[1]) + _fraction(m[2] or m[3] or f'{m[4]}/{m[5]}'):g}", t)
    # the foot and inch marks after a number: 2' 6", 30", 3' (not a quoted number, '"3"', nor "the 90's")
    t = re.sub(r"(?<![\w\"'.])(\d+) ?[′'] ?(\d+(?:\.\d+)?) ?(?:[″\"]|'')(?=[\s,.?!;:)]|$)",
               lambda m: f"{12 * int(m[1]) + float(m[2]):g} inches", t)
    t = re.sub(r"(?<![\w\"'.])(\d+(?:\.\d+)?) ?(?:[″\"]|'')(?=[\s,.?!;:)]|$)", r"\1 inches", t)
    t = re.sub(r"(?<![\w\"'.])(\d+(?:\.\d+)?) ?[′'](?=[\s,.?!;:)]|$)", r"\1 feet", t)
    # "1 meter and 20 centimeters", "2 feet 6 inches"
    t = re.sub(
        r"\b(\d+) meters? (?:and )?(\d+) centimeters?\b",
        lambda m: f"{int(m[1]) + int(m[2]) / 100:g} meters",
        t,
    )
    t = re.sub(
        r"\b(\d+) (?:feet|foot|ft) (?:and )?(\d+) (?:inch(?:es)?|in)\b",
        lambda m: f"{12 * int(m[1]) + int(m[2])} inches",
        t,
    )
    # the smaller unit left unsaid: "two foot six" is 2 ft 6 in (inches under twelve), "one metre twenty"
    # and "1 m 20" are 1.20 m (two digits of centimetres); "1 m 5" (1.05 or 1.5?) is left, and refused as
    # a number no reading uses
    unit_after = rf"(?![ .]?\d| ?(?:{'|'.join(_UNITS.values())}|degrees?|o'?clock)\b)"
    t = re.sub(
        rf"\b(\d+) (?:feet|foot|ft) (\d+|{_DIGIT_WORD}|ten|eleven)\b{unit_after}",
        lambda m: f"{12 * int(m[1]) + int(_ONES.get(m[2], m[2]))} inches" if int(_ONES.get(m[2], m[2])) < 12
        else m[0],
        t,
    )
    t = re.sub(rf"\b(\d+) (?:meters?|m) ([1-9]\d)\b{unit_after}",
               lambda m: f"{int(m[1]) + int(m[2]) / 100:g} meters", t)
    # "a third of a full turn", "two thirds of a rotation": degrees
    t = re.sub(
        rf"\b(?:(a|an|one|two|three|five|seven|\d+) )?({'|'.join(_TURN_PARTS)})s? of an? "
        r"(?:full |complete |whole )?(?:turn|rotation|revolution|circle)\b",
        lambda m: f"{_count(m[1]) * 360 / _TURN_PARTS[m[2]]:g} degrees turn",
        t,
    )
    # "a foot and a half", "2 meters and a half"
    t = re.sub(
        rf"\b(?:an?|(\d+)) ({_LENGTH_UNIT}s?|feet|inches) and (?:a )?half\b",
        lambda m: f"{int(m.group(1) or 1)}.5 {m.group(2)}",
        t,
    )
    t = re.sub(rf"\bhalf (?:an? )?(?={_LENGTH_UNIT})", "0.5 ", t)  # "half a meter", "a half-meter arm"
    return re.sub(r"\s+", " ", t).strip()


def _has(t: str, pattern: str) -> bool:
    return re.search(pattern, t) is not None


_ME = r"(?:me|you|myself|yourself|the camera|the robot|the unit)"
_MY = r"(?:my|your|the camera's|the robot's|the unit's)"
# Verbs (and nouns) of turning in place: "turn", "rotate", "spin", "pivot", "swivel", "yaw", "swing round".
_TURN_VERB = (
    r"\b(?:turn(?:s|ed|ing)?|rotat(?:e|es|ed|ing|ion)|spin(?:s|ning)?|spun|pivot(?:s|ed|ing)?"
    r"|swivel(?:s|led|ed|ling|ing)?|yaw(?:s|ed|ing)?|swing(?:s|ing)?|swung|twist(?:s|ed|ing)?)\b"
)
_TURN_WORDS = r"\b(?:left|right|clockwise|counterclockwise|around|round|degrees?)\b"
_STRAIGHT = r"(?:straight |directly |dead |right )?"
# Turning until the object is ahead: "to face OBJ", "to point straight at OBJ", "so that OBJ is dead ahead".
_FACE = (
    rf"\bto (?:face|be facing|look {_STRAIGHT}at|point {_STRAIGHT}(?:at|towards?)|aim (?:at|towards?)"
    rf"|head {_STRAIGHT}(?:for|towards?)|line up with)\b"
    rf"|\bface OBJ|facing OBJ|face towards? OBJ|face the direction|\blook(?:s|ing)? {_STRAIGHT}at OBJ"
    rf"|\bpoints? (?:me|you|the camera|the robot) {_STRAIGHT}(?:at|towards?) OBJ"
    r"|\b(?:heading|optical axis|front|nose) (?:points?|is pointing|faces|is facing|is aimed)"
    rf" {_STRAIGHT}(?:at|towards?) OBJ"
    r"|\b(?:so that|so|until|till|for|before) OBJ (?:is|was|lies|sits|will be|would be|ends up|to be) "
    rf"{_STRAIGHT}"
    r"(?:ahead|in front)"
    rf"|\b(?:brings?|puts?|gets?) OBJ {_STRAIGHT}(?:ahead|in front|center(?:ed)?\b|in the middle"
    r"|on (?:the|my|your) nose)"
    rf"|\b(?:pointed|pointing|aimed) {_STRAIGHT}(?:at|towards?) OBJ|\b(?:snap|lock) (?:on ?to|to) OBJ"
    # the robot's own pose toward it: "to be oriented towards OBJ", "to take in OBJ" (bring it into view)
    rf"|\b(?:oriented|orientated|directed|aligned) {_STRAIGHT}(?:at|towards?|with) OBJ|\bto take in OBJ"
    # the heading made to meet it: "to align the heading with OBJ", "to confront OBJ"
    r"|\balign(?:s|ed|ing)? (?:the |my |your |its |our )?(?:heading|camera|front|nose) (?:with|on|to) OBJ"
    r"|\bconfront(?:s|ed|ing)? OBJ"
    # twelve o'clock is straight ahead: "how many degrees to put OBJ at 12 o'clock"
    r"|\b(?:until|till|so that|so|to (?:put|get|bring|have)) OBJ (?:is |ends up |sits |lands )?(?:at|on|to) "
    r"(?:my |your |the )?12 ?o'?\s?clock"
    # a sight put on the object, as games aim: "till my crosshair is on OBJ", "OBJ in the reticle"
    r"|\b(?:crosshairs?|cross hairs?|reticle|sights?) (?:is |are |lands? |sits? |rests? )?(?:on|over) OBJ\b"
    r"|\bOBJ (?:is )?(?:in|under) (?:my |your |the )?(?:crosshairs?|cross hairs?|reticle|sights?)\b"
    rf"|{_TURN_VERB} (?:(?:counterclockwise|clockwise|left|right|degrees|around|round) ){{0,2}}"
    r"(?:to|towards?|onto) OBJ"
    rf"|\bsquare (?:\w+ ){{0,2}}up (?:to|with) OBJ"
    rf"|\b(?:having|have|get|put|see) OBJ {_STRAIGHT}(?:ahead|in front)"
    r"|\b(?:to|for) (?:see|seeing|view|viewing|looking|looking at|facing) OBJ\b"
)
# The space under an object is the height of its bottom: "the gap under OBJ", "room beneath it".
_UNDER_GAP = (
    r"\b(?:gap|space|room|clearance|distance|height)(?: is there| there is| left)? (?:under|beneath|below"
    r"|underneath)\b"
)
# How high an object reaches is the height of its top.
_REACH_UP = (
    r"\bhow (?:high|far up)\b[^.?!;]*\breach(?:es)?\b|\breaches to\b"
    r"|\breach(?:es|ing)? (?:up|higher|highest|the highest|as high|furthest up|lower|lowest|less high)\b"
    r"(?! to OBJ)"
    # an object's reach compared: "does OBJ reach less high than OBJ", "how much higher up does OBJ reach"
    r"|\bOBJ reach(?:es)? (?:\w+ )?(?:higher|lower|less high|as high|so high|further up|farther up)\b"
    r"|\b(?:higher|lower)(?: up)? (?:does|do|did|would|will) OBJ reach\b"
    r"|\b(?:stick|sticks|sticking|stand|stands|standing|rise|rises|rising|extend|extends|extending) up\b"
    # how far up an object goes: "up to where does OBJ go", "how high does OBJ go", "OBJ goes up to"
    r"|\bup to where\b|\bhow (?:high|far up) (?:does|do|did) OBJ (?:go|come)\b"
    r"|\b(?:go|goes|going|come|comes) up to\b"
)
_OVER_FLOOR = (
    r"(?:above|off|from|over|relative to) (?:the )?(?:ground|floor)|floor level|\belevat"
    r"|\bbetween (?:the )?(?:ground|floor) and\b"
    rf"|clearance|how high|at what height|{_UNDER_GAP}"
    # the height an object is at ("what height is OBJ mounted at?", "the height OBJ hangs at"): where it
    # is, not how tall
    r"|\bheight\b[^,.;:?!]*\bOBJ\b(?: [a-z]+){0,3} at\s*(?=[?.!,;:]|$)"
)
# Reaching for an object; naming an arm also asks it, unless a distance is asked beside it.
_REACH_ACT = (
    r"\breach|\bgrab(?:bing|bable)?\b|pick (?:it |OBJ )?up|get hold|\btouch\b"
    r"|without (?:walking|moving|stepping|taking a step)|\bgrasp|\bgrip|\b(?:my|your) hand\b"
)
_REACH = _REACH_ACT + r"|\barm\b|\b(?:manipulator|gripper)\b"
_DIFF = (
    r"\bhow much (?:higher|lower|taller)|higher or lower|differ|difference|vertical offset"
    r"|apart in height|height gap|\bhow (?:high|far|much|many \w+) (?:above|over|below|under|beneath) OBJ\b"
)
# A vertical offset asked as a quantity ("how far above OBJ", "how many cm higher", "vertical distance").
_HOW_MUCH = r"\bhow (?:far|much|many)\b|\b(?:distance|gap|offset)\b|\bamount by which\b"
_UP_DOWN = r"\b(?:further|farther) (?:up|down)\b"
_VERTICAL = (
    r"\b(?:higher|lower|above|below|under|underneath|beneath|vertical|vertically)\b"
    r"|\bexceeds? .*\bin height\b|\bhow (?:far|much) (?:up|down)\b|\bfrom OBJ (?:up|down) to\b|" + _UP_DOWN
)
_OWN_HEIGHT = (
    r"\bitself\b|\b(?:bottom|base|top) to (?:its |the )?(?:top|bottom|base)\b|\bhow tall\b|\btall\b"
    r"|vertical (?:size|extent|span|dimension)"
)
# The two horizontal sides of an object: "its longer side" is its length, "the narrower dimension" its width.
_SIDE = r"(?:horizontal )?(?:sides?|dimension|edges?)\b"
_LARGER = r"(?:long|longer|longest|large|larger|largest|big|bigger|biggest)"
_SMALLER = r"(?:short|shorter|shortest|small|smaller|smallest|narrow|narrower|narrowest)"
# Nearness to the floor is lowness: "closer to the floor", "nearest the ground".
_NEAR_FLOOR = r"\b(?:closer|closest|nearer|nearest) (?:to )?the (?:floor|ground)\b"
_WHICH_SIDE = r"\b(?:which|what) side\b"
# A question that asks for one of the objects: "which", "whose", or an order to pick one.
_WHICH = (
    r"\b(?:which|whose)\b|\b(?:pick|choose|select) (?:the|one)\b"
    # "identify the one further right", "name the one nearest you": one of those offered is asked for
    r"|\b(?:identify|name|indicate|point out|point to|spot|find|give me|tell me|show me) the one\b"
    # "out of OBJ and OBJ who's further left": "who" after the objects named asks which of them
    r"|\b(?:of|from|among|between) OBJ(?:(?:,| and|, and| or|, or| &) OBJ)+,? who(?:'s| is| are)\b"
)
_SIZE_CMP = (
    r"\b(?:taller|tallest|shorter|shortest|longer|longest|wider|widest|narrower|narrowest)\b"
    r"(?! (?:distance|path|route|way)\b)"
    r"|\b(?:bigger|larger|greater|smaller|lesser|less|more)(?: in)? (?:height|width|length)\b"
    r"|\bby (?:height|width|length)\b.*\b(?:greatest|largest|biggest|smallest|least|most)\b"
    r"|\b(?:less|least) (?:tall|long|wide)\b"
    r"|\b(?:greatest|largest|biggest|smallest|least|most)(?: in)? (?:height|width|length)\b"
    # "compare the heights of OBJ, OBJ and OBJ and return the one with the largest"
    r"|\b(?:heights|widths|lengths) of\b.*\b(?:the one|one|the object) with the"
    r" (?:greatest|largest|biggest|smallest|least)\b"
)
# A yes/no question: a clause (after a lead-in such as "Compared with OBJ,") opens with an auxiliary,
# or it asks "whether", "yes or no", "true or false".
_YESNO = (
    # (also after a conjunction or an interjection opening the clause: "dear, but is OBJ nearer ...")
    r"(?:^|[,;:.?!] )(?:(?:but|and|so|then|now|well|oh|please) )*"
    r"(?:am|is|are|does|do|did|can|could|would|will|should|was|has|have)(?:n?'t)?\b"
    r"|\bwhether\b|\byes or no\b|\btrue or false\b|\btrue ?/ ?false\b|\bt ?/ ?f\b|\by ?/ ?n\b|\byes ?/ ?no\b"
    r"|\b(?:confirm|verify|validate)\b|^(?:check|assert|true or false|true/false|t/f)\b ?[:,]"
    # a predicate typed by its return value: "bool is_nearer(a=OBJ, b=OBJ)", "... -> boolean"
    r"|\b(?:bool|boolean)\b"
    r"|\b(?:tell|say|check|know|see) (?:me |us )?if\b"
    # a subject set out before its question: "the OBJ, is it closer than the OBJ"
    r"|\bOBJ,? (?:is|was|does|can) (?:it|that|this)\b"
    # a yes/no question asked inside another: "grandpa wants to know is OBJ higher ..."
    r"|\b(?:know|wonder|wondering|asks?|asking|asked),? (?:is|are|does|do|can|was)\b(?= (?:the )?OBJ\b)"
)
# A statement asked with a question mark ("OBJ is nearer to you than OBJ?") asks whether it holds.
# (also with a clarification after its question mark that asks nothing: "...? At the centres, I mean.")
_ASKS_NOTHING_AFTER = r"(?: (?![^?]*\b(?:which|what|who|how|where|tell|give|or|and)\b)[^?]*)?$"
# The subject of a stated comparison: an object, or a point of it ("the top of OBJ", "top of OBJ", "OBJ
# bottom"), which asks about the object as "OBJ is" does
STATED_SUBJECT = r"(?:(?:the )?(?:top|bottom|center|middle) of )?OBJ(?: (?:top|bottom|center|middle))?"
_DECLARED = (
    rf"^{STATED_SUBJECT} (?:is|are|sits|stands|lies|looks|seems)\b[^?]*\?{_ASKS_NOTHING_AFTER}"
    # a comparison said as a fragment and asked: "OBJ closer than OBJ?", "OBJ not as far as OBJ?"; no
    # question word before it, so what follows its question mark ("yes, no.", "by the middles.") asks
    # nothing more and the fragment is the yes/no, never a choice
    r"|^OBJ (?![^?]*\b(?:which|what|who|how|where|or)\b)[^?]*\b(?:than|as) (?:\w+ ){0,2}OBJ\W*\?"
    rf"{_ASKS_NOTHING_AFTER}"
    # a planner's relation then its comparative: "OBJ wrt OBJ: higher?" (is the first higher than the other)
    r"|^OBJ (?:with respect to|relative to|compared (?:with|to)) OBJ[:,] (?:more |less )?\w+er\?$"
)
_UNITS = {
    "cm": r"centimeters?|cms?",
    "mm": r"millimeters?|mms?",
    "ft": r"feet|foot|ft",
    "in": r"inch(?:es)?|ins",  # "ins": the inch's abbreviation in the plural, as "cms" and "mms"
    "m": r"meters?",
}
_PLURAL_UNITS = r"centimeters|millimeters|meters|feet|inches|cms?|mm|ft"
_SINGULAR_UNITS = r"centimeter|millimeter|meter|inch"
# A unit word without a number before it asks for a unit; after one it states a length ("2 meters").
_NO_NUMBER_BEFORE = r"(?<![\d.])(?<![\d.] )"
# "how many" counts a noun: "in." after it is the inch's abbreviation, never the preposition
_HOW_MANY_IN = r"\bhow many in\."
_HOW_MANY_UNITS = r"\bhow (?:many|much) (?:" + "|".join(_UNITS.values()) + r")\b|" + _HOW_MANY_IN
_APART = (
    r"how far|distance|apart|separat|spacing|\bgap\b|\b(?:space|room|span)\b.*\bbetween\b"
    r"|\bcenter to center\b"
    r"|\bcenter of OBJ to (?:the )?center of OBJ\b"
    r"|how (?:distant|close|near)\b|" + _HOW_MANY_UNITS
)
_LEN = r"(\d+(?:\.\d+)?)\s*(meters?|m|centimeters?|cm|millimeters?|mm|feet|foot|ft|inch(?:es)?)\b"
_TO_M = {"m": 1.0, "cm": 0.01, "mm": 0.001, "ft": 0.3048, "in": 0.0254}


def _unit_of(word: str) -> str:
    for unit, pattern in _UNITS.items():
        if re.fullmatch(pattern, word):
            return unit
    return "m"


def asked_unit(t: str) -> str:
    """The unit a quantity is asked in, meters when none is said.

    "how many centimeters" (or "how much millimeter"), "in feet", else a unit named without a number
    before it ("..., centimeters please", "..., inch"); "2 meters" is a stated length and "on foot" no
    unit (a bare "foot" is read only in the plural).
    """
    words = "|".join(_UNITS.values())
    if _has(t, _HOW_MANY_IN) or _has(t, r"\bin in\."):  # "how many in. ...", "in in.": inches abbreviated
        return "in"
    m = re.search(rf"\bhow (?:many|much) ({words})\b", t) or re.search(rf"\bin ({words})\b", t)
    if m is None:
        m = re.search(rf"{_NO_NUMBER_BEFORE}\b({_PLURAL_UNITS}|{_SINGULAR_UNITS})\b", t)
    return _unit_of(m.group(1)) if m else "m"


def _point(t: str) -> str:
    """Reference point of a height: top, bottom or (default, also when named) center."""
    top = _has(
        t,
        r"\b(?:tops?|topmost|uppermost|highest (?:point|part|edge)s?|upper (?:edge|surface|side)s?"
        r"|top (?:surface|edge)s?)\b",
    )
    top = top or _has(t, _REACH_UP)
    bottom = _has(
        t, r"\b(?:bottoms?|bottommost|lowermost|undersides?|lowest (?:point|part|edge)s?|base|lower edges?"
        r"|clearance)\b"
    ) or _has(t, _UNDER_GAP)
    if top and not bottom:
        return "top"
    if bottom and not top:
        return "bottom"
    return "center"


def _length_m(t: str) -> float | None:
    m = re.search(_LEN, t)
    if m is None:
        return None
    return float(m.group(1)) * _TO_M[_unit_of(m.group(2))]


_IMAGINED = r"\b(?:once|after|when|if|as soon as|following|say|suppose|imagine|assuming)\b"


_CLAUSE_BREAK = r"[,.;:?!]|\b(?:and )?then\b"
# A turn given as an order at a clause's start: "turn left 90", "ok now rotate right".
_TURN_ORDER = rf"^ *(?:(?:so|ok|okay|now|first|please|let's|lets|i|you|we|and) )*(?={_TURN_VERB})"


def _turn_clause(t: str) -> str | None:
    """The clause that describes my turn, if the question imagines one.

    A clause runs between punctuation, or from a conjunction that opens a turn ("..., after I turn
    left", "where will it be once I've turned 45 degrees right", "following a left turn") to the end of
    its punctuation clause, or, unpunctuated (speech), to the first question word or object after the
    turn verb ("if i turn left what o'clock is OBJ", "after i turn right OBJ is at what o'clock"); so
    does a turn said as an order ("turn left 90 degrees where is OBJ"). "then" ends a clause.
    """
    for clause in re.split(_CLAUSE_BREAK, t):
        if _has(clause, _TURN_VERB) and _has(clause, _TURN_WORDS) and not _has(clause, _FACE):
            opened = re.search(rf"{_IMAGINED}(?=.*{_TURN_VERB})", clause) or re.match(_TURN_ORDER, clause)
            if opened is None:
                return clause
            clause = clause[opened.start() :]
            verb = re.search(_TURN_VERB, clause)
            assert verb is not None  # the lookahead found it
            stop = re.search(r"\b(?:what|where|which|how)\b|OBJ", clause[verb.end() :])
            return clause[: verb.end() + stop.start()] if stop else clause
    return None


# a number, also one that ends a sentence ("arm 0.7."), not a range's "1..12"
_BARE_NUMBER = r"(?<![\w.])(\d+(?:\.\d+)?)(?!\w|\.\d|\.\.)"


def _turn(clause: str) -> tuple[str | None, float]:
    """Direction (left/right) and angle of a turn clause; a quarter turn when no angle is said."""
    if _has(clause, r"\b(?:counterclockwise|left)\b"):
        side: str | None = "left"
    elif _has(clause, r"\b(?:clockwise|right)\b"):
        side = "right"
    else:
        side = None
    # "turn(right, 45)": a bare number in the turn clause is its angle
    m = re.search(r"(\d+(?:\.\d+)?)\s*degrees?", clause) or re.search(
        rf"{_BARE_NUMBER}(?! ?(?:o'?\s?clock|{_LENGTH_UNIT}|feet|cm|mm|ft|in\b|%|percent))", clause)
    if m:
        angle = float(m.group(1))
    elif _has(clause, r"\bthree quarters?\b"):
        angle = 270.0
    elif _has(clause, r"\bquarter\b"):  # "spin round to the right a quarter turn": the amount said wins
        angle = 90.0
    elif _has(clause, r"\b(?:around|round|half (?:a )?turn|about face|u turn)\b"):
        angle = 180.0
    elif _has(clause, r"\b(?:full|whole|complete) (?:turn|circle|rotation)\b"):
        angle = 360.0
    else:
        angle = 90.0  # "a quarter turn", or a turn to one side with no angle
    return side, angle


# Words that make the object after them the reference of a comparison or relation ("relative to the
# top of OBJ", "than OBJ", "below OBJ", "on which side of OBJ", "which side from OBJ"), and "OBJ as the
# reference".
_REFERENCE_BEFORE = (
    r"\b(?:relative to|compared (?:with|to)|in comparison (?:with|to)|with respect to|in relation to|next to"
    r"|beside|looking at|than|against|versus|vs"
    r"|above|below|under|underneath|beneath|over|(?:side|left|right) (?:of|from)|(?:up|down) from"
    r"|(?:which|what) (?:way|direction) from"
    # (a planner's "rel OBJ ref OBJ", "reference: OBJ")
    r"|ref:?|reference(?: object)?:?)"
    r"(?: the (?:\w+ ){1,2}of| that of)? $"
)
# "the offset from OBJ up to OBJ": the climb starts at the reference.
_REFERENCE_FROM = r"\bfrom OBJ (?:straight |all the way )?(?:up|down) to (?:the \w+ of )?OBJ"
_REFERENCE_AFTER = r"^ as (?:the |a |my |our )?(?:reference|baseline|anchor)\b"
# "From OBJ, is OBJ to the left?": a lead-in that starts from an object names the reference.
_REFERENCE_LEAD = r"^(?:as )?(?:seen |viewed |looking |starting )?from OBJ,"
# A relation to "it" whose pronoun stands for the object named first ("OBJ ...; is OBJ above it?"); "it"
# in a pair ("the nearer one of it and OBJ") is one of the pair, no reference.
# (a point of "it", "the bottom of it", names where the objects are measured, no relation to the first;
# "on top of it" is one)
_REFERENCE_IT = (r"\b(?:above|below|under|underneath|beneath|over|on|(?<!the top )(?<!the bottom )"
                 r"(?<!the center )(?<!the middle )(?<!the base )(?<!the underside )(?<!the height )of) it\b"
                 r"(?! (?:and|or|&) )")


def _subject_second(t: str) -> bool:
    """Whether the object named first is the reference of a two-object question.

    It is when words before it or after it mark it ("Relative to OBJ, is OBJ ...", "OBJ as the
    reference", "how far below OBJ is OBJ", "how many cm higher than OBJ is OBJ", "from OBJ up to
    OBJ"), or when a relation
    to "it" refers back to it, unless the second object is the marked one ("left of OBJ or right of it").
    """
    first, second = (m.start() for m in re.finditer("OBJ", t))

    def marked(at: int) -> bool:
        # (a mark before a pair, "looking at OBJ and OBJ, which one is on top?", names the objects asked
        # about, no reference)
        pair = re.match(r",? (?:and|&) OBJ\b", t[at + 3 :])
        return (_has(t[:at], _REFERENCE_BEFORE) and pair is None) or _has(t[at + 3 :], _REFERENCE_AFTER)

    # (a mark on each, "rel OBJ ref OBJ", leaves the one a planner's "ref" names the reference)
    return (
        (marked(first) and not marked(second))
        or _has(t, _REFERENCE_FROM)
        or _has(t, _REFERENCE_LEAD)
        or (_has(t, _REFERENCE_IT) and not marked(second))
    )


def stated_objects(question: str, t: str) -> list[int] | None:
    """The two named objects subject first, when the words make the second-named the subject; else None
    (the order they are named in). ``t`` is ``normalise(question)``."""
    refs = object_references(question)
    named = [r for r in refs if r is not None]
    distinct = list(dict.fromkeys(named))
    if len(distinct) != 2 or len(refs) != len(named):
        return None
    topic = re.match(r"^\W*(?:(?:so|ok|okay|now|well|and|um|uh)\W+)*<object\d+> (?:and|&) <object\d+>\W*",
                     question, re.IGNORECASE)
    if len(named) > 2 and topic is not None:
        # A topic list before the question ("OBJ and OBJ: which side is OBJ on compared to OBJ?"): the
        # question after it says which is the subject, the list's order does not.
        rest = question[topic.end():]
        order = stated_objects(rest, normalise(rest)) or list(dict.fromkeys(
            r for r in object_references(rest) if r is not None))
        if len(order) == 2:
            return order if order != distinct else None
    if len(named) > 2:
        # An object named again ("Looking at OBJ and OBJ: is OBJ the one farther?"): the subject is
        # the first object of the last clause that names one.
        # (a parenthetical remark restates, it does not ask: "is OBJ beneath OBJ (OBJ over it)?")
        plain = re.sub(r"\([^)]*\)", " ", question)
        last = [c for c in re.split(r"[,.;:?!]", plain) if object_references(c)][-1]
        in_last = [r for r in object_references(last) if r is not None]
        # (unless that clause marks its first object as the reference: "... how far above OBJ is OBJ")
        second_marked = len(set(in_last)) == 2 and len(in_last) == 2 and _subject_second(normalise(last))
        subject = in_last[1] if second_marked else in_last[0]
        return [subject, distinct[0]] if subject != distinct[0] else None
    return [distinct[1], distinct[0]] if _subject_second(t) else None


def count_objects(question: str, n_regions: int) -> int:
    """Objects a question is about: its distinct references (each anonymous ``<REGION>`` counts once), or,
    with none ("How far is it from me?"), the request's ``n_regions``."""
    refs = object_references(question)
    return (len({r for r in refs if r is not None}) + refs.count(None)) or n_regions


# A form of answer denied ("degrees, not o'clock", "not in degrees"): never the form asked.
_NEGATED_FORM = r"\bnot (?:in |as |an? )?(?:o'?\s?clock|clock|degrees?|angle|bearing)\b"


class Question:
    """A normalised question ``t`` about ``n`` objects, with the features several cues read."""

    def __init__(self, t: str, n: int) -> None:
        self.t, self.n = t, n
        # the answer's form without the forms denied ("degrees, not o'clock" does not ask o'clock)
        self.forms = re.sub(_NEGATED_FORM, " ", t)
        self.unit = asked_unit(t)
        # "Is OBJ or OBJ closer?" offers a choice, like "which"; so does "is OBJ closer or is OBJ?"
        self.yesno = (_has(t, _YESNO) or _has(t, _DECLARED)) and not _has(
            t, rf"{_WHICH}|\bOBJ,? or (?:\w+ )?OBJ\b|\bOBJ\b[^.;?!]*, or (?:\w+ ){{0,2}}OBJ\b"
            r"|\bOBJ\b[^.;?!]* or (?:is|are|does|do|did|was|would|will|can|could) (?:\w+ ){0,2}OBJ\b"
            # (the objects offered by their places in the question: "is the first or the second one closer")
            r"|\bthe (?:first|former)(?: one)? or the (?:second|latter)\b"
        )
        self.form = "yesno" if self.yesno else "choice"
        self.side_words = _has(t, r"\bleft(?:most)?\b"), _has(t, r"\bright(?:most)?\b")
        self.offered = _has(t, _TWO_OBJECTS_OFFERED)  # "is OBJ or OBJ on top?" asks for one of them

    def has(self, pattern: str) -> bool:
        return _has(self.t, pattern)

    @cached_property
    def future_turn(self) -> tuple[str | None, float, bool] | None:
        """A turn I imagine and a direction asked after it: (side, angle, asked in degrees), else None."""
        t = self.t
        clause = _turn_clause(t)
        rest = t.replace(clause, " ") if clause else t
        asked = r"o'?\s?clock|clock|where|direction|degrees?|angle|bearing|oriented|position"
        if clause is None or not _has(rest, asked):
            return None
        side, angle = _turn(clause)
        if side is None:  # "do a full about-face, turning to my left": the side in another clause
            # (or an afterthought, "turn 90 degrees, left I mean", that names no object)
            sides = (_turn(c)[0] for c in re.split(r"[,.;:?!]", t)
                     if _has(c, _TURN_VERB) or not _has(c, r"OBJ|\b(?:what|where|which|how)\b"))
            side = next((x for x in sides if x is not None), None)
        rest = re.sub(_NEGATED_FORM, " ", rest)
        degrees = _has(rest, r"\bdegrees?\b|\bangle\b|\bbearing\b") and not _has(rest, r"o'?\s?clock|clock\b")
        return side, angle, degrees


_OTHER_SIDE: dict[str, str] = {"left": "right", "right": "left"}
_ONE = r"(?:one|object|item|unit|thing)\b"
_NEXT_REACH = r"(?:grab|reach|pick|grasp|touch)\w*"
_MOVED = (
    r"\b(?:walk|walked|walking|travel|traveled|travelled|moved|move|moving|gone|go|covered|cover"
    r"|went|route|path|trajectory|journey|trip|odometry|movements?|travers\w*|wheeled|roll|rolled|rolling|drove|driven"
    r"|driving|drive|drives|wander\w*|roam\w*|cruis\w*|trundl\w*)\b|\bso far\b|\bin total\b|\bhow much way\b"
)
_OTHER = r"(?:OBJ|the other|it)\b"
_ABOVE_OBJ = (
    rf"\babove\b(?! (?:the )?(?:floor|ground))|\b(?:over|on|supported by|held up by) {_OTHER}|\bon top\b"
    r"|\b(?:at the )?top of the (?:stack|pile)\b"
)
_BELOW_OBJ = (
    rf"\b(?:below|under|underneath|beneath|supports?|supporting|holds? up|holding up) {_OTHER}"
    r"|\bunderneath\b|\bbelow\b|\b(?:at the )?bottom of the (?:stack|pile)\b"
)
# "a greater (centre) distance from me", "the greatest range from camera"
_DIST_TO_ME = rf" (?:\w+ ){{0,2}}(?:distance|range) (?:from|to) (?:{_ME}|it|camera)\b"
_FAR = (
    r"\b(?:farther|further|farthest|furthest)\b|(?:most|more) (?:distant|far)\b"
    rf"|\b(?:greater|larger|bigger|longer|greatest|largest|biggest|longest){_DIST_TO_ME}"
)
# "the closest points of each object" says where a distance is measured from, it compares nothing
_NEAR = (
    r"\b(?:closer|nearer|closest|nearest)\b(?! (?:points?|surfaces?|parts?|edges?)\b)"
    rf"|\b(?:smaller|shorter|lesser|smallest|shortest|least){_DIST_TO_ME}"
)


# ------------------------------------------------------------------------------ cues
# Each reads a ``Question`` and gives the slots it states (the task's defaults fill the rest), or None
# when its words are not there. Their order (the ranks in the registry, ``tasks.py``) is the decision
# list: a cue is only asked when every cue ranked before it for that number of objects gave None.

# -- no object
def cue_walked_distance(q: Question) -> Slots | None:
    asked = r"how far|distance|how (?:many|much)|how long|\blength\b|\btotal\b|\baltogether\b"
    if q.has(_MOVED) and (q.has(asked) or claimed_quantity(q.t) is not None):
        return {"unit": q.unit}
    return None


# -- one object
def cue_rotate_to_face(q: Question) -> Slots | None:
    # "looking at OBJ" alone sets the scene ("I'm looking at OBJ; how far is it?"); facing it is a
    # turn only when the question asks for one
    if q.has(_FACE) and q.has(rf"{_TURN_VERB}|\b(?:degrees?|angle|clockwise|counterclockwise)\b"):
        return {"direction": "ccw" if q.has(r"\bcounterclockwise\b|\bleft\b") else "cw"}
    return None


def cue_future_direction_degrees(q: Question) -> Slots | None:
    turn = q.future_turn
    return None if turn is None or not turn[2] else {"turn": turn[0], "angle_deg": turn[1]}


def cue_future_direction_clock(q: Question) -> Slots | None:
    turn = q.future_turn
    return None if turn is None or turn[2] else {"turn": turn[0], "angle_deg": turn[1]}


def cue_direction_clock(q: Question) -> Slots | None:
    return {} if _has(q.forms, r"o'?\s?clock|\bclock\b|\bwhich hour\b") else None


def cue_direction_degrees(q: Question) -> Slots | None:
    # ("the angular offset of OBJ from the camera's forward direction": an angle, said by its adjective)
    return {} if _has(q.forms, r"\bbearing\b|\bangle\b|\bangular\b|\bdegrees?\b") else None


def cue_side_of_me(q: Question) -> Slots | None:
    if any(q.side_words) and q.has(
        rf"\b{_MY} (?:left|right)|(?:left|right) of {_ME}\b|relative to {_ME}\b|side of {_ME}\b|"
        rf"\bi'?m facing|\bi am facing|\b{_MY} (?:left|right) hand|\b(?:on|to) the (?:left|right)\b"
        r"|\bleft or (?:the )?right\b|\b(?:image|view|frame|picture|screen)\b",
    ):
        return {"side": None if all(q.side_words) else ("left" if q.side_words[0] else "right")}
    if q.has(_WHICH_SIDE) or q.has(rf"\bside\b.*\brelative to {_ME}\b"):
        return {}
    return None


def cue_reaches_up(q: Question) -> Slots | None:
    """How high an object reaches: the height of its top."""
    return {"point": "top", "unit": q.unit} if q.has(_REACH_UP) else None


def cue_own_height(q: Question) -> Slots | None:
    return {"unit": q.unit} if q.has(_OWN_HEIGHT) else None


def cue_over_floor(q: Question) -> Slots | None:
    return {"point": _point(q.t), "unit": q.unit} if q.has(_OVER_FLOOR) else None


def cue_reachability(q: Question) -> Slots | None:
    # "before I send the arm out, give me the range to OBJ": an arm named while a distance is
    # asked (not a yes/no question, no reaching verb) is context
    # ("before you grab it, how far is OBJ": the reach is the next step, the distance the question)
    t = q.t
    later = re.sub(rf"\b(?:before|after|once|so that) (?:you|i|we) (?:\w+ ){{0,2}}?{_NEXT_REACH}", " ", t)
    context_arm = not q.yesno and _has(t, r"\b(?:distance|range|how far)\b") and not _has(later, _REACH_ACT)
    return {"arm_length_m": _length_m(t)} if _has(t, _REACH) and not context_arm else None


def cue_height_of_a_point(q: Question) -> Slots | None:
    """"the height of its top / of the center of OBJ" is a height over the floor, not a size."""
    if not q.has(r"\bheight\b"):
        return None
    point = _point(q.t)
    if point != "center" or q.has(r"\b(?:center|middle) of OBJ"):
        return {"point": point, "unit": q.unit}
    return None


def cue_height(q: Question) -> Slots | None:
    return {"unit": q.unit} if q.has(r"\bheight\b") else None


def cue_object_width(q: Question) -> Slots | None:
    wide = rf"\bhow (?:wide|narrow)\b|\bwidth\b|\bwide\b|\b{_SMALLER} {_SIDE}"
    return {"unit": q.unit} if q.has(wide) else None


def cue_object_length(q: Question) -> Slots | None:
    return {"unit": q.unit} if q.has(rf"\bhow long\b|\blength\b|\blong\b|\b{_LARGER} {_SIDE}") else None


def cue_distance_to_camera(q: Question) -> Slots | None:
    if q.has(
        rf"how far|distance|\brange\b|\bgap\b|\baway\b|how (?:distant|close|near)\b|\bfrom {_ME}\b"
        rf"|how many \w+ am i from|{_HOW_MANY_UNITS}|separat|\bbetween\b"
        r"|\bcamera to (?:the )?(?:object|OBJ)\b",
    ):
        return {"unit": q.unit}
    return None


# -- two or three objects
def cue_which_side_of(q: Question) -> Slots | None:
    if q.n == 2 and not any(q.side_words) and q.has(rf"{_WHICH_SIDE}|\bside, OBJ (?:relative to|from) OBJ\b"):
        return {}
    return None


def cue_scan(q: Question) -> Slots | None:
    """"scanning from left to right, which comes first?": the one furthest to the side the scan starts on."""
    scan = re.search(r"\bfrom (?:the )?(left|right) to (?:the )?(?:left|right)\b.*\b(first|last)\b", q.t)
    if scan is None or not q.has(_WHICH):
        return None
    start = scan.group(1)
    return {"side": start if scan.group(2) == "first" else _OTHER_SIDE[start]}


def cue_furthest_to_a_side(q: Question) -> Slots | None:
    """"which is further left / on the left" picks one of the objects ("left or right of OBJ" relates two)."""
    if not any(q.side_words):
        return None
    which_one = (q.has(_WHICH) or q.offered) and not q.has(_WHICH_SIDE)
    one_side = not all(q.side_words)
    further = r"\b(?:further|farther|more|most|furthest|farthest)\b"
    if q.has(r"\b(?:leftmost|rightmost)\b") or (which_one and (one_side or q.has(further))):
        return {"side": "right" if q.side_words[1] and not q.side_words[0] else "left"}
    return None


def cue_left_or_right_of(q: Question) -> Slots | None:
    return {} if q.n == 2 and all(q.side_words) else None


def cue_right_of(q: Question) -> Slots | None:
    return {} if q.n == 2 and q.side_words[1] else None


def cue_left_of(q: Question) -> Slots | None:
    return {} if q.n == 2 and q.side_words[0] else None


def cue_unread_side(q: Question) -> Slots | None:
    """Side words that no side cue read (three objects, no "which"): no reading, rather than another."""
    return {} if any(q.side_words) else None


def cue_height_difference(q: Question) -> Slots | None:
    if q.n == 2 and (q.has(_DIFF) or (q.has(_HOW_MUCH) and q.has(_VERTICAL))):
        return {"point": _point(q.t), "unit": q.unit}
    return None


def cue_in_stack(q: Question) -> Slots | None:
    """"which is the lower one in the stack?", "the upper object", "which is at the bottom": which of them is
    stacked on the other."""
    in_stack = q.has(
        rf"{_STACK_WORDS}|\b(?:the )?(?:upper|top|bottom)(?:most)? (?:{_ONE}|element\b)"
        # "which one's at the bottom, OBJ or OBJ?": of two, the one under the other
        # (also with no verb, as a learner or a texter leaves it: "which one on the bottom")
        r"|\bwhich(?: one| of them)?(?: is|'s)? (?:on|at) the (?:very )?(?:top|bottom)\b(?! of\b)"
    )
    if q.n == 2 and in_stack and (q.has(_WHICH) or q.offered):
        lower = r"\b(?:lower|lowest|bottom|bottommost|under|underneath|beneath|below)\b"
        return {"relation": "below" if q.has(lower) else "above"}
    return None


def cue_points_above(q: Question) -> Slots | None:
    """"Is the top of OBJ above the top of OBJ?" compares heights of points, not a stacking."""
    named_point = _point(q.t) != "center" and not q.has(r"\bon top\b")
    if q.n == 2 and named_point and q.has(r"\b(?:above|below)\b") and not q.has(_WHICH):
        order = "min" if q.has(r"\bbelow\b") else "max"
        return {"point": _point(q.t), "order": order, "form": q.form}
    return None


def cue_which_is_above(q: Question) -> Slots | None:
    if q.n == 2 and (q.has(_ABOVE_OBJ) or q.has(_BELOW_OBJ)) and (q.has(_WHICH) or q.offered):
        return {"relation": "below" if q.has(_BELOW_OBJ) else "above"}
    return None


def cue_below(q: Question) -> Slots | None:
    return {} if q.n == 2 and q.has(_BELOW_OBJ) else None


def cue_above(q: Question) -> Slots | None:
    return {} if q.n == 2 and q.has(_ABOVE_OBJ) else None


def cue_higher(q: Question) -> Slots | None:
    if q.has(
        rf"\b(?:higher|lower|highest|lowest)\b|{_NEAR_FLOOR}|at a greater height|{_UP_DOWN}"
        r"|\b(?:less|least) high\b",
    ):
        lower = rf"\b(?:lower|lowest|less|least)\b|{_NEAR_FLOOR}|\b(?:further|farther) down"
        return {"point": _point(q.t), "order": "min" if q.has(lower) else "max", "form": q.form}
    return None


def cue_taller(q: Question) -> Slots | None:
    if not q.has(_SIZE_CMP):
        return None
    dim = "length" if q.has(r"\blong|\blength") else "width" if q.has(r"\bwid|\bnarrow") else "height"
    smaller = r"\b(?:shorter|shortest|narrower|narrowest|smaller|smallest|lesser|less|least)\b"
    return {"dim": dim, "order": "min" if q.has(smaller) else "max", "form": q.form}


def cue_closest(q: Question) -> Slots | None:
    if q.n == 3 and q.has(rf"{_NEAR}|{_FAR}|by distance"):
        return {"order": "far" if q.has(_FAR) else "near"}
    return None


def cue_closer(q: Question) -> Slots | None:
    if q.has(rf"{_NEAR}|{_FAR}|by distance"):
        return {"order": "far" if q.has(_FAR) else "near", "form": q.form}
    return None


def cue_apart(q: Question) -> Slots | None:
    return {"unit": q.unit} if q.n == 2 and q.has(_APART) else None



# ------------------------------------------------------------------------------ whole-question check
# Cues a question can carry and the readings that use them. A reading that leaves one unused answers a
# different question than the one asked (the current direction for "after I turn left", the centre
# height for "how high does its top reach", yes/no for "is OBJ or OBJ on top"); for a robot that is worse
# than no answer, so such a parse is refused with the cue (``PARTLY_READ``). Each cue is checked on the
# text left after the cues before it took their words ("from the floor to its top" is a whole extent, so
# its "top" names no reference point).
# What a task's reading uses is in its registry entry (``SpatialTask.uses``), by these names:
#   whole: a whole extent; stacking: a stacking, a top or a bottom; turn: a turn (also a vague one);
#   threshold: a threshold and a length unit (an arm length); comparison: "than"; choice: a choice
#   between the objects; direction: the numbers of a direction's convention (0, 12, 90, 360 ...);
#   viewer: the asker's own place or view ("from me", "from the camera"); difference: how much more or
#   less one object is than another ("how much higher", "by how much"); floor: the floor as one end of
#   a measurement ("from the floor", "between OBJ and the ground"); size: a word of height or size (high,
#   tall, long, wide); horizontal: a measurement in the floor plane (the walk, bearings, footprints); walk:
#   the camera's own moves.
USES = frozenset({
    "whole", "stacking", "turn", "threshold", "comparison", "choice", "direction", "viewer", "difference",
    "floor", "size", "horizontal", "walk",
})


def picks_one(slots: Mapping[str, object], uses: frozenset[str]) -> bool:
    """Whether a reading with these ``slots`` and task ``uses`` picks one of the objects (a choice)."""
    return "choice" in uses or slots.get("form") == "choice"


_WHOLE = (
    r"\b(?:whole|entire|overall|full) (?:height|length|width|size|thing|object|OBJ|way up)\b"
    r"|\b(?:from )?(?:the |its )?(?:bottom|base|floor|ground|lowest point|lowest edge) "
    r"(?:all the way )?(?:up )?to (?:the |its )?(?:top|highest point|highest edge)\b"
    r"|\btop to (?:the |its )?bottom\b|\bend to end\b|\ball of (?:it|OBJ)\b"
)
# (also a clause of support: "when one sits on the other", "resting on each other")
_SUPPORT = (
    r"\bone (?:\w+ ){0,2}?(?:on|on top of) (?:the )?other\b|\bon (?:top of )?(?:each other|one another)\b"
)
_STACK_WORDS = rf"\b(?:stack|stacks|stacked|stacking|pile|piles|piled|heap)\b|{_SUPPORT}"
_STACKED = (
    rf"{_SUPPORT}|\bon (?:the )?top(?: of)?\b|\b(?:top|bottom) of the (?:stack|pile)\b|\bon the bottom\b"
    r"|\b(?:at|on) the (?:very )?(?:top|bottom)\b(?! (?:edge|surface|point|part|side)s?\b)"
)
_TOP_CUE = (
    r"\b(?:tops?|topmost|uppermost|highest (?:point|part|edge)|upper (?:edge|surface|side|end|part|rim)s?"
    rf"|peak|tip|rim|lid)\b|{_REACH_UP}"
)
_BOTTOM_CUE = (
    r"\b(?:bottoms?|bottommost|lowermost|undersides?|lowest (?:point|part|edge)|lower (?:edge|end|surface)s?"
    r"|clearance)\b|\b(?:base|foot|feet|legs?) of (?:OBJ|it)\b|\bits (?:base|foot|feet|legs?)\b"
    r"|\b(?:gap|space|room|distance|height) (?:under|beneath|below|underneath)\b"
    rf"|\bunder(?:neath)? (?:OBJ|it) (?:to|and) the (?:floor|ground)\b|{_UNDER_GAP}"
    # "OBJ underneath, how high is it?": an "under" that takes no object names the underside, which a
    # reading at the centre would not measure
    r"|\bunder(?:neath)?\b(?=\s*(?:[,.;:?!]|$))"
)
_THRESHOLD = (
    r"\b(?:more|less|further|farther|closer|nearer|higher|lower|taller|shorter|longer|wider|bigger|smaller"
    r"|over|under) than (?:an? |one )?(?:\d|half|meter|foot|inch|centimeter)"
    r"|\b(?:within|beyond|at least|at most|no more than|under|over) (?:\d|half|an? (?:meter|foot))"
)
# A limit stated as a rule ("must be kept at least 1 m from OBJ") is context for the measurement asked.
_REQUIREMENT = (
    r"\b(?:must|should|has to|have to|needs? to|is required to) (?:\w+ ){0,3}?"
    r"(?:at least|at most|within|no more than) \d+(?:\.\d+)? \w+"
)
_FROM_ME = (
    r"\b(?:away )?from (?:me|you|myself|yourself|the camera|camera|the robot|the viewer)\b"
    r"|\b(?:are you|am i|is the robot|is the camera) (?:\w+ )?from\b"
)
# (also an afterthought: "is OBJ closer, or maybe OBJ?")
_TWO_OBJECTS_OFFERED = (
    r"\bOBJ,? or (?:the |is |does )?OBJ\b|\beither OBJ or OBJ\b|\bOBJ\b[^.;?!]*, or (?:\w+ ){0,2}OBJ\b"
)
# "how far is OBJ, and which way is it?": one reading answers one question.
_SECOND_QUESTION = (
    r"\b(?:and|also|plus) (?:also )?(?:what|which|where|how|is|are|does|do|can|could|will|tell)\b"
    r"(?! (?:much|many)\b)"
    # a new sentence that asks again: "... of OBJ? And how far apart are they?", "...? Second, how wide?"
    r"|[.?!] (?:and|also|plus) (?:also )?(?:what|which|where|how|is|are|does|do|can|could|will|tell)\b"
    r"|\? (?:second(?:ly)?|next|then),? (?:what|which|where|how|is|are|does|do|can|could|will|tell)\b"
    # "I need two numbers: the distance to OBJ and its height"
    r"|\btwo (?:numbers|things|values|questions|measurements)\b"
    r"|\band (?:its|their) (?:height|width|length|distance|size|bearing|direction|clock position)\b"
)
_NEGATED = r"\b(?:not|never|isn't|aren't|doesn't|don't|wasn't|isnt|arent|doesnt|dont)\b(?! or\b)"
_VAGUE_TURN = r"\b(?:a (?:little )?bit|a little|slightly|somewhat|a few degrees|partly|part of the way)\b"
_LENGTH_UNIT_WORD = r"\b(?:meters?|centimeters?|millimeters?|cms?|mm|feet|foot|ft|inch(?:es)?)\b"
# A comparison denied: marked by the rewrites (DENIED for "not taller than", NOTAS for "not as tall as"),
# or a negation before a comparative ("isn't OBJ taller than OBJ").
_DENIED_COMPARISON = (
    r"\b(?:DENIED|NOTAS) (?:less )?\w+"
    r"|\b(?:not|isn't|aren't|isnt|arent|wasn't|is it not|are they not)\b(?! only\b)(?: (?!or\b)\w+){0,3}? (?:"
    r"(?:high|tall|low|near|clos|far|furth|wid|long|short|big|small|narrow|larg|thick|deep)er\b"
    r"|(?:more|less) (?:high|tall|low|near|close|far|wide|long|big|small)\b|(?:as|so) \w+ as\b)"
    # "no" between a verb and a comparative denies it as "not" does ("OBJ is no taller"; "no more than" a
    # number is a threshold; "its bottom no lower than the other's top" states a definition)
    r"|\b(?:is|are|was|sits?|stands?|lies?|'s|OBJ) no (?:(?:high|tall|low|near|clos|farth|furth|wid|long"
    r"|short|big|small|narrow|larg|thick|deep)er\b"
    r"|(?:more|less) (?:high|tall|low|near|close|far|wide|long|big|small)\b)"
)
# Units no reading converts to ("in mil": a millimetre to some, a thousandth of an inch to others): the
# answer would come in meters, a different number than the one asked for.
_OTHER_UNIT = (
    r"\b(?:mils?|millis?|thou|yards?|yds?|km|kilometers?|decimeters?|dm|miles?|microns?|furlongs?|paces?"
    r"|steps|hands|cubits?|kilometres?)\b(?= *(?:[,;:.?!]|$| please))|\b(?:in|into) (?:mils?|millis?|thou"
    r"|yards?|yds?|km|kilometers?|decimeters?|miles?|microns?|paces|steps)\b"
    r"|\bhow (?:many|much) (?:mils?|millis?|thou)\b"
)
# A comparative or superlative ("the highest", "taller", "nearer") asks to compare; a reading of one
# object's quantity would answer another question ("the highest" read as a centre height).
_COMPARED = (
    r"\b(?:high|tall|low|near|clos|far|furth|wid|long|short|big|small|narrow|larg|great|thick|deep)"
    r"(?:er|est)\b|\b(?:more|most|less|least) (?:high|tall|low|near|close|far|wide|long|big|small)\b"
)
# A question that opens with an auxiliary and offers nothing to pick ("is OBJ the taller?") asks yes or
# no: a choice reading would name an object where the asker expects a yes or a no.
_YESNO_ONLY = (
    r"^(?:is|are|does|do|did|was|were|will|would|can|could|has|have|isn't|aren't|doesn't)\b"
    r"(?!.*\b(?:which|who|whose|what|or|either|whether|where)\b)"
)
# "left or right" offered: only a reading that picks a side answers it (not "is it to the right?").
# An "or" beside a side word counts also when the other side is misspelt past reading ("on the leeft or
# the right"): a yes/no reading of the side it could read would answer another question.
_SIDES_OFFERED = (
    r"\b(?:left|right) or\b(?! (?:not|nah|no|nope)\b)"
    r"|\bor (?:to |on |at )?(?:the |its |my |your )?(?:left|right)\b"
)
# Any word of turning, also one no turn rule reads ("pan", "snap onto", "turn angle"): a direction reading
# without the turn answers where the object is now, not after (or to face it after) a turn.
_ANY_TURN = (
    rf"{_TURN_VERB}|\b(?:pan(?:s|ned|ning)?|snap(?:s|ped|ping)? (?:on ?to|to)|veer\w*|steer\w*)\b"
    r"|\bcounterclockwise\b|\bclockwise (?:turn|rotation)\b|\bpointed at\b"
)

# Opposite comparisons in one question ("is OBJ taller or shorter than OBJ?", "higher? or lower?"): a
# reading that orders one way answers half of it; a signed difference answers both.
_OPPOSITES = (
    (r"higher|highest", r"lower|lowest"),
    (r"taller|tallest", r"shorter|shortest"),
    (r"longer|longest", r"shorter|shortest"),
    (r"wider|widest", r"narrower|narrowest"),
    (r"closer|closest|nearer|nearest", r"(?:farther|farthest|further|furthest)(?! (?:up|down|left|right)\b)"),
    (r"bigger|biggest|larger|largest", r"smaller|smallest"),
)


# "how much shorter is OBJ than OBJ", "which is closer, and by how much?": a difference is asked, which a
# choice or a yes/no does not answer.
_HOW_MUCH_MORE = (
    r"\bhow (?:much|many (?:\w+ )?|far) (?:(?:is|are|was|does) (?:\w+ ){0,2}?)?(?:more |less )?"
    r"(?:higher|lower|taller|shorter|longer|wider|narrower|nearer|closer|farther|further|bigger|smaller|larger)\b"
    r"|\b(?:and|also|plus),? by how (?:much|many|far)\b"
)


# The dimension a size word names; "short" may be a height or a length, so it names none.
_DIM_WORDS = {"height": r"\btall\w*|\bheights?\b", "length": r"\blong\w*|\blengths?\b",
              "width": r"\bwid\w*|\bnarrow\w*|\bwidths?\b"}


def _dim_of(word: str) -> str:
    return next(dim for dim, pattern in _DIM_WORDS.items() if _has(word, pattern))


def _two_dims(t: str) -> list[str]:
    """Size words of two dimensions ("is OBJ wider than OBJ, or is it longer?"): their words, else none."""
    found = {dim: re.findall(pattern, t) for dim, pattern in _DIM_WORDS.items()}
    return [w for words in found.values() for w in words] if sum(bool(w) for w in found.values()) > 1 else []


# Comparisons of different quantities in one question ("is OBJ higher than OBJ and also closer?"): one
# reading answers one of them. Nearness to the floor is height, "further up / left" no distance.
_COMPARISON_KINDS = (
    r"\b(?:higher|highest|lower|lowest)\b",
    r"\b(?:taller|tallest|longer|longest|wider|widest|narrower|narrowest|bigger|biggest|larger|largest)\b",
    r"\b(?:closer|closest|nearer|nearest|farther|farthest|further|furthest)\b"
    r"(?! (?:to |from )?(?:the )?(?:floor|ground)\b| (?:up|down|left|right|to the|on the|apart)\b)",
)


# "which is further from OBJ", "closer to OBJ than to me": nearness to an object, which no task compares
# (distances to the camera are compared, the distance between two objects measured); "am I nearer to OBJ
# or to OBJ" asks which is nearer to me.
_NEAR_OBJECT = (
    r"\b(?:closer|nearer|farther|further|closest|nearest|farthest|furthest)(?: (?:apart|away|off|up))?"
    r" (?:from|to) OBJ\b(?!,? or (?:to |from )?OBJ\b)"
)

# Two references offered to one subject: "is OBJ closer to OBJ or to OBJ", "which is OBJ nearer, OBJ or
# OBJ": which of two objects the first is nearer to, a distance between objects no choice of the nearest
# to the camera answers ("which is closer to OBJ or OBJ", with no object before it, is left to the other
# checks: askers write it for the nearer of the two; "am I nearer to OBJ or to OBJ" is the camera's).
_REFERENCES_OFFERED = (
    r"\bOBJ (?:\w+ )?(?:closer|nearer|farther|further)(?: (?:to|from))? OBJ,? or (?:to |from )?OBJ\b"
    r"|\bOBJ (?:\w+ )?(?:closer|nearer|farther|further)(?: (?:to|from))?,? OBJ,? or OBJ\b"
)


# Words beside the question proper (issue 24, after fresh21): a likeness set off from it ("..., like a
# bottom plate under the movement", "as if it hung from a hook"), the asker's reason or purpose ("so I can
# cut the crossbar", "because I'm short") and a sentence about the asker that names no object and asks
# nothing ("I'd have to reach up to leave a note there.", "I can't see the floor well."). Their words
# picture or explain: a slot they alone would fill ("reach up" read as the top compared) is no slot of
# what is asked. (A teenager's "like" inside the question, "which one's like the farthest", is no
# likeness: one is set off by a break; nor is "like the long side", the object's own extent, but "like the
# bottom bunk of a bed" is, a part of another thing.)
_LIKENESS = (r"(?:^|[,;:.!?] ?)(?:like (?:a|an|some|my|your|his|her|our|their|i|you|we|they|he|she)"
             r"|like the (?=[^,.?!;:]*\bof (?:a|an|some|my|your|his|her|our|their)\b)|as if|as though)\b"
             r"[^,.?!;:]*")
# (the rewrites drop a clause's opening "so": ", so I can put ..." is read as ", i can put ...")
_REASON = (r"\bso (?:that )?(?:i|we)(?:'d|'ll| can| could| will| would| may| might| have| need| don't| do)\b"
           r"[^,.?!;:]*|, (?:i|we)(?:'ll| can| could| may| might)\b[^,.?!;:]*"
           r"|\b(?:(?:because|'?cause|since) (?:i|we)|in order to)\b[^,.?!;:]*")
# ... and a statement, opened by the asker ("I", "we") or by a subject and its verb ("my son is ...", "the
# kids say ..."), with no object, no question word, no request or clarification ("I need it in feet.", "I
# mean the tops."), no number (the arm's length, "my arm is 60 cm"), no word of the answer's form, and no
# turn the asker supposes ("I turn left. Where is OBJ?") but one they would have to make ("I'd have to
# turn round")
_ASKER_SAYS = (
    r"^(?:i|i'm|im|i'd|i'll|i've|we|we're|we'd|we'll"
    r"|(?:my|our|the|this|that|there|he|she|they|his|her|their|someone|somebody|nobody)(?: \w+){0,3}"
    r" (?:is|are|was|were|has|have|had|will|would|can|could|should|must|does|do|did|goes|sits|stands|hangs"
    r"|needs|keeps|gets|looks|seems|say|says|said|think|thinks|reckon|reckons))\b"
)
_PART_OF_THE_QUESTION = (
    r"OBJ|\?|\d|(?<![a-z] )say\b"
    r"|\b(?:how|what|which|where|who|whose|whether|if|tell|give|answer|reply|report|mean|meant|wonder|need"
    r"|needs|want|wants|like to|asking|ask|degrees?|clock|o'?\s?clock|units?)\b"
    rf"|{_LENGTH_UNIT_WORD}"
)
_WOULD_HAVE_TO = r"\b(?:would|'d|have to|had to|need to|needs to|could|can't|cannot)\b"
# A statement about a thing by its place (issue 24, round 20): "the chair on the right is wobbly", "the one
# on the left is my favourite", "my ladder is against the left wall". Its side, height or size words place
# or describe its subject (up to three words after the article, then its place said by a preposition),
# which no reading of the question beside it measures. (``_THING`` alone, "the top shelf is empty", needs
# no place: ``another_thing``.)
_THING = r"^(?:the|a|an|my|our|this|that|these|those)((?: [a-z']+){1,3}?)"
_PLACE = (r" (?:on|at|to|in|by|near|against|under|over|above|below|behind|beside|next to) (?:the|my|our|your)"
          r"(?: [a-z]+){1,3}?")
_STATES = r" (?:is|are|was|were|has|have|had|[a-z]+s)\b"
_THING_PLACED = _THING + _PLACE + _STATES
_SENTENCE_BREAK = r"(?<=[.!?:;])\s+|\.{2,}\s*|…\s*"
# (a statement about a thing by its place may also be a clause joined to the question by ", but")
_BUT_BREAK = r",\s+(?=but\b)"


def question_proper(t: str) -> tuple[str, list[str]]:
    """Normalised question ``t`` with the words beside it blanked, and those words: the statements that
    are no part of the question (``_ASKER_SAYS``, ``_PART_OF_THE_QUESTION``), and the likenesses and
    reasons that name no object. The one place that knows which words are the question proper; a reading
    whose task or slots those words alone decide is refused (``plan._said_beside``)."""
    sentences = re.split(_SENTENCE_BREAK, t)
    beside = [sentence for sentence in sentences
              if re.search(_ASKER_SAYS, sentence) and not re.search(_PART_OF_THE_QUESTION, sentence)
              and (not re.search(_TURN_VERB, sentence) or re.search(_WOULD_HAVE_TO, sentence))]
    beside += [clause for sentence in sentences
               for clause in re.split(_BUT_BREAK, sentence)
               if re.search(_THING_PLACED, clause) and not re.search(_PART_OF_THE_QUESTION, clause)
               and not re.search(_TURN_VERB, clause) and clause not in beside]
    beside += [m.group(0) for pattern in (_LIKENESS, _REASON) for m in re.finditer(pattern, t)
               if "OBJ" not in m.group(0) and not any(m.group(0).strip(",; ") in b for b in beside)]
    for words in beside:
        t = t.replace(words, " ")
    return re.sub(r"\s+", " ", t).strip(), [w.strip(",;:.!? ") for w in beside]


def _near_object(t: str) -> list[str]:
    return [
        m.group(0)
        for m in re.finditer(_NEAR_OBJECT, t)
        if not _has(t[: m.start()], rf"\b(?:{_ME}|i|i'm|i am|you're|you are|we|we're) (?:\w+ )?$")
    ]


# "how tall and wide is OBJ": two sizes asked at once, one value answers one of them.
_TWO_SIZES = (
    r"\b(tall|long|wide|high)\w* (?:and|or|&) (?:how )?(?!\1)(?:tall|long|wide|deep)\w*\b"
    r"|\b(height|length|width)s? (?:and|or|&) (?:the |its )?(?!\2)(?:height|length|width|depth)\b"
)


def _two_comparisons(t: str) -> list[str]:
    found = [re.findall(kind, t) for kind in _COMPARISON_KINDS]
    return [w for words in found for w in words] if sum(bool(w) for w in found) > 1 else []


def _both_ways(t: str) -> list[str]:
    """The second word of each pair of opposite comparisons the question holds."""
    found = []
    for one, other in _OPPOSITES:
        second = re.search(rf"\b(?:{other})\b", t)
        if second is not None and _has(t, rf"\b(?:{one})\b"):
            found.append(second.group(0))
    return found


def _turn_sequence(t: str) -> list[str]:
    """Words of a second turn ("turn left 90 then turn left again", "right 90 and then another 90",
    "turn left and then right"): no reading adds turns up, so the question is refused."""
    if not any(_has(c, _TURN_VERB) and _has(c, _TURN_WORDS) for c in re.split(_CLAUSE_BREAK, t)):
        return []
    steps = [c for c in re.split(r"\bthen\b|\bafter that\b", t)
             if _has(c, _TURN_VERB) and _has(c, _TURN_WORDS)]
    if len(steps) > 1:
        return [m.group(0) for m in re.finditer(_TURN_VERB, steps[1])]
    side = r"(?:left|right|clockwise|counterclockwise)"
    return _matches(rf"\b(?:another|again|twice|once more)\b|\b\d+ more\b|\b{side},? (?:and |then |and then )"
                    rf"(?:\w+ ){{0,2}}?{side}\b")(t)


_TURNED = r"(?:turned|rotated|spun|pivoted|swivell?ed|yawed|swung|twisted)"


def _past_turn(t: str) -> list[str]:
    """A turn told as done ("I just turned left 90 degrees, what o'clock is OBJ?"), not imagined: the
    frames may already show it, so neither the direction now nor one after another turn is sure."""
    return [
        done.group(0)
        for clause in re.split(r"[,.;:?!]", t)
        if (done := re.search(rf"\b(?:i|you|we|it)(?: (?:just|already|have|has|had))? {_TURNED}\b"
                               rf"|\b(?:i|you|we)'(?:ve|d) (?:just |already )?{_TURNED}\b", clause))
        and not _has(clause[: done.start()], rf"{_IMAGINED}|\bwere\b|\bwould\b|\bhad\b")
        and not _has(clause, r"\b(?:i|you|we) had\b|'d\b")
    ] + _matches(rf"\b{_TURNED}\b(?=[^,.;:?!]*\b(?:earlier|ago|previously|just now|before that)\b)")(t)


# The asker corrects themself mid-question ("turn right, no wait, left", "its height, sorry, its width"):
# which words stand is not for rules to guess ("I mean" mostly clarifies, "at their bottoms I mean").
_CORRECTION = (
    r"(?<=.)\b(?:no wait|wait no|sorry|or rather|correction|scratch that|make that|i meant|hold on(?!\W*$))\b"
    r"|(?<=.)[.?!,] actually\b|, no,"
)
# Left and right as another object sees them ("from the perspective of OBJ"), not the camera ("its left"
# is mostly the robot's).
_ITS_VIEW = (
    r"\b(?:perspective|point of view|viewpoint|eyes) of OBJ\b|\bOBJ'?s (?:perspective|point of view|viewpoint"
    r"|view|own (?:left|right))\b|\b(?:looking|look|seen|viewed) from behind OBJ\b"
)
# "[deg, ccw+]", "positive to the left": a sign convention for the answer, which no reading states.
_TURN_SENSE = r"(?:counterclockwise|clockwise|left|right)"
_SIGN_CONVENTION = (
    rf"\b{_TURN_SENSE} ?\+|\b(?:positive|negative|plus|minus) (?:is |means |to the |=)?{_TURN_SENSE}\b"
    rf"|\b{_TURN_SENSE} (?:is |=)?(?:positive|negative)\b"
)
# Compass and vertical angles (an azimuth "relative to my heading" is a bearing).
_OTHER_ANGLE = (
    r"\b(?:north|south|east|west|compass|magnetic)\b|\belevation angle\b"
    r"|\bangle of (?:elevation|depression)\b|\b(?:above|below) the horizon\b|\b(?:tilt|pitch)\b"
    r"|\blook (?:up|down)\b"
    r"|\bhow far (?:up|down) (?:do|should|must|would) (?:i|you|we) (?:need to |have to )?look\b"
)
# An angle asked ("the angular offset of OBJ", "the azimuth", "what angle", "the angle between / to OBJ"):
# a reading that answers no direction (an "offset" read as a distance) would drop it. ("From your angle",
# "the angle makes it hard to judge" are a point of view, no angle asked.)
_ANGLE_ASKED = (
    r"\b(?:angular|azimuth|azimuthal)\b|\b(?:what|which) angle\b|\bangles? (?:of|between|from|to|off)\b"
)
# "turn left by 2 o'clock", "until OBJ is at my 3 o'clock": a turn measured in clock hours, or aimed at a
# clock position, which no reading turns by.
_CLOCK_TURN = (
    rf"{_TURN_VERB}(?:(?![,.;:?!]).)*?\b(?!12\b)\d+ ?o'?\s?clock"
    r"|\b(?:until|till|so that|so) OBJ (?:is|ends up|sits|will be|lands) (?:at|on) (?:my |your )?"
    r"(?!12\b)\d+ ?o'?\s?clock"
)
# "if I were facing 90 degrees further left": a turn no verb names, so no turn rule reads it (and 90 is no
# convention number here).
_VERBLESS_TURN = (
    r"\b(?:facing|faced|face|pointing|pointed|looking|aimed)\s+(?:\d+ degrees?|a quarter|half|an eighth)\b"
    r"|\b\d+ degrees? (?:further|more|farther|over) (?:to (?:the |my |your )?)?(?:left|right)\b"
)
# An angle and a side, "90 left", "45 degrees to the right": a turn, unless the convention of a direction
# names it ("with 0 straight ahead and 90 to your right", "90 right being 3 o'clock").
_ANGLE_AND_SIDE = (
    r"(?<!\band )(?<!\bwith )\b\d+(?:\.\d+)? (?:degrees? )?(?:to (?:the |my |your )?)?(?:left|right)\b"
    r"(?! (?:is|being|as|=|positive|negative)\b)"
)
# "turn left 90 and walk forward", "if I step to the left": a move of the camera, after which no reading
# knows where anything is (the walk's own length aside).
_MOVE = (  # ("without stepping forward" is no move; "walk (half a circle) around OBJ" is one)
    r"(?<!\bwithout )(?<!\bnot )(?<!\bno )(?<!\bnever )"
    r"\b(?:walk|step|move|drive|roll|shift|slide|back up|strafe)(?:s|ed|ing|ped|ping)? (?:\w+ )?"
    r"(?:forward|forwards|ahead|back|backwards?|straight|sideways|(?:to )?(?:the |my |your )?(?:left|right)"
    r"|\d+(?:\.\d+)? (?:m|meters?|feet|ft|steps?|cm)"
    r"|(?:(?:half|all) )?(?:a |the )?(?:way |circle )?(?:a)?round|(?:half |a )?(?:full )?circle)\b"
)
# "which way do I turn to face OBJ" asks a side, which a turn's angle does not say.
_WHICH_WAY_TO_TURN = (
    r"\b(?:which|what) (?:way|direction|side) (?:do|should|must|would|will|to|shall|have)(?: (?:i|you|we))?"
    rf"(?: \w+){{0,2}}? {_TURN_VERB}"
)
# "how far is OBJ from the wall", "how high above the table": a measurement from a reference that is
# neither an object, the camera nor the floor, which no reading measures from ("off the shelf" in a
# clause that measures nothing is context).
_OTHER_REFERENCE = (
    r"\b(?:how (?:far|high|much|many \w+)|distance|height|far|high|close|near)\b[^.?!,;:]*?"
    r"\b(?:from|above|over|below|under|beneath|off|to) (?:the|a|that|this) "
    r"(?:wall|table|desk|shelf|door|sill|edge|counter|ceiling|corner|doorway|bench|rack|cabinet|fridge"
    r"|couch|sofa|bed|chair|stairs|workbench|pallet|conveyor|dock|tv|lamp|sink|stove|oven|railing|fence|pillar|entrance"
    r"|exit|gate|hallway|corridor)s?\b"
    r"|\b(?:how far|distance)\b[^.?!,;:]*?\b(?:from|to) (?:the|a) windows?\b"
)
# Another person's body or reach as the reference ("to the left of the patient", "at shoulder height",
# "could she reach OBJ"), or a vessel's ends ("further aft"): the geometry knows only the camera's.
_PERSON = (
    r"(?:he|she|they|him|her|them|patient|person|resident|client|child|kid|baby|man|woman|someone|somebody"
    r"|grandma|grandpa|granny|mum|mom|dad|nurse|carer|caregiver|user|visitor|adult|customer|guest|lady|guy"
    r"|boy|girl|shopper|diner|passenger|friend|wife|husband|son|daughter|boss|colleague|partner|mother|father"
    r"|brother|sister)"
)
_BODY_REFERENCE = (
    rf"\b(?:left|right)(?: hand)?(?: side)? of (?:the |a |an |my |our |his |her |their |this |that )?"
    rf"{_PERSON}\b"
    rf"|\b(?:the |a |an |my |our |his |her |their )?{_PERSON}(?:'s|s') (?:left|right)\b"
    # (a person's side set against the camera's, "her left is your right": which side is whose is the
    # asker's to say, and the two side words read as a choice of sides)
    r"|\b(?:his|her|their) (?:left|right) (?:is|=|means|becomes) (?:your|my|the camera's) (?:left|right)\b"
    r"|\b(?:shoulder|knee|waist|hip|eye|chest|ankle|elbow|chin|belly|navel) (?:height|level|high)\b"
    rf"|\b(?:could|can|would|will|does|do|is|are|might) (?:the |a |an |my |our |his |her |their )?{_PERSON}"
    r" (?:\w+ ){0,2}?reach\w*"
    rf"|\b(?:the |a |an |my |our |his |her |their )?{_PERSON} (?:could|can|would|will|has to|have to"
    r"|needs? to|must|might) (?:\w+ ){0,2}?reach\w*"
    r"|\b(?:aft|astern|abaft)\b"
)
# The words of the subject of a statement about a thing by its place (``_THING_PLACED``) that may be an
# object of the question ("the one on the left", "the tallest", "the other"), the viewer or its parts, or
# a person (whose side or reach may be the reference)
_NOT_ANOTHER_THING = (
    r"\b(?:one|ones|thing|things|objects?|items?|it|its|other|others|first|second|third|last|former"
    r"|latter|both|either|neither|camera|robot|arm|hand|view|side|left|right|\w+est"
    rf"|(?:near|clos|farth|furth|tall|short|high|low|upp|bigg|small|wid|narrow|long|larg)er|{_PERSON})\b"
)

# A subject whose head noun is a part or point of a thing ("the edge on the top matters", "the top edge is
# what counts") may name the point measured, not another thing ("the top shelf": its head is the shelf)
_PART_HEAD = (r"\b(?:parts?|points?|edges?|ends?|tips?|rims?|surfaces?|faces?|corners?|tops?|bottoms?"
              r"|middles?|cent(?:er|re)s?|bases?|undersides?|measurements?|readings?)$")


def another_thing(sentence: str) -> bool:
    """Whether normalised ``sentence`` only describes another thing than the question's objects: a
    statement about a thing named by a noun, with or without its place (``_THING``, ``_PLACE``), that
    names no object nor "one" / "them" / "both" that may stand for one, asks nothing, offers no answers
    ("or", "yes", "no"), holds no number, unit, turn, correction or supposition ("my cat would have to
    jump up to the top"), and whose subject may be no object of the question, the viewer or a person
    (``_NOT_ANOTHER_THING``): "The chair on the right is wobbly, ignore it." Its side, top or height
    words are that thing's, so the question beside it is read without it (``plan.parse_question``); a
    subject that may be an object ("the one on the left") is no other
    thing, and its words, beside the question, decide nothing (``question_proper``)."""
    placed = re.match(rf"{_THING}(?:{_PLACE})?{_STATES}", sentence)
    return placed is not None and not re.search(_NOT_ANOTHER_THING, placed.group(1)) and not re.search(
        _PART_HEAD, placed.group(1)) and not re.search(
        rf"{_PART_OF_THE_QUESTION}|{_TURN_VERB}|{_CORRECTION}|{_WOULD_HAVE_TO}"
        r"|\b(?:you|your|one|ones|them|both|either|neither|or|yes|no|will|should|might|may|must|can)\b|'ll\b",
        sentence)


# The asker's pose changed ("if I lean forward", "if you stretch"): no reading knows the new reach
# ("by stretching out your arm" is the reach itself).
_CHANGED_POSE = (
    r"\blean(?:s|ed|ing)? (?:forward|over|in|out|across)\b|\b(?:if|when) (?:i|you|we) stretch\b"
    r"|\btip ?toes?\b"
)
# A viewpoint supposed other than the camera's ("imagine you face the door", "if you were standing at the
# window", "picture yourself by the sink"): a place or pose of the viewer in a supposition, said right
# after it. A reading that measures from the viewer would answer for the camera as it stood; one that
# does not ("if I'm standing at OBJ, how far is it over to OBJ") is the same from anywhere, and "imagine
# you face OBJ" is the turn to face it. The current pose said as one is none ("if you're facing forward").
_SUPPOSED_VIEW = (
    r"\b(?:imagin\w*|suppos\w*|pretend\w*|picture|assum\w*|say|if)(?: that)?"
    r" (?:you|i|we|yourself|myself|the robot|the camera)"
    r"(?:'re|'m| are| am| were| was| is)?(?: now| still| just)?"
    r" (?:stood|standing|stand|sat|sitting|sit|at|by|beside|next to|in front of|behind|over there|there"
    r"|facing|faced|face|looking|looked|look|moved|move|stepped|step|went|positioned|placed|located)\b"
    r"(?! (?:forward|ahead|straight|twelve|12|the same way|(?:exactly |just )?where you|as you are"
    r"|the way you)\b)"
)
# The view changed as a whole: mirrored, flipped, upside down, seen from behind.
_CHANGED_FRAME = (
    r"\b(?:mirror\w*|flip\w*|upside down|inverted|(?:the )?other way (?:round|around)"
    r"|facing (?:the )?other way|from behind|back to front)\b"
)
# Another time than the frames' last: "at the start of the video", "in the first frame", "originally",
# "when you first saw OBJ", "before it got moved". The geometry answers for the latest frame (the last
# frame, "at the end", is that one); only the walk, summed over the frames, reads a span of time.
_OTHER_TIME = (
    r"\b(?:start|beginning|outset) of (?:the )?(?:video|clip|recording|footage|sequence|scene|run)\b"
    r"|\b(?:first|previous|earlier|initial|opening|prior|starting) (?:frame|shot|image|clip|scene)s?\b"
    r"|\b(?:originally|initially|previously|at first|back then|earlier(?! than))\b"
    r"|\bat the (?:very )?(?:start|beginning)\b|\b(?:OBJ|it) used? to\b"
    r"|\bwhen (?:the )?(?:video|clip|recording|footage) (?:started|began|starts|begins)\b"
    r"|\b(?:first|last) (?:saw|spotted|seen|noticed|looked)\b"
    r"|\bbefore (?:you|i|we|it|OBJ|they) (?:\w+ )?(?:moved|got|came|started|walked|drove|entered|arrived)\b"
    r"|\bwhen (?:you|i|we) (?:first )?(?:spotted|noticed|entered|came in|started|arrived|began)\b"
    # (a time to come: "tomorrow, when the room is tidied")
    r"|\b(?:tomorrow|tonight|later (?:on|today)|next (?:week|month|time|morning))\b(?!'s)"
)
# The scene changed in a supposition or after an act: "if OBJ were moved 1 m left", "after you pick up
# OBJ", "if I put OBJ on OBJ", "suppose OBJ is lifted", "if OBJ fell over": the geometry measures the
# objects where they stand, so an answer would be to the scene as it is, not as supposed.
_MOVED_OBJECT = (
    r"(?:pick(?:s|ed|ing)? (?:\w+ )?up|lift\w*|push\w*|pull\w*|mov(?:e|es|ed|ing)|put(?:s|ting)?|plac\w*"
    r"|stack\w*|drop\w*|shift\w*|slid\w*|remov\w*|took|knock\w*|tip\w*|rais\w*|lower(?:ed|ing)"
    r"|carr\w*|fell|fall\w*|topple\w*|roll\w*)"
)
_CHANGED_SCENE = (
    rf"\b(?:if|suppose|supposing|imagine|assuming|assume|after|once|pretend|what if)\b[^.?!,;:]*?"
    rf"(?:(?<!can )(?<!could )(?<!to )\b{_MOVED_OBJECT} (?:up |away |back |over |down )?(?:OBJ|it|them)\b"
    rf"|\b(?:OBJ|it|they) (?:(?:were|was|is|are|got|gets|had been|has been|be|being) )?(?:\w+ )?"
    rf"{_MOVED_OBJECT}\b)"
)
# A part of the room as the reference of a nearness or a side: "closer to the wall than OBJ", "nearer
# the window", "to the left of the door", "from the back wall": the geometry measures from the camera.
_ROOM_PART = (
    r"(?:\b(?:closer|nearer|farther|further|closest|nearest|farthest|furthest|close|near|far|away)"
    r" (?:to |from |of )?|\b(?:left|right) of |\b(?:how far|distance)\b[^.?!,;:]*?\bfrom )"
    r"(?:the |that |this )(?:\w+ )?(?:wall|door|window|doorway|entrance|exit|gate|hallway|corridor|kitchen"
    r"|room|fridge|stairs|corner)s?\b"
    r"|\b(?:if OBJ (?:weren't|wasn't|were not|was not|isn't|is not) there|OBJ (?:is|was|were|gets|got|being)"
    r" (?:taken|moved|put|carried) away)\b"
)
# A command to act on an object, not a question: "Pick up OBJ.", "Put OBJ on OBJ.", "go to OBJ" (read,
# "pick up" would be the reach and "put OBJ on OBJ" a stacking asked).
_COMMAND = (
    r"(?:^|[.!?;:] )(?:please |now |go )?(?:pick up|put|place|move|bring|fetch|grab|push|pull|lift|stack"
    r"|set|drop|carry|throw|go to|walk to|drive to|point at|point to) (?:me )?(?:the )?OBJ\b"
)
# Some objects set apart from a choice: "other than OBJ", "except OBJ", "of the ones on the left", "the
# nearest red one": a choice among all the objects named would answer over the ones set apart. (A place
# that is the view itself or a point of a pile sets none apart: "the nearest one on the screen".)
_NOT_A_PLACE = r"view|screen|image|picture|frame|camera|far|stack|pile|bottom|top"
_SET_APART = (
    r"(?<!ther )\b(?:other than|except(?: for)?|besides|apart from|aside from|excluding|ignoring|not counting"
    r"|leaving out|save for|but not) (?:the |a )?OBJ\b"
    r"|\b(?:of|among|amongst|from) (?:the |all the )?(?:ones|those|these|objects|things|items)"
    r"(?: that are| which are)? (?:on|in|at|under|near|by|to)\b"
    r"|\b(?:nearest|closest|farthest|furthest|tallest|shortest|highest|lowest|biggest|smallest|widest|longest)"
    rf" (?:\w+ )?(?:one|object|thing|item)s? (?:on|in|at|under|near|by) (?:the|your|my)"
    rf" (?!(?:{_NOT_A_PLACE})\b|greate?\w*|least\b|small\w*)\w+"
    r"|\b(?:red|blue|green|yellow|white|black|orange|purple|pink|brown|grey|gray|wooden|metal|plastic|glass)"
    r" (?:one|ones)\b"
    r"|\bwhich (?:one|object|thing|item)s? (?:on|in|at|under|near|by) (?:the|your|my)"
    rf" (?!(?:{_NOT_A_PLACE}|left|right)\b)\w+"
)
# A person as the reference: "from her", "for the customer", "where the patient sits", "the guest's
# side" (a person's side is _BODY_REFERENCE's): left, right and distances are the camera's.
_PERSON_REFERENCE = (
    rf"\bfrom (?:the |a |an |my |our |his |her |their |that |this )?(?!they\b|them\b)"
    rf"(?:her|him|{_PERSON})\b(?!'s)"
    rf"|\b(?:left|right)(?: hand)?(?: side)? (?:for|to) (?:the |a |an |his |her |their )?{_PERSON}\b"
    rf"|\b{_PERSON}(?:'s|s') (?:side|view|seat|position|place|point|eyes|perspective)\b"
    rf"|\bwhere (?:the |a |an |my |his |her |their )?{_PERSON} (?:is|sits|stands|sit|stand|are|was)\b"
    rf"|\bfrom (?:the |a |an |my |his |her |their )?{_PERSON}(?:'s|s') \w+"
    rf"|\b(?:if|pretend|imagine|suppose|say) (?:you|i)(?:'re| are| were| was| am|'m)?"
    rf" (?:her|him|(?:the |a |an )?{_PERSON})\b"
)
# A place named as the viewpoint ("from the doorway, is OBJ on the left?", "looking from the window's
# side", "from my side of the table"): the geometry sees from the camera only. ("From your side", "from
# the camera's view" are the camera's.)
_VIEWPOINT_ELSEWHERE = (
    r"\b(?:looking |seen |viewed )?from (?:(?:the|a|an|this|that) (?!camera\b|robot\b|lens\b)"
    r"(?:\w+(?:'s)? ){0,2}"
    r"(?:side|doorway|door|window|entrance|hallway|corridor|corner|seat|stage|balcony)"
    r"|(?:my|our|your) (?:side|end) of (?:the|this|that) \w+)\b(?! of OBJ\b)"
)
# "turn right to heading 090": a compass heading, not a turn by that angle.
_HEADING = r"\b(?:to|on|onto|at) (?:a |the )?heading\b|\bheading (?:of )?\d"
# "how many times taller", "twice as far", "the ratio of": no reading divides one quantity by another.
_RATIO = r"\bhow many times\b|\b(?:twice|thrice|half|\d+ times) as\b|\bratio\b|\bpercent\b|%"
_SIDE_WORD = (
    r"\bleft\b(?! (?:over|behind|out|alone)\b)"
    r"|\bright\b(?! (?:now|away|here|there|above|below|under|over|next"
    r"|beside|behind|in front|at|on|by|up|down|in|into|onto|off|against|after|before|then)\b)"
)


_TURN_AMOUNT_ASKED = (
    r"\b(?:how many degrees|what angle|how big|how much|how far)\b[^.?!]*\b(?:would|will|is|was) "
    r"(?:that|this|the|my|your) (?:turn|rotation|be)\b|\b(?:would|will|is) (?:that|this) be\b"
    r"|\b(?:angle|degrees) of (?:\w+ )?(?:rotation|turn|turning)\b"
    r"(?=[^.?!]*\b(?:necessary|needed|required)\b)"
)


def _turn_toward_object(t: str) -> list[str]:
    """The goal of a turn whose amount is not said, when the goal is an object: "how many degrees to line
    up on OBJ", "until I point at OBJ", or the object straight after the turn ("turn clockwise, OBJ").
    A turn said with its amount ("after turning 30 degrees left, ...") is a turn to imagine."""
    clause = _turn_clause(t)
    goal = re.search(
        r"\b(?:to|until|till) (?:i |you |we |it |the robot |the camera )?(?:be |get )?[a-z]+(?: up| out| in)?"
        r" (?:on |at |with |towards? |onto |to )?OBJ\b", t)
    # "round" right after the verb ("swung round to take in OBJ") is the verb's particle, no half turn,
    # when the turn has an object for its goal: its amount is what is asked
    amount = r"\d|\b(?:quarter|half|full|whole|complete)\b"
    if clause is None or _has(clause, amount if goal else amount + r"|\b(?:around|round)\b"):
        return []
    if goal:
        return [goal.group(0)]
    # the amount of the turn itself asked ("how many degrees would that be", "the angle of rotation
    # needed"): a turn to some goal, never a quarter turn assumed and a bearing after it
    own = re.search(_TURN_AMOUNT_ASKED, t)
    if own:
        return [own.group(0)]
    # (a turn imagined in a clause of its own, "if I turn left, OBJ will be where?", ends there: the object
    # after it opens the question asked)
    return [
        m.group(0) for m in re.finditer(rf"{_TURN_VERB}(?: [a-z]+)?, OBJ\b", t)
        if not _has(re.split(_CLAUSE_BREAK, t[: m.start()])[-1], _IMAGINED)
    ]


def _size_of_another_thing(t: str) -> list[str]:
    """A short/long comparative on a noun, followed by where it is measured from ("the shortest hike from
    here", "a longer stroll to get there"): what is short is a way there, not the object, unless the noun is
    the object or its extent ("the longest one from the left") or a way the rules read as a distance."""
    return [m.group(0) for m in re.finditer(
        r"\b(?:short|long)(?:er|est) ([a-z]+)(?= (?:from|away|over to|to)\b)", t)
        if m[1] not in _OWN_EXTENT]


_OWN_EXTENT = frozenset({
    "one", "ones", "object", "item", "thing", "piece", "side", "sides", "dimension", "edge", "extent",
    "length", "end", "top", "bottom", "base", "tip", "front", "back", "way", "distance", "range", "of", "in",
    "and", "or", "than",
})


def _side_without_an_object(t: str) -> list[str]:
    """Side words in a clause that names no object ("Left! Where is OBJ now?"): a turn or a facing the
    words before the question state, which a reading of the current direction would leave unread and
    answer as if it were not said. A side after a number states a convention ("0 straight
    ahead and 90 to your right"); "clockwise" there is one too ("degrees, clockwise from ahead"), and a
    counterclockwise turn is the turn cues'. "All right" places nothing."""
    after_number = r"\d (?:degrees? )?(?:(?:is|=|to|on|at) )?(?:(?:the|your|my) )?$"
    return [m.group(0) for clause in re.split(r"[,.;:?!]", t) if "OBJ" not in clause
            for m in re.finditer(_SIDE_WORD, clause)
            if not _has(clause[: m.start()], after_number) and not _has(clause[: m.start()], r"\ball $")]


def _side_of_an_object(t: str) -> list[str]:
    """Side words in a clause that names an object ("OBJ is at left from you"); an aside's side ("a lamp
    shining from the left, but ...") places nothing the question asks about."""
    return [m.group(0) for clause in re.split(r"[,.;:?!]", t) if "OBJ" in clause
            for m in re.finditer(_SIDE_WORD, clause)]


# "how far to the left of you is OBJ": an offset to one side, which only a direction's angle measures.
_SIDE_OFFSET = r"\bhow (?:far|much|many \w+) (?:more )?(?:to the |to my |to your |on the )?(?:left|right)\b"
# "how high above you", "how far below the camera": a height relative to the camera, which no reading
# measures (heights are over the floor, distances to the camera straight lines).
_HEIGHT_TO_ME = (
    r"\b(?:above|below|under|over|beneath|underneath|higher than|lower than|taller than|shorter than)"
    rf" (?:{_ME}|myself|camera|the lens)\b"
)
# A distance measured one way only ("horizontally", "along the floor") is no straight-line distance; the
# walk, bearings and footprint sides are horizontal.
_ONE_AXIS = (
    r"\bhorizontal(?:ly)?\b(?! (?:sides?|dimensions?|edges?|extents?)\b)|\balong the (?:floor|ground)\b"
    r"|\bground distance\b"
)
# A word of height or size ("how long from one to the other" asks a distance; a "wide shot" is the camera's).
_SIZE_WORD = r"\b(?:high|tall|long|wide|narrow|deep|thick)\b(?<!how long)(?! (?:shot|angle|lens)\b)"
# A clause that asks "how high / far / much ..." (not one that gives a reason, "I'm checking how far it
# must reach").
_QUANTITY_ASKED = (
    r"(?:^|[,;:.?!] )(?:(?:so|and|but|um|uh|ok|okay|hey|please|then|now|exactly|roughly|approximately|about"
    r"|tell me|can you tell me|could you tell me|do you know|say) )*"
    r"how (?:high|far|much|many|tall|long|wide|big)\b"
)
# "compared to OBJ", "versus", "more than the height of OBJ": quantities compared.
_QUANTITIES_COMPARED = (
    r"\b(?:compared (?:to|with)|in comparison (?:to|with)|versus|vs)\b"
    r"|\b(?:more|less|greater|smaller|bigger|larger|longer|shorter) than (?:the |its |their )?"
    r"(?:height|width|length|distance|size)\b"
)
# "the second closest", "the middle one", "rank them by distance": no reading orders all the objects.
_RANK = (
    r"\b(?:second|third|2nd|3rd|next)[ ](?:most |least )?(?:\w+est|closest|nearest)\b"
    r"|\bmiddle (?:one|object)\b"
    r"|\b(?:rank|ranked|ranking|sort|sorted|sorting)\b|\b(?:order|list) (?:them|these|the objects)\b"
)


def _second_size(t: str) -> list[str]:
    """A second quantity asked in a sentence of its own, its object left unsaid ("How tall is OBJ? How
    wide?"): one reading answers one of them. (The same one asked again, "How far is OBJ? How far in
    feet?", is a unit.)"""
    sizes = r"tall|wide|long|high|deep|thick|far|big"
    return [m.group(0) for m in re.finditer(rf"\? (?:and )?how ({sizes})\b", t)
            if re.search(rf"\bhow (?!{m.group(1)}\b)(?:{sizes})\b", t[: m.start()])]


def _turn_words(t: str) -> list[str]:
    """Turn verbs of the clauses that describe a turn: with its direction or amount, or imagined ("if",
    "after"); "I want to turn toward it; is OBJ on my right?" describes none."""
    return [
        verb.group(0)
        for clause in re.split(r"[,.;:?!]", t)
        if (verb := re.search(_TURN_VERB, clause))
        and _has(clause, rf"{_TURN_WORDS}|{_IMAGINED}|\bwere to\b")
    ]


# The amounts of a turn that ``_turn`` reads ("90 degrees", "a quarter turn", "three quarters", "half a turn",
# "all the way round", "a full turn"), and words that state an amount ("an eighth",
# "halfway", "two quarter turns", "a few notches", "one clock hour"): an amount said in words it does not
# read is not the quarter turn assumed when none is said.
_READ_AMOUNT = (
    r"\d+(?:\.\d+)? ?degrees?(?: turn)?|\b(?:all the|half ?) ?way a?round\b"
    r"|\b(?:three quarters?|(?:a |one )?quarter(?! turns\b))(?: (?:of a )?turn| of the way a?round)?\b"
    r"|\bhalf (?:a )?turn\b|\b(?:a |one )?(?:full|whole|complete) (?:turn|circle|rotation)\b"
)
_TURN_AMOUNT = (
    r"\b(?:half(?:way)?|thirds?|quarters?|fifths?|sixths?|eighths?|twelfths?|notch(?:es)?|hours?|clicks?|ticks?"
    r"|steps?|increments?|way (?:round|around))\b"
)


def _unread_turn_amount(t: str) -> list[str]:
    """Words of an imagined turn's amount that the turn is not read by ("turn right by an eighth")."""
    clause = _turn_clause(t)
    if clause is None:
        return []
    return _matches(_TURN_AMOUNT)(re.sub(_READ_AMOUNT, " ", clause))


# Common English words (a data file written by hand, not taken from the paraphrase sets): a clause in
# which few words are among them is in another language ("OBJ ve OBJ, hangisi daha sagda?"), and the rules,
# English only, would read an English gloss beside it alone, or the few English-looking words in it.
_CONTRACTION = r"'(?:s|re|ll|d|ve|m)$|n't$"
# English inflections ("keeps", "watered", "picking", "puller", "quickly"): a word with one is taken for
# English though not in the list (a plural after a vowel, "metros", "graus", is not taken)
_INFLECTED = r"^[a-z]{2,}(?:ing|ed|ly|ers?|tions?)$"


def _foreign_clauses(t: str) -> list[str]:
    """Clauses of normalised question ``t`` with three or more different words (of two letters or more, or
    "a" and "i") of which at most a quarter are English by the list, an inflection or a long word the
    rules read (a tester's "verify relative horizontal position:" is English; short ones such as "van" or
    "con" are words of other languages too), e.g. "gira a destra e dimmi"; numbers and object references
    are neither."""
    found = []
    t = re.sub(r"OBJ'\w*", "OBJ", t)
    for clause in re.split(r"[.?!:;()\[\]{}\"]", t):
        if "=" in clause:
            continue  # notation ("cmp a=OBJ b=OBJ ret=farther"), no language
        words = {re.sub(_CONTRACTION, "", w) for w in re.findall(r"[a-z]+(?:'[a-z]+)?", clause)}
        words = {w for w in words if len(w) > 1 or w in ("a", "i")}
        known = sum(_has(w, _INFLECTED) or not _ENGLISH.isdisjoint(_stems(w))
                    or (len(w) >= 6 and w in _RULE_WORDS) for w in words)
        if len(words) >= 3 and 4 * known <= len(words):
            found.append(clause.strip())
    return found


def _rule_words() -> frozenset[str]:
    """Words the rules of this module read: the runs of three letters or more of every string literal here
    (module constants, each function's and class's own, where the cue readers keep their patterns;
    docstrings, which quote examples, aside), escapes such as ``\\b`` removed; shorter runs are mostly
    pieces of an alternation ("turn(?:s|ed)"), which would pass a foreign "ne" for a word. Computed from
    the rules themselves, so a word a rule reads is never taken for one no rule reads."""
    found: set[str] = set()
    seen: set[int] = set()
    docs: set[str] = set()

    def walk(value: object) -> None:
        if id(value) in seen:
            return
        seen.add(id(value))
        if isinstance(value, str):
            if value not in docs:
                found.update(re.findall(r"[a-z]{3,}", re.sub(r"\\[a-zA-Z]", " ", value)))
        elif isinstance(value, (tuple, list, set, frozenset)):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(key)
                walk(item)
        elif isinstance(value, re.Pattern):
            walk(value.pattern)
        elif isinstance(value, CodeType):
            walk(value.co_consts)
        elif isinstance(value, (cached_property, property)):
            walk(value.fget if isinstance(value, property) else value.func)
        elif isinstance(value, FunctionType) and value.__module__ == __name__:
            docs.add(value.__doc__ or "")
            walk(value.__code__)
            walk([cell.cell_contents for cell in value.__closure__ or ()])
        elif isinstance(value, type) and value.__module__ == __name__:
            docs.add(value.__doc__ or "")
            walk(list(vars(value).values()))

    # (not the misspellings the corrector reads as their word, nor the module's dunders, nor the rewrite
    # table's loader and its names for the replacement functions, nor the stems of units in other languages:
    # plumbing and unknown words, not words a rule reads)
    plumbing = {id(_TYPOS), id(_load_rewrites), id(_REWRITE_CALLS), id(_UNIT_STEM), id(_UNIT_SLIPS),
                id(_UNIT_SLIPS_REFUSED), id(_NEAR_CUES), id(_UNIT_PLACE), id(_NO_WORDS), id(_YES_OR_NO_TAG),
                id(_yes_or_no_tag)}
    module = [v for k, v in globals().items() if id(v) not in plumbing and not k.startswith("__")]
    module.append(list(_REWRITE_CALLS.values()))
    for value in module:  # docstrings first: a walk may meet a code object before its function
        if isinstance(value, (FunctionType, type)) and value.__doc__:
            docs.add(value.__doc__)
            docs.update(v.__doc__ for v in vars(value).values() if isinstance(v, FunctionType) and v.__doc__)
        if isinstance(value, type):
            docs.update(v.func.__doc__ for v in vars(value).values()
                        if isinstance(v, cached_property) and v.func.__doc__)
    walk(module)
    return frozenset(found)


_SUFFIXES = ("s", "es", "ing", "ed", "ly", "er", "ers", "est", "tion", "tions")


def _stems(word: str) -> set[str]:
    """The word and what it may be inflected from: "keeps" keep, "picking" pick, "bigger" big, "carried"
    carry, "measured" measure."""
    found = {word}
    for suffix in _SUFFIXES:
        stem = word.removesuffix(suffix)
        if stem != word and len(stem) >= 2:
            found |= {stem, stem + "e", stem[:-1], stem[:-1] + "y", stem + "s"}
    return found


def _unknown(token: str) -> bool:
    """A word of two letters or more that neither the hand-written English list nor a rule knows, also as
    an inflection of a word they know (``_stems``: an ending alone, as the language check takes it, would
    pass the German "zentimeter" or "oder" for English); object references and numbers are no words."""
    word = re.sub(_CONTRACTION, "", token)
    if token == "OBJ" or re.fullmatch(_WORD, token) is None or (len(word) < 2 and word.isascii()):
        return False
    return not any(w in _ENGLISH or w in _RULE_WORDS for w in _stems(word) | {word + "s", word + "es"})


_WORD = r"[^\W\d_]+(?:'[^\W\d_]+)?"  # letters of any alphabet ("centymetrów", "bên"), an apostrophe inside
_BREAKS = ("", ",", ".", ";", ":", "?", "!")  # ("": the question's start or end)
# A word of politeness closing a request: what stands before it stands at the request's end ("in X please";
# ``normalise`` has already written "pls" / "plz" as "please")
_POLITE = ("please", "thanks", "thank")


# A unit's stem in another language's inflection ("centimetrech", "metros", "milimetrů", "inchi"): an
# unknown word built on it names a unit wherever it stands ("metric" names a system, no unit).
_UNIT_STEM = r"(?!metric)(?:(?:[cs][eéa]nt[iíy]|m[ií]l+[ií]|kilo)?m[eé]t(?:r|er|re)|inch|degr|gra[dt])\w*"


def _unread_words(t: str) -> list[str]:
    """Words of normalised question ``t`` that no rule reads and no English list knows (``_unknown``),
    standing where a cue belongs: after a number or a closing "in" (a unit's place: "in inchi", "1 metr"),
    beside a turn verb (its side or sense: "rt turn"), after "how" (a question word's), between "to / on
    the" and "of", "side" or "hand" (a side's; also before "or" or a clause break when the word is a side
    misspelt past safe correction: "further to the leftt:"), alone between a clause break and a question
    mark (a tag: "..., ne?"), anywhere when it is built on a unit's stem ("v centimetrech"), or opening a
    clause that ends in a question mark (before the object: ``_question_particle``), or opening any clause
    before a second such word (a question word in another language: "ile stopni between ...", "jak wysoko
    is ...,"). The rules would read the rest of
    the question and answer it without what these words say; elsewhere (an aside, a name mid-sentence) an
    unknown word changes nothing the rules read."""
    tokens = re.findall(rf"OBJ|{_WORD}|\d+(?:\.\d+)?|[,.;:?!]", t)
    found = []
    for i, token in enumerate(tokens):
        before, after = ["", "", *tokens][i : i + 2], [*tokens, ""][i + 1]
        # a slip as near two units (or a unit and a cue) in a unit's place: which one?
        if token in _UNIT_SLIPS_REFUSED and re.fullmatch(r"\d+(?:\.\d+)?|in|into|many|much", before[1]):
            found.append(token)
            continue
        if not _unknown(token):
            continue
        clause_end = next((x for x in tokens[i + 1 :] if x in _BREAKS), "")
        if (
            re.fullmatch(_UNIT_STEM, token)
            or (not token.isascii() and not _aside(tokens, i))
            or (after == "OBJ" and len(token) == 2 and before[1] not in _BREAKS)
            or _near_cue(token)
            or re.fullmatch(r"\d+(?:\.\d+)?", before[1])
            or (before[1] in ("in", "into") and (after in _BREAKS or after in _POLITE))
            or re.fullmatch(_TURN_VERB, before[1]) or re.fullmatch(_TURN_VERB, after)
            or re.fullmatch(r"\d+(?:\.\d+)?|left|right|clockwise|counterclockwise", after)
            or before[1] == "how" or (before[0] == "how" and before[1] in {"many", "much"})
            or (before[0] in ("to", "on") and before[1] in ("the", "my", "your")
                and (after in ("of", "side", "hand") or (after in ("or", *_BREAKS) and _like_a_side(token))))
            or (before[1] in _BREAKS[1:] and after == "?")
            or (before[1] in _BREAKS and after not in (*_BREAKS, "OBJ") and clause_end == "?")
            or (before[1] in _BREAKS and _unknown(after))
        ):
            found.append(token)
    return found


def _aside(tokens: list[str], i: int) -> bool:
    """Whether the clause around ``tokens[i]`` (between breaks) holds no object, number or word the rules
    or the English list know: a thanks or a greeting in another language ("..., dziękuję."), which changes
    nothing a rule reads; a word of another alphabet beside the object ("OBJ ở hướng ...") may ask
    anything."""
    start = max((j + 1 for j in range(i) if tokens[j] in _BREAKS), default=0)
    end = next((j for j in range(i + 1, len(tokens)) if tokens[j] in _BREAKS), len(tokens))
    return all(_unknown(x) for x in tokens[start:end])


def _near_cue(word: str) -> bool:
    """Whether unknown ``word`` is one edit (a letter changed, dropped, added, or two swapped) from a cue
    word of five letters or more that the corrector did not mend (``_TYPOS``: a slip one edit from two cue
    words, or a letter changed): read without it, the question would answer another cue's question."""
    return len(word) >= 5 and word in _NEAR_CUES


# (a slip keeps the first letter: "block" and "racing" are words, not "clock" and "facing")
_NEAR_CUES = frozenset(v for cue in _CUE_WORDS if len(cue) >= 5
                       for _kind, _i, v in _one_edit(cue) if v != cue and v[:1] == cue[0])


def _question_particle(t: str) -> list[str]:
    """An unknown word (``_unknown``) opening a clause that ends in a question mark, straight before the
    object ("ob OBJ is ...?"): in many languages a particle that makes the question yes or no, which a
    reading that picks one of the objects would answer with a name."""
    return [m[1] for m in re.finditer(r"(?:^|[,.;:?!] )([^\W\d_]+) OBJ\b[^,.;:?!]*\?", t) if _unknown(m[1])]


def _answers_yes_or_no(slots: Mapping[str, object], uses: frozenset[str]) -> bool:
    """Whether a reading answers yes or no: asked so (``form``), or a relation checked between objects
    (a comparison that neither picks one nor measures)."""
    return slots.get("form") == "yesno" or (
        "comparison" in uses and not picks_one(slots, uses) and "form" not in slots and "unit" not in slots)


def _like_a_side(word: str) -> bool:
    """Whether ``word`` is "left" or "right" mistyped beyond what the corrector safely mends ("lefft",
    "riight"): most of its letters in order (difflib's ratio); "shelving" or "map" in a side's place are
    places, no side."""
    return any(difflib.SequenceMatcher(None, word, side).ratio() >= 0.75 for side in ("left", "right"))


# The quantity a denial's comparative compares ("NOTAS nearer", "DENIED lower"), by the uses of the readings
# that compare it: a distance from the viewer (not across the view, not an arm's reach), an object's own
# extent, a placement above the floor.
_DENIAL_QUANTITY = (
    (r"nearer|farther", lambda u: {"viewer", "comparison"} <= u and not u & {"horizontal", "threshold"}),
    (r"shorter|taller|less long|less wide|wider|narrower|bigger|smaller",
     lambda u: {"whole", "comparison"} <= u),
    (r"lower|higher", lambda u: {"floor", "comparison"} <= u and "whole" not in u),
)


def _denial_read(slots: Mapping[str, object], uses: frozenset[str], words: list[str]) -> bool:
    """Whether a reading uses every denial of ``words``: each one the rewrites turned into the opposite
    comparison (``DENIED`` / ``NOTAS`` and the comparative it became), of the quantity the reading compares
    (``_DENIAL_QUANTITY``: "not as far right" turned into "NOTAS nearer right" is no distance from the
    viewer, and a choice across the view leaves that "not" unread). A choice reads either mark (it picks
    one either way); "not as tall as" (NOTAS) asked yes or no is read as "shorter than", as askers label
    it; a yes/no to a denied comparative (DENIED) is refused. A negation the rewrites left is unread."""
    for word in words:
        mark, _, compared = word.partition(" ")
        if mark not in ("DENIED", "NOTAS") or (mark == "DENIED" and not picks_one(slots, uses)):
            return False
        if not any(re.fullmatch(words_, compared) and reads(uses) for words_, reads in _DENIAL_QUANTITY):
            return False
    return True


def _matches(pattern: str) -> Callable[[str], list[str]]:
    return lambda t: [m.group(0) for m in re.finditer(pattern, t)]


def _unit_used(slots: Mapping[str, object], uses: frozenset[str], words: list[str]) -> bool:
    """A length unit is used by a threshold (an arm length read: "an arm of five zero centimeters" read
    without its length would be the default arm) or as the unit the answer is given in: a quantity read in
    meters while "centimeter" stands in the question answers in another unit."""
    return ("threshold" in uses and slots.get("arm_length_m") is not None) or (
        "unit" in slots and all(_unit_of(w) == slots["unit"] for w in words))


# An image coordinate ("the smallest x", "maximises y", "x grows to the left", "the x coordinate")
_IMAGE_COORDINATE = (
    r"\b(?:smallest|largest|lowest|highest|least|greatest|biggest|min(?:imum)?|max(?:imum)?|minimi[sz]\w*"
    r"|maximi[sz]\w*) (?:image |pixel |horizontal |vertical )?[xy]\b"
    r"|\b[xy] (?:coordinate|value|grows|increases|growing|increasing|goes up|going up)\b"
)


# A direction or way asked ("which way", "in what direction", "what clock direction", "which klukka
# direction"): one word may stand between ("which one's way over on the right" asks which one, no way)
_DIRECTION_ASKED = r"\b(?:which|what)(?! one'?s\b)(?: [^\W\d_]+)? (?:way|direction)\b"


def _property_asked(t: str) -> list[str]:
    """The property a question word asks of an object by name ("in what orientation is OBJ from you",
    "what flurb of OBJ"), where no rule reads that name: a reading found in the rest of the question
    ("OBJ from you", a distance) would answer a property nobody asked for."""
    return [m[0] for m in re.finditer(r"\b(?:(?:in|at|to|by) )?(?:what|which) ([^\W\d_]+)"
                                      r" (?:is|are|was|of|does) OBJ\b", t) if m[1] not in _RULE_WORDS]


def _asks_a_side(slots: Mapping[str, object], uses: frozenset[str]) -> bool:
    """Whether a reading answers with a side of the view: a side of me asked, or a choice of the sides
    across the view ("which way from OBJ is OBJ, left or right")."""
    return "horizontal" in uses and "viewer" in uses and ("side" in slots or picks_one(slots, uses))


def _move_in_unit(slots: Mapping[str, object], words: list[str]) -> bool:
    """Whether every move of ``words`` that states its amount ("move 10 feet") states it in the unit the
    reading answers in (a move with no amount, "walk forward", says no unit)."""
    units = [m[1] for w in words for m in re.finditer(r"\d ?(m|meters?|feet|ft|cm)\b", w)]
    return all(_unit_of(unit) == slots.get("unit") for unit in units)


# (what the cue asks, the words of it in a question, the readings that use it), checked in this order.
_Used = Callable[[Mapping[str, object], frozenset[str], list[str]], bool]
_CUES: tuple[tuple[str, Callable[[str], list[str]], _Used], ...] = (
    ("words in another language", _foreign_clauses, lambda s, u, _w: False),
    ("a question particle", _question_particle, lambda s, u, _w: _answers_yes_or_no(s, u)),
    ("a word no rule reads where a cue belongs", _unread_words, lambda s, u, _w: False),
    # "the shortest hike from here": a size word on a noun no rule reads, measured from a place, is the
    # length of a way there, not the object's own size; no reading knows what way the noun means
    ("a size of another thing", _size_of_another_thing, lambda s, u, _w: False),
    # "the smallest x (x grows to the left)": an image coordinate the rewrites did not read as the leftmost
    # or rightmost (a convention said otherwise, a "y"); read without it, a side said in the convention
    # would be taken for the side asked
    ("an image coordinate", _matches(_IMAGE_COORDINATE), lambda s, u, _w: False),
    # "swinging clockwise, how many degrees to line up on OBJ", "turn cw -> OBJ, deg": a turn by no said
    # amount toward an object is the turn to face it (rotate_to_face), never a quarter turn then a bearing
    ("a turn toward an object", _turn_toward_object, lambda s, u, _w: "direction" in s),
    ("a whole extent", _matches(_WHOLE), lambda s, u, _w: "whole" in u or s.get("point") == "top"),
    ("a stacking", _matches(_STACKED), lambda s, u, _w: "stacking" in u),
    # "which one's lower down, OBJ or OBJ": the one under the other to some askers, the lower centre to
    # others; with no "than" and no floor the words do not say which, unless they name the stacking
    # (also "the lower one", "the upper one", "the lower of the two / the pair / both", a planner's
    # "lower_of(OBJ, OBJ)")
    ("lower down of two", _matches(r"\b(?:lower down|(?:the )?(?:lower|upper) (?:one|of (?:the (?:two|2|pair)"
                                   r"|them|these|those|both|OBJ)|element|object|item|thing))\b"
                                   r"(?![^.?!]*\b(?:than|floor|ground)\b)"),
     lambda s, u, _w: "stacking" in u or s.get("point") in ("top", "bottom")),
    ("a top", _matches(_TOP_CUE), lambda s, u, _w: s.get("point") == "top" or "stacking" in u),
    ("a bottom", _matches(_BOTTOM_CUE), lambda s, u, _w: s.get("point") == "bottom" or "stacking" in u),
    ("a second turn", _turn_sequence, lambda s, u, _w: False),
    ("a correction", _matches(_CORRECTION), lambda s, u, _w: False),
    ("a second quantity", _second_size, lambda s, u, _w: False),
    # "isn't OBJ farther than OBJ?", "confirm OBJ is not farther than OBJ": askers label a denied
    # comparison as the one named or as its opposite, and a yes or no to a negated question is itself
    # ambiguous; a choice ("which is not as far") picks one either way, and "not as tall as" (NOTAS) asked
    # yes or no is read as "shorter than", as askers label it, the answer stating that reading
    # (a choice reads a denial only where the rewrites turned it: "which is not the nearer one" is
    # unturned, and read without its "not" it would pick the other)
    ("a denied comparison", _matches(_DENIED_COMPARISON), _denial_read),
    ("another object's point of view", _matches(_ITS_VIEW), lambda s, u, _w: False),
    # a theatre's "stage left / right" is the performer's side, the camera's other side when it faces the
    # stage, and whether it does the question does not say (denied beside the camera's view, the rewrites
    # drop it)
    ("a stage direction", _matches(r"\bstage (?:left|right)\b"), lambda s, u, _w: False),
    ("a heading", _matches(_HEADING), lambda s, u, _w: False),
    ("another reference", _matches(_OTHER_REFERENCE), lambda s, u, _w: False),
    ("a person's body or reach as the reference", _matches(_BODY_REFERENCE), lambda s, u, _w: False),
    # "how far is OBJ compared to OBJ", "the distance to OBJ versus OBJ": two quantities compared, which a
    # quantity reading (the distance between them) does not answer; a height difference does
    ("a comparison of quantities", _matches(_QUANTITIES_COMPARED),
     lambda s, u, _w: "unit" not in s or "difference" in u),
    # "does OBJ fit under OBJ?" asks a clearance against a size, which no reading compares ("I'm checking
    # it fits" as a reason is context)
    ("a fit asked", _matches(r"(?:^|[.?!] )(?:does|do|will|would|can|could) OBJ fit\b"),
     lambda s, u, _w: False),
    ("a turn in clock hours", _matches(_CLOCK_TURN), lambda s, u, _w: False),
    # "which way do I turn to face OBJ" asks a side, which a turn's angle does not say
    ("which way to turn", _matches(_WHICH_WAY_TO_TURN), lambda s, u, _w: False),
    ("a turn without its verb", _matches(_VERBLESS_TURN), lambda s, u, _w: False),
    # "bet you didn't move 10 feet, how far did you go?": a walk's amount guessed in a unit is the unit the
    # asker thinks in; a walk read in another unit would drop it silently
    ("a move", _matches(_MOVE), lambda s, u, w: "walk" in u and _move_in_unit(s, w)),
    # "if I lean forward, can I reach OBJ", "how long will it take": a changed pose, a time
    ("a changed pose", _matches(_CHANGED_POSE), lambda s, u, _w: False),
    # "imagine you are facing OBJ. How many degrees to turn to face it?": the facing is a premise and the
    # turn asked from it, no turn from where the camera faces
    ("a facing supposed, then a turn asked", _matches(
        r"\b(?:imagine|suppose|pretend|say|assume)\b[^.?!;]*\b(?:facing|face) OBJ\b[^?]*\bturn\w*\b"),
     lambda s, u, _w: False),
    # "imagine you face OBJ" is the turn to face it; no reading takes another supposed viewpoint
    ("a supposed viewpoint", _matches(_SUPPOSED_VIEW),
     lambda s, u, _w: "viewer" not in u or "direction" in s),
    ("a changed frame", _matches(_CHANGED_FRAME), lambda s, u, _w: False),
    ("a changed scene", _matches(_CHANGED_SCENE), lambda s, u, _w: False),
    ("objects set apart", _matches(_SET_APART), lambda s, u, _w: False),
    ("a command", _matches(_COMMAND), lambda s, u, _w: False),
    ("a part of the room", _matches(_ROOM_PART), lambda s, u, _w: False),
    ("a person as the reference", _matches(_PERSON_REFERENCE), lambda s, u, _w: False),
    # (a walk's start, "since we set off from the entrance hall", is the walk's own)
    ("a viewpoint elsewhere", _matches(_VIEWPOINT_ELSEWHERE), lambda s, u, _w: "walk" in u),
    ("a time", _matches(r"\bhow long (?:will|would|does|did|do) it take\b|\bhow much time\b|\bminutes?\b"),
     lambda s, u, _w: False),
    # "the bearing from north", "the elevation angle": no reading measures these angles
    ("a compass or vertical angle", _matches(_OTHER_ANGLE), lambda s, u, _w: False),
    ("an angle asked", _matches(_ANGLE_ASKED), lambda s, u, _w: "direction" in u),
    ("a sign convention", _matches(_SIGN_CONVENTION), lambda s, u, _w: False),
    # "A < B" compares two values: a reading that measures one (or picks one) answers another question
    ("a comparison sign", _matches(r"(?<![\w<>=-])[<>]=?(?![<>=,])"),  # ("<->" is a span)
     lambda s, u, _w: not picks_one(s, u) and "unit" not in s),
    ("a rank", _matches(_RANK), lambda s, u, _w: False),
    # "are OBJ and OBJ both on your left": a question about each object, no reading asks it of all
    # ("longer than both OBJ and OBJ" compares one with the others)
    ("a quantifier", _matches(r"(?<!than )\b(?:both|all three|all of them|neither|none of (?:them|these))\b"),
     lambda s, u, _w: False),
    ("a ratio", _matches(_RATIO), lambda s, u, _w: False),
    ("an offset to a side", _matches(_SIDE_OFFSET), lambda s, u, _w: "direction" in u),
    ("a height relative to me", _matches(_HEIGHT_TO_ME), lambda s, u, _w: False),
    ("a distance along one axis", _matches(_ONE_AXIS), lambda s, u, _w: "horizontal" in u),
    ("a turn told as done", _past_turn, lambda s, u, _w: False),
    # "how far was OBJ at the start of the video": the walk alone is read over the frames' span (after a
    # turn told as done, which is the reason a past turn gives)
    ("another time", _matches(_OTHER_TIME), lambda s, u, _w: "walk" in u),
    ("a turn's amount in words no reading reads", _unread_turn_amount, lambda s, u, _w: False),
    ("a turn", _turn_words, lambda s, u, _w: "turn" in u),
    # "snap 90 left, what o'clock is OBJ": an angle and a side are a turn, whatever verb (or none) says it
    ("a turn's angle and side", _matches(_ANGLE_AND_SIDE), lambda s, u, _w: "turn" in u),
    ("a requirement", _matches(_REQUIREMENT), lambda s, u, _w: True),
    ("a threshold", _matches(_THRESHOLD), lambda s, u, _w: "threshold" in u),
    ("two sizes asked", _matches(_TWO_SIZES), lambda s, u, _w: False),
    ("two dimensions", _two_dims, lambda s, u, w: "dim" not in s or all(_dim_of(x) == s["dim"] for x in w)),
    ("nearness to an object", _near_object, lambda s, u, _w: False),
    ("two references offered", _matches(_REFERENCES_OFFERED), lambda s, u, _w: False),
    ("comparisons of two quantities", _two_comparisons, lambda s, u, _w: False),
    ("a difference", _matches(_HOW_MUCH_MORE), lambda s, u, _w: "difference" in u),
    ("opposite comparisons", _both_ways, lambda s, u, _w: "order" not in s and "relation" not in s),
    ("a comparison", _matches(r"\bthan\b"), lambda s, u, _w: "comparison" in u),
    ("a yes/no question", _matches(_YESNO_ONLY), lambda s, u, _w: not picks_one(s, u)),
    # "confirm OBJ is the nearest of OBJ, OBJ and OBJ": a statement to confirm, answered yes or no; a
    # task with no yes/no form would name the nearest instead
    ("a statement to confirm", _matches(r"\b(?:confirm|verify|validate)(?: that)?:? OBJ\b"),
     lambda s, u, _w: not picks_one(s, u)),
    ("a choice between the objects", _matches(_TWO_OBJECTS_OFFERED), lambda s, u, _w: picks_one(s, u)),
    ("a negation", _matches(_NEGATED), lambda s, u, _w: not picks_one(s, u)),
    ("a comparison word", _matches(_COMPARED), lambda s, u, _w: "comparison" in u or "threshold" in u),
    ("a choice of sides", _matches(_SIDES_OFFERED),
     lambda s, u, _w: picks_one(s, u) or s.get("side", 0) is None),
    ("a turn word", _matches(_ANY_TURN), lambda s, u, _w: "turn" in u or "direction" not in u),
    ("a unit no reading converts to", _matches(_OTHER_UNIT), lambda s, u, _w: False),
    # "how many in between ...": without its dot "in" may be the preposition, the counted unit unsaid
    ("a count of no unit", _matches(r"\bhow many in\b(?!\.| total\b)"), lambda s, u, _w: False),
    ("an inch abbreviated", _matches(_HOW_MANY_IN), lambda s, u, _w: s.get("unit") == "in"),
    # ("on foot", "moving your feet" are no unit)
    ("a length unit", _matches(rf"(?<!\bon )(?<!\byour )(?<!\bmy )(?<!\bits ){_LENGTH_UNIT_WORD}"),
     _unit_used),
    ("a second question", _matches(_SECOND_QUESTION), lambda s, u, _w: False),
    # "which sits at the longest range from you" is no size: a reading of the objects alone answers another
    ("the asker's place", _matches(_FROM_ME), lambda s, u, _w: "viewer" in u),
    # "OBJ is how many meters high" read as a distance would answer another question
    ("a size word", _matches(_SIZE_WORD), lambda s, u, _w: "size" in u),
    # "how far is OBJ from the floor" read as a distance to the camera would answer another question
    ("the floor as an end", _matches(r"\b(?:from|to|and|above|over|off) (?:the )?(?:floor|ground)\b"
                                     r"|\bbetween (?:the )?(?:floor|ground) and\b"
                                     r"|\b(?:floor|ground) (?:up )?to\b"),
     lambda s, u, _w: "floor" in u),
    # "turn to face OBJ, which way and how much?": the turn's side is asked, an angle answers half of it;
    # "in what direction is OBJ from you" (also with a word no rule reads, "what klukka direction") asks a
    # direction or a side, which a distance, a size or a yes/no would not answer
    # "in what orientation is OBJ from you", "which zorp is OBJ in": a property asked by a name no rule
    # reads; no reading answers it
    ("a property no rule reads", _property_asked, lambda s, u, _w: False),
    ("a direction asked", _matches(_DIRECTION_ASKED),
     lambda s, u, _w: "direction" not in s and ("direction" in u or _asks_a_side(s, u))),
    # "how high over OBJ is OBJ" read as "is OBJ over OBJ": a quantity asked, a yes/no or a choice read
    ("a quantity asked", _matches(_QUANTITY_ASKED),
     lambda s, u, _w: "unit" in s or bool(u & {"direction", "turn"})),
    # "OBJ is at left from you, yes?" read as a distance: a side of the view, which only readings across
    # the view use ("right now", "right above it" name no side)
    ("a side", _side_of_an_object, lambda s, u, _w: "horizontal" in u),
    # "left face! where is OBJ, in clock terms?": a side said apart from every object is a turn or a
    # side asked; the current direction (which takes no side) would answer as if it were not said
    ("a side apart from the objects", _side_without_an_object,
     lambda s, u, _w: "turn" in u or "direction" not in u),
)


# What a sentence beside a question may say and still change nothing the question asks: no question word
# or "or", no object or pronoun for one, no side, clock or unit word (a unit, "in." included: the answer's
# unit may be said apart, "Metres is fine."), no point of an object, no place or reference ("from the
# rail" may be the distance's other end), no comparison, turn, move, correction (also opening the
# sentence: "Sorry, wrong question."), claim or confirmation, changed frame ("Mirror it.") or time ("Once
# you're done, ..."),
# and no negation but of the asker's own state ("I can't see you", "I'm not sure"). Numbers are a slot's
# only where the reading has one (``plan``). A word no English list knows may be any of these.
_OWN_STATE = r"\b(?:i|i'm|im|we|we're)(?: am| are)? (?:can't|cannot|couldn't|don't|didn't|won't|not)\b"
_SLOT_WORDS = (
    r"\b(?:how|what|which|where|who|whose|when|why|or|either|whether|if|tell|give|answer|reply|say|OBJ"
    r"|it|its|them|their|one|ones|left|right|clockwise|counterclockwise|clock|o'?\s?clock|hours?|degrees?"
    r"|angle|bearing|heading|inch(?:es)?|units?|no|none|neither|nor|never|nothing|nowhere"
    r"|confirm\w*|verif\w*|validat\w*|compar\w*|check\w*|claim\w*|guess\w*|estimat\w*|think|reckon|said"
    r"|says|true|correct|yes|mean|meant|that is|sorry|wrong|mistake|scratch|ignore|instead|actually|rather"
    r"|wait|question|measur\w*|mirror\w*|flip\w*|revers\w*|invert\w*|opposite|swap\w*|other way|backwards?"
    r"|upside|imagine|pretend|suppose|picture|assum\w*|after|before|then|once|first|next|last|until|till|while"
    r"|tops?|bottoms?|bases?|undersides?|center|middle"
    r"|edges?|sides?|points?|parts?|height|width|length|depth|distance|range|size|floor|ground|from|to"
    r"|between|above|below|under|over|beneath|underneath|behind|beside|near|next|front|toward|towards"
    r"|onto|into|against|along|across|up|down|high|low|far|close)\b|\bin\."
    rf"|{_NEGATED}|{_LENGTH_UNIT_WORD}|{_OTHER_UNIT}|{_COMPARED}|{_ANY_TURN}|{_MOVED}|{_MOVE}|{_CORRECTION}"
)


def aside_cue(t: str) -> str | None:
    """The first word of normalised sentence ``t`` that could fill or change a question's slot (see
    ``_SLOT_WORDS``, or a word no English list knows), else None: a sentence without one, beside a
    complete question, is an aside."""
    t = re.sub(_OWN_STATE, " ", t)
    found = re.search(_SLOT_WORDS, t)
    if found is not None:
        return found.group(0)
    # (English words the list leaves out, "a slight nudge, please", are fewer than those it knows; a
    # sentence mostly of unknown words may be another language's, and one near a cue word a slip of it)
    words = re.findall(_WORD, t)
    unknown = [w for w in words if _unknown(w)]
    if 2 * len(unknown) >= len(words) or any(_near_cue(w) or re.fullmatch(_UNIT_STEM, w) for w in unknown):
        return unknown[0]
    return None


# Cues whose words later cues read too ("how tall is the stack": "tall" is a size word, and "how tall" a
# quantity asked).
_KEEP_WORDS = frozenset({"a size word"})


def unread_cue(t: str, slots: Mapping[str, str | float | None], uses: frozenset[str]) -> str | None:
    """The words of the first cue in normalised question ``t`` that a reading with ``slots``, of a task
    that ``uses`` those cues (``USES``), leaves unused, else None.

    A turn by a vague amount ("turn a bit to the left") is refused too: no reading knows its angle.
    """
    for name, find, used in _CUES:
        words = find(t)
        if not words:
            continue
        if not used(slots, uses, words):
            # the first word the reading leaves unused (one unit word of two may be the asked unit)
            word = next((w for w in words if not used(slots, uses, [w])), words[0])
            # the rewrites' marks of a denial stand for "not"
            return "not" if word.startswith(("DENIED ", "NOTAS ")) else word
        if name not in _KEEP_WORDS:
            for word in words:
                t = t.replace(word, " ")
    if "turn" in uses:
        vague = re.search(_VAGUE_TURN, t)
        if vague is not None and not _has(t, r"\d"):
            return vague.group(0)
    return _unread_number(t, slots, uses)


_LABEL_BEFORE = (
    r"\b(?:item|unit|step|no|number|question|q|task|id|#|point|level|bay|aisle|room|zone|line|floor|lane|dock"
    r"|case|scenario|example|tc|problem|exercise|part"
    r"|station|gate|rack|row|cell|bin|sector|section|area|building|truck|forklift|picker|agv|cart|tug|drone"
    r"|robot|bot|vehicle|van|team|crew|channel|ch|car|ticket|job|ref|incident|request|req)\s*#?$"
)
_CONVENTION_NUMBERS = {0.0, 3.0, 6.0, 9.0, 12.0, 90.0, 180.0, 270.0, 360.0}


def _unread_number(
    t: str, slots: Mapping[str, str | float | None], uses: frozenset[str]
) -> str | None:
    """A number no slot holds ("arm extends 30 in", an angle read as another): only the arm's length, a
    turn's angle, a clock hour and, in a direction question, the numbers of its convention ("with 12
    straight ahead", "0 to 360") are numbers a reading uses."""
    angle = slots.get("angle_deg")
    direction = "direction" in uses
    for m in re.finditer(_BARE_NUMBER, t):
        after = t[m.end():]
        # a turn's stated angle is never a convention's number: "turn right, 180 degrees" read as a turn
        # of 90 leaves its 180 unused (a range's ends, 0 and 360, stay the convention's)
        turned = (isinstance(angle, float) and float(m[1]) not in (0.0, 360.0)
                  and _has(after, r"^ ?degrees?\b"))
        if _has(after, r"^ ?o'?\s?clock\b") or (
                direction and float(m.group(1)) in _CONVENTION_NUMBERS and not turned):
            continue
        if _has(t[: m.start()], _LABEL_BEFORE) or _has(after, r"^ points?\b"):
            continue  # "item 7", "unit 12", "for 10 points": a label, no quantity
        if _has(t[: m.start()], r"\b(?:returns?|outputs?|yields?)\s*$"):
            continue  # a test's expected output ("an object on the floor returns 0"): no quantity measured
        if _has(after, r"^ (?:years?|yrs?|months?|weeks?|days?|d\.?p\b|decimal|significant|sig\b|s\.?f\b)"):
            continue  # "I'm 82 years old", "to 2 d.p.", "3 significant figures": no quantity measured
        if direction and m.group(1) == "1" and _has(after, r"^,? (?:to |through |thru )?12\b"):
            continue  # a clock hour's range, "(1-12)", "1 to 12", is the convention's
        if _has(t[: m.start()], r"(?:^|[\s(,;/])\(?[a-e][).:] ?$"):
            continue  # a quiz's options, "(a) 0.5 (b) 1.0": values to pick from, the measurement picks
        arm = slots.get("arm_length_m")
        if isinstance(arm, float) and any(math.isclose(float(m[1]) * f, arm) for f in _TO_M.values()):
            continue  # the arm's length (not a second number beside it: "3 ft 6 in" read as 3 ft)
        if isinstance(angle, float) and float(m.group(1)) == angle:
            continue
        return m.group(0)
    return None


# A quantity someone claimed, asked to be checked ("the day crew said OBJ is about 2 m from OBJ, is that
# right?"): one number with a length unit, or degrees, in a statement closed by a confirmation. A limit
# ("more than 2 m") is a threshold, not a claim; two numbers are two claims, which no reading checks.
_CONFIRMED = r"\bis that (?:so|accurate)\b"
_CLAIM = (
    r"(?<![\w.])(\d+(?:\.\d+)?) ?(meters?|m|centimeters?|cms?|millimeters?|mm|feet|foot|ft|inch(?:es)?"
    r"|degrees?)\b"
)


def claimed_quantity(t: str) -> tuple[float, str, str] | None:
    """The value, unit (``m`` ... ``in``, or ``deg``) and words of the one quantity normalised question
    ``t`` states and asks to be confirmed, else None."""
    claims = list(re.finditer(_CLAIM, t))
    if len(claims) != 1 or len(re.findall(r"\d+(?:\.\d+)?", t)) != 1:
        return None
    if not _has(t, _CONFIRMED) or _has(t, _THRESHOLD) or _has(t, r"\b(?:than|within|beyond)\b"):
        return None
    m = claims[0]
    unit = "deg" if m[2].startswith("degree") else _unit_of(m[2])
    return float(m[1]), unit, m.group(0)


_RULE_WORDS = _rule_words()
