#!/usr/bin/env bash
# Inside PyTorch's cache on the H200 (docs/validation.md, "Inside PyTorch's cache"): the
# blocks the preload library reads from PyTorch's caching allocator against PyTorch's own
# figures, in the default and expandable-segments modes; the tensor kept per step caught
# by check --max-growth at its Python line; an out-of-memory error of live tensors
# diagnosed `demand`; and cudaMallocAsync, whose allocator reports no blocks.
#   examples/h200/proofs/blocks_proof.sh OUTDIR
set -u
. "$(dirname "$0")/../proof_setup.sh" blocks "$@"
steps=${BLOCKS_STEPS:-24}
for mode in default expandable async; do
  case $mode in
    default) conf= ;;
    expandable) conf=expandable_segments:True ;;
    async) conf=backend:cudaMallocAsync ;;
  esac
  extra=()
  [[ $mode == default ]] && extra=(oom)
  echo "== $mode" >>"$LOG"
  PYTORCH_CUDA_ALLOC_CONF=$conf timeout 300 "$CLI" run -o "$WORK/$mode-%p.trace" -- \
    "$PY" "$h200/python/workloads/blocks_loop.py" "$WORK/$mode.jsonl" "$steps" "${extra[@]}" >>"$LOG" 2>&1
  echo "run exit $?" >>"$LOG"
  t=$(ls "$WORK/$mode"-*.trace | head -n 1)
  "$CLI" dump "$t" >"$WORK/$mode.dump" 2>>"$LOG"
  echo "block records: $(grep -c block-event "$WORK/$mode.dump")" >>"$LOG"
  grep -m2 block-source "$WORK/$mode.dump" | cut -c1-300 >>"$LOG"
  [[ $mode != async ]] && "$PY" "$h200/python/checks/blocks_compare.py" "$WORK/$mode.dump" "$WORK/$mode.jsonl" >>"$LOG" 2>&1
  echo "compare exit $?" >>"$LOG"
  "$CLI" check "$t" --max-growth 1MiB >>"$LOG" 2>&1
  echo "check exit $?" >>"$LOG"
  "$CLI" report --top 5 --frames 4 "$t" >"$OUT/blocks-$mode.txt" 2>&1
  "$CLI" report --json "$t" >"$WORK/$mode.json" 2>>"$LOG"
done
"$PY" - "$WORK" >>"$LOG" 2>&1 <<'PY'
import json, sys
for mode in ("default", "expandable", "async"):
    j = json.load(open(f"{sys.argv[1]}/{mode}.json"))
    b = j.get("blocks", {})
    print(mode, "blocks:", {k: b.get(k) for k in ("recorded", "version", "settings", "not_visible", "notes")})
    for d in b.get("devices", []):
        print("  device", d["device"], "allocations", d["allocations"], "frees", d["frees"], "peak", d["peak_allocated"],
              "end", d["end"])
        for s in d["sites"][:3]:
            print("   ", s["class"], s["growth_per_iteration"], s["python_frames"][:1], s["frames"][:1])
    for o in b.get("out_of_memory", []):
        print("  oom", o["cause"], o["request"], o["allocated"], o["reserved"], o["driver_refused"], o["summary"])
    print("  failures", [(f["diagnosis"]["cause"], f["size"]) for f in j.get("failed_allocations", [])])
PY
