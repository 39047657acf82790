#!/usr/bin/env bash
# The project's test command (README: `make test`): set-up, lint, package.xml check, the test suite.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
bash scripts/setup_env.sh
# shellcheck disable=SC1091
. scripts/env.sh
echo "[test] ruff"
ruff check .
# Robots run Humble (Python 3.10): every source file must at least compile there.
PY310=""
for candidate in python3.10 "$(pyenv root 2>/dev/null)"/versions/3.10*/bin/python3.10; do
  if "$candidate" -c "" 2>/dev/null; then PY310=$candidate; break; fi
done
if [ -n "$PY310" ]; then
  echo "[test] python3.10 syntax"
  find rynnec_ros test launch scripts -name '*.py' -print0 | xargs -0 "$PY310" -c '
import sys
for path in sys.argv[1:]:
    compile(open(path, encoding="utf-8").read(), path, "exec")
'
fi
echo "[test] package.xml"
python -c "from catkin_pkg.package import parse_package; p = parse_package('package.xml'); assert p.package_format == 3, p.package_format; print(p.name, p.version, 'format', p.package_format)"
echo "[test] pytest"
python -m pytest -q -p no:cacheprovider "$@"
