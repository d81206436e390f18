#!/usr/bin/env bash
# The test command (README): installs what is missing, builds, runs every test with
# CTest (no GPU needed: the tests run against the simulated driver in sim/).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/setup.sh"
build="${CUMEMTRACE_BUILD_DIR:-$top/build}"
cmake -S "$top" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$build"
cd "$build"
ctest --output-on-failure -j"$(nproc)" "$@"
