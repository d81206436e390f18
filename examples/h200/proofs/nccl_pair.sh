#!/usr/bin/env bash
# issue 12 on the 2-GPU machine: nccl_pair.py under `cumemtrace run` with torchrun, then
# the job view (report over the run's traces), its JSON, and check --max-rank-imbalance.
#   examples/h200/proofs/nccl_pair.sh OUTDIR      (env: PYTHON, TORCHRUN, CUMEMTRACE, CUMEMTRACE_LIBRARY)
set -u
h200=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "$h200/../.." && pwd)
out=${1:?usage: nccl_pair.sh OUTDIR}
mkdir -p "$out"
PY=${PYTHON:-python3} CLI=${CUMEMTRACE:-$top/build/bin/cumemtrace}
TORCHRUN=${TORCHRUN:-$(dirname "$PY")/torchrun}
export CUMEMTRACE_LIBRARY=${CUMEMTRACE_LIBRARY:-$top/build/lib/libcumemtrace.so}
mkdir -p "$out/traces"
{
  "$CLI" run -o "$out/traces/rank%r-%p.trace" -- "$TORCHRUN" --standalone --nproc-per-node 2 "$h200/python/workloads/nccl_pair.py"
  echo "run exit $?"
  ls -la "$out/traces"
  "$CLI" report --top 8 "$out"/traces/*.trace > "$out/job-report.txt"; echo "report exit $?"
  "$CLI" report --json "$out"/traces/*.trace > "$out/job-report.json"; echo "report --json exit $?"
  "$CLI" check --max-rank-imbalance 50 "$out"/traces/*.trace; echo "check --max-rank-imbalance 50 exit $?"
  head -60 "$out/job-report.txt"
  grep -i -c "nccl" "$out/job-report.txt"
} 2>&1 | tee "$out/nccl_pair.txt"
