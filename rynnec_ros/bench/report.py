"""The JSON document every ``rynnec-ros bench`` section writes into."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from rynnec_ros.bench.environment import environment


def not_available(why: str) -> dict[str, Any]:
    """A section that could not be measured on this machine says why instead of disappearing."""
    return {"available": False, "reason": why}


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        return _jsonable(obj.item())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if hasattr(obj, "to_dict"):
        return _jsonable(obj.to_dict())
    return obj


def make_report(sections: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    return {
        "schema": "rynnec_ros.bench/1",
        "environment": environment(),
        "config": _jsonable(config),
        "sections": _jsonable(sections),
    }


def write_report(path: str | Path, report: dict[str, Any]) -> Path:
    out = Path(path)
    if out.parent and not out.parent.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    return out
