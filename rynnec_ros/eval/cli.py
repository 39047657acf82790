"""``rynnec-ros eval {rynnec-bench,embspatial,robobench} ...`` (and ``eval spatial`` from the spatial area).

``eval`` is a subcommand group: other areas add benchmarks to it by defining
``register_eval(eval_subparsers)`` in their ``cli`` module (today: ``rynnec_ros.spatial.cli``).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path
from typing import Any

from rynnec_ros.model.spec import EngineSpec, add_engine_args

from .node import NodePredictor

# Areas that contribute ``eval`` subcommands through ``register_eval(eval_subparsers)``.
_EVAL_PLUGINS = ("rynnec_ros.spatial.cli",)


def register(subparsers: argparse._SubParsersAction) -> None:
    group = subparsers.add_parser("eval", help="score the engine or the running node on a benchmark")
    eval_sub = group.add_subparsers(dest="benchmark", required=True)

    rb = eval_sub.add_parser("rynnec-bench", help="RynnEC-Bench: object properties, segmentation, spatial")
    _common(rb)
    rb.add_argument(
        "--protocol",
        choices=["upstream", "paper"],
        default="upstream",
        help="numeric scoring: the released numerical_score (default, comparable with the published "
        "tables) or the paper's Eq. 1/2",
    )
    rb.set_defaults(func=_clear_errors(_run_rynnec), max_new_tokens_default=128)

    es = eval_sub.add_parser("embspatial", help="EmbSpatial-Bench: generation and likelihood accuracy")
    _common(es)
    es.add_argument(
        "--strategy",
        choices=["both", "generation", "likelihood"],
        default=None,
        help="default: both (generation only with --via-node)",
    )
    es.set_defaults(func=_clear_errors(_run_embspatial), max_new_tokens_default=16)

    ro = eval_sub.add_parser(
        "robobench", help="RoboBench: multiple choice, Q1 plans, Q2 next step, Q3 yes/no"
    )
    _common(ro)
    ro.set_defaults(func=_clear_errors(_run_robobench), max_new_tokens_default=256)

    for name in _EVAL_PLUGINS:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        hook = getattr(module, "register_eval", None)
        if hook is not None:
            hook(eval_sub)


def _clear_errors(fn: Any) -> Any:
    """Bad input (missing files, malformed items, no node) ends the command with its message, not a trace."""

    def run(args: argparse.Namespace) -> int:
        from .judges import JudgeError

        try:
            return int(fn(args) or 0)
        except (ValueError, ModelLoadError) as exc:
            print(f"rynnec-ros eval: error: {exc}", file=sys.stderr)
            return 2
        except (JudgeError, TimeoutError) as exc:
            print(
                f"rynnec-ros eval: stopped: {exc} (scored items are kept; re-run to resume)", file=sys.stderr
            )
            return 3

    return run


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", type=Path, required=True, help="benchmark folder (or EmbSpatial JSON file)")
    p.add_argument("--out", type=Path, required=True, help="results.jsonl, report.md and plots go here")
    p.add_argument("--checkpoint", type=Path, help="RynnEC checkpoint directory (not needed with --via-node)")
    p.add_argument(
        "--via-node", action="store_true", help="ask the running cognition node instead of the engine"
    )
    p.add_argument("--node-namespace", default="")
    p.add_argument("--limit", type=int, default=None, help="first N items of each subset / task folder")
    p.add_argument("--judge", choices=["offline", "http"], default="offline")
    p.add_argument(
        "--judge-url",
        default=os.environ.get("RYNNEC_JUDGE_URL", ""),
        help="OpenAI-compatible base URL, e.g. https://api.openai.com/v1 (env RYNNEC_JUDGE_URL)",
    )
    p.add_argument("--judge-model", default=os.environ.get("RYNNEC_JUDGE_MODEL", "gpt-4o"))
    p.add_argument("--judge-retries", type=int, default=3)
    add_engine_args(p)
    p.add_argument("--max-new-tokens", type=int, default=None)
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--name", default=None, help="model name shown in the report tables")


class ModelLoadError(RuntimeError):
    """The model (or node client) could not be built: the run stops instead of scoring every item as an
    inference failure (per-item ``ValueError``s are caught and recorded)."""


class _Lazy:
    """Builds the model (or node client) on first use, so re-reporting a finished run loads nothing."""

    def __init__(self, args: argparse.Namespace) -> None:
        if not args.via_node and args.checkpoint is None and args.backend != "remote":
            raise ValueError("--checkpoint is required unless --via-node or --backend remote is given")
        self._spec = None if args.via_node else EngineSpec.from_args(args)  # refused here, not per item
        self._args = args
        self._model: Any = None

    def __enter__(self) -> _Lazy:
        return self

    def __exit__(self, *exc: object) -> None:
        """The node client holds a DDS participant and a thread; the engine holds nothing to release."""
        if isinstance(self._model, NodePredictor):
            self._model.close()

    def __getattr__(self, name: str) -> Any:
        if self._model is None:
            try:
                self._model = _load_model(self._args, self._spec)
            except ValueError as exc:
                raise ModelLoadError(str(exc)) from exc
        return getattr(self._model, name)


def _load_model(args: argparse.Namespace, spec: EngineSpec | None) -> Any:
    if spec is None:
        return NodePredictor(args.node_namespace)
    if not spec.threads:
        spec = spec.replace(threads=int(os.environ.get("OMP_NUM_THREADS", "2")))
    from rynnec_ros.model.backends import load_engine

    return load_engine(spec)


def _judge(args: argparse.Namespace) -> Any:
    from .judges import make_judge

    key = os.environ.get("RYNNEC_JUDGE_API_KEY") or os.environ.get("OPENAI_API_KEY")
    return make_judge(args.judge, args.judge_url, args.judge_model, key, args.judge_retries)


def _meta(args: argparse.Namespace, judge_name: str | None, extra: dict[str, object]) -> dict[str, object]:
    meta: dict[str, object] = {
        "data": str(args.data),
        "model": "cognition node (via ROS services)" if args.via_node else _model_name(args),
        "limit per subset": args.limit if args.limit is not None else "none",
    }
    if judge_name:
        meta["judge (--judge)"] = judge_name
    meta.update(extra)
    return meta


def _model_name(args: argparse.Namespace) -> str:
    """The engine a report scored: the checkpoint, with the backend unless eager torch."""
    if args.backend == "remote":
        return f"site server {args.server_url} (backend remote)"
    return str(args.checkpoint) + ("" if args.backend == "torch" else f" (backend {args.backend})")


def _name(args: argparse.Namespace) -> str:
    if args.name:
        return args.name
    if args.via_node:
        return "node"
    return "remote" if args.backend == "remote" else Path(str(args.checkpoint)).name


def _tokens(args: argparse.Namespace) -> int:
    return args.max_new_tokens if args.max_new_tokens is not None else args.max_new_tokens_default


def _run_rynnec(args: argparse.Namespace) -> int:
    from .datasets import load_rynnec_bench
    from .report import OFFLINE_JUDGE_NOTE, rynnec_summary, write_report
    from .runners import ResultsFile, run_rynnec_bench

    subsets = load_rynnec_bench(args.data)
    judge = _judge(args)
    with _Lazy(args) as model:
        records = run_rynnec_bench(
            subsets,
            model,
            judge,
            ResultsFile(args.out / "results.jsonl"),
            args.limit,
            args.protocol,
            _tokens(args),
            not args.no_progress,
        )
    summary = rynnec_summary(records, _name(args))
    path = write_report(
        args.out,
        "RynnEC-Bench",
        _meta(
            args,
            judge.describe("rynnec-bench"),
            {"numeric protocol (--protocol)": args.protocol, "items": len(records)},
        ),
        summary,
        OFFLINE_JUDGE_NOTE if judge.approximate else "",
    )
    print(path)
    return 0


def _run_embspatial(args: argparse.Namespace) -> int:
    from .datasets import load_embspatial
    from .report import embspatial_summary, write_report
    from .runners import STRATEGIES, ResultsFile, run_embspatial

    strategy = args.strategy or ("generation" if args.via_node else "both")
    strategies = list(STRATEGIES) if strategy == "both" else [strategy]
    items = load_embspatial(args.data)
    with _Lazy(args) as model:
        records = run_embspatial(
            items, model, ResultsFile(args.out / "results.jsonl"), strategies, args.limit,
            not args.no_progress,
        )
    summary = embspatial_summary(records, _name(args), strategies)
    path = write_report(
        args.out,
        "EmbSpatial-Bench",
        _meta(args, None, {"strategies": ", ".join(strategies), "items": len(records)}),
        summary,
    )
    print(path)
    return 0


def _run_robobench(args: argparse.Namespace) -> int:
    from .datasets import load_robobench
    from .report import OFFLINE_SCENE_NOTE, robobench_summary, write_report
    from .runners import ResultsFile, run_robobench

    items = load_robobench(args.data)
    judge = _judge(args)
    with _Lazy(args) as model:
        records = run_robobench(
            items,
            model,
            judge,
            ResultsFile(args.out / "results.jsonl"),
            args.limit,
            _tokens(args),
            not args.no_progress,
        )
    summary = robobench_summary(records, _name(args))
    with_prompts = sum(bool(r.get("system_prompt")) for r in records)
    extra = {
        "items": len(records),
        "not scored (errors)": sum(r.get("score") is None for r in records),
        "MC answers no rule or judge could read (scored 0)": sum(bool(r.get("unreadable")) for r in records),
        "system prompts": f"{with_prompts} of {len(records)} questions sent with system_prompt.json's prompts"
        + ("" if with_prompts else " (none found under --data: Q1/Q2 answers will rarely use the skills)"),
        "Q1 world simulation": "deterministic port of the released judge rules (rynnec_ros.eval.robobench)",
        "initial scene": "judge"
        if not judge.approximate
        else "reference-plan preconditions (+ item initial_state)",
    }
    path = write_report(
        args.out,
        "RoboBench",
        _meta(args, judge.describe("robobench"), extra),
        summary,
        OFFLINE_SCENE_NOTE if judge.approximate else "",
    )
    print(path)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Standalone entry (``python -m rynnec_ros.eval.cli``) for environments without the main CLI."""
    parser = argparse.ArgumentParser(prog="rynnec-ros")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
