#!/usr/bin/env bash
# README's pictures of the page (docs/images/demo-*.png), made from the demo: the simulated
# job's out-of-memory trace that scripts/demo.sh reports (test/programs/demo_oom.cpp),
# its `cumemtrace html` page, screenshotted by scripts/html_screenshots.mjs in Debian's
# chromium. Run after scripts/demo.sh (or a build of its targets), from any directory.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build="${CUMEMTRACE_BUILD_DIR:-$top/build}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# demo_oom's out-of-memory error is the point: its exit status is not ours.
LD_LIBRARY_PATH="$build/sim" "$build/bin/cumemtrace" run -o "$work/demo-oom-%p.trace" -- \
  "$build/test/programs/demo_oom" >/dev/null || true
"$build/bin/cumemtrace" html "$work"/demo-oom-*.trace -o "$work/demo.html"
node "$top/scripts/html_screenshots.mjs" "$work/demo.html" "$top/docs/images" demo
echo "demo_pictures: docs/images/demo-*.png written" >&2
