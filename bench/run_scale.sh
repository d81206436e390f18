#!/bin/sh
# The analyzer against the size of the live set (docs/performance.md, "The analyzer and the live
# set", "The scale table"): traces written by the real tracer, and for each the wall time,
# user time and max RSS of `report`, `html`, `export --format folded`, `live` at the middle
# and `check` (and `index` for the first kind). A regression in time or memory shows as one
# row of the table moving. Three kinds of trace:
#   bench/run_scale.sh [EVENTS...]       default: 1000000
# 1. bench/mixed_events: EVENTS events, a churning live set of ~2,000 plus KEPT allocations
#    never freed, spread over the run. KEPT (default "0 10000 100000"; a size over EVENTS/2
#    is skipped; "": none). The 10 M-event row of docs/performance.md: bench/run_scale.sh
#    10000000 with KEPT="0 1000000".
# 2. bench/loop_events: a loop found from the allocations with a live set kept across its
#    iterations (four call sites, one boundary per iteration): LOOP_ALLOCATIONS allocations
#    (default 200000; "" for none), LOOP_KEPT kept live (default "0 10000 100000"; over the
#    allocations: skipped).
# 3. bench/torch_job: a training job's tensors on the stand-in for PyTorch's caching
#    allocator (sim/torch/), one block event per tensor allocated or freed, 1,000 tensors a
#    step: TORCH_TENSORS tensors (default 1000000; "" for none), TORCH_KEPT kept for good
#    (default "0 10000 100000"), the loop found from the tensors, and with TORCH_MARKS=1
#    also marked by cumemtrace_mark("step").
# Environment: BUILD (default ./build), CLI (default $BUILD/bin/cumemtrace). Events per
# second are per second of user time.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
cli=${CLI:-$build/bin/cumemtrace}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ $# -gt 0 ] || set -- 1000000

timed() {  # the command: its wall time, user time and max RSS; its output in $work/out
  /usr/bin/time -f '%e %U %M' -o "$work/time" "$@" >"$work/out" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  read -r wall user rss_kb <"$work/time"
}
row() {  # trace kind, events, kept, command name: one table row of the last timed command
  python3 -c 'import sys
kind, n, kept, name, wall, user, kb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], float(sys.argv[5]), float(sys.argv[6]), int(sys.argv[7])
print("| %s | %d | %d | %s | %.2f | %.2f | %.2f M | %d MB |" % (kind, n, kept, name, wall, user, n / max(user, 0.01) / 1e6, kb * 1024 // 10**6))' \
    "$1" "$2" "$3" "$4" "$wall" "$user" "$rss_kb"
}
measure() {  # trace kind, events, kept, command name, then the command
  kind=$1 n=$2 kept=$3 name=$4
  shift 4
  timed "$@"
  row "$kind" "$n" "$kept" "$name"
}
# The five commands on one trace: trace kind, kept, the trace. Its events (block events
# included) and middle moment come from an untimed `report --json`.
commands() {
  kind=$1 kept=$2 trace=$3
  "$cli" report --json "$trace" >"$work/report.json" 2>/dev/null
  read -r n found middle <<EOT
$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); g=r["growth"]
blocks = sum(d["allocations"] + d["frees"] for d in (r.get("blocks") or {}).get("devices", []))
print(r["trace"]["events"] + blocks, "%s:%d" % (g["found_by"], g["iterations"]), "%.6f s" % (r["duration_ns"] / 2e9))' "$work/report.json")
EOT
  kind="$kind ($found)"
  measure "$kind" "$n" "$kept" report "$cli" report "$trace"
  measure "$kind" "$n" "$kept" html "$cli" html -o "$work/page.html" "$trace"
  measure "$kind" "$n" "$kept" "export folded" "$cli" export --format folded -o "$work/folded.txt" "$trace"
  measure "$kind" "$n" "$kept" "live, the middle" "$cli" live "$trace" --at "$middle"
  measure "$kind" "$n" "$kept" check "$cli" check --max-peak 1TiB --max-growth 1TiB "$trace"
  rm -f "$work/page.html" "$work/folded.txt"
}

echo "| trace (iterations) | events | kept live | command | wall s | user s | events/s (user) | max RSS |"
echo "|---|---:|---:|---|---:|---:|---:|---:|"
for events in "$@"; do
  for kept in ${KEPT-0 10000 100000}; do
    [ "$((kept * 2))" -le "$events" ] || continue
    trace=$work/scale.trace
    rm -f "$trace" "$trace.idx"
    LD_PRELOAD=$build/lib/libcumemtrace.so CUMEMTRACE_OUTPUT=$trace "$build/bench/mixed_events" "$events" 64 "$kept" >/dev/null 2>&1
    commands mixed "$kept" "$trace"
    measure "$kind" "$n" "$kept" index "$cli" index -o "$work/scale.idx" "$trace"
    rm -f "$work/scale.idx"
  done
done

for allocations in ${LOOP_ALLOCATIONS-200000}; do
  for kept in ${LOOP_KEPT-0 10000 100000}; do
    [ "$kept" -le "$allocations" ] || continue
    trace=$work/loop.trace
    rm -f "$trace"
    LD_PRELOAD=$build/lib/libcumemtrace.so CUMEMTRACE_OUTPUT=$trace "$build/bench/loop_events" "$allocations" "$kept" \
      >/dev/null 2>&1
    commands loop "$kept" "$trace"
  done
done

for tensors in ${TORCH_TENSORS-1000000}; do
  for kept in ${TORCH_KEPT-0 10000 100000}; do
    for marks in "" ${TORCH_MARKS:+marks}; do
      trace=$work/torch.trace
      rm -f "$trace"
      LD_PRELOAD=$build/lib/libcumemtrace.so CUMEMTRACE_OUTPUT=$trace "$build/bench/torch_job" "$tensors" "$kept" $marks \
        >/dev/null 2>&1
      commands "blocks${marks:+, marked}" "$kept" "$trace"
    done
  done
done
