"""Value checks shared by the node's parameters and the engine's options.

Each check returns "" for an acceptable value and otherwise the reason, phrased to follow the option's
name ("backend must be one of …"), so a ROS parameter, a command-line flag and a Python keyword that mean
the same thing are refused with the same words.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

Check = Callable[[Any], str]


def one_of(*choices: str) -> Check:
    return lambda v: "" if v in choices else f"must be one of {', '.join(choices)}"


def in_range(lo: float, hi: float) -> Check:
    def check(v: Any) -> str:
        if isinstance(v, float) and not math.isfinite(v):
            return "must be a finite number"
        return "" if lo <= v <= hi else f"must be in [{lo}, {hi}]"

    return check


def positive(hi: float) -> Check:
    def check(v: Any) -> str:
        if isinstance(v, float) and not math.isfinite(v):
            return "must be a finite number"
        return "" if 0 < v <= hi else f"must be in (0, {hi}]"

    return check


def no_control_chars(v: str) -> str:
    return "must not contain control characters" if any(ord(c) < 32 for c in v) else ""


def anything(_: Any) -> str:
    return ""
