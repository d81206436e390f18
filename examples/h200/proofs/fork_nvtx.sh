#!/usr/bin/env bash
# Forks while a worker thread opens and ends NVTX ranges, on the real driver (docs/validation.md
# section 20): test/integration/programs/lifecycle/fork_nvtx_threads.c, 200 forks, untraced and traced with the
# library as NVTX's injection, three interleaved rounds. Each child opens a range and
# allocates (the driver refuses CUDA in a fork child); before the fix, children made while
# the worker was inside the tracer's NVTX bookkeeping hung on their first range.
#   examples/h200/proofs/fork_nvtx.sh BIN_DIR OUTDIR   (env: NVCC)
set -u
h200=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "$h200/../.." && pwd)
bin=$(cd "${1:?usage: fork_nvtx.sh BIN_DIR OUTDIR}" && pwd) out=${2:?usage: fork_nvtx.sh BIN_DIR OUTDIR}
mkdir -p "$out"
NVCC=${NVCC:-nvcc}
"$NVCC" -O1 -o "$out/fork_nvtx_threads" "$top/test/integration/programs/lifecycle/fork_nvtx_threads.c" -lpthread -ldl || exit 1
for round in 1 2 3; do
  s=$(date +%s.%N)
  timeout 300 "$out/fork_nvtx_threads" 200 >"$out/untraced-$round.out" 2>&1
  echo "untraced-$round: exit $? | $(tail -1 "$out/untraced-$round.out") | $(awk "BEGIN {printf \"%.2f\", $(date +%s.%N) - $s}") s"
  mkdir -p "$out/traced-$round"
  s=$(date +%s.%N)
  NVTX_INJECTION64_PATH=$bin/lib/libcumemtrace.so LD_PRELOAD=$bin/lib/libcumemtrace.so \
    CUMEMTRACE_OUTPUT="$out/traced-$round/t-%p.trace" timeout 300 "$out/fork_nvtx_threads" 200 \
    >"$out/traced-$round.out" 2>"$out/traced-$round.err"
  echo "traced-$round: exit $? | $(tail -1 "$out/traced-$round.out") | $(awk "BEGIN {printf \"%.2f\", $(date +%s.%N) - $s}") s | traces: $(ls "$out/traced-$round" | wc -l) | stderr lines: $(wc -l <"$out/traced-$round.err")"
  rm -rf "$out/traced-$round"  # the worker's ranges make the parent's trace large
done 2>&1 | tee "$out/fork_nvtx.txt"
