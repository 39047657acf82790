#!/usr/bin/env bash
# The real-command-line phase (issue 20): the package built in a colcon workspace the way README.md's
# robot section says and driven only with the real ROS 2 Jazzy `ros2` tools (test/cli/).
#
#   bash scripts/cli_phase.sh [PYTEST ARGS...]
#
# The Jazzy `ros2` command line is not published as wheels: its sources are in ../shared/ros-tools, whose
# install.sh puts them into .venv-jazzy (idempotent; build/ros-tools/setup.bash stands in for
# /opt/ros/jazzy/setup.bash). Without ../shared/ros-tools (a user's own clone) the phase is SKIPPED and
# exits 0. Needs `bash scripts/setup_env.sh --distro jazzy` first (.venv-jazzy).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
TOOLS="$ROOT/../shared/ros-tools"
if [ ! -f "$TOOLS/install.sh" ]; then
  echo "[cli] SKIPPED: no ../shared/ros-tools (the ROS 2 Jazzy command-line sources these tests need)"
  exit 0
fi
if [ ! -x .venv-jazzy/bin/python ]; then
  echo "[cli] error: no .venv-jazzy; run: bash scripts/setup_env.sh --distro jazzy" >&2
  exit 1
fi
# Without the development environment: a COLCON_PREFIX_PATH from scripts/env.sh would be chained into the
# stand-in /opt/ros setup it builds, putting this work tree's install/ under every later workspace.
env -u PYTHONPATH -u AMENT_PREFIX_PATH -u CMAKE_PREFIX_PATH -u COLCON_PREFIX_PATH bash "$TOOLS/install.sh" \
  .venv-jazzy build/ros-tools
(
  # A fresh shell: nothing of the development environment (scripts/env.sh puts the work tree on
  # PYTHONPATH) may reach the workspace the tests build.
  unset PYTHONPATH AMENT_PREFIX_PATH CMAKE_PREFIX_PATH COLCON_PREFIX_PATH VIRTUAL_ENV
  set +u
  # shellcheck disable=SC1091
  . build/ros-tools/setup.bash
  set -u
  export RYNNEC_CLI_TESTS=1 RYNNEC_ROS_TOOLS_SETUP="$ROOT/build/ros-tools/setup.bash"
  # Arguments (test paths, -k, -x ...) replace the default selection, the whole of test/cli.
  if [ $# -eq 0 ]; then set -- test/cli; fi
  python -m pytest -q -p no:cacheprovider -m cli "$@"
)
