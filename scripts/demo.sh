#!/usr/bin/env bash
# The main job (README: `make demo`): a synthetic RGB-D bag with TF, the cognition node, bag replay, and a
# scripted planner that asks a region question, a referring segmentation and a spatial question over ROS 2.
# RYNNEC_CHECKPOINT=/path/to/RynnEC-2B uses a real checkpoint; otherwise a tiny random one is generated.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
bash scripts/setup_env.sh
# shellcheck disable=SC1091
. scripts/env.sh
OUT=${RYNNEC_DEMO_OUT:-$ROOT/out/demo}
export ROS_DOMAIN_ID=${ROS_DOMAIN_ID:-42}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
mkdir -p "$OUT"

SCENE="$OUT/scene"
if [ ! -f "$SCENE/questions.json" ]; then
  echo "[demo] generating a synthetic RGB-D scene (rosbag2 with colour, depth, camera_info, /tf, /tf_static)"
  rm -rf "$SCENE"
  rynnec-ros gen-scene --out "$SCENE" --seed 0
fi

UNTRAINED=()
if [ -n "${RYNNEC_CHECKPOINT:-}" ]; then
  CKPT=$RYNNEC_CHECKPOINT
  echo "[demo] using checkpoint $CKPT"
else
  CKPT="$OUT/tiny-checkpoint"
  if [ ! -f "$CKPT/config.json" ]; then
    echo "[demo] no RYNNEC_CHECKPOINT: generating a tiny RANDOM checkpoint (primed to emit [SEG])"
    rm -rf "$CKPT"
    rynnec-ros make-segmenting-checkpoint "$CKPT" >/dev/null
  fi
  UNTRAINED=(--untrained)
fi

LOG="$OUT/node.log"
echo "[demo] starting the cognition node (log: $LOG)"
# The bag is replayed at 4x (8 colour frames a second plus depth, camera_info, /tf): a camera queue of 30
# (qos_depth, default 5) rides out a node that is slow to take them on a loaded machine.
rynnec-ros node --params-file config/rynnec.yaml -p "checkpoint:=$CKPT" \
  -p depth_topic:=/camera/depth/image_raw -p camera_info_topic:=/camera/color/camera_info \
  -p world_frame:=odom -p max_new_tokens:=24 -p qos_reliability:=reliable -p qos_depth:=30 >"$LOG" 2>&1 &
NODE_PID=$!
trap 'kill "$NODE_PID" 2>/dev/null || true; wait "$NODE_PID" 2>/dev/null || true' EXIT

if ! rynnec-ros planner-demo --scene "$SCENE" --out "$OUT" --timeout 600 "${UNTRAINED[@]}"; then
  echo "[demo] the planner failed; the node's log ($LOG):" >&2
  cat "$LOG" >&2
  exit 1
fi
