#!/usr/bin/env bash
# Issue 28 §6 on the H200: python/workloads/startup_budget.py (a serving engine's start: weights, a
# profiling forward, CUDA graphs, a KV cache sized by mem_get_info subtraction) under
# `cumemtrace run`, then `report --by category` at its peak and end, with two rules of the
# program's own naming its KV cache and its graph capture (user rules go before the
# defaults). Writes OUTDIR/startup.jsonl (the program's readings and estimates),
# OUTDIR/report.txt, OUTDIR/report.json and OUTDIR/startup_budget.txt (stderr, exit codes).
#   examples/h200/proofs/startup_budget.sh OUTDIR
. "$(dirname "$0")/../proof_setup.sh" startup_budget "$@"
printf '%s\n' 'kv_cache    startup_budget\.py:allocate_kv_cache' 'graph_capture startup_budget\.py:capture_graphs' \
  >"$WORK/rules.txt"
timeout 300 "$CLI" run -o "$WORK/startup-%p.trace" -- "$PY" "$h200/python/workloads/startup_budget.py" >"$OUT/startup.jsonl" \
  2>"$LOG"
echo "run exit $?" >>"$LOG"
t=$(ls "$WORK"/startup-*.trace | head -n 1)
timeout 120 "$CLI" report --categories "$WORK/rules.txt" "$t" >"$OUT/report.txt" 2>&1
timeout 120 "$CLI" report --categories "$WORK/rules.txt" --json "$t" >"$OUT/report.json" 2>>"$LOG"
rm -rf "$WORK"
