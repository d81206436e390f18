#!/bin/sh
# The analyzer's throughput and peak memory (docs/performance.md, "Analyzer: speed and
# memory"): `report`, and `live` with 20 moments spread over the trace, on a trace of
# EVENTS events written by the real tracer (bench/mixed_events under libcumemtrace.so:
# sizes log-uniform 512 B-64 MiB, a live set of ~2,000 freed in random order, 64 call
# paths, periodic snapshots; fixed seed); then `index`, and one moment at 95 % of the
# trace with `live` from the index and without it.
#   bench/run_analyzer.sh [EVENTS]     default 10000000
# Environment: BUILD (default ./build), CLI (default $BUILD/bin/cumemtrace: point it at
# another build to compare), TRACE (reuse this trace when it exists, else write it there).
# Events per second are per second of user CPU time: the machines this runs on are shared,
# and wall time there is mostly waiting.
set -eu
events=${1:-10000000}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
cli=${CLI:-$build/bin/cumemtrace}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trace=${TRACE:-$work/mixed.trace}
# `live` would use an index beside the trace: the rows without one would not be.
if [ -e "$trace.idx" ]; then echo "$trace.idx exists: move it away first" >&2; exit 1; fi
if [ ! -s "$trace" ]; then
  echo "writing $events events to $trace ..." >&2
  LD_PRELOAD=$build/lib/libcumemtrace.so CUMEMTRACE_OUTPUT=$trace "$build/bench/mixed_events" "$events" >/dev/null
fi
"$cli" report --json "$trace" >"$work/report.json" 2>/dev/null
read -r n duration <<EOT
$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["trace"]["events"], r["duration_ns"])' "$work/report.json")
EOT
# 20 moments, 5 % apart, as seconds since the start.
moments=$(python3 -c 'import sys; d=int(sys.argv[1]); print(",".join("%.6f s" % (d*k/20/1e9) for k in range(1, 21)))' "$duration")

measure() {  # name, then the command: one table row
  name=$1
  shift
  /usr/bin/time -f '%e %U %M' -o "$work/time" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  read -r wall user rss_kb <"$work/time"
  python3 -c 'import sys
name, n, wall, user, kb = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
print("| %s | %d | %.2f | %.2f | %.2f M | %d MB |" % (name, n, wall, user, n / max(user, 0.01) / 1e6, kb * 1024 // 10**6))' \
    "$name" "$n" "$wall" "$user" "$rss_kb"
}

echo "trace: $(stat -c %s "$trace") bytes, $n events"
echo "| command | events | wall s | user s | events/s (user) | max RSS |"
echo "|---|---:|---:|---:|---:|---:|"
measure report "$cli" report "$trace"
measure "live, 20 moments" "$cli" live "$trace" --at "$moments"
# The checkpoint index: made once, then one moment deep in the trace from it.
measure index "$cli" index -o "$work/mixed.idx" "$trace"
late=$(python3 -c 'import sys; print("%.6f s" % (int(sys.argv[1]) * 0.95 / 1e9))' "$duration")
measure "live, 1 moment at 95 %, no index" "$cli" live "$trace" --at "$late"
cp "$work/mixed.idx" "$trace.idx"
measure "live, 1 moment at 95 %, from the index" "$cli" live "$trace" --at "$late"
echo "index: $(stat -c %s "$work/mixed.idx") bytes"
rm -f "$trace.idx"
