#!/usr/bin/env bash
# The project's test command (README: `make test`; .ci/run runs exactly this):
#   1. set-up (idempotent): .venv + install/ (ROS 2 Kilted wheels), .venv-jazzy + install-jazzy/ (Jazzy wheels),
#      .venv-py310 (Python 3.10, numpy 1, no ROS, no torch) where the machine has a Python 3.10,
#      .venv-serve (PyTriton, numpy 1) for the site-server tests;
#   2. lint: ruff, mypy (files in pyproject.toml), shellcheck (where installed), package.xml format;
#   3. Python 3.10: every source compiles, and the ROS-/torch-free unit tests (scripts/py310_tests.txt) pass;
#   4. Kilted: the whole suite (arguments of this script go to this pytest run);
#   5. Jazzy: the ROS tests (-m ros), the same sources against Jazzy's rclpy and generated interfaces; the
#      robot-option colcon build (robot_build, minutes, distro-independent install rules) runs on Kilted only;
#   6. Jazzy CLI: a colcon workspace as README.md's robot section builds it, driven only with the real
#      `ros2` tools (test/cli, -m cli; skipped where ../shared/ros-tools is absent).
# Each phase starts from this script's environment, so one distro's paths never leak into the other's.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
SECONDS=0
declare -a TIMES=() FAILED=()
phase_start=0
begin() { phase_start=$SECONDS; echo "[test] $1"; }
end() { TIMES+=("$1: $((SECONDS - phase_start)) s"); }
# A failing test phase does not stop the later ones (CI shows every distro's result); set-up and lint do.
check() { local rc=$?; [ "$rc" -eq 0 ] || FAILED+=("$1 (exit $rc)"); end "$1"; }
PYTEST=(python -m pytest -q -p no:cacheprovider)

begin "set-up: Kilted wheels (.venv, install/)"
bash scripts/setup_env.sh
end "set-up kilted"
begin "set-up: Jazzy wheels (.venv-jazzy, install-jazzy/)"
bash scripts/setup_env.sh --distro jazzy
end "set-up jazzy"
begin "set-up: Python 3.10 (.venv-py310)"
PY310=""
if PY310=$(bash scripts/setup_py310.sh); then :; else
  rc=$?
  [ "$rc" -eq 3 ] || exit "$rc"
  PY310=""
  echo "[test] no Python 3.10 on this machine: the Python 3.10 phase is SKIPPED"
fi
end "set-up py310"
begin "set-up: site server (.venv-serve, PyTriton)"
bash scripts/setup_serve.sh
end "set-up serve"

begin "lint"
(
  # shellcheck disable=SC1091
  . scripts/env.sh
  ruff check .
  mypy
  if command -v shellcheck >/dev/null; then shellcheck scripts/*.sh .ci/run; else echo "[test] shellcheck not installed"; fi
  python -c "from catkin_pkg.package import parse_package; p = parse_package('package.xml'); assert p.package_format == 3, p.package_format; print(p.name, p.version, 'format', p.package_format)"
)
end "lint"

if [ -n "$PY310" ]; then
  begin "python3.10: compile every source, then the ROS-/torch-free unit tests"
  find rynnec_ros test launch scripts -name '*.py' -print0 | xargs -0 "$PY310" -c '
import sys
for path in sys.argv[1:]:
    compile(open(path, encoding="utf-8").read(), path, "exec")
'
  mapfile -t PY310_TESTS < <(grep -vE '^\s*(#|$)' scripts/py310_tests.txt)
  (
    unset PYTHONPATH AMENT_PREFIX_PATH VIRTUAL_ENV
    export PYTHONPATH="$ROOT" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
    # These tests must not need what .venv-py310 lacks: a skip for a missing rclpy/torch would hide it.
    # (-e is off in a subshell whose status is tested: every step is chained with &&.)
    "$PY310" -c 'import importlib.util as u, sys; sys.exit(any(u.find_spec(m) for m in ("rclpy", "torch")))' &&
      "$PY310" -m pytest -q -p no:cacheprovider -m "not ros" "${PY310_TESTS[@]}"
  ) && true
  check "python3.10 tests"
fi

begin "Kilted: the whole suite"
(
  # shellcheck disable=SC1091
  . scripts/env.sh && "${PYTEST[@]}" "$@"
) && true
check "kilted suite"

begin "Jazzy: the ROS tests (-m 'ros and not robot_build')"
(
  # shellcheck disable=SC1091
  RYNNEC_ROS_DISTRO=jazzy . scripts/env.sh &&
    python -c "import rclpy, importlib.metadata as m; v = m.version('ros-rclpy'); assert v.startswith('7.'), v; print('rclpy', v)" &&
    "${PYTEST[@]}" -m "ros and not robot_build"
) && true
check "jazzy ros tests"

begin "Jazzy CLI: the README's robot steps with the real ros2 command line (scripts/cli_phase.sh)"
bash scripts/cli_phase.sh && true
check "jazzy cli"

echo "[test] wall time $SECONDS s:"
printf '  %s\n' "${TIMES[@]}"
if [ "${#FAILED[@]}" -gt 0 ]; then
  printf '[test] FAILED: %s\n' "${FAILED[@]}"
  exit 1
fi
echo "[test] all phases passed"
