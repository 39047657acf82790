"""Imports point one way (docs/architecture.md): a lower layer never imports a higher one, and two
packages of one layer never import each other. Read from the source with ``ast`` (function-level imports
included), so a lazy import cannot hide a loop.

Layers, bottom up: core; model and spatial (runtime geometry); router; ros and serve; eval; bench; the
``rynnec-ros`` command (rynnec_ros/cli.py and every package's cli.py, which only registers subcommands).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "rynnec_ros"
RANK = {"core": 0, "model": 1, "spatial": 1, "router": 2, "ros": 3, "serve": 3, "eval": 4, "bench": 5,
        "cli": 6}
# Generated interfaces (colcon) live beside the ROS layer.
INTERFACES = {"msg", "srv", "action"}


def _unit(path: Path) -> str:
    rel = path.relative_to(PACKAGE).with_suffix("")
    if rel.name == "cli":
        return "cli"
    return rel.parts[0] if len(rel.parts) > 1 else rel.name


def _imported_units(path: Path) -> set[str]:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = parts if path.name == "__init__.py" else parts[:-1]
    return _units_of(path.read_text(encoding="utf-8"), package)


def _units_of(source: str, package: list[str]) -> set[str]:
    """rynnec_ros top-level units that ``source`` (a module of ``package``) imports."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            names = [module] if node.module or not node.level else [f"{module}.{a.name}" for a in node.names]
            if module == "rynnec_ros":
                names = [f"rynnec_ros.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            bits = name.split(".")
            if bits[0] == "rynnec_ros" and len(bits) > 1 and bits[1] not in INTERFACES:
                found.add(bits[1])
    return found


def test_no_import_points_up_or_sideways() -> None:
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        unit = _unit(path)
        if unit in ("__init__",):
            continue
        assert unit in RANK, f"{path}: {unit} has no layer in RANK"
        for target in _imported_units(path) - {unit}:
            rank = RANK.get("cli" if target == "cli" else target)
            assert rank is not None, f"{path} imports rynnec_ros.{target}, which has no layer"
            if rank >= RANK[unit]:
                bad.append(f"{path.relative_to(PACKAGE.parent)} ({unit}) imports {target}")
    assert not bad, "\n".join(bad)


def test_the_layer_test_sees_lazy_and_relative_imports() -> None:
    """The reader itself, on a made-up module of rynnec_ros.core (expected units written by hand)."""
    source = "from ..ros import node\nfrom . import types\n\ndef f():\n    import rynnec_ros.eval.metrics\n"
    assert _units_of(source, ["rynnec_ros", "core"]) == {"ros", "core", "eval"}
