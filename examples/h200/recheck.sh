#!/usr/bin/env bash
# A recheck of the library as submitted on a real GPU, in one call (docs/validation.md):
#   examples/h200/recheck.sh OUTDIR
# do_no_harm.sh and post_mortem.sh again; PyTorch's NVTX steps as marks; and the cost of a
# sampled peak (bench/sampled_peak.cpp, built here with nvcc), traced and untraced in
# three interleaved rounds. Writes OUTDIR/recheck.txt.
. "$(dirname "$0")/proof_setup.sh" recheck "$@"
LIB=$(cd "$(dirname "$CLI")/../lib" && pwd)/libcumemtrace.so
bash "$h200/proofs/do_no_harm.sh" "$OUT/noharm" >>"$LOG" 2>&1
bash "$h200/proofs/post_mortem.sh" "$OUT/pm" >>"$LOG" 2>&1
echo "== NVTX steps from PyTorch" >>"$LOG"
"$CLI" run -o "$WORK/nvtx-%p.trace" -- "$PY" "$h200/python/workloads/nvtx_steps.py" >>"$LOG" 2>&1
t=$(ls "$WORK"/nvtx-*.trace | head -n 1)
echo "marks in the trace: $("$CLI" dump "$t" | grep -c 'mark t=.* step')" >>"$LOG"
"$CLI" dump "$t" | grep 'mark t=' | head -n 5 >>"$LOG"
echo "== sampled peak cost (ns per allocation; 3 interleaved rounds)" >>"$LOG"
nvcc -O2 -o "$WORK/sampled_peak" "$top/bench/sampled_peak.cpp" >>"$LOG" 2>&1
for round in 1 2 3; do
  echo "untraced: $("$WORK/sampled_peak")" >>"$LOG"
  echo "traced:   $(CUMEMTRACE_OUTPUT="$WORK/sp-%p.trace" LD_PRELOAD="$LIB" "$WORK/sampled_peak")" >>"$LOG"
done
