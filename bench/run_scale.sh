#!/bin/sh
# The analyzer against the size of the live set (issue 26 §4; docs/performance.md, "Analyzer
# and the live set"): traces of EVENTS events written by the real tracer
# (bench/mixed_events: a churning live set of ~2,000 plus KEPT allocations never freed,
# spread over the run), and for each the wall time, user time and max RSS of `report`,
# `html`, `export --format folded`, `live` at the middle and `index`. A regression in
# time or memory shows as one row of the table moving.
#   bench/run_scale.sh [EVENTS...]       default: 1000000
# Environment: KEPT (default "0 10000 100000"; a size over EVENTS/2 is skipped; "": none), BUILD
# (default ./build), CLI (default $BUILD/bin/cumemtrace). Events per second are per second
# of user time. The 10 M-event row of docs/performance.md: bench/run_scale.sh 10000000
# with KEPT="0 1000000".
# Then a loop found from the allocations with a live set kept across its iterations
# (bench/loop_events: four call sites, one boundary per iteration; docs/performance.md,
# "Growth across many iterations"): LOOP_ALLOCATIONS allocations (default 200000; "" for
# none), LOOP_KEPT kept live (default "0 10000 100000"; over the allocations: skipped), and
# for each the time and max RSS of `report`, `html` and `check --max-growth`.
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
row() {  # events, kept, command name: one table row of the last timed command
  python3 -c 'import sys
n, kept, name, wall, user, kb = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
print("| %d | %d | %s | %.2f | %.2f | %.2f M | %d MB |" % (n, kept, name, wall, user, n / max(user, 0.01) / 1e6, kb * 1024 // 10**6))' \
    "$1" "$2" "$3" "$wall" "$user" "$rss_kb"
}
measure() {  # events, kept, command name, then the command
  n=$1 kept=$2 name=$3
  shift 3
  timed "$@"
  row "$n" "$kept" "$name"
}

echo "| events | kept live | command | wall s | user s | events/s (user) | max RSS |"
echo "|---:|---:|---|---:|---:|---:|---:|"
for events in "$@"; do
  for kept in ${KEPT-0 10000 100000}; do
    [ "$((kept * 2))" -le "$events" ] || continue
    trace=$work/scale.trace
    rm -f "$trace" "$trace.idx"
    LD_PRELOAD=$build/lib/libcumemtrace.so CUMEMTRACE_OUTPUT=$trace "$build/bench/mixed_events" "$events" 64 "$kept" >/dev/null 2>&1
    "$cli" report --json "$trace" >"$work/report.json" 2>/dev/null
    read -r n middle <<EOT
$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["trace"]["events"], "%.6f s" % (r["duration_ns"] / 2e9))' "$work/report.json")
EOT
    measure "$n" "$kept" report "$cli" report "$trace"
    measure "$n" "$kept" html "$cli" html -o "$work/page.html" "$trace"
    measure "$n" "$kept" "export folded" "$cli" export --format folded -o "$work/folded.txt" "$trace"
    measure "$n" "$kept" "live, the middle" "$cli" live "$trace" --at "$middle"
    measure "$n" "$kept" index "$cli" index -o "$work/scale.idx" "$trace"
    rm -f "$work/page.html" "$work/folded.txt" "$work/scale.idx"
  done
done

for allocations in ${LOOP_ALLOCATIONS-200000}; do
  for kept in ${LOOP_KEPT-0 10000 100000}; do
    [ "$kept" -le "$allocations" ] || continue
    trace=$work/loop.trace
    rm -f "$trace"
    LD_PRELOAD=$build/lib/libcumemtrace.so CUMEMTRACE_OUTPUT=$trace "$build/bench/loop_events" "$allocations" "$kept" \
      >/dev/null 2>&1
    timed "$cli" report --json "$trace"
    n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["trace"]["events"])' "$work/out")
    row "$n" "$kept" "report --json (loop)"
    measure "$n" "$kept" "html (loop)" "$cli" html -o "$work/page.html" "$trace"
    measure "$n" "$kept" "check (loop)" "$cli" check --max-growth 1TiB "$trace"
    rm -f "$work/page.html"
  done
done
