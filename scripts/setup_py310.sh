#!/usr/bin/env bash
# Idempotent: .venv-py310, a Python 3.10 venv (no ROS, no torch) for the ROS-free unit tests. Robots run
# Humble / JetPack 6 on Python 3.10; the ROS 2 wheels here are for 3.11 only. Prints the interpreter used, or
# exits 3 when the machine has no Python 3.10 (the caller then skips that phase and says so).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
VENV="$ROOT/.venv-py310"
PY310=${PYTHON310:-}
if [ -z "$PY310" ]; then
  for candidate in "$(pyenv root 2>/dev/null || echo /nonexistent)"/versions/3.10.*/bin/python3.10 \
                   /usr/bin/python3.10 /usr/local/bin/python3.10; do
    if [ -x "$candidate" ] && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 10))'; then
      PY310=$candidate; break
    fi
  done
fi
if [ -z "$PY310" ]; then
  echo "[setup-py310] no Python 3.10 interpreter on this machine" >&2
  exit 3
fi
if ! "$VENV/bin/python" -m pip --version >/dev/null 2>&1; then
  rm -rf "$VENV"
  "$PY310" -m venv "$VENV"
fi
STAMP="$VENV/.deps-$(sha256sum requirements-py310.txt | cut -c1-16)"
if [ ! -f "$STAMP" ]; then
  echo "[setup-py310] installing requirements-py310.txt into $VENV ($PY310)" >&2
  "$VENV/bin/python" -m pip install -q --upgrade pip >&2
  "$VENV/bin/python" -m pip install -q -r requirements-py310.txt >&2
  rm -f "$VENV"/.deps-*
  touch "$STAMP"
fi
echo "$VENV/bin/python"
