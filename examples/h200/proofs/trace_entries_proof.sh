#!/usr/bin/env bash
# PyTorch's trace entries on the H200 (docs/validation.md, "PyTorch's trace entries"): the
# vtable slot the tracer calls is attachAllocatorTraceTracker (by libc10_cuda.so's own
# symbol table, where the wheel keeps one); the requested bytes, streams, pools and pending
# frees the trace holds equal memory_stats() and memory_snapshot(), in the default and
# expandable-segments modes; the report's words on a free that waits; the memviz export of
# the trace's end equals the snapshot block for block and draws in PyTorch's _memory_viz.
#   examples/h200/proofs/trace_entries_proof.sh OUTDIR
set -u
. "$(dirname "$0")/../proof_setup.sh" trace_entries "$@"
steps=${ENTRIES_STEPS:-8}
lib=$("$PY" -c 'import torch,os;print(os.path.join(os.path.dirname(torch.__file__),"lib","libc10_cuda.so"))')
sym=$(readelf -Ws "$lib" | awk '$8 ~ /NativeCachingAllocator27attachAllocatorTraceTracker/ {print $2; exit}')
echo "attachAllocatorTraceTracker in the symbol table: 0x$sym" >>"$LOG"
"$PY" - "$lib" "$sym" >>"$LOG" 2>&1 <<'PY'
import ctypes, sys, torch
torch.empty(1, device="cuda")
lib = ctypes.CDLL(sys.argv[1])
obj = ctypes.c_void_p.in_dll(lib, "_ZN3c104cuda20CUDACachingAllocator9allocatorE").value
vtable = ctypes.c_void_p.from_address(obj).value
slot = ctypes.c_void_p.from_address(vtable + 44 * 8).value
base = min(int(l.split("-")[0], 16) for l in open("/proc/self/maps") if l.rstrip().endswith("libc10_cuda.so"))
print(f"vtable slot 44: base+0x{slot - base:x}; symbol table: 0x{int(sys.argv[2], 16):x}; "
      f"{'SAME' if slot - base == int(sys.argv[2], 16) else 'DIFFERENT'}")
PY
for mode in default expandable; do
  case $mode in
    default) conf= ;;
    expandable) conf=expandable_segments:True ;;
  esac
  echo "== $mode" >>"$LOG"
  PYTORCH_CUDA_ALLOC_CONF=$conf timeout 300 "$CLI" run -o "$WORK/$mode-%p.trace" -- \
    "$PY" "$h200/python/workloads/trace_entries_loop.py" "$WORK/$mode.jsonl" "$steps" exit >>"$LOG" 2>&1
  echo "run exit $?" >>"$LOG"
  t=$(ls "$WORK/$mode"-*.trace | head -n 1)
  "$CLI" dump "$t" >"$WORK/$mode.dump" 2>>"$LOG"
  grep block-source "$WORK/$mode.dump" | cut -c1-300 >>"$LOG"
  "$PY" "$h200/python/checks/trace_entries_compare.py" "$WORK/$mode.dump" "$WORK/$mode.jsonl" >>"$LOG" 2>&1
  echo "compare exit $?" >>"$LOG"
  "$CLI" report --top 5 --frames 4 "$t" >"$OUT/entries-$mode.txt" 2>&1
  "$CLI" export --format memviz "$t" -o "$WORK/$mode.pickle" >>"$LOG" 2>&1
  "$PY" "$h200/python/checks/memviz_snapshot_compare.py" "$WORK/$mode.pickle" "$WORK/$mode.jsonl" >>"$LOG" 2>&1
  echo "memviz compare exit $?" >>"$LOG"
  "$PY" "$h200/python/checks/memviz_check.py" "$WORK/$mode.pickle" "$WORK/viz-$mode" >>"$LOG" 2>&1
  echo "memviz_check exit $?" >>"$LOG"
  "$PY" - "$WORK/$mode.pickle" >>"$LOG" 2>&1 <<'PY'
import collections, pickle, sys
d = pickle.load(open(sys.argv[1], "rb"))
states = collections.Counter(b["state"] for s in d["segments"] for b in s["blocks"])
acts = collections.Counter(e["action"] for tr in d["device_traces"] for e in tr)
print("memviz blocks:", dict(states), "actions:", dict(acts))
try:
    from torch.cuda import _memory_viz
    print("memory_viz segments text:", len(_memory_viz.segsum(d).splitlines()), "lines")
except Exception as e:  # the check is PyTorch's own reader
    print("memory_viz:", type(e).__name__, e)
PY
done
cp "$WORK"/*.jsonl "$OUT"/ 2>/dev/null
