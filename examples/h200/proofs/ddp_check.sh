#!/usr/bin/env bash
# issue 12 §4 on the 2-GPU machine: DDP training (ddp_checkpoints.py) under `cumemtrace run`
# with torchrun; each rank's memory_reserved() at six checkpoints against its trace
# (ddp_check.py), then the job view. Writes OUTDIR/ddp.txt. Not run yet: written in run
# K's session, when the two-GPU kind was not lent.
#   examples/h200/proofs/ddp_check.sh OUTDIR      (env: NPROC=2, PYTHON, TORCHRUN, CUMEMTRACE, CUMEMTRACE_LIBRARY)
set -u
h200=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "$h200/../.." && pwd)
out=${1:?usage: ddp_check.sh OUTDIR}
mkdir -p "$out/traces"
PY=${PYTHON:-python3} CLI=${CUMEMTRACE:-$top/build/bin/cumemtrace}
TORCHRUN=${TORCHRUN:-$(dirname "$PY")/torchrun}
export CUMEMTRACE_LIBRARY=${CUMEMTRACE_LIBRARY:-$top/build/lib/libcumemtrace.so}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
{
  "$CLI" run -o "$out/traces/rank%r-%p.trace" -- "$TORCHRUN" --standalone --nproc-per-node "${NPROC:-2}" \
    "$h200/python/workloads/ddp_checkpoints.py" >"$out/checkpoints.jsonl"
  echo "run exit $?"
  "$PY" "$h200/python/checks/ddp_check.py" "$CLI" "$out/checkpoints.jsonl" "$out"/traces/*.trace; echo "ddp_check exit $?"
  "$CLI" report --top 5 "$out"/traces/*.trace >"$out/job-report.txt"; echo "report exit $?"
  sed -n '1,/^$/p;/^GPUs/,/^$/p;/^Findings/,/^$/p' "$out/job-report.txt" | head -40
  grep -n "libnccl\|NVML\|untracked" "$out/job-report.txt" | head -12
} 2>&1 | tee "$out/ddp.txt"
