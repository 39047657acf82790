"""One sanitiser for every string a client sends (questions, expressions, options, labels, tasks).

Questions end up in logs, terminals, topics and the model's prompt. C0 controls (except tab and newline),
DEL and the C1 range (U+0080..U+009F, e.g. CSI ``\\x9b`` that rewrites a terminal showing the log) are
refused rather than stripped: a request that carries them is malformed, and the caller should know.
"""

from __future__ import annotations

from rynnec_ros.core.types import RequestError

_ALLOWED_CONTROLS = frozenset("\n\t")


def _is_control(c: str) -> bool:
    o = ord(c)
    return (o < 0x20 and c not in _ALLOWED_CONTROLS) or 0x7F <= o <= 0x9F


def check_text(text: str, what: str, limit: int, optional: bool = False,
               limit_name: str = "the limit") -> str:
    """``text`` stripped of surrounding whitespace; ValueError naming ``what`` when it is unacceptable.

    Empty is refused unless ``optional``; longer than ``limit`` characters is refused; any control
    character (see the module docstring) is refused with its code point, so the caller can find it.
    """
    text = text.strip()
    if not text:
        if optional:
            return ""
        raise RequestError(f"{what} is empty")
    if len(text) > limit:
        raise RequestError(f"{what} has {len(text)} characters, more than {limit_name}={limit}")
    bad = next((i for i, c in enumerate(text) if _is_control(c)), None)
    if bad is not None:
        raise RequestError(f"{what} contains control characters (U+{ord(text[bad]):04X} at position {bad})")
    return text
