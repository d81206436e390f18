#!/usr/bin/env bash
# Issue 28 part 1 and issue 26 part 1 on the H200 (docs/validation.md section 21):
# - train.py traced in PyTorch's default and cudaMallocAsync modes, then
#   `report --by category` (text and JSON) as a user gets them;
# - the same program traced with CUMEMTRACE_CHECK_STACKS=1, which interns every event's
#   stack the full way too and walks the native stack again at full length, warning on
#   any difference: the count of "stack check:" warnings must be 0.
#   examples/h200/proofs/categories.sh OUTDIR
set -u
h200=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "$h200/../.." && pwd)
OUT=${1:?usage: $0 OUTDIR}
mkdir -p "$OUT"
CLI=${CUMEMTRACE:-$top/build/bin/cumemtrace}
PY=${PYTHON:-python3}
WORK=$(mktemp -d /tmp/cumemtrace-categories.XXXXXX)
log=$OUT/categories.log
: >"$log"
for mode in default async; do
  case $mode in default) conf= ;; async) conf=backend:cudaMallocAsync ;; esac
  PYTORCH_CUDA_ALLOC_CONF=$conf timeout 180 "$CLI" run -o "$WORK/train-$mode.trace" -- \
    "$PY" "$h200/python/workloads/train.py" --mode "$mode" --steps "${STEPS:-10}" --log "$WORK/train.jsonl" --run "$mode" >>"$log" 2>&1
  echo "run $mode exit $?" >>"$log"
  timeout 120 "$CLI" report --by category "$WORK/train-$mode.trace" >"$OUT/report-$mode.txt" 2>&1
  echo "report $mode exit $?" >>"$log"
  timeout 120 "$CLI" report --by category --json "$WORK/train-$mode.trace" >"$OUT/report-$mode.json" 2>>"$log"
  echo "report --json $mode exit $?" >>"$log"
  PYTORCH_CUDA_ALLOC_CONF=$conf CUMEMTRACE_CHECK_STACKS=1 timeout 300 "$CLI" run -o "$WORK/check-$mode.trace" -- \
    "$PY" "$h200/python/workloads/train.py" --mode "$mode" --steps "${STEPS:-10}" --log "$WORK/check.jsonl" --run "check-$mode" \
    >"$WORK/check-$mode.log" 2>&1
  echo "check-stacks $mode exit $? warnings $(grep -c 'stack check:' "$WORK/check-$mode.log")" >>"$log"
  grep -m5 'stack check:' "$WORK/check-$mode.log" >>"$log"
  timeout 120 "$CLI" report "$WORK/check-$mode.trace" 2>/dev/null | grep -m3 -i "events" >>"$log"
done
rm -rf "$WORK"
cat "$log"
