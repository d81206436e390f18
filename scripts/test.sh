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
# The plain tree is the users' build (RelWithDebInfo, -O2) with line tables for its debug
# information (-g1) instead of GCC's full -g: the same machine code (GCC's -g level does not
# change what it generates), and the tree builds in 313 s instead of 375 on two cores. The
# tests read debug information only through line tables and function names, which -g1 keeps.
plain_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")
cmake -S "$top" -B "$build" -G Ninja "${plain_flags[@]}" -DCUMEMTRACE_BROWSER_TEST=ON "$unity" >/dev/null
ninja -C "$build"

# The same tests again, everything built with AddressSanitizer and UBSan (a UB report
# fails the test). The preload library is loaded before the sanitizer runtime there, so
# its link-order check is off, and so is its own handling of SIGSEGV, SIGBUS, SIGFPE and
# SIGILL: the fatal-signal tests check that programs die of those signals as without it.
# CUMEMTRACE_SKIP_SANITIZE=1 skips this second build.
# That tree builds and runs what runs our compiled code, and nothing else, for it finds
# nothing more than the plain tree there: not the benchmarks (bench/, which no test runs;
# CUMEMTRACE_BENCH), not the checks of the source tree (format, include layering, the demo
# script's stdout: CUMEMTRACE_SOURCE_CHECKS), not the node tests (the html page in a browser,
# docs/tables.md's query in DuckDB: what they check is the page's JavaScript and the query;
# the CLI's html and export commands that feed them are the analysis tests' in this tree).
# The sanitized trees are compiled at -Og with line tables only (-g1): what their reports
# need. -Og builds the ASan tree in 368 s against 465 at -O1 on two cores, and its tests ran
# no slower (236 s against 270); the sanitizers instrument every access at any level. xxHash
# forces its inner functions inline, which GCC refuses at -Og: XXH_NO_INLINE_HINTS is
# xxHash's own switch for that (what it sets itself at -O0).
# GCC 12 warns of maybe-uninitialized members inside <regex> there: not ours, left quiet.
sanitized_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-Og -g1 -DNDEBUG -DXXH_NO_INLINE_HINTS=1"
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-Og -g1 -DNDEBUG -DXXH_NO_INLINE_HINTS=1 -Wno-maybe-uninitialized")
sanitize="${build}-asan"
build_asan() {
  cmake -S "$top" -B "$sanitize" -G Ninja "${sanitized_flags[@]}" "$unity" -DCUMEMTRACE_SANITIZE=ON \
    -DCUMEMTRACE_BENCH=OFF -DCUMEMTRACE_SOURCE_CHECKS=OFF -DCUMEMTRACE_BROWSER_TEST=OFF >/dev/null
  ninja -C "$sanitize"
}

# The threaded and forking parts once more, under ThreadSanitizer: the unit tests and
# the integration tests with threads, fork, vfork, _exit and fatal signals (a subset:
# TSan slows everything ~5-15x, and the rest has no threads of interest; the tests
# that preload into Python are left out: an instrumented library in an uninstrumented
# CPython crashes inside TSan's runtime). A report fails the test (halt_on_error, exit
# code 66); TSan's own handling of SIGSEGV, SIGBUS, SIGABRT, SIGFPE and SIGILL is off so
# that the programs die of those signals as without it (the fatal-signal tests check
# that). test/tsan.supp lists what is suppressed, and why. CUMEMTRACE_SKIP_TSAN=1 skips
# this third build.
tsan="${build}-tsan"
build_tsan() {
  # The traces are read with the plain tree's CLI: the analysis is not what runs threaded.
  cmake -S "$top" -B "$tsan" -G Ninja "${sanitized_flags[@]}" "$unity" -DCUMEMTRACE_TSAN=ON \
    -DCUMEMTRACE_TEST_CLI="$build/bin/cumemtrace" >/dev/null
  ninja -C "$tsan" unit_tests integration_tests
}

# A short fuzz run of the reader and the report builder (docs/fuzzing.md): 30 s each,
# the two side by side. CUMEMTRACE_SKIP_FUZZ=1 skips it.
build_fuzz() {
  "$top/scripts/fuzz.sh" --build-only
}

# Each later stage and the flag that skips it; the list decides what is built and what runs.
declare -A skip_flag=([asan]=CUMEMTRACE_SKIP_SANITIZE [tsan]=CUMEMTRACE_SKIP_TSAN [fuzz]=CUMEMTRACE_SKIP_FUZZ)
later=()
for stage in asan tsan fuzz; do
  flag=${skip_flag[$stage]}
  [[ "${!flag:-0}" == 1 ]] || later+=("$stage")
done
stages=("${later[@]}")
# Each later tree is built while the tree before it runs its tests, at a lower priority:
# tests leave cores idle while they wait on the programs they start (forks reaped, flushes
# and snapshots awaited, a browser at a time), and the build takes them. Its output goes to a log in the
# plain tree, shown if it fails; a failing test ends the script, and the build with it.
# The build runs in a process group of its own (set -m), so that the exit trap ends all of it.
beside_pid=
trap '[[ -z "$beside_pid" ]] || kill -- "-$beside_pid" 2>/dev/null; true' EXIT
build_next_beside() {
  ((${#later[@]})) || return 0
  beside=${later[0]}
  later=("${later[@]:1}")
  set -m
  (trap - EXIT; renice -n 10 -p "$BASHPID" >/dev/null; "build_$beside") </dev/null >"$build/beside-$beside.log" 2>&1 &
  beside_pid=$!
  set +m
}
wait_beside() {
  local pid=$beside_pid
  beside_pid=
  if ! wait "$pid"; then
    tail -n 40 "$build/beside-$beside.log" >&2
    echo "test.sh: the $beside build failed (all of its output in $build/beside-$beside.log)" >&2
    exit 1
  fi
  tail -n 1 "$build/beside-$beside.log"
}

run_plain() {
  (cd "$build" && ctest --output-on-failure -j"$(nproc)" "$@")
  stage_done "plain tree (build, then tests with the next tree building beside them)"
}
run_asan() {
  # ASan's memmem checks its whole haystack before searching: the reader looks for a chunk's
  # seal in windows of 64 MiB (read/parser.cpp), so a large trace cost 64 MiB of checks for
  # every chunk (an export test took 145 s for 2 s plain). The search itself is not ours.
  (cd "$sanitize" &&
    ASAN_OPTIONS=verify_asan_link_order=0:intercept_memmem=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0 \
      UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ctest --output-on-failure -j"$(nproc)" "$@")
  stage_done "ASan+UBSan tree (the rest of its build, then tests with the next building beside them)"
}
run_tsan() {
  tsan_options="halt_on_error=1:exitcode=66:suppressions=$top/test/tsan.supp"
  tsan_options+=":handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigfpe=0:handle_sigill=0"
  (cd "$tsan" && TSAN_OPTIONS="$tsan_options" \
    ctest --output-on-failure --no-tests=error -j"$(nproc)" -R '^unit:|thread|fork|_exit|fatal signal|SIGKILL' -E 'Python|pytest' "$@")
  stage_done "TSan tree (the rest of its build, then tests with the fuzz targets building beside them)"
}
run_fuzz() {
  "$top/scripts/fuzz.sh" 60
  stage_done "fuzz (the rest of its build, then runs)"
}

build_next_beside
run_plain "$@"
for stage in "${stages[@]}"; do
  wait_beside
  build_next_beside
  "run_$stage" "$@"
done
