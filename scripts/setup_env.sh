#!/usr/bin/env bash
# Idempotent development/CI set-up: a venv with the CPU torch wheel, one ROS 2 distro's wheels,
# the project's Python dependencies, a colcon build of the package's msg/srv, and the package itself.
# Re-running is cheap: each step is skipped when its inputs have not changed.
#
#   bash scripts/setup_env.sh                 # ROS 2 Kilted wheels: .venv, build/, install/
#   bash scripts/setup_env.sh --distro jazzy  # ROS 2 Jazzy wheels:  .venv-jazzy, build-jazzy/, install-jazzy/
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
DISTRO=kilted
while [ $# -gt 0 ]; do
  case "$1" in
    --distro) DISTRO=${2:-}; shift 2 ;;
    *) echo "[setup] error: unknown argument $1 (use --distro kilted|jazzy)" >&2; exit 2 ;;
  esac
done
case "$DISTRO" in
  kilted) SUFFIX="" ;;
  jazzy) SUFFIX="-jazzy" ;;
  *) echo "[setup] error: --distro must be kilted or jazzy, got '$DISTRO'" >&2; exit 2 ;;
esac
VENV="$ROOT/.venv$SUFFIX"
INSTALL="$ROOT/install$SUFFIX"
BUILD="$ROOT/build$SUFFIX"
LOG="$ROOT/log$SUFFIX"
# Every ROS wheel of one venv comes from one distro (constraints-ros-<distro>.txt pins them all).
ROS_CONSTRAINTS="constraints-ros-$DISTRO.txt"
PY=${PYTHON:-python3}

# The ROS 2 wheels on PyPI are built for CPython 3.11 only (robots use their apt ROS instead).
if ! "$PY" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
  echo "[setup] error: $PY is not Python 3.11 (the ROS 2 wheels need 3.11); set PYTHON=/path/to/python3.11" >&2
  exit 1
fi
# A venv whose creation failed half-way (e.g. python3-venv missing) has a python but no pip: rebuild it.
if ! "$VENV/bin/python" -m pip --version >/dev/null 2>&1; then
  echo "[setup] creating venv $VENV"
  rm -rf "$VENV"
  "$PY" -m venv "$VENV" || { echo "[setup] error: cannot create a venv (apt-get install python3-venv)" >&2; exit 1; }
fi
# shellcheck disable=SC1091
. "$VENV/bin/activate"

stamp() { cat "$@" | sha256sum | cut -c1-16; }

DEPS_STAMP="$VENV/.deps-$(stamp requirements.txt requirements-sam2.txt requirements-ros.txt "requirements-ros-$DISTRO.txt" "$ROS_CONSTRAINTS")"
if [ ! -f "$DEPS_STAMP" ]; then
  # A full disk otherwise surfaces as pip's "[Errno 28] No space left on device" half-way through an
  # install. A Kilted venv takes 2.3 GiB once installed (measured with du), and pip unpacks each wheel in
  # the temporary directory first: ask for 3 GiB here and 1 GiB there before starting.
  need_kib() {  # need_kib DIR KIB: fail with the numbers when DIR's file system has less than KIB free
    local free
    # (a df that cannot tell, e.g. for a TMPDIR that does not exist, which Python's tempfile skips: no check)
    free=$(df -Pk "$1" 2>/dev/null | awk 'NR == 2 {print $4}') || free=""
    if [ -n "$free" ] && [ "$free" -lt "$2" ]; then
      echo "[setup] error: $((free / 1024)) MiB free under $1; installing the $DISTRO venv needs about" \
        "$(($2 / 1024)) MiB there (free some space, or point TMPDIR elsewhere for the temporary files)" >&2
      exit 1
    fi
  }
  need_kib "$ROOT" $((3 * 1024 * 1024))
  need_kib "${TMPDIR:-/tmp}" $((1024 * 1024))
  echo "[setup] installing Python dependencies and the ROS 2 $DISTRO wheels (first run takes a few minutes)"
  python -m pip install -q --upgrade pip wheel "setuptools>=64,<80"
  # CPU torch first: a later resolver run then sees torch satisfied and never fetches a CUDA build.
  # Where no local CPU wheel is configured for pip, point TORCH_PIP_ARGS at PyTorch's CPU wheel index
  # (e.g. TORCH_PIP_ARGS="--index-url <cpu index>"); plain PyPI gives the large CUDA build on Linux.
  # shellcheck disable=SC2086
  python -m pip install -q ${TORCH_PIP_ARGS:-} "torch==2.13.0"
  python -m pip install -q -r requirements.txt -r requirements-ros.txt -r "requirements-ros-$DISTRO.txt" -c "$ROS_CONSTRAINTS"
  # see requirements-sam2.txt for why these flags
  SAM2_BUILD_CUDA=0 python -m pip install -q --no-deps --no-build-isolation -r requirements-sam2.txt
  # A wheel of another distro left from an earlier set-up would survive the install above.
  python - "$ROS_CONSTRAINTS" <<'PYEOF'
