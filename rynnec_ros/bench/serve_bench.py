"""``rynnec-ros bench serve``: N robots sharing one site server vs N engines of their own.

One ``rynnec-ros serve`` process (Triton) is started on loopback; for each N in ``--robots`` N client
threads, each with its own ``remote`` engine and its own window of frames (fresh keys per round, so the
first question pays the upload and the vision encoding), ask ``--questions`` questions each. The same
workload then runs on N independent in-process engines (one per thread, same process, same
``--threads``). Reported per N: throughput (questions/s), p50/p95 latency, and the server/local
throughput ratio. Every loop is bounded by the workload size and ``--timeout``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rynnec_ros.bench.measure import Stats, ratio

QUESTIONS = (
    "<video>\nWhat is the red object doing?",
    "<video>\nHow many objects are there?",
    "<video>\nWhere is the red object?",
    "<video>\nWhat colour is the background?",
)
METHOD = (
    "wall clock per question (time.perf_counter) on client threads; throughput = questions / wall time of "
    "the round; all robots start together; server and local engines use the same --threads and run the "
    "same warm-up question before their round; local engines share this process (one thread each); "
    "for each N the server round, the round on a second server with cross-robot vision batching off "
    "(--batch-window-ms 0) and the local round run back to back (load average recorded around them)"
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="site server: 1..8 robots on one Triton server vs own engines")
    p.add_argument("--checkpoint", default="small", help="checkpoint directory, or 'tiny' / 'small' (random)")
    p.add_argument("--robots", default="1,2,4,8", help="comma-separated robot counts")
    p.add_argument("--questions", type=int, default=3, help="questions per robot per round")
    p.add_argument("--frames", type=int, default=4, help="frames in each robot's window")
    p.add_argument("--size", default="320x240", help="frame size WxH")
    p.add_argument("--new-tokens", type=int, default=8)
    p.add_argument("--threads", type=int, default=2, help="torch intra-op threads (server and local)")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds for the whole benchmark")
    p.add_argument(
        "--serve-python",
        help="interpreter with nvidia-pytriton (default: $RYNNEC_SERVE_PYTHON or .venv-serve/bin/python)",
    )
    p.add_argument("--out", required=True, help="JSON report path")
    p.set_defaults(func=_run)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve_python(arg: str | None) -> str:
    repo = Path(__file__).resolve().parents[2]
    py = arg or os.environ.get("RYNNEC_SERVE_PYTHON") or str(repo / ".venv-serve" / "bin" / "python")
    if not Path(py).exists():
        raise ValueError(f"no serving interpreter at {py}: pass --serve-python (see docs/serving.md)")
    return py


@contextlib.contextmanager
def _server(
    python: str, checkpoint: Path, threads: int, robots: int, log: Path, timeout: float, window_ms: float
) -> Any:
    """A loopback ``rynnec-ros serve`` for the duration of the block; its whole session is killed after."""
    port, http_port = _free_port(), _free_port()
    repo = Path(__file__).resolve().parents[2]
    args = [
        python,
        "-m",
        "rynnec_ros.cli",
        "serve",
        "--checkpoint",
        str(checkpoint),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--http-port",
        str(http_port),
        "--threads",
        str(threads),
        "--robots",
        str(robots),
        "--batch-window-ms",
        str(window_ms),
    ]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), PYTHONPATH=str(repo))
    with log.open("w") as fh:
        proc = subprocess.Popen(args, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + timeout
        while f"ready grpc://127.0.0.1:{port}" not in log.read_text():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"site server did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield f"127.0.0.1:{port}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=20)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # stubs that outlived tritonserver
        proc.wait(timeout=20)


def _round(ask: list[Callable[[int], Any]], questions: int) -> dict[str, Any]:
    """Every robot asks ``questions`` questions at once; latencies per question and the round's wall.

    ``token_ids`` keeps each answer's ids by robot and question, so the two sides can be compared."""
    latencies: list[float] = []
    ids: dict[tuple[int, int], list[int]] = {}
    errors: list[str] = []
    lock = threading.Lock()

    def robot(i: int) -> None:
        for q in range(questions):
            t0 = time.perf_counter()
            try:
                ans = ask[i](q)
            except Exception as exc:  # reported in the section
                with lock:
                    errors.append(f"robot {i}: {exc}")
                return
            with lock:
                latencies.append(time.perf_counter() - t0)
                ids[(i, q)] = [int(t) for t in ans.token_ids]

    threads = [threading.Thread(target=robot, args=(i,)) for i in range(len(ask))]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    if errors:
        return {"available": False, "reason": "; ".join(errors[:3])}
    return {
        "available": True,
        "questions": len(latencies),
        "wall_s": wall,
        "throughput_qps": len(latencies) / wall,
        "latency": Stats.of(latencies),
        "token_ids": [ids[k] for k in sorted(ids)],
    }


