# shellcheck shell=bash
# Source after scripts/setup_env.sh: the venv plus the colcon-built interfaces of this package.
_RYNNEC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck disable=SC1091
. "$_RYNNEC_ROOT/.venv/bin/activate"
if [ -f "$_RYNNEC_ROOT/install/setup.bash" ]; then
  # colcon's setup scripts read unset variables; relax nounset while sourcing them.
  _rynnec_u=$([[ $- == *u* ]] && echo 1 || true); set +u
  # shellcheck disable=SC1091
  . "$_RYNNEC_ROOT/install/setup.bash"
  [ -n "$_rynnec_u" ] && set -u
fi
# The work tree's Python sources come first; the colcon-built interfaces (rynnec_ros.msg/.srv) are found
# through rynnec_ros.ros, which extends the package path to install/ (see rynnec_ros/ros/__init__.py).
export PYTHONPATH="$_RYNNEC_ROOT${PYTHONPATH:+:$PYTHONPATH}"
# Keep DDS traffic on this machine (tests, demo) unless the user chose otherwise.
export ROS_LOCALHOST_ONLY=${ROS_LOCALHOST_ONLY:-1}
export ROS_AUTOMATIC_DISCOVERY_RANGE=${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
