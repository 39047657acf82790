"""Fixtures for the ROS tests: an isolated DDS domain per module and the node in its own process."""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


# 101..215 stays inside the range every RMW accepts and away from the default 0 and the demo's 42.
DOMAINS = range(101, 216)
_LOCK_DIR = Path(tempfile.gettempdir()) / "rynnec_ros-test-domains"


@contextlib.contextmanager
def _claim_domain() -> Iterator[int]:
    """A ROS_DOMAIN_ID no other test run on this machine holds while this module runs.

    A domain derived from the module name alone collides whenever two test runs share the machine (a
    Kilted and a Jazzy run, two work trees): two nodes named /rynnec then answer the same lifecycle and
    service calls, and a test may read the other run's state. An flock per domain, released by the kernel
    even when the run is killed, makes the claim exclusive.
    """
    _LOCK_DIR.mkdir(exist_ok=True)
    start = random.randrange(len(DOMAINS))
    for i in range(len(DOMAINS)):
        domain = DOMAINS[(start + i) % len(DOMAINS)]
        fh = (_LOCK_DIR / f"{domain}.lock").open("a")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            continue
        try:
            yield domain
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
            fh.close()
        return
    raise RuntimeError(f"every ROS domain in {DOMAINS} is held by another test run")


@pytest.fixture(scope="module", autouse=True)
def ros_domain(request: pytest.FixtureRequest) -> Iterator[int]:
    """A ROS_DOMAIN_ID held by this module alone (see _claim_domain), localhost only."""
    if request.node.get_closest_marker("ros") is None:
        yield -1
        return
    pytest.importorskip("rclpy")
    keys = ("ROS_DOMAIN_ID", "ROS_LOCALHOST_ONLY", "ROS_AUTOMATIC_DISCOVERY_RANGE")
    old = {k: os.environ.get(k) for k in keys}
    with _claim_domain() as domain:
        os.environ.update(
            ROS_DOMAIN_ID=str(domain), ROS_LOCALHOST_ONLY="1", ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST"
        )
        yield domain
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


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