def serve_section(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    import torch

    from rynnec_ros.bench.workload import resolve_checkpoint, synthetic_window
    from rynnec_ros.core.types import Frame, Request
    from rynnec_ros.model.backends import load_engine
    from rynnec_ros.model.backends.remote import RemoteEngine
    from rynnec_ros.serve.server import run_request, warm_up

    counts = [int(x) for x in args.robots.split(",")]
    if not counts or min(counts) < 1 or max(counts) > 64:
        raise ValueError(f"--robots must list counts in 1..64, got {args.robots!r}")
    w, h = (int(x) for x in args.size.lower().split("x"))
    checkpoint = resolve_checkpoint(args.checkpoint, workdir)
    torch.set_num_threads(args.threads)
    rounds = iter(range(10**6))

    def requests(n: int) -> list[list[Request]]:
        r = next(rounds)  # fresh frame keys: every round starts cold, uploads and encodes its windows
        out = []
        for i in range(n):
            frames = [
                Frame(rgb=f, key=("bench", r, i, j))
                for j, f in enumerate(synthetic_window(args.frames, w, h, seed=i))
            ]
            out.append(
                [
                    Request(
                        question=QUESTIONS[q % len(QUESTIONS)], frames=frames, max_new_tokens=args.new_tokens
                    )
                    for q in range(args.questions)
                ]
            )
        return out

    def asker(fn: Callable[[Any, Request], Any], engines: list[Any], reqs: list[list[Request]]) -> list[Any]:
        return [lambda q, e=e, r=r: fn(e, r[q]) for e, r in zip(engines, reqs, strict=True)]

    results: dict[str, Any] = {}
    python = _serve_python(args.serve_python)
    start = (python, checkpoint, args.threads, max(counts))
    with (
        _server(*start, workdir / "server.log", args.timeout, 10.0) as url,
        _server(*start, workdir / "server_unbatched.log", args.timeout, 0.0) as url_unbatched,
    ):
        for n in counts:  # server and local rounds alternate, so drifting machine load hits both alike
            row: dict[str, Any] = {"load_avg_1min_before": os.getloadavg()[0]}
            for side, at in (("server", url), ("server_unbatched", url_unbatched)):
                robots = [RemoteEngine(at, request_timeout_s=args.timeout) for _ in range(n)]
                row[side] = _round(asker(lambda e, r: e.answer(r), robots, requests(n)), args.questions)
                for r in robots:
                    r.close()
            engines = [load_engine(checkpoint) for _ in range(n)]
            for e in engines:  # the same one-off warm-up the server runs before it accepts requests
                warm_up(e)
            local_ask = asker(lambda e, r: run_request(e, "answer", r), engines, requests(n))
            row["local"] = _round(local_ask, args.questions)  # the idle server holds no CPU meanwhile
            row["load_avg_1min_after"] = os.getloadavg()[0]
            if row["server"]["available"] and row["local"]["available"]:
                # same pixels and questions on both sides: the server must answer as a local engine does
                local_ids = row["local"].pop("token_ids")
                row["answers_identical"] = row["server"].pop("token_ids") == local_ids
                if row["server_unbatched"]["available"]:
                    row["answers_identical_unbatched"] = row["server_unbatched"].pop("token_ids") == local_ids
                    row["throughput_ratio_batched_vs_unbatched"] = ratio(
                        row["server"]["throughput_qps"], row["server_unbatched"]["throughput_qps"]
                    )
                row["throughput_ratio_server_vs_local"] = ratio(
                    row["server"]["throughput_qps"], row["local"]["throughput_qps"]
                )
            results[str(n)] = row
            del engines, local_ask
    return {
        "available": True,
        "checkpoint": str(checkpoint),
        "frames": args.frames,
        "frame_size_wh": [w, h],
        "new_tokens": args.new_tokens,
        "questions_per_robot": args.questions,
        "threads": args.threads,
        "robots": results,
        "method": METHOD,
    }


def _run(args: argparse.Namespace) -> int:
    from rynnec_ros.bench.report import make_report, write_report
    from rynnec_ros.bench.workload import scratch_dir

    try:
        with scratch_dir() as tmp:
            section = serve_section(args, Path(tmp))
    except (ValueError, FileNotFoundError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    config = {k: v for k, v in vars(args).items() if k != "func"}
    path = write_report(args.out, make_report({"serve": section}, config))
    for n, r in section["robots"].items():
        parts = []
        for side in ("server", "local"):
            x = r[side]
            parts.append(
                f"{side} {x['throughput_qps']:.2f} q/s p50 {x['latency'].median:.2f}s "
                f"p95 {x['latency'].p95:.2f}s"
                if x["available"]
                else f"{side} failed: {x['reason']}"
            )
        same = r.get("answers_identical")
        parts.append("answers identical" if same else "ANSWERS DIFFER" if same is False else "not compared")
        print(f"[bench] serve {n} robots: " + ", ".join(parts), file=sys.stderr)
    print(f"wrote {path}")
    return 0
