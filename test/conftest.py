"""Suite-wide settings: offline, deterministic, light on the two CI cores, and a DDS domain of its own for
every module marked ``ros`` (the node tests, and the benchmark, server, evaluation and bag tests that
start a node)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "2")

TEST_DIR = Path(__file__).resolve().parent
DATA_DIR = TEST_DIR / "data"


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
