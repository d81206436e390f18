#!/usr/bin/env bash
# The main job (README): installs what is missing, builds, then traces a program.
#   On a machine with a GPU:  scripts/demo.sh -- CMD ARGS...   traces CMD and reports.
#   Without a GPU (or with no CMD): traces an example program against the simulated
#   driver in sim/ and prints its report.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/setup.sh"
build="${CUMEMTRACE_BUILD_DIR:-$top/build}"
cmake -S "$top" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$build" cumemtrace cumemtrace_preload sim_cuda sim_cudart sim_nvml prog_runtime >/dev/null
out="${CUMEMTRACE_DEMO_DIR:-$top/out}"
mkdir -p "$out"
if [[ "${1:-}" == "--" && $# -gt 1 ]]; then
  shift
  "$build/bin/cumemtrace" run -o "$out/%h-%p.trace" -- "$@"
else
  echo "demo: no GPU command given; tracing test/programs/prog_runtime against the simulated driver" >&2
  rm -f "$out"/demo-*.trace
  # The example: a few allocations, a leak, then an out-of-memory error on an 8 GiB device.
  LD_LIBRARY_PATH="$build/sim" SIMCUDA_CAPACITY=8589934592 \
    "$build/bin/cumemtrace" run -o "$out/demo-basic-%p.trace" -- "$build/test/programs/prog_runtime" basic >/dev/null
  LD_LIBRARY_PATH="$build/sim" SIMCUDA_CAPACITY=8589934592 \
    "$build/bin/cumemtrace" run -o "$out/demo-oom-%p.trace" -- "$build/test/programs/prog_runtime" oom >/dev/null
fi
"$build/bin/cumemtrace" report "$out"/*.trace
