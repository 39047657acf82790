"""Fixtures for the ROS tests: the node in its own process (each module's DDS domain: test/conftest.py)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def segmenting_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tiny random checkpoint whose decoding emits [SEG], so segmentation returns real SAM2 masks."""
    from rynnec_ros.fixtures.checkpoints import make_segmenting_checkpoint

    return make_segmenting_checkpoint(tmp_path_factory.mktemp("ckpt") / "seg-tiny")


@pytest.fixture(scope="session")
def endless_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Like ``segmenting_checkpoint`` but generating until max_new_tokens: long inferences on demand."""
    from rynnec_ros.fixtures.checkpoints import make_segmenting_checkpoint

    return make_segmenting_checkpoint(tmp_path_factory.mktemp("ckpt") / "seg-endless", stop_after_seg=False)


class NodeProcess:
    """The cognition node started with ``rynnec-ros node`` in a child process."""

    def __init__(self, params: dict[str, object], log: Path, autostart: bool = True, name: str = "rynnec"):
        args = [sys.executable, "-m", "rynnec_ros.cli", "node", "--name", name]
        if not autostart:
            args.append("--no-autostart")
        for k, v in params.items():
            value = ("true" if v else "false") if isinstance(v, bool) else v
            args += ["-p", f"{k}:={value}"]
        env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=f"{REPO}:{os.environ.get('PYTHONPATH', '')}")
        self.log = log
        self._fh = log.open("w")
        self.proc = subprocess.Popen(args, cwd=REPO, env=env, stdout=self._fh, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> int:
        if self.alive():
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        self._fh.close()
        return self.proc.returncode

    def output(self) -> str:
        return self.log.read_text()


@contextlib.contextmanager
def running_node(tmp_path: Path, params: dict[str, object], **kw: object) -> Iterator[NodeProcess]:
    node = NodeProcess(params, tmp_path / f"node-{time.monotonic_ns()}.log", **kw)
    try:
        yield node
    finally:
        node.stop()


@pytest.fixture(scope="module")
def node_factory(tmp_path_factory: pytest.TempPathFactory):
    """Start nodes that are stopped at the end of the module."""
    started: list[NodeProcess] = []
    base = tmp_path_factory.mktemp("nodes")

    def start(params: dict[str, object], **kw: object) -> NodeProcess:
        node = NodeProcess(params, base / f"node-{len(started)}.log", **kw)
        started.append(node)
        return node

    yield start
    for node in started:
        node.stop()


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    """A small generated RGB-D scene (gen-scene's bag, questions, masks; 8 frames of 128x96)."""
    from rynnec_ros.scenes.synth import SceneOptions, generate_scene

    out = tmp_path_factory.mktemp("scene")
    generate_scene(out, SceneOptions(seed=3, frames=8, width=128, height=96, per_task=2))
    return out
