"""What a benchmark ran on: the anchors' maintainers ask for clocks, precision and method with each number."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from importlib import metadata
from typing import Any

_PACKAGES = ("torch", "transformers", "onnx", "onnxruntime", "onnxruntime-gpu", "tensorrt", "numpy")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _package_versions() -> dict[str, str]:
    versions: dict[str, str] = {}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def _nvidia_smi() -> list[dict[str, str]]:
    """GPU name, clocks and power state as nvidia-smi reports them (read only; never changes settings)."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return []
    fields = (
        "name,driver_version,memory.total,clocks.sm,clocks.mem,"
        + "clocks.max.sm,clocks.max.mem,power.limit,pstate"
    )
    try:
        out = subprocess.run(
            [exe, f"--query-gpu={fields}", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    keys = fields.split(",")
    return [
        dict(zip(keys, (v.strip() for v in line.split(",")), strict=False))
        for line in out.splitlines()
        if line.strip()
    ]


def _jetson_power_mode() -> str | None:
    exe = shutil.which("nvpmodel")
    if exe is None:
        return None
    try:
        return subprocess.run([exe, "-q"], capture_output=True, text=True, timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def torch_threads() -> int | None:
    try:
        import torch
    except ImportError:
        return None
    return int(torch.get_num_threads())


def environment() -> dict[str, Any]:
    """A JSON-ready description of the machine and software a benchmark ran on."""
    return {
        "timestamp_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "load_average_1m": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "torch_threads": torch_threads(),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),  # see rynnec_ros/__init__.py
        "packages": _package_versions(),
        "gpus": _nvidia_smi(),
        "jetson_power_mode": _jetson_power_mode(),
    }
