#!/usr/bin/env bash
# The do-no-harm proof on a real GPU (docs/validation.md, "Graph captures and vfork"):
#   examples/h200/proofs/do_no_harm.sh OUTDIR
# 1. capture_graph.py untraced once, then 20 times under `cumemtrace run` with 10 ms
#    snapshots: every capture must end well.
# 2. compile_sizes.py (torch.compile reduce-overhead, dynamic, 8 sizes: compiler
#    subprocesses and CUDA graphs) under `cumemtrace run`: the trace must be complete, and
#    check_pytorch.py compares live libc10_cuda bytes with memory_reserved() after every size.
# Writes OUTDIR/do_no_harm.txt (everything) and OUTDIR/check_compile.txt.
. "$(dirname "$0")/../proof_setup.sh" do_no_harm "$@"
say() { echo "$*" | tee -a "$LOG"; }

say "== untraced capture"
timeout 120 "$PY" "$h200/python/workloads/capture_graph.py" 2>&1 | tail -n 3 | tee -a "$LOG"
ok=0
for i in $(seq 1 20); do
  line=$(CUMEMTRACE_SNAPSHOT_MS=10 timeout 120 "$CLI" run -o "$WORK/capture-$i-%p.trace" -- \
    "$PY" "$h200/python/workloads/capture_graph.py" 2>"$WORK/capture-$i.err" | tail -n 1)
  [[ $line == "capture ok" ]] && ok=$((ok + 1))
  say "traced capture $i: $line"
done
say "traced captures that ended well: $ok of 20 (CUMEMTRACE_SNAPSHOT_MS=10)"
t=$(ls "$WORK"/capture-20-*.trace 2>/dev/null | head -n 1)
[[ -n $t ]] && "$CLI" report --json "$t" | "$PY" -c '
import json, sys
r = json.load(sys.stdin)
d = [x for x in r["devices"] if x["device"] == 0][0]
print("capture 20 trace: complete", r["trace"]["complete"], "events", r["trace"]["events"],
      "peak", d["peak"]["device_bytes"], "graph_allocs", d["counts"].get("graph_allocs"))' | tee -a "$LOG"

say "== torch.compile reduce-overhead, dynamic, 8 sizes"
start=$(date +%s)
timeout 400 "$CLI" run -o "$WORK/compile-compile-%p.trace" -- \
  "$PY" "$h200/python/workloads/compile_sizes.py" "$WORK/compile.jsonl" compile >"$WORK/compile.out" 2>"$WORK/compile.err"
say "compile job exit $? in $(($(date +%s) - start)) s: $(tail -n 1 "$WORK/compile.out")"
grep -v '^\[' "$WORK/compile.err" | tail -n 5 | tee -a "$LOG"
ct=$(ls "$WORK"/compile-compile-*.trace 2>/dev/null | head -n 1)
[[ -n $ct ]] && "$CLI" report --json "$ct" | "$PY" -c '
import json, sys
r = json.load(sys.stdin)
print("compile trace: complete", r["trace"]["complete"], "events", r["trace"]["events"],
      "dropped", r["trace"]["events_dropped"])' | tee -a "$LOG"
"$PY" "$h200/python/checks/check_pytorch.py" --cli "$CLI" --trace-pattern "$WORK/compile-{run}-{pid}.trace" \
  "$WORK/compile.jsonl" >"$OUT/check_compile.txt" 2>&1
say "check_pytorch on the compile job: exit $?"
tail -n 25 "$OUT/check_compile.txt" | tee -a "$LOG"
