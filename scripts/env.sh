# shellcheck shell=bash
# Source after scripts/setup_env.sh: the venv plus the colcon-built interfaces of this package.
#   . scripts/env.sh                          # ROS 2 Kilted wheels (.venv, install/)
#   RYNNEC_ROS_DISTRO=jazzy . scripts/env.sh  # ROS 2 Jazzy wheels (.venv-jazzy, install-jazzy/)
_RYNNEC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
case "${RYNNEC_ROS_DISTRO:-kilted}" in
  kilted) _rynnec_sfx="" ;;
  jazzy) _rynnec_sfx="-jazzy" ;;
  *) echo "env.sh: RYNNEC_ROS_DISTRO must be kilted or jazzy, got '$RYNNEC_ROS_DISTRO'" >&2; return 1 ;;
esac
if [ ! -f "$_RYNNEC_ROOT/.venv$_rynnec_sfx/bin/activate" ]; then
  echo "env.sh: no .venv$_rynnec_sfx; run: bash scripts/setup_env.sh --distro ${RYNNEC_ROS_DISTRO:-kilted}" >&2
  return 1
fi
# shellcheck disable=SC1090
. "$_RYNNEC_ROOT/.venv$_rynnec_sfx/bin/activate"
if [ -f "$_RYNNEC_ROOT/install$_rynnec_sfx/setup.bash" ]; then
  # colcon's setup scripts read unset variables; relax nounset while sourcing them.
  _rynnec_u=$([[ $- == *u* ]] && echo 1 || true); set +u
  # shellcheck disable=SC1090
  . "$_RYNNEC_ROOT/install$_rynnec_sfx/setup.bash"
  [ -n "$_rynnec_u" ] && set -u
fi
# The work tree's Python sources come first; the colcon-built interfaces (rynnec_ros.msg/.srv) under
# install*/ are found through the package path rynnec_ros/__init__.py extends.
export PYTHONPATH="$_RYNNEC_ROOT${PYTHONPATH:+:$PYTHONPATH}"
# Keep DDS traffic on this machine (tests, demo) unless the user chose otherwise.
export ROS_LOCALHOST_ONLY=${ROS_LOCALHOST_ONLY:-1}
export ROS_AUTOMATIC_DISCOVERY_RANGE=${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
unset _rynnec_sfx
