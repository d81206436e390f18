#!/usr/bin/env bash
# Added cost per intercepted call: runs bench/alloc_loop plain, under the tracer without
# stacks (CUMEMTRACE_DEPTH=0) and with 32-frame stacks (CUMEMTRACE_DEPTH=32), alternating
# the modes round by round so that drift on a noisy machine hits all of them alike.
# Per (workload, mode) it keeps the median over rounds of each run's best repetition,
# and prints that minus the plain figure. Then the same with 100k live allocations and
# a snapshot every 10 ms, with per-pair latencies. Results: docs/performance.md.
#
#   bench/run_overhead.sh [BUILD_DIR]      (default: build; ROUNDS=5 PAIRS=100000 LIVE=100000)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
# The library dlopens NVML by name; the simulated one lives beside the simulated driver.
export LD_LIBRARY_PATH="$build/sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
loop=$build/bench/alloc_loop
preload=$build/lib/libcumemtrace.so
rounds=${ROUNDS:-5} pairs=${PAIRS:-100000} live=${LIVE:-100000}
for f in "$loop" "$preload"; do
  [[ -e $f ]] || { echo "run_overhead: $f missing: build first (ninja -C $build)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

modes=(plain depth0 depth32)
# One run of alloc_loop in a mode; prints its key=value line. Each trace is deleted
# right away (a run writes ~90 MB).
run_mode() {
  local mode=$1; shift
  case $mode in
    plain) "$loop" "$@" ;;
    depth*) LD_PRELOAD=$preload CUMEMTRACE_DEPTH=${mode#depth} CUMEMTRACE_OUTPUT=$tmp/run.trace \
              CUMEMTRACE_SNAPSHOT_MS=${SNAPSHOT_MS:-1000} "$loop" "$@" ;;
  esac
  rm -f "$tmp"/run.trace
}
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(uname -r)"
echo "rounds=$rounds pairs=$pairs reps=5 (ns per call = ns per alloc+free pair / 2)"
echo
workloads=("driver shallow:--api driver" "driver 30 frames deep:--api driver --frames 30"
           "runtime shallow:--api runtime")
for w in "${workloads[@]}"; do
  name=${w%%:*} args=${w#*:}
  for ((r = 0; r < rounds; ++r)); do
    for m in "${modes[@]}"; do
      # shellcheck disable=SC2086
      run_mode "$m" $args --pairs "$pairs" | field best_ns_call >>"$tmp/${name// /_}.$m"
    done
  done
  plain=$(median <"$tmp/${name// /_}.plain")
  for m in "${modes[@]}"; do
    ns=$(median <"$tmp/${name// /_}.$m")
    printf '%-24s %-8s %8.1f ns/call  added %8.1f ns/call  (runs: %s)\n' "$name" "$m" "$ns" \
      "$(awk -v a="$ns" -v b="$plain" 'BEGIN {print a - b}')" "$(sort -g "$tmp/${name// /_}.$m" | tr '\n' ' ')"
  done
done

echo
echo "live=$live allocations, CUMEMTRACE_SNAPSHOT_MS=10, every pair timed on its own:"
for ((r = 0; r < (rounds + 1) / 2; ++r)); do
  for m in "${modes[@]}"; do
    line=$(SNAPSHOT_MS=10 run_mode "$m" --live "$live" --pairs "$pairs" --latency)
    printf '%-8s %s\n' "$m" "${line#* reps=* }"
  done
done
