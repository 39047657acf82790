"""Importing rynnec_ros makes torch's OpenMP threads passive unless the environment chose a policy.

Expected values come from libgomp itself: ``OMP_DISPLAY_ENV=VERBOSE`` makes the OpenMP runtime print the
settings it initialised with, and libgomp turns ``OMP_WAIT_POLICY=PASSIVE`` into a spin count of 0
(its default, with no policy set, is 300000 spins; ``ACTIVE`` is 30000000000).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("torch")


def _libgomp_spincount(env_policy: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if env_policy is not None:
        env["OMP_WAIT_POLICY"] = env_policy
    env["OMP_DISPLAY_ENV"] = "VERBOSE"
    out = subprocess.run([sys.executable, "-c", "import rynnec_ros, torch; torch.ones(2).sum()"], env=env,
                         capture_output=True, text=True, timeout=120, check=True)
    found = re.search(r"GOMP_SPINCOUNT = '(\d+)'", out.stderr)
    if found is None:
        pytest.skip("torch's OpenMP runtime is not libgomp (no GOMP_SPINCOUNT in OMP_DISPLAY_ENV)")
    return found.group(1)


def test_import_sets_a_passive_wait_policy_before_torch_starts_openmp() -> None:
    assert _libgomp_spincount(None) == "0"


def test_a_policy_from_the_environment_is_kept() -> None:
    assert _libgomp_spincount("ACTIVE") == "30000000000"
