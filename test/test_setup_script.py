"""scripts/setup_env.sh on a full disk: a clear error before pip starts, not pip's Errno 28 half-way.

The free space comes from a ``df`` placed first on PATH that prints what POSIX ``df -P -k`` prints (one
header line, then file system, 1024-blocks, used, available, capacity, mount point); the numbers the
script must name are worked from that line by hand (2048 KiB free = 2 MiB; 3 GiB = 3072 MiB).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="setup_env.sh refuses any Python but 3.11")
def test_a_full_disk_stops_the_set_up_before_any_install(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "setup_env.sh", root / "scripts")
    for f in REPO.glob("requirements*.txt"):
        shutil.copy(f, root)
    for f in REPO.glob("constraints-ros-*.txt"):
        shutil.copy(f, root)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    df = bin_dir / "df"
    df.write_text("#!/bin/sh\necho 'Filesystem 1024-blocks Used Available Capacity Mounted on'\n"
                  "echo '/dev/vda 263174212 263172164 2048 100% /'\n")
    df.chmod(df.stat().st_mode | stat.S_IEXEC)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env['PATH']}", PYTHON=sys.executable)
    r = subprocess.run(["bash", "scripts/setup_env.sh"], cwd=root, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"[setup] error: 2 MiB free under {root}; installing the kilted venv needs about 3072 MiB" \
        in r.stderr, r.stderr
    assert "installing Python dependencies" not in r.stdout
    # nothing was installed: the venv holds pip alone, and no stamp says the dependencies are in
    assert not list((root / ".venv").glob("lib/python3*/site-packages/torch"))
    assert not list((root / ".venv").glob(".deps-*"))
