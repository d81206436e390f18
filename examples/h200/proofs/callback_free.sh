#!/usr/bin/env bash
# A free refused inside a host function, on the GPU (docs/validation.md, "Failed frees inside
# host functions"): what the driver answers, and what the trace keeps of it.
#   examples/h200/proofs/callback_free.sh OUTDIR
set -u
. "$(dirname "$0")/../proof_setup.sh" callback_free "$@"
NVCC=${NVCC:-nvcc}
# nvcc links the runtime statically by default: its refusal never reaches a symbol the
# library interposes. With -cudart shared it does.
for runtime in static shared; do
  echo "== runtime $runtime" >>"$LOG"
  "$NVCC" -O1 -cudart $runtime -o "$WORK/cb-$runtime" "$h200/cuda/callback_free.cu" >>"$LOG" 2>&1 || { echo "nvcc failed" >>"$LOG"; exit 1; }
  "$CLI" run -o "$WORK/$runtime-%p.trace" -- "$WORK/cb-$runtime" >>"$LOG" 2>&1
  echo "run exit $?" >>"$LOG"
  t=$(ls "$WORK/$runtime"-*.trace | head -n 1)
  "$CLI" report "$t" >"$OUT/callback_free-$runtime.txt" 2>&1
  grep -A6 "Failed frees" "$OUT/callback_free-$runtime.txt" >>"$LOG"
  "$CLI" report --json "$t" | "${PYTHON:-python3}" -c 'import json,sys; j=json.load(sys.stdin); print("failed_frees_total", j.get("failed_frees_total"))' >>"$LOG" 2>&1
done
