#!/usr/bin/env bash
# Python frames and the CI gate on a real GPU, in one call (docs/validation.md):
#   examples/h200/pyframes_gate.sh OUTDIR
# 1. ci_gate.sh (growth over NVTX steps, the pytest plugin with PyTorch);
# 2. python_frames.py traced: the report's call sites at the peak and its leak groups;
# 3. the training step time untraced, traced, and traced with CUMEMTRACE_PYTHON=0, in
#    interleaved rounds, for the default allocator and cudaMallocAsync (every tensor
#    allocation reaches the driver there). Writes OUTDIR/pyframes_gate.txt.
. "$(dirname "$0")/proof_setup.sh" pyframes_gate "$@"
bash "$h200/proofs/ci_gate.sh" "$OUT/ci" >>"$LOG" 2>&1
echo "== python_frames.py" >>"$LOG"
"$CLI" run -o "$WORK/pf-%p.trace" -- "$PY" "$h200/python/workloads/python_frames.py" >>"$LOG" 2>&1
t=$(ls "$WORK"/pf-*.trace | head -n 1)
"$CLI" report --frames 8 "$t" >"$OUT/python_frames_report.txt" 2>&1
"$CLI" report --json "$t" >"$OUT/python_frames_report.json" 2>&1
echo "== step time (train.py, ${STEPS:=30} steps; mean ms after 5 warm-up steps)" >>"$LOG"
train=("$PY" "$h200/python/workloads/train.py" --log "$WORK/train.jsonl" --steps "$STEPS")
for mode in default async; do
  conf=; [[ $mode == async ]] && conf=backend:cudaMallocAsync
  for round in 1 2; do
    env PYTORCH_CUDA_ALLOC_CONF=$conf "${train[@]}" --mode "$mode" --run "$mode-untraced-r$round" >/dev/null 2>&1
    env PYTORCH_CUDA_ALLOC_CONF=$conf "$CLI" run -o "$WORK/tr-%p.trace" -- \
      "${train[@]}" --mode "$mode" --run "$mode-traced-r$round" >/dev/null 2>&1
    env PYTORCH_CUDA_ALLOC_CONF=$conf CUMEMTRACE_PYTHON=0 "$CLI" run -o "$WORK/tr-%p.trace" -- \
      "${train[@]}" --mode "$mode" --run "$mode-nopython-r$round" >/dev/null 2>&1
    rm -f "$WORK"/tr-*.trace
  done
done
"$PY" - "$WORK/train.jsonl" >>"$LOG" 2>&1 <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("event") == "end":
        print(f'{r["run"]:24s} mean {r["mean_step_ms"]:.3f} ms  median {r.get("median_step_ms", float("nan")):.3f} ms')
PY
cp "$WORK/train.jsonl" "$OUT/" 2>/dev/null
