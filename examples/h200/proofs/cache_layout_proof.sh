#!/usr/bin/env bash
# Inside PyTorch's cache, one level down (docs/validation.md, "Inside PyTorch's cache: free
# blocks and loops without marks"): the free blocks the report finds between the live
# blocks against torch.cuda.memory_snapshot() of the same state, in the default and
# expandable-segments modes, on a loop with no NVTX range whose iterations must be found
# from the blocks, and the tensor kept per step caught by check --max-growth.
#   examples/h200/proofs/cache_layout_proof.sh OUTDIR
set -u
. "$(dirname "$0")/../proof_setup.sh" cache_layout "$@"
steps=${BLOCKS_STEPS:-24}
for mode in default expandable; do
  conf=
  [[ $mode == expandable ]] && conf=expandable_segments:True
  echo "== $mode" >>"$LOG"
  PYTORCH_CUDA_ALLOC_CONF=$conf timeout 300 "$CLI" run -o "$WORK/$mode-%p.trace" -- \
    "$PY" "$h200/python/workloads/blocks_loop.py" "$WORK/$mode.jsonl" "$steps" nomark exit >>"$LOG" 2>&1
  echo "run exit $?" >>"$LOG"
  t=$(ls "$WORK/$mode"-*.trace | head -n 1)
  "$CLI" report --json "$t" >"$WORK/$mode.json" 2>>"$LOG"
  "$PY" "$h200/python/checks/cache_layout_compare.py" "$WORK/$mode.json" "$WORK/$mode.jsonl" >>"$LOG" 2>&1
  echo "compare exit $?" >>"$LOG"
  "$CLI" check "$t" --max-growth 1MiB >>"$LOG" 2>&1
  echo "check exit $?" >>"$LOG"
  "$CLI" report --top 5 --frames 4 "$t" >"$OUT/cache-layout-$mode.txt" 2>&1
done
