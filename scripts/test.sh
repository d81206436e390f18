#!/usr/bin/env bash
# The test command (README): installs what is missing, builds, runs every test with
# CTest (no GPU needed: the tests run against the simulated driver in sim/).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/setup.sh"
build="${CUMEMTRACE_BUILD_DIR:-$top/build}"
cmake -S "$top" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$build"
(cd "$build" && ctest --output-on-failure -j"$(nproc)" "$@")

# The same tests again, everything built with AddressSanitizer and UBSan (a UB report
# fails the test). The preload library is loaded before the sanitizer runtime there, so
# its link-order check is off. CUMEMTRACE_SKIP_SANITIZE=1 skips this second build.
if [[ "${CUMEMTRACE_SKIP_SANITIZE:-0}" != 1 ]]; then
  sanitize="${build}-asan"
  cmake -S "$top" -B "$sanitize" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUMEMTRACE_SANITIZE=ON >/dev/null
  ninja -C "$sanitize"
  (cd "$sanitize" && ASAN_OPTIONS=verify_asan_link_order=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --output-on-failure -j"$(nproc)" "$@")
fi

# A short fuzz run of the reader and the report builder (docs/fuzzing.md): 30 s each.
# CUMEMTRACE_SKIP_FUZZ=1 skips it.
if [[ "${CUMEMTRACE_SKIP_FUZZ:-0}" != 1 ]]; then
  "$top/scripts/fuzz.sh" 60
fi
