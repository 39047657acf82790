#!/usr/bin/env bash
# GPU check for the acceleration work (issue 5): on a CUDA machine, build a full-size random-weight
# RynnEC-2B, export it, build TensorRT engines, check parity with torch and write benchmark JSON.
#
#   OUT=/some/dir bash scripts/gpu_check.sh            # everything the machine supports
#   PHASES="ckpt torch" bash scripts/gpu_check.sh      # a subset: ckpt torch reuse onnx trt tests
#
# Installs (only where nvidia-smi sees a GPU): wheels from ./.whl if present (offline machines), else
# `pip install tensorrt onnxruntime-gpu` when a package index is reachable. A CUDA torch is expected on the
# machine (never installed here).
# Without TensorRT the TensorRT phases say so and the torch-CUDA numbers are still produced.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-$ROOT/gpu_check_out}
WORK=${WORK:-/tmp/rynnec-gpu-check}
PHASES=${PHASES:-"ckpt torch reuse onnx trt tests"}
SIZE=${SIZE:-2b}
FRAMES=${FRAMES:-8}
FRAME_SIZE=${FRAME_SIZE:-640x480}
PY=${PYTHON:-python3}
mkdir -p "$OUT" "$WORK"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
LOG="$OUT/gpu_check.log"
say() { echo "[gpu_check $(date +%H:%M:%S)] $*" | tee -a "$LOG"; }
has() { case " $PHASES " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
run() { say "\$ $*"; "$@" 2>&1 | tee -a "$LOG"; local rc=${PIPESTATUS[0]}; [ "$rc" = 0 ] || say "exit $rc: $*"; return "$rc"; }

say "phases: $PHASES; out: $OUT"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,clocks.max.sm --format=csv \
  2>&1 | tee -a "$LOG" || say "nvidia-smi not available"

# --- installs -----------------------------------------------------------------------------------
if nvidia-smi -L >/dev/null 2>&1 && [ -d "$ROOT/.whl" ] && ls "$ROOT"/.whl/*.whl >/dev/null 2>&1; then
  run $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    "$ROOT"/.whl/*.whl && export PYTHONPATH="/tmp/site:$PYTHONPATH"
fi
HAVE_GPU=0
nvidia-smi -L >/dev/null 2>&1 && HAVE_GPU=1
[ "$HAVE_GPU" = 1 ] || say "no NVIDIA GPU: nothing is installed (this script only installs on GPU machines)"
for pkg in $([ "$HAVE_GPU" = 1 ] && echo tensorrt onnxruntime-gpu); do
  mod=${pkg%%-gpu}
  if ! $PY -c "import $mod" >/dev/null 2>&1 || { [ "$pkg" = onnxruntime-gpu ] && ! $PY -c \
      "import onnxruntime as o, sys; sys.exit('CUDAExecutionProvider' not in o.get_available_providers())" \
      >/dev/null 2>&1; }; then
    timeout 300 $PY -m pip install -q "$pkg" >>"$LOG" 2>&1 && say "installed $pkg" || say "could not install $pkg (offline?)"
  fi
done
$PY - <<'PY' 2>&1 | tee -a "$LOG"
import importlib
for m in ("torch", "transformers", "onnx", "onnxruntime", "tensorrt"):
    try:
        mod = importlib.import_module(m)
        print(f"{m} {getattr(mod, '__version__', '?')}")
    except Exception as exc:  # report, do not stop: later phases say what they skip
        print(f"{m}: not importable ({exc})")
import torch
print("cuda", torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "-")
try:
    import onnxruntime as o
    print("ort providers", o.get_available_providers())
except Exception:
    pass
PY

CKPT="$WORK/rynnec-$SIZE"
BENCH=(--checkpoint "$CKPT" --device cuda --frames "$FRAMES" --size "$FRAME_SIZE" --new-tokens 64 --repeat 5 --threads 8)

if has ckpt && [ ! -f "$CKPT/model.safetensors" ]; then
  run $PY -m rynnec_ros.bench.fullsize "$CKPT" --size "$SIZE" --dtype bfloat16
fi
if has torch; then
  for dt in bfloat16 float16; do
    run $PY -m rynnec_ros.cli bench engine "${BENCH[@]}" --dtype $dt --out "$OUT/engine_torch_cuda_$dt.json"
  done
fi
if has reuse; then
  run $PY -m rynnec_ros.cli bench reuse "${BENCH[@]}" --dtype bfloat16 --new-tokens 32 --repeat 3 \
    --out "$OUT/reuse_torch_cuda.json"
fi
TRT_OK=$($PY -c "from rynnec_ros.model.export.tensorrt_build import tensorrt_available as t; print(int(t()[0]))" 2>/dev/null || echo 0)
ORT_CUDA=$($PY -c "import onnxruntime as o; print(int('CUDAExecutionProvider' in o.get_available_providers()))" 2>/dev/null || echo 0)
if has onnx && { [ "$TRT_OK" = 1 ] || [ "$ORT_CUDA" = 1 ]; } && [ ! -f "$WORK/onnx/manifest.json" ]; then
  run $PY -m rynnec_ros.cli export onnx --checkpoint "$CKPT" --out "$WORK/onnx" --max-seq 8192 \
    --max-frame-tokens 4096 --threads 16
fi
if has onnx && [ "$ORT_CUDA" = 1 ]; then
  run $PY -m rynnec_ros.cli bench backends "${BENCH[@]}" --onnx-dir "$WORK/onnx" --provider cuda \
    --out "$OUT/backends_ort_cuda.json"
fi
if has trt; then
  if [ "$TRT_OK" = 1 ]; then
    DIMS="seq=1:2048:8192,past=1:2048:8192,patches=4:1564:16384,tokens=1:391:4096"
    run $PY -m rynnec_ros.cli export tensorrt --onnx "$WORK/onnx" --out "$WORK/trt-fp16" --precision fp16 --dims "$DIMS"
    run $PY - "$CKPT" "$WORK/trt-fp16" "$OUT/parity_trt_fp16.json" <<'PY'
import json, sys
from pathlib import Path
import torch
from rynnec_ros.model.backends.trt import TrtGraph
from rynnec_ros.model.export.parity import check_graphs
from rynnec_ros.model.loader import load_model
ckpt, engines, out = sys.argv[1:]
index = json.loads((Path(engines) / "engines.json").read_text())
graphs = {n: TrtGraph(Path(engines) / e["engine"]) for n, e in index.items()}
rows = check_graphs(load_model(ckpt, device="cuda"), graphs, precision="fp16")
Path(out).write_text(json.dumps([r.to_dict() for r in rows], indent=2))
for r in rows:
    print(f"{'ok ' if r.ok else 'BAD'} {r.graph}.{r.output} rel {r.rel:.2e} tol {r.tol:.0e}")
PY
    run $PY -m rynnec_ros.cli bench engine "${BENCH[@]}" --backend tensorrt --engine-dir "$WORK/trt-fp16" \
      --dtype float16 --out "$OUT/engine_trt_fp16.json"
    run $PY -m rynnec_ros.cli export tensorrt --onnx "$WORK/onnx" --out "$WORK/trt-int8" --precision int8 \
      --dims "$DIMS" --graphs llm_decode,lm_head || say "int8 build failed (see log)"
  else
    say "TensorRT phases skipped: $($PY -c 'from rynnec_ros.model.export.tensorrt_build import tensorrt_available as t; print(t()[1])' 2>&1)"
  fi
fi
if has tests; then
  run $PY -m pytest -q -rs -p no:cacheprovider test/backends/test_backends_tensorrt.py
fi

$PY - "$OUT" <<'PY' 2>&1 | tee -a "$LOG"
import json, sys
from pathlib import Path
print("\n== summary ==")
for f in sorted(Path(sys.argv[1]).glob("*.json")):
    data = json.loads(f.read_text())
    for name, s in data.get("sections", {}).items():
        if not s.get("available"):
            print(f"{f.name}:{name}: not available: {s.get('reason')}")
        elif name == "engine":
            bb = s.get("bandwidth_bound", {})
            sam2 = s.get("sam2_per_frame", {}).get("wall", {}).get("median")
            print(f"{f.name}: vision {s['vision_per_frame']['wall']['median']*1e3:.1f} ms/frame, "
                  f"prefill {s['prefill']['median']*1e3:.1f} ms ({s['prompt_tokens']} tok), "
                  f"TTFT {s['ttft']['median']*1e3:.1f} ms, decode {s['decode_tok_s']:.1f} tok/s "
                  f"= {100*(bb.get('fraction_of_bound') or 0):.0f}% of {bb.get('bound_tok_s') or 0:.0f} tok/s bound, "
                  f"SAM2 {(sam2 or 0)*1e3:.1f} ms/frame")
        elif name == "reuse":
            print(f"{f.name}: reuse ratio {s['ratio_wall']:.3f} identical={s['answers_identical']}")
        elif name == "backends":
            print(f"{f.name}: " + ", ".join(f"{k} {v['ratio_wall_vs_reference']:.2f}x" for k, v in s["backends"].items()))
PY
