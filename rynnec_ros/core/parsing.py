"""Reading quantities and chosen options out of free-text answers.

Shared by the engine (structured answers), the geometry (sentences it writes) and the benchmark
metrics, so a number is read the same way everywhere.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# unit name -> (canonical unit, factor to the canonical unit's SI base: metres for lengths)
_LENGTH_UNITS: dict[str, tuple[str, float]] = {
    "mm": ("mm", 0.001), "millimeter": ("mm", 0.001), "millimeters": ("mm", 0.001),
    "millimetre": ("mm", 0.001), "millimetres": ("mm", 0.001),
    "cm": ("cm", 0.01), "centimeter": ("cm", 0.01), "centimeters": ("cm", 0.01),
    "centimetre": ("cm", 0.01), "centimetres": ("cm", 0.01),
    "m": ("m", 1.0), "meter": ("m", 1.0), "meters": ("m", 1.0), "metre": ("m", 1.0), "metres": ("m", 1.0),
    "km": ("km", 1000.0), "kilometer": ("km", 1000.0), "kilometers": ("km", 1000.0),
    "ft": ("ft", 0.3048), "foot": ("ft", 0.3048), "feet": ("ft", 0.3048),
    "in": ("in", 0.0254), "inch": ("in", 0.0254), "inches": ("in", 0.0254),
    "yd": ("yd", 0.9144), "yard": ("yd", 0.9144), "yards": ("yd", 0.9144),
}
_ANGLE_UNITS = {"°": "deg", "deg": "deg", "degree": "deg", "degrees": "deg"}
_CLOCK_UNITS = {"o'clock": "oclock", "o’clock": "oclock", "oclock": "oclock", "o clock": "oclock"}

_NUMBER = r"[-+]?(?:\d+(?:[.,]\d+)?|\.\d+)"
_UNIT_WORDS = sorted(
    [*_LENGTH_UNITS, *_ANGLE_UNITS, *_CLOCK_UNITS], key=len, reverse=True
)
_QUANTITY_RE = re.compile(
    rf"(?<![\w.])({_NUMBER})\s*(" + "|".join(re.escape(u) for u in _UNIT_WORDS) + r")?(?![A-Za-z])",
    re.IGNORECASE,
)
_WORD_NUMBERS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}
_WORD_RE = re.compile(r"\b(" + "|".join(_WORD_NUMBERS) + r")\b", re.IGNORECASE)


def canonical_unit(unit: str) -> str:
    """Canonical name of a unit word (``"meters"`` -> ``"m"``, ``"degrees"`` -> ``"deg"``)."""
    u = unit.strip().lower()
    if u in _LENGTH_UNITS:
        return _LENGTH_UNITS[u][0]
    if u in _ANGLE_UNITS:
        return _ANGLE_UNITS[u]
    if u in _CLOCK_UNITS:
        return _CLOCK_UNITS[u]
    raise ValueError(f"unknown unit {unit!r}")


def to_metres(value: float, unit: str) -> float:
    """Convert a length in ``unit`` to metres; raises ValueError for non-length units."""
    u = unit.strip().lower()
    if u not in _LENGTH_UNITS:
        raise ValueError(f"{unit!r} is not a length unit")
    return value * _LENGTH_UNITS[u][1]


def parse_quantity(text: str) -> tuple[float, str | None] | None:
    """First number in ``text`` with its unit, preferring numbers that carry a unit.

    Returns ``(value, canonical_unit_or_None)`` or ``None`` when the text holds no number.
    Number words (``"two"``) count when no digit is present.
    """
    matches = list(_QUANTITY_RE.finditer(text))
    with_unit = [m for m in matches if m.group(2)]
    chosen = with_unit[0] if with_unit else (matches[0] if matches else None)
    if chosen is not None:
        value = float(chosen.group(1).replace(",", "."))
        unit = canonical_unit(chosen.group(2)) if chosen.group(2) else None
        return value, unit
    word = _WORD_RE.search(text)
    if word is not None:
        return float(_WORD_NUMBERS[word.group(1).lower()]), None
    return None


# A letter counts as the choice only where it cannot be an English word ("A chair", "I think"):
# alone ("B", "(B)."), leading with a closing mark ("B) right", "C: left", "(C) right"), or announced
# ("the answer is B", "option C", "Answer: (B)").
_LETTER_PATTERNS = (
    re.compile(r"^\W*([A-Z])\W*$"),
    re.compile(r"^\s*\(([A-Z])\)"),
    re.compile(r"^\s*([A-Z])[).:]"),
    re.compile(r"\b(?:answer|option|choice)\s*(?:is|:)?\s*\(?([A-Z])\b(?![''\w])", re.IGNORECASE),
)


def _chosen_letter(text: str) -> str | None:
    for pattern in _LETTER_PATTERNS:
        m = pattern.search(text)
        if m is not None and m.group(1).isupper():
            return m.group(1)
    return None


def parse_option(text: str, options: Sequence[str]) -> int | None:
    """Index of the option chosen in ``text``: a letter (``"B"``, ``"(B)"``) or the option's text.

    An unambiguous letter is tried first because multiple-choice prompts ask for one; then the option
    text mentioned first wins, the longest at the same place (``"left of the chair"`` beats ``"left"``).
    """
    if not options:
        return None
    stripped = text.strip()
    letter = _chosen_letter(stripped)
    if letter is not None:
        idx = ord(letter) - ord("A")
        if 0 <= idx < len(options):
            return idx
    lowered = stripped.lower()
    found = [
        (lowered.find(o.strip().lower()), -len(o.strip()), i)
        for i, o in enumerate(options)
        if o.strip() and o.strip().lower() in lowered
    ]
    return min(found)[2] if found else None


_YES_NO_RE = re.compile(r"\b(yes|no|true|false|correct|incorrect)\b", re.IGNORECASE)
_YES_WORDS = {"yes", "true", "correct"}


def parse_yes_no(text: str) -> bool | None:
    """First yes/no-like word in ``text`` (``"Yes, it is done"`` -> True); None when there is none."""
    m = _YES_NO_RE.search(text)
    if m is None:
        return None
    return m.group(1).lower() in _YES_WORDS
