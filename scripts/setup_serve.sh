#!/usr/bin/env bash
# The site server's environment (docs/serving.md): .venv-serve with NVIDIA PyTriton (tritonserver inside)
# and numpy<2, which PyTriton 0.7 needs; torch and transformers come from the Kilted venv through a .pth
# placed after the venv's own site-packages, so this venv's numpy 1 wins. Idempotent; needs .venv first.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
VENV="$ROOT/.venv-serve"
PY=${PYTHON:-python3}
STAMP="$VENV/.deps-$(sha256sum requirements-serve.txt | cut -c1-16)"
if [ ! -f "$STAMP" ]; then
  echo "[setup-serve] installing requirements-serve.txt into $VENV"
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q -r requirements-serve.txt
  SITE=$("$VENV/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
  "$ROOT/.venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" > "$SITE/zz_shared_venv.pth"
  touch "$STAMP"
fi
echo "[setup-serve] ready: $VENV"
