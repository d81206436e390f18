#!/usr/bin/env bash
# Fuzzes the trace reader and the report builder (docs/fuzzing.md).
#   scripts/fuzz.sh SECONDS [JOBS]
# Builds the libFuzzer targets with clang into build-fuzz/ (CUMEMTRACE_FUZZ_BUILD_DIR),
# seeds them from the checked-in traces (fuzz/seeds/, test/analysis/failing-traces/),
# then runs each target for half of SECONDS with JOBS parallel workers (default 1).
# Inputs that crash are written to fuzz/crashes/ (turn each into a test) and the run
# fails. The binaries (build-fuzz/bin/fuzz_reader, fuzz_report) link no library of this
# machine beyond glibc: copy them elsewhere and run, e.g.
#   fuzz_reader -jobs=64 -workers=64 -max_total_time=86400 -max_len=65536 corpus/ seeds/
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:?usage: scripts/fuzz.sh SECONDS [JOBS]}
jobs=${2:-1}
[[ "$seconds" =~ ^[0-9]+$ && "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "usage: scripts/fuzz.sh SECONDS [JOBS]" >&2; exit 2; }
build="${CUMEMTRACE_FUZZ_BUILD_DIR:-$top/build-fuzz}"
CC=clang CXX=clang++ cmake -S "$top" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCUMEMTRACE_FUZZ=ON -DBUILD_TESTING=OFF -DCUMEMTRACE_UNITY="$([[ "${CUMEMTRACE_UNITY:-1}" == 0 ]] && echo OFF || echo ON)" >/dev/null
ninja -C "$build" fuzz_reader fuzz_report >/dev/null

seeds="$build/seeds"
rm -rf "$seeds" && mkdir -p "$seeds"
cp "$top"/fuzz/seeds/*.trace "$top"/test/analysis/failing-traces/*.trace "$seeds"/
crashes="$top/fuzz/crashes"
mkdir -p "$crashes"
status=0
for target in fuzz_reader fuzz_report; do
  corpus="$build/corpus-$target"
  mkdir -p "$corpus"
  rm -f "$build"/fuzz-*.log
  echo "fuzz: $target for $((seconds / 2)) s with $jobs worker(s)" >&2
  # -max_len: the seeds include a 1 MiB trace; mutating inputs that long finds nothing
  # smaller ones would not, at a fraction of the speed.
  # One worker runs in this process; several are libFuzzer's -jobs/-workers (each logs
  # to fuzz-N.log in $build).
  parallel=()
  ((jobs > 1)) && parallel=(-jobs="$jobs" -workers="$jobs")
  (cd "$build" && "$build/bin/$target" -max_total_time=$((seconds / 2)) "${parallel[@]}" \
    -max_len=65536 -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 -artifact_prefix="$crashes/$target-" \
    "$corpus" "$seeds" >"$build/$target.log" 2>&1) || status=1
  grep -hE "^stat::number_of_executed_units" "$build/$target.log" 2>/dev/null | tail -n 1 >&2 || true
done
if ((status)) || compgen -G "$crashes/*" >/dev/null; then
  echo "fuzz: FAILED; inputs in $crashes, logs in $build/*.log" >&2
  exit 1
fi
echo "fuzz: no crash" >&2
