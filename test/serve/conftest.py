"""Fixtures for the site-server tests: a real ``rynnec-ros serve`` (Triton) process on loopback.

The server runs in the serving environment (``requirements-serve.txt``: PyTriton pins numpy<2), found as
``$RYNNEC_SERVE_PYTHON`` or ``.venv-serve/bin/python`` in the repository; the tests skip without it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 120.0


def serve_python() -> str:
    py = os.environ.get("RYNNEC_SERVE_PYTHON") or str(REPO / ".venv-serve" / "bin" / "python")
    if not Path(py).exists():
        pytest.skip(f"no serving environment at {py} (see docs/serving.md)")
    check = subprocess.run([py, "-c", "import pytriton"], capture_output=True, timeout=60)
    if check.returncode != 0:
        pytest.skip(f"{py} has no nvidia-pytriton")
    return py


async def drain(models: Any, raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    """Every response of one ``rynnec_ask`` request as PyTriton gets them: the model function called with
    a list of request dicts of numpy arrays, its async generator iterated on PyTriton's event loop."""
    out = []
    async for responses in models.ask([{"request": np.array([raw], dtype=object)}]):
        for r in responses:
            out.append((r["kind"][0].decode(), json.loads(bytes(r["body"][0]))))
    return out


def asked(models: Any, raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    """``drain`` on a fresh event loop: one request alone."""
    return asyncio.run(drain(models, raw))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServerProcess:
    """``rynnec-ros serve`` in its own session (tritonserver and its stubs die with it on ``kill``)."""

    def __init__(
        self, checkpoint: Path, log: Path, token: str = "", extra_args: tuple[str, ...] = ()
    ) -> None:
        self.checkpoint = checkpoint
        self.log = log
        self.token = token
        self.extra_args = extra_args
        self.port = free_port()
        self.http_port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        args = [
            serve_python(),
            "-m",
            "rynnec_ros.cli",
            "serve",
            "--checkpoint",
            str(self.checkpoint),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--http-port",
            str(self.http_port),
            "--threads",
            "1",
            "--robots",
            "4",
            *self.extra_args,
        ]
        env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(REPO))
        env.pop("RYNNEC_SERVER_TOKEN", None)
        if self.token:  # as docs/serving.md says to give it: not on the command line, which `ps` shows
            env["RYNNEC_SERVER_TOKEN"] = self.token
        seen = self.log.stat().st_size if self.log.exists() else 0  # a restart appends to the log
        with self.log.open("a") as fh:
            self.proc = subprocess.Popen(
                args, cwd=REPO, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"server exited with {self.proc.returncode}:\n{self.log.read_text()[-3000:]}"
                )
            if f"ready grpc://127.0.0.1:{self.port}" in self.log.read_text()[seen:]:
                return
            time.sleep(0.5)
        self.kill()
        raise RuntimeError(f"server not ready in {START_TIMEOUT_S:g} s:\n{self.log.read_text()[-3000:]}")

    def kill(self) -> None:
        """SIGKILL the whole session: the abrupt death the fault tests need, and the final cleanup."""
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)
        self.proc = None

    def stop(self) -> None:
        """SIGTERM (clean Triton shutdown), then SIGKILL whatever is left of the session."""
        if self.proc is None:
            return
        self.proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=20)
        self.kill()


@pytest.fixture(scope="session")
def seg_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tiny random checkpoint whose decoding emits [SEG], so segmentation returns real SAM2 masks."""
    from rynnec_ros.fixtures.checkpoints import make_segmenting_checkpoint

    return make_segmenting_checkpoint(tmp_path_factory.mktemp("ckpt") / "seg-tiny")


@pytest.fixture(scope="session")
def endless_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Generates until max_new_tokens: requests as long as a test needs to kill the server under them."""
    from rynnec_ros.fixtures.checkpoints import make_segmenting_checkpoint

    return make_segmenting_checkpoint(tmp_path_factory.mktemp("ckpt") / "seg-endless", stop_after_seg=False)


@pytest.fixture
def server_factory(tmp_path: Path) -> Iterator[type]:
    """Build ``ServerProcess``es that are always killed at teardown."""
    made: list[ServerProcess] = []

    def make(checkpoint: Path, token: str = "") -> ServerProcess:
        s = ServerProcess(checkpoint, tmp_path / f"server{len(made)}.log", token)
        made.append(s)
        return s

    yield make
    for s in made:
        s.stop()
