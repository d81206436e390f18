#!/usr/bin/env bash
# Instructions the tracer adds per intercepted call, counted by callgrind: unlike a
# timing, the count does not move with the machine's load, so it is the figure to compare
# across changes on a shared 2-core machine (bench/run_overhead.sh gives the times).
# bench/alloc_loop runs plain and under the preload at CUMEMTRACE_DEPTH 0, 8 and 32, with
# one repeated stack and with a new stack per pair (--unique), on 1 and 8 threads
# (callgrind runs threads one at a time: the 8-thread figure has no lock contention in it).
#
#   bench/run_instructions.sh [BUILD_DIR]     (env: PAIRS=20000)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
export LD_LIBRARY_PATH="$build/sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
pairs=${PAIRS:-20000} reps=2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Instructions of the whole run; the difference between two runs of the same loop is
# what the tracer added, divided by the calls made (2 per pair, warm-up included).
count() {
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$@" >/dev/null 2>"$tmp/cg.err"
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p; s/.*refs: *\([0-9,]*\).*/\1/p' "$tmp/cg.err" | tr -d , | tail -1
}
echo "| stacks | threads | plain instr/call | depth 0 added | depth 8 added | depth 32 added |"
echo "|---|---:|---:|---:|---:|---:|"
for threads in 1 8; do
  for stacks in repeated unique; do
    args=(--frames 30 --pairs "$pairs" --reps "$reps" --threads "$threads")
    [[ $stacks == unique ]] && args+=(--unique)
    calls=$((2 * pairs * (reps + 1) * threads))
    plain=$(count "$build/bench/alloc_loop" "${args[@]}")
    row="| $stacks | $threads | $((plain / calls))"
    for depth in 0 8 32; do
      traced=$(LD_PRELOAD=$build/lib/libcumemtrace.so CUMEMTRACE_DEPTH=$depth CUMEMTRACE_OUTPUT=$tmp/t.trace \
               count "$build/bench/alloc_loop" "${args[@]}")
      rm -f "$tmp/t.trace"
      row+=" | $(((traced - plain) / calls))"
    done
    echo "$row |"
  done
done
