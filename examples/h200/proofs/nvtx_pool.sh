#!/usr/bin/env bash
# A pool that tells NVTX's memory extension what it hands out, on the real driver and NVTX
# loader (docs/validation.md section 24): test/integration/programs/nvtx_pool.c built with
# nvcc against the toolkit's nvtx3 headers, run untraced, under `cumemtrace run`, and with
# compute-sanitizer's NVTX injection both outside `run` (chained) and inside it.
#   examples/h200/proofs/nvtx_pool.sh OUTDIR   (env: CUMEMTRACE, NVCC)
. "$(dirname "$0")/../proof_setup.sh" nvtx_pool "$@"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
export PATH=$PATH:/usr/local/cuda/bin
{
  "$NVCC" -O1 -g -o "$WORK/nvtx_pool" -x c "$top/test/integration/programs/nvtx_pool.c" -lcudart || exit 1
  echo "== untraced"
  "$WORK/nvtx_pool"; echo "exit $?"
  echo "== cumemtrace run"
  mkdir -p "$WORK/run"
  "$CLI" run -o "$WORK/run/t-%p.trace" -- "$WORK/nvtx_pool"; echo "exit $?"
  t=$(ls "$WORK"/run/*.trace | head -1)
  "$CLI" report "$t" | sed -n '/^Inside pools/,$p'
  "$CLI" report --json "$t" >"$OUT/nvtx_pool.json"
  cp "$t" "$OUT/nvtx_pool.trace"
  if command -v compute-sanitizer >/dev/null; then
    echo "== compute-sanitizer outside cumemtrace run (run chains to its NVTX injection, if it set one)"
    mkdir -p "$WORK/cs1"
    compute-sanitizer --tool memcheck --print-limit 5 "$CLI" run -o "$WORK/cs1/t-%p.trace" -- "$WORK/nvtx_pool" 2>&1 | tail -15
    t=$(ls "$WORK"/cs1/*.trace 2>/dev/null | head -1)
    [ -n "$t" ] && "$CLI" report --json "$t" | "$PY" -c 'import json,sys; p=json.load(sys.stdin).get("pools"); print("pools:", None if p is None else [(h["name"], h["peak"]["bytes"], h["end"]["bytes"], [s["class"] for s in h["sites"]]) for h in p["heaps"]])'
    echo "== compute-sanitizer inside cumemtrace run"
    mkdir -p "$WORK/cs2"
    "$CLI" run -o "$WORK/cs2/t-%p.trace" -- compute-sanitizer --tool memcheck --print-limit 5 "$WORK/nvtx_pool" 2>&1 | tail -15
    for t in "$WORK"/cs2/*.trace; do
      [ -f "$t" ] && "$CLI" report --json "$t" | "$PY" -c 'import json,sys; p=json.load(sys.stdin).get("pools"); print("pools:", None if p is None else [(h["name"], h["peak"]["bytes"], h["end"]["bytes"]) for h in p["heaps"]])'
    done
  else
    echo "== no compute-sanitizer on PATH"
  fi
} >>"$LOG" 2>&1
rm -rf "$WORK"
cat "$LOG"