import sys
from importlib.metadata import distributions

pins = {}
for line in open(sys.argv[1], encoding="utf-8"):
    line = line.split("#", 1)[0].strip()
    if line:
        name, version = line.split("==")
        pins[name.lower()] = version
wrong = sorted(
    f"{d.metadata['Name']}=={d.version}" for d in distributions()
    if d.metadata["Name"].lower().startswith("ros-") and not d.metadata["Name"].lower().startswith("ros-jazzy-")
    and pins.get(d.metadata["Name"].lower()) != d.version
)
if wrong:
    sys.exit(f"[setup] error: ROS wheels not pinned by {sys.argv[1]}: {', '.join(wrong)}")
PYEOF
  rm -f "$VENV"/.deps-*
  touch "$DEPS_STAMP"
fi

# The ROS wheels' exported CMake files hard-code the wheel build host's include paths.
PYINC=$(python -c "import sysconfig;print(sysconfig.get_paths()['include'])")
NPINC=$(python -c "import numpy;print(numpy.get_include())")
grep -rlE '/opt/python/cp311-cp311' --include=*.cmake "$VENV/share" 2>/dev/null | xargs -r sed -i \
  -e "s#/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include#$NPINC#g" \
  -e "s#/opt/python/cp311-cp311/include/python3.11#$PYINC#g" || true

# colcon build of the interfaces (msg/srv); rebuilt when any interface or build file changes.
# CMake refuses exported include paths inside the source tree, and this venv (numpy's headers) lives in
# the work tree, so colcon builds a copy of the interface sources under build/colcon_src/.
# tf2_msgs, vision_msgs and foxglove_msgs are not published as wheels: each vendored copy
# (vendor/README.md) is built only when no such package is importable.
VENDORED=(tf2_msgs vision_msgs foxglove_msgs)
IFACE_INPUTS=(CMakeLists.txt package.xml msg/*.msg srv/*.srv scripts/setup_env.sh scripts/ros/*)
for v in "${VENDORED[@]}"; do IFACE_INPUTS+=(vendor/"$v"/package.xml vendor/"$v"/CMakeLists.txt vendor/"$v"/msg/*.msg); done
for a in action/*.action; do [ -f "$a" ] && IFACE_INPUTS+=("$a"); done
IFACE_STAMP="$INSTALL/.iface-$(stamp "${IFACE_INPUTS[@]}")"
if [ ! -f "$IFACE_STAMP" ]; then
  echo "[setup] colcon build (interfaces, about a minute)"
  # A stale install/ of another interface set would shadow the new build.
  rm -rf "$INSTALL" "$BUILD"
  SRC="$BUILD/colcon_src"
  mkdir -p "$SRC/rynnec_ros"
  cp -r CMakeLists.txt package.xml msg srv launch config "$SRC/rynnec_ros/"
  mkdir -p "$SRC/rynnec_ros/scripts" && cp -r scripts/ros "$SRC/rynnec_ros/scripts/"
  [ -d action ] && cp -r action "$SRC/rynnec_ros/"
  for v in "${VENDORED[@]}"; do
    if ! (unset PYTHONPATH; python -c "import $v.msg") >/dev/null 2>&1; then
      cp -r vendor/"$v" "$SRC/$v"
    fi
  done
  (
    export AMENT_PREFIX_PATH="$VENV" CMAKE_PREFIX_PATH="$VENV"
    unset PYTHONPATH COLCON_PREFIX_PATH
    colcon --log-base "$LOG" build --base-paths "$SRC" \
      --build-base "$BUILD" --install-base "$INSTALL" --executor sequential \
      --cmake-args -DPython3_EXECUTABLE="$VENV/bin/python" -DBUILD_TESTING=OFF \
      -DRYNNEC_INSTALL_PYTHON_SOURCES=OFF
  ) >"$ROOT/log-colcon$SUFFIX.txt" 2>&1 || { cat "$ROOT/log-colcon$SUFFIX.txt"; exit 1; }
  touch "$IFACE_STAMP"
fi

PKG_STAMP="$VENV/.pkg-$(stamp setup.py)"
if [ ! -f "$PKG_STAMP" ]; then
  echo "[setup] pip install -e . (ROS-free parts + rynnec-ros CLI)"
  python -m pip install -q --no-deps --no-build-isolation -e .
  rm -f "$VENV"/.pkg-*
  touch "$PKG_STAMP"
fi
if [ "$DISTRO" = kilted ]; then
  echo "[setup] ready: . scripts/env.sh"
else
  echo "[setup] ready: RYNNEC_ROS_DISTRO=$DISTRO . scripts/env.sh"
fi
