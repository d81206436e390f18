#!/usr/bin/env bash
# Instructions per allocation event that stacks add (issue 26), counted by callgrind
# (counts repeat exactly; times on this shared 2-core VM do not). Three workloads:
#   native:  bench/alloc_loop --frames 30 (driver API), CUMEMTRACE_DEPTH 32 and 0, a repeated
#            stack and a new one per pair (--unique); no Python in the process
#   python:  bench/python_frames.py 20 frames deep (Debian's python3 through ctypes, the
#            runtime API), CUMEMTRACE_DEPTH=32 with Python frames, repeated and unique paths
#   blocks:  the same 20 frames, each pair a block taken from and given back to the simulated
#            PyTorch caching allocator (sim/torch): a tensor's two events, no driver call;
#            its tracker figure is on_torch_memory_usage's (the hook's whole body)
# Each figure is the difference between a traced and an untraced run of the same loop,
# divided by the calls made; python's also between two loop lengths, to cancel the
# interpreter's start-up (PYTHONHASHSEED=0 makes it repeat). An allocation carries the
# stacks, a free does not (CUMEMTRACE_FREE_STACKS=0): "per pair" is one event with stacks.
#
#   bench/run_stack_instructions.sh [BUILD_DIR] [LIBRARY=BUILD_DIR/lib/libcumemtrace.so]
#   (env: PAIRS=4000, PYTHON=/usr/bin/python3)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
lib=${2:-$build/lib/libcumemtrace.so}
python=${PYTHON:-/usr/bin/python3}
pairs=${PAIRS:-4000}
export LD_LIBRARY_PATH="$build/sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" PYTHONHASHSEED=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Instructions of the whole run, and of track() (the tracker's part of each intercepted
# call, stacks included, inclusive; 0 untraced). The whole run's count moves by a few
# hundred per pair between identical runs (the writer thread's rounds follow the clock);
# track()'s repeats to within a few.
count() {
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$@" >/dev/null 2>"$tmp/cg.err"
  rm -f "$tmp"/t.trace
  local total track
  total=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/cg.err" | tail -1)
  track=$(callgrind_annotate --inclusive=yes "$tmp/cg.out" 2>/dev/null |
          sed -n "s/^ *\([0-9,]*\) .*interpose::${TRACKED:-track(cumemtrace}.*/\1/p" | head -1 | tr -d ,)
  echo "$total ${track:-0}"
}
traced() { LD_PRELOAD="$lib" CUMEMTRACE_OUTPUT="$tmp/t.trace" "$@"; }
# "a b" "c d" -> "a-c b-d"
minus() { local a b c d; read -r a b <<<"$1"; read -r c d <<<"$2"; echo "$((a - c)) $((b - d))"; }
# added instructions per pair, whole run and track(): traced "t1 k1", plain "t0 k0", pairs
per() { local t k t0 k0; read -r t k <<<"$1"; read -r t0 k0 <<<"$2"; echo "$(((t - t0) / $3)) / $((k / $3))"; }

echo "| workload | stacks | plain instr/pair | added/pair, whole run / track(): DEPTH=0, no Python | the same, stacks on |"
echo "|---|---|---:|---:|---:|"
for stacks in repeated unique; do
  args=(--frames 30 --pairs "$pairs" --reps 1)
  [[ $stacks == unique ]] && args+=(--unique)
  made=$((2 * pairs))  # the warm-up repetition and one timed
  plain=$(count "$build/bench/alloc_loop" "${args[@]}")
  d0=$(CUMEMTRACE_DEPTH=0 traced count "$build/bench/alloc_loop" "${args[@]}")
  d32=$(CUMEMTRACE_DEPTH=32 traced count "$build/bench/alloc_loop" "${args[@]}")
  echo "| native, 32 frames | $stacks | $((${plain% *} / made)) | $(per "$d0" "$plain" $made) | $(per "$d32" "$plain" $made) |"
done
script=$top/bench/python_frames.py
runtime=$build/sim/libcudart.so.13
for stacks in repeated unique; do
  mode=; [[ $stacks == unique ]] && mode=unique
  # python_frames.py makes PAIRS/10 warm-up pairs and REPS*PAIRS timed ones.
  short=$pairs long=$((3 * pairs))
  made=$(((long + long / 10) - (short + short / 10)))
  run() { count "$python" "$script" "$runtime" 20 "$1" 1 $mode; }
  plain=$(minus "$(run $long)" "$(run $short)")
  d0=$(minus "$(CUMEMTRACE_DEPTH=0 CUMEMTRACE_PYTHON=0 traced run $long)" \
             "$(CUMEMTRACE_DEPTH=0 CUMEMTRACE_PYTHON=0 traced run $short)")
  on=$(minus "$(CUMEMTRACE_DEPTH=32 traced run $long)" "$(CUMEMTRACE_DEPTH=32 traced run $short)")
  echo "| python, 20 + 32 native | $stacks | $((${plain% *} / made)) | $(per "$d0" "$plain" $made) | $(per "$on" "$plain" $made) |"
done
# A tensor's events inside PyTorch's cache: the usage-report hook is the whole cost.
torch_lib=$build/sim/torch/lib/libc10_cuda.so
short=$pairs long=$((3 * pairs))
made=$(((long + long / 10) - (short + short / 10)))
run() { count "$python" "$script" "$torch_lib" 20 "$1" 1 blocks; }
plain=$(minus "$(run $long)" "$(run $short)")
export TRACKED=on_torch_memory_usage
d0=$(minus "$(CUMEMTRACE_DEPTH=0 CUMEMTRACE_PYTHON=0 traced run $long)" \
           "$(CUMEMTRACE_DEPTH=0 CUMEMTRACE_PYTHON=0 traced run $short)")
on=$(minus "$(CUMEMTRACE_DEPTH=32 traced run $long)" "$(CUMEMTRACE_DEPTH=32 traced run $short)")
echo "| blocks, 20 Python + native | repeated | $((${plain% *} / made)) | $(per "$d0" "$plain" $made) | $(per "$on" "$plain" $made) |"
