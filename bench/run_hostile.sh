#!/bin/sh
# The analysis on traces built to be hard on it (docs/performance.md, "Analysis of hostile
# traces"): 20,000 NVTX pushes never popped, 10,000 distinct mark names, 100,000 nested
# tags each with a live allocation, 20,000 pool heaps (test/analysis/hostile_traces.h,
# written by bench/hostile_traces). For each: `report`, `report --by range` and `html`,
# user CPU seconds, peak resident memory and the page's size.
#   bench/run_hostile.sh [SCALE]     default 1; each count times SCALE
# Environment: BUILD (default ./build), CLI (default $BUILD/bin/cumemtrace).
set -eu
scale=${1:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
cli=${CLI:-$build/bin/cumemtrace}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/bench/hostile_traces" "$work" "$scale"
printf '%-24s %-18s %10s %10s %12s\n' trace command user_s max_rss_MB page_bytes
for trace in hostile-open-pushes hostile-distinct-marks hostile-nested-tags hostile-pool-heaps; do
  for cmd in report "report --by range" html; do
    out=/dev/null
    set -- $cmd
    if [ "$1" = html ]; then out=$work/$trace.html; set -- html -o "$out"; fi
    /usr/bin/time -f '%U %M' -o "$work/time" "$cli" "$@" "$work/$trace.trace" >/dev/null 2>"$work/err" ||
      { echo "$trace: $cmd failed" >&2; cat "$work/err" >&2; exit 1; }
    read -r user rss <"$work/time"
    size=-
    [ "$out" = /dev/null ] || size=$(wc -c <"$out")
    printf '%-24s %-18s %10s %10s %12s\n' "$trace" "$cmd" "$user" $((rss / 1024)) "$size"
  done
done
