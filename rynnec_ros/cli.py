"""rynnec-ros: the RynnEC engine, spatial geometry, evaluation, benchmarks and ROS 2 tools in one command.

Each area registers its own subcommands (``register(subparsers)``) and imports its heavy
dependencies only when a subcommand runs, so ``rynnec-ros --help`` works without ROS or torch.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# Modules that provide ``register(subparsers: argparse._SubParsersAction) -> None``.
_COMMAND_MODULES = (
    "rynnec_ros.model.cli",
    "rynnec_ros.spatial.cli",
    "rynnec_ros.eval.cli",
    "rynnec_ros.ros.cli",
    "rynnec_ros.bench.cli",
    "rynnec_ros.serve.cli",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rynnec-ros", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # a real import error inside an existing module
                raise
            continue
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
