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
echo "[test] package.xml"
python -c "from catkin_pkg.package import parse_package; p = parse_package('package.xml'); assert p.package_format == 3, p.package_format; print(p.name, p.version, 'format', p.package_format)"
echo "[test] pytest"
python -m pytest -q -p no:cacheprovider "$@"
