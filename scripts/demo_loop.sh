#!/usr/bin/env bash
# `make demo` as new users meet it, N times (default 10): each run in a FRESH clone of the current HEAD
# (nothing shared with this work tree but the Python venv, see below), while two busy loops load the
# machine (the 2-core CI/developer machine then has no idle core). Prints each run's wall time and the
# pass count; exits 1 unless every run passed. Logs (and failed runs' clones) stay in the printed folder.
#
#   bash scripts/demo_loop.sh [N]
#
# The venv: a clone gets this work tree's .venv as a symlink when there is one (setup_env.sh then finds
# its dependencies installed; a fresh pip install takes many minutes and would measure the package index,
# not the demo). DEMO_LOOP_OWN_VENV=1 makes every clone build its own instead. Everything else is the
# clone's own, as for a new user: setup_env.sh's colcon build of the interfaces into the clone's
# install/, the generated scene and tiny checkpoint, the node and the planner. The demo needs nothing
# from ../shared (setup_env.sh and demo.sh read only the clone).
set -uo pipefail
N=${1:-10}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
HEAD=$(git -C "$ROOT" rev-parse HEAD)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rynnec-demo-loop.XXXXXX")
# Not the demo's default 42: a `make demo` running meanwhile would answer this loop's planner.
export ROS_DOMAIN_ID=${DEMO_LOOP_DOMAIN_ID:-43}

yes >/dev/null &
BUSY1=$!
yes >/dev/null &
BUSY2=$!
trap 'kill "$BUSY1" "$BUSY2" 2>/dev/null || true' EXIT

if [ -z "${DEMO_LOOP_OWN_VENV:-}" ] && [ -d "$ROOT/.venv" ]; then
  VENV_NOTE="symlink to $ROOT/.venv"
else
  VENV_NOTE="own venv per clone (setup_env.sh)"
fi
echo "[loop] $N demos of $HEAD, each from a fresh clone under $WORK (venv: $VENV_NOTE), 2 busy loops"
passed=0
times=()
for i in $(seq 1 "$N"); do
  D="$WORK/run$i"
  git clone -q "$ROOT" "$D" && git -C "$D" checkout -q --detach "$HEAD" || { echo "[loop] clone failed"; exit 1; }
  if [ "$VENV_NOTE" != "own venv per clone (setup_env.sh)" ]; then
    ln -s "$ROOT/.venv" "$D/.venv"
  fi
  start=$(date +%s)
  (cd "$D" && bash scripts/demo.sh) >"$WORK/run$i.log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  times+=("$secs")
  resent=$(grep -c "replaying the bag again" "$WORK/run$i.log" || true)
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1))
    echo "[loop] run $i: PASS in ${secs} s (bag re-sent: $resent)"
    rm -rf "$D"
  else
    echo "[loop] run $i: FAIL (exit $rc) in ${secs} s; log $WORK/run$i.log, clone $D:"
    grep -E "^\[planner\]|Error|error" "$WORK/run$i.log" | tail -n 8 | sed 's/^/[loop]   /'
  fi
done
echo "[loop] $passed / $N passed; wall times (s): ${times[*]}; logs in $WORK"
[ "$passed" -eq "$N" ]
