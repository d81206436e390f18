#!/usr/bin/env bash
# Forks under the tracer on the real driver and NVML (docs/validation.md, run M): the
# 300-fork program of the tests (each child calls cudaMalloc, which the driver refuses in
# a fork child, so each child unwinds once), and a PyTorch DataLoader forking 4 workers per
# epoch; both with snapshots every 1 ms, so the writer is often inside NVML at a fork.
# Untraced runs of both beside them, in interleaved rounds.
#   examples/h200/proofs/fork_check.sh BIN_DIR OUTDIR   (env: PYTHON, NVCC)
set -u
h200=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "$h200/../.." && pwd)
bin=$(cd "${1:?usage: fork_check.sh BIN_DIR OUTDIR}" && pwd) out=${2:?usage: fork_check.sh BIN_DIR OUTDIR}
mkdir -p "$out"
PYTHON=${PYTHON:-python3} NVCC=${NVCC:-nvcc}
"$NVCC" -O1 -o "$out/fork_child_hang" "$top/test/integration/programs/lifecycle/fork_child_hang.c" || exit 1
traced() {  # name, then the command
  local name=$1
  shift
  mkdir -p "$out/$name"
  LD_PRELOAD=$bin/lib/libcumemtrace.so CUMEMTRACE_SNAPSHOT_MS=1 CUMEMTRACE_FLUSH_MS=1 \
    CUMEMTRACE_OUTPUT="$out/$name/trace-%p.trace" timeout 600 "$@" >"$out/$name.out" 2>"$out/$name.err"
  echo "$name: exit $? | $(tr '\n' ' ' <"$out/$name.out")| stderr lines without stacks: $(grep -c 'without stacks' "$out/$name.err") | traces: $(ls "$out/$name" | wc -l)"
}
for round in 1 2 3; do
  timeout 600 "$out/fork_child_hang" 300 >"$out/untraced-forks-$round.out" 2>&1
  echo "untraced-forks-$round: exit $? | $(cat "$out/untraced-forks-$round.out")"
  traced "forks-$round" "$out/fork_child_hang" 300
  timeout 600 "$PYTHON" "$h200/python/workloads/fork_workers.py" 5 >"$out/untraced-workers-$round.out" 2>&1
  echo "untraced-workers-$round: exit $? | $(cat "$out/untraced-workers-$round.out")"
  traced "workers-$round" "$PYTHON" "$h200/python/workloads/fork_workers.py" 5
done 2>&1 | tee "$out/fork_check.txt"
for t in "$out"/workers-1/*.trace; do "$bin/bin/cumemtrace" report "$t" >"$out/workers-1-report.txt" 2>&1; done
