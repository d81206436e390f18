#!/bin/sh
# One moment deep in a long trace, with and without the checkpoint index
# (docs/performance.md, "The checkpoint index"): writes EVENTS events with bench/mixed_events
# under the tracer (at CUMEMTRACE_DEPTH=0 unless DEPTH is set: 10^8 events with stacks take
# longer than a lent machine's call), then `index`, then `live --at` at 5 %, 50 % and 95 %
# of the trace from the index (three times each), then once at 95 % without it, and checks
# that both answers are the same bytes.
#   bench/index_deep.sh OUTDIR [EVENTS]        default 100000000
# Environment: BUILD (default ./build: bin/cumemtrace, lib/libcumemtrace.so,
# bench/mixed_events, sim/), WORK (where the trace goes; default a fresh temporary),
# WRITE_ONLY=1 (stop after writing the trace), REUSE=1 (use WORK's trace if there is one).
set -eu
out=${1:?usage: index_deep.sh OUTDIR [EVENTS]}
events=${2:-100000000}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
cli=$build/bin/cumemtrace
mkdir -p "$out"
work=${WORK:-$(mktemp -d)}
mkdir -p "$work"
trace=$work/deep.trace
rm -f "$trace.idx"
: >"$out/times.txt"
timed() {  # name, then the command: "name wall_s user_s max_rss_kB" into times.txt
  name=$1
  shift
  /usr/bin/time -f "$name %e %U %M" -o "$out/time.txt" "$@"
  cat "$out/time.txt" >>"$out/times.txt"
}
if [ "${REUSE:-0}" = 1 ] && [ -s "$trace" ]; then
  echo "reusing $trace"
else
  rm -f "$trace"
  LD_LIBRARY_PATH=$build/sim LD_PRELOAD=$build/lib/libcumemtrace.so CUMEMTRACE_DEPTH=${DEPTH:-0} \
    CUMEMTRACE_OUTPUT=$trace timed write "$build/bench/mixed_events" "$events" >/dev/null 2>"$out/write.err"
fi
echo "trace $(stat -c %s "$trace") bytes"
if [ "${WRITE_ONLY:-0}" = 1 ]; then cat "$out/times.txt"; exit 0; fi
timed index "$cli" index "$trace" >"$out/index.out" 2>&1
cat "$out/index.out"
echo "index $(stat -c %s "$trace.idx") bytes"
"$cli" live "$trace" --at end >"$out/end.txt"
since=$(sed -n 's/.*(\([0-9.]*\) s since start).*/\1/p' "$out/end.txt" | head -n1)
for pct in 5 50 95; do
  at=$(python3 -c "print('%.6f s' % ($since * $pct / 100))")
  for round in 1 2 3; do
    timed "live-indexed-${pct}pct-round$round" "$cli" live "$trace" --at "$at" >"$out/live-indexed-$pct.txt" 2>>"$out/live.err"
  done
done
mv "$trace.idx" "$work/deep.idx"
at=$(python3 -c "print('%.6f s' % ($since * 95 / 100))")
timed "live-whole-95pct" "$cli" live "$trace" --at "$at" >"$out/live-whole-95.txt" 2>>"$out/live.err"
if cmp -s "$out/live-whole-95.txt" "$out/live-indexed-95.txt"; then echo "95%: same output"; else echo "95%: OUTPUTS DIFFER"; fi
cat "$out/live-indexed-95.txt"
echo "name wall_s user_s max_rss_kB"
cat "$out/times.txt"
