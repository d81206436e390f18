#!/usr/bin/env bash
# The test command (README): installs what is missing, builds, runs every test with
# CTest (no GPU needed: the tests run against the simulated driver in sim/).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# Each stage's wall time, said on stderr when it ends (docs/architecture.md keeps a table).
stage_start=$SECONDS
stage_done() {
  echo "test.sh: $1 took $((SECONDS - stage_start)) s" >&2
  stage_start=$SECONDS
}
"$top/scripts/setup.sh"
stage_done "set-up"
build="${CUMEMTRACE_BUILD_DIR:-$top/build}"
# Sources compile in batches (CMakeLists.txt, CUMEMTRACE_UNITY): about a third of the
# time for a whole tree. CUMEMTRACE_UNITY=0 compiles file by file, for quick rebuilds.
unity="-DCUMEMTRACE_UNITY=$([[ "${CUMEMTRACE_UNITY:-1}" == 0 ]] && echo OFF || echo ON)"
cmake -S "$top" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUMEMTRACE_BROWSER_TEST=ON "$unity" >/dev/null
ninja -C "$build"
(cd "$build" && ctest --output-on-failure -j"$(nproc)" "$@")
stage_done "plain tree (build and tests)"

# The same tests again, everything built with AddressSanitizer and UBSan (a UB report
# fails the test). The preload library is loaded before the sanitizer runtime there, so
# its link-order check is off, and so is its own handling of SIGSEGV, SIGBUS, SIGFPE and
# SIGILL: the fatal-signal tests check that programs die of those signals as without it.
# CUMEMTRACE_SKIP_SANITIZE=1 skips this second build.
# The sanitized trees are compiled at -O1 with line tables only (-g1): what their reports
# need, at about half the compile time of -O2 -g (CI has 2 cores and builds four trees).
# At -O1 GCC 12 warns of maybe-uninitialized members inside <regex>: not ours, left quiet.
sanitized_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG -Wno-maybe-uninitialized")
if [[ "${CUMEMTRACE_SKIP_SANITIZE:-0}" != 1 ]]; then
  sanitize="${build}-asan"
  cmake -S "$top" -B "$sanitize" -G Ninja "${sanitized_flags[@]}" "$unity" -DCUMEMTRACE_SANITIZE=ON >/dev/null
  ninja -C "$sanitize"
  (cd "$sanitize" && ASAN_OPTIONS=verify_asan_link_order=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --output-on-failure -j"$(nproc)" "$@")
  stage_done "ASan+UBSan tree (build and tests)"
fi

# The threaded and forking parts once more, under ThreadSanitizer: the unit tests and
# the integration tests with threads, fork, vfork, _exit and fatal signals (a subset:
# TSan slows everything ~5-15x, and the rest has no threads of interest; the tests
# that preload into Python are left out: an instrumented library in an uninstrumented
# CPython crashes inside TSan's runtime). A report fails the test (halt_on_error, exit
# code 66); TSan's own handling of SIGSEGV, SIGBUS, SIGABRT, SIGFPE and SIGILL is off so
# that the programs die of those signals as without it (the fatal-signal tests check
# that). test/tsan.supp lists what is suppressed, and why. CUMEMTRACE_SKIP_TSAN=1 skips
# this third build.
if [[ "${CUMEMTRACE_SKIP_TSAN:-0}" != 1 ]]; then
  tsan="${build}-tsan"
  # The traces are read with the plain tree's CLI: the analysis is not what runs threaded.
  cmake -S "$top" -B "$tsan" -G Ninja "${sanitized_flags[@]}" "$unity" -DCUMEMTRACE_TSAN=ON \
    -DCUMEMTRACE_TEST_CLI="$build/bin/cumemtrace" >/dev/null
  ninja -C "$tsan" unit_tests integration_tests
  tsan_options="halt_on_error=1:exitcode=66:suppressions=$top/test/tsan.supp"
  tsan_options+=":handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigfpe=0:handle_sigill=0"
  (cd "$tsan" && TSAN_OPTIONS="$tsan_options" \
    ctest --output-on-failure --no-tests=error -j"$(nproc)" -R '^unit:|thread|fork|_exit|fatal signal|SIGKILL' -E 'Python|pytest' "$@")
  stage_done "TSan tree (build and tests)"
fi

# A short fuzz run of the reader and the report builder (docs/fuzzing.md): 30 s each.
# CUMEMTRACE_SKIP_FUZZ=1 skips it.
if [[ "${CUMEMTRACE_SKIP_FUZZ:-0}" != 1 ]]; then
  "$top/scripts/fuzz.sh" 60
  stage_done "fuzz (build and runs)"
fi
