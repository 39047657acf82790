#!/usr/bin/env bash
# The GPU check (issue 14) in one offline call on the GPU machine: nothing is installed, the machine's own
# python3 (torch, transformers 4.57 or 5.x) runs rynnec_ros.bench.gpu_check; JSON lands under $OUT.
#
#   OUT=/some/dir bash scripts/gpu_check.sh               # full-size 2B, CUDA when available
#   OUT=/tmp/x bash scripts/gpu_check.sh --size mini      # the CPU dry run CI also does
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/gpu_check_out}
mkdir -p "$OUT"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
cd "$ROOT"
"${PYTHON:-python3}" -m rynnec_ros.bench.gpu_check --out "$OUT" "$@" 2>&1 | tee "$OUT/gpu_check.log"
