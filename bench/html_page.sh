#!/usr/bin/env bash
# Size and first paint of `cumemtrace html`'s page for a big trace (issue 11: a 10 M-event
# trace's page <= 50 MB, first view painted <= 5 s in headless chromium).
# Makes the trace with bench/mixed_events under the tracer, writes the page, then loads it
# in headless chromium (bench/html_paint.mjs). Results: docs/performance.md.
#
#   bench/html_page.sh [BUILD_DIR]      (default: build; EVENTS=10000000; KEEP=FILE keeps the page)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
events=${EVENTS:-10000000}
export LD_LIBRARY_PATH="$build/sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for f in "$build/bench/mixed_events" "$build/lib/libcumemtrace.so" "$build/bin/cumemtrace"; do
  [[ -e $f ]] || { echo "html_page: $f missing: build first (ninja -C $build)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
LD_PRELOAD="$build/lib/libcumemtrace.so" CUMEMTRACE_OUTPUT="$tmp/big-%p.trace" "$build/bench/mixed_events" "$events" >/dev/null
trace=$(ls "$tmp"/big-*.trace)
start=$(date +%s.%N)
"$build/bin/cumemtrace" html "$trace" -o "$tmp/page.html"
end=$(date +%s.%N)
echo "events=$events trace_bytes=$(stat -c %s "$trace") html_bytes=$(stat -c %s "$tmp/page.html") html_write_s=$(echo "$end - $start" | bc)"
node "$top/bench/html_paint.mjs" "$tmp/page.html"
if [[ -n "${KEEP:-}" ]]; then cp "$tmp/page.html" "$KEEP"; fi
