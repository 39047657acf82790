"""Suite-wide settings: offline, deterministic, and light on the two CI cores."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "2")

TEST_DIR = Path(__file__).resolve().parent
DATA_DIR = TEST_DIR / "data"
