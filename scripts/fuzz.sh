#!/usr/bin/env bash
# Fuzzes the trace reader and the report builder (docs/fuzzing.md).
#   scripts/fuzz.sh SECONDS [JOBS]
#   scripts/fuzz.sh --build-only
# Builds the libFuzzer targets with clang into build-fuzz/ (CUMEMTRACE_FUZZ_BUILD_DIR),
# seeds them from the checked-in traces (fuzz/seeds/, test/analysis/failing-traces/),
# then runs each target for half of SECONDS with JOBS parallel workers (default 1), the
# two targets side by side (so half of SECONDS of wall time; each has a core where JOBS is 1).
# --build-only builds and runs nothing (scripts/test.sh builds while other tests run).
# Inputs that crash are written to fuzz/crashes/ (turn each into a test) and the run
# fails. The binaries (build-fuzz/bin/fuzz_reader, fuzz_report) link no library of this
# machine beyond glibc: copy them elsewhere and run, e.g.
#   fuzz_reader -jobs=64 -workers=64 -max_total_time=86400 -max_len=65536 corpus/ seeds/
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: scripts/fuzz.sh SECONDS [JOBS] | --build-only"
seconds=${1:?$usage}
jobs=${2:-1}
[[ "$seconds" == --build-only || ("$seconds" =~ ^[0-9]+$ && "$jobs" =~ ^[1-9][0-9]*$) ]] || { echo "$usage" >&2; exit 2; }
build="${CUMEMTRACE_FUZZ_BUILD_DIR:-$top/build-fuzz}"
# -O1 with line tables: what libFuzzer's and the sanitizers' documentation recommend, and a
# crash's stack needs no more; the build takes 136 s instead of 177 (-O2 -g) on two cores.
CC=clang CXX=clang++ cmake -S "$top" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" \
  -DCUMEMTRACE_FUZZ=ON -DBUILD_TESTING=OFF -DCUMEMTRACE_UNITY="$([[ "${CUMEMTRACE_UNITY:-1}" == 0 ]] && echo OFF || echo ON)" >/dev/null
ninja -C "$build" fuzz_reader fuzz_report >/dev/null
[[ "$seconds" == --build-only ]] && exit 0

seeds="$build/seeds"
rm -rf "$seeds" && mkdir -p "$seeds"
cp "$top"/fuzz/seeds/*.trace "$top"/test/analysis/failing-traces/*.trace "$seeds"/
crashes="$top/fuzz/crashes"
mkdir -p "$crashes"
status=0
pids=()
targets=(fuzz_reader fuzz_report)
for target in "${targets[@]}"; do
  corpus="$build/corpus-$target"
  # Each target runs in a folder of its own: several workers log to fuzz-N.log there.
  work="$build/run-$target"
  mkdir -p "$corpus" "$work"
  rm -f "$work"/fuzz-*.log
  echo "fuzz: $target for $((seconds / 2)) s with $jobs worker(s)" >&2
  # -max_len: the seeds include a 1 MiB trace; mutating inputs that long finds nothing
  # smaller ones would not, at a fraction of the speed.
  # One worker runs in this process; several are libFuzzer's -jobs/-workers.
  parallel=()
  ((jobs > 1)) && parallel=(-jobs="$jobs" -workers="$jobs")
  (cd "$work" && "$build/bin/$target" -max_total_time=$((seconds / 2)) "${parallel[@]}" \
    -max_len=65536 -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 -artifact_prefix="$crashes/$target-" \
    "$corpus" "$seeds" >"$build/$target.log" 2>&1) &
  pids+=($!)
done
for i in "${!targets[@]}"; do
  wait "${pids[i]}" || status=1
  grep -hE "^stat::number_of_executed_units" "$build/${targets[i]}.log" 2>/dev/null | tail -n 1 >&2 || true
done
if ((status)) || compgen -G "$crashes/*" >/dev/null; then
  echo "fuzz: FAILED; inputs in $crashes, logs in $build/*.log and $build/run-*/" >&2
  exit 1
fi
echo "fuzz: no crash" >&2
