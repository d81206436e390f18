#!/usr/bin/env bash
# Wall time the tracer adds per intercepted call, over the matrix issue 10 asks for:
# CUMEMTRACE_DEPTH 0, 8 and 32 (bench/alloc_loop --frames 30, so 32 is a full capture),
# one repeated stack and a new stack per pair (--unique), 1 and 8 threads. Runs are
# interleaved: each round runs every cell plain and at each depth back to back, so drift
# hits them alike; per cell it prints the median over rounds of (traced - plain) with the
# rounds' spread. Use a quiet machine with ≥ 8 cores (the numbers in docs/performance.md
# come from the H200 host, run against this build's simulated driver); bench/run_instructions.sh
# gives counts that do not depend on the machine.
#
#   bench/run_hook_matrix.sh [BUILD_DIR]     (env: ROUNDS=5 PAIRS=50000)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
export LD_LIBRARY_PATH="$build/sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
rounds=${ROUNDS:-5} pairs=${PAIRS:-50000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }
run() {  # depth ("plain" or N), then alloc_loop's arguments
  local depth=$1; shift
  if [[ $depth == plain ]]; then "$build/bench/alloc_loop" "$@"
  else LD_PRELOAD=$build/lib/libcumemtrace.so CUMEMTRACE_DEPTH=$depth CUMEMTRACE_OUTPUT=$tmp/t.trace \
         "$build/bench/alloc_loop" "$@"; rm -f "$tmp/t.trace"
  fi | field best_ns_call
}
echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(uname -r)"
echo "rounds=$rounds pairs=$pairs; ns per call (best repetition of each run); added = traced - plain of the same round"
cells=()
for threads in 1 8; do for stacks in repeated unique; do cells+=("$stacks:$threads"); done; done
for ((r = 0; r < rounds; ++r)); do
  for c in "${cells[@]}"; do
    stacks=${c%%:*} threads=${c#*:}
    args=(--frames 30 --pairs "$pairs" --reps 3 --threads "$threads")
    [[ $stacks == unique ]] && args+=(--unique)
    plain=$(run plain "${args[@]}")
    echo "$plain" >>"$tmp/$c.plain"
    for depth in 0 8 32; do
      awk -v a="$(run "$depth" "${args[@]}")" -v b="$plain" 'BEGIN {print a - b}' >>"$tmp/$c.$depth"
    done
  done
done
stat() { sort -g "$1" | awk '{v[NR]=$1} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "%.0f (%.0f–%.0f)", m, v[1], v[NR]}'; }
echo
echo "| stacks | threads | plain ns/call | depth 0 added | depth 8 added | depth 32 added |"
echo "|---|---:|---:|---:|---:|---:|"
for c in "${cells[@]}"; do
  echo "| ${c%%:*} | ${c#*:} | $(stat "$tmp/$c.plain") | $(stat "$tmp/$c.0") | $(stat "$tmp/$c.8") | $(stat "$tmp/$c.32") |"
done
