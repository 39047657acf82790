"""Imports point one way (docs/architecture.md): a lower layer never imports a higher one, and two
packages of one layer never import each other. Read from the source with ``ast`` (function-level imports
included), so a lazy import cannot hide a loop.

Layers, bottom up: core; model and spatial (runtime geometry); router; ros and serve — the runtime — then
the tooling: fixtures (random checkpoints) and scenes (synthetic scenes, labels, QA, bag I/O); eval and demo;
bench; the ``rynnec-ros`` command (rynnec_ros/cli.py and every package's cli.py, which only registers
subcommands).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "rynnec_ros"
RANK = {"core": 0, "model": 1, "spatial": 1, "router": 2, "ros": 3, "serve": 3, "fixtures": 4, "scenes": 4,
        "eval": 5, "demo": 5, "bench": 6, "cli": 7}
# What runs on a robot or a site server, and what only tests, evaluation and benchmarks use.
RUNTIME = {"core", "model", "spatial", "router", "ros", "serve"}
TOOLING = {"fixtures", "scenes", "eval", "demo", "bench"}
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


def test_every_unit_is_runtime_or_tooling() -> None:
    assert RUNTIME | TOOLING | {"cli"} == set(RANK) and not RUNTIME & TOOLING


def test_runtime_never_imports_tooling() -> None:
    """The robot's path (node, engine, geometry, server) never reaches scene generation, labelling, random
    checkpoints, evaluation, the demo or benchmarks, not even through a lazy import."""
    bad = [
        f"{path.relative_to(PACKAGE.parent)} imports {target}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if _unit(path) in RUNTIME
        for target in _imported_units(path) & TOOLING
    ]
    assert not bad, "\n".join(bad)


def test_no_module_holds_labelled_question_data() -> None:
    """Labelled question sets are data files (eval/data), not Python: no module carries more than 100
    string pairs (a labelled set is hundreds; the largest legitimate tables here are a few dozen)."""
    heavy = []
    for path in sorted(PACKAGE.rglob("*.py")):
        pairs = sum(
            1 for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Tuple) and len(node.elts) == 2
            and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts)
        )
        if pairs > 100:
            heavy.append(f"{path.relative_to(PACKAGE.parent)}: {pairs} string pairs")
    assert not heavy, "\n".join(heavy)
