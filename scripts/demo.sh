#!/usr/bin/env bash
# The main job (README): installs what is missing, builds, then traces a program.
#   On a machine with a GPU:  scripts/demo.sh -- CMD ARGS...   traces CMD and reports.
#   Without a GPU (or with no CMD): traces an example program against the simulated
#   driver in sim/ and prints its report.
#   Stdout carries the report and nothing else; progress (each step, the installs' and the
#   build's own lines) goes to stderr.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
echo "demo: 1/3 setting up: Debian packages, a PIC libunwind, the page's libraries" \
  "(the first run: several minutes; later runs: seconds)" >&2
"$top/scripts/setup.sh" >&2
build="${CUMEMTRACE_BUILD_DIR:-$top/build}"
echo "demo: 2/3 building cumemtrace into $build (the first run: a few minutes)" >&2
cmake -S "$top" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$build" cumemtrace cumemtrace_preload sim_cuda sim_cudart sim_nvml prog_runtime demo_oom >&2
echo "demo: 3/3 tracing" >&2
out="${CUMEMTRACE_DEMO_DIR:-$top/out}"
mkdir -p "$out"
# This run's traces only: a directory of its own, so traces of earlier runs in $out are
# never reported with it.
run_dir=$(mktemp -d "$out/run-$(date +%Y%m%d-%H%M%S)-XXXX")
status=0
if [[ "${1:-}" == "--" && $# -gt 1 ]]; then
  shift
  # The report matters most when CMD fails (an OOM): report, then exit with CMD's status.
  "$build/bin/cumemtrace" run -o "$run_dir/%h-%p.trace" -- "$@" || status=$?
else
  echo "demo: no GPU command given; tracing two programs of test/programs against the simulated driver" >&2
  # The example: a few allocations and a leak (prog_runtime), then an out-of-memory error
  # that PyTorch's cache and another process on the GPU explain together (demo_oom.cpp
  # sets up its 8 GiB device).
  LD_LIBRARY_PATH="$build/sim" SIMCUDA_CAPACITY=8589934592 \
    "$build/bin/cumemtrace" run -o "$run_dir/demo-basic-%p.trace" -- "$build/test/programs/prog_runtime" basic >/dev/null
  LD_LIBRARY_PATH="$build/sim" \
    "$build/bin/cumemtrace" run -o "$run_dir/demo-oom-%p.trace" -- "$build/test/programs/demo_oom" >/dev/null || true
fi
traces=("$run_dir"/*.trace)
if [[ ! -e "${traces[0]}" ]]; then
  echo "demo: the command wrote no trace (it never touched CUDA?) in $run_dir" >&2
  exit $((status ? status : 1))
fi
echo "demo: traces of this run are in $run_dir" >&2
"$build/bin/cumemtrace" report "${traces[@]}" || status=$((status ? status : $?))
exit "$status"
