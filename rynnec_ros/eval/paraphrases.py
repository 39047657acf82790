"""The paraphrase sets as data: how people and planners phrase spatial questions, each labelled with the
structured task it means. Kept as YAML under ``eval/data/paraphrases`` (a manifest names the splits and
pins each file's size and hash) so the sets are read by any tool and never mistaken for code.
"""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import resources
from typing import Any

import yaml

SPLITS = ("dev", "heldout", "fresh", "fresh2", "fresh3", "fresh4", "fresh5", "fresh6", "fresh7",
          "fresh8", "fresh9", "fresh10", "fresh11", "fresh12", "fresh13",
          "fresh14", "fresh15", "fresh16", "fresh17", "fresh18", "fresh19", "fresh20", "fresh21",
          "fresh22", "fresh23", "fresh24")


def _read(name: str) -> bytes:
    return resources.files("rynnec_ros.eval").joinpath(f"data/paraphrases/{name}").read_bytes()


@cache
def manifest() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(_read("manifest.yaml"))
    return loaded


@cache
def families(name: str) -> dict[str, list[tuple[str, str]]]:
    """``family -> [(expected, question), ...]`` of one set, checked against the manifest: a set file that
    was edited after it was pinned (size or hash) is refused rather than measured."""
    pinned = manifest()["sets"].get(name)
    if pinned is None:
        raise ValueError(f"no paraphrase set {name!r}; sets: {', '.join(manifest()['sets'])}")
    raw = _read(f"{name}.yaml")
    digest = hashlib.sha256(raw).hexdigest()
    if digest != pinned["sha256"]:
        raise ValueError(f"paraphrase set {name!r} changed since it was pinned (sha256 {digest})")
    out = {family: [(str(e), str(q)) for e, q in entries] for family, entries in
           yaml.safe_load(raw)["families"].items()}
    if sum(len(v) for v in out.values()) != pinned["entries"]:
        raise ValueError(f"paraphrase set {name!r} holds {sum(len(v) for v in out.values())} entries, "
                         f"the manifest {pinned['entries']}")
    return out


def split(half: str) -> list[tuple[str, str, str]]:
    """``(family, expected, question)`` of ``"dev"`` (the parser's development set, sets in the order
    written), ``"heldout"`` (written blind, never used to change the parser) or ``"fresh"`` … ``"fresh24"``
    (written by writers who read no project document, measured once before any change)."""
    if half not in SPLITS:
        raise ValueError(f"half must be one of {', '.join(SPLITS)}, got {half!r}")
    return [
        (family, expected, question)
        for name in manifest()["splits"][half]
        for family, entries in families(name).items()
        for expected, question in entries
    ]
