#!/usr/bin/env bash
# The CI gate on a real GPU (docs/validation.md), in one call:
#   examples/h200/proofs/ci_gate.sh OUTDIR
# growth_steps.py normal and leak under cumemtrace run: the growth section, the JSON
# growth sites, check --max-growth; then the pytest plugin on pytest_gpu/. Writes
# OUTDIR/ci_gate.txt.
. "$(dirname "$0")/../proof_setup.sh" ci_gate "$@"
for mode in normal leak; do
  echo "== growth_steps.py $mode" >>"$LOG"
  "$CLI" run -o "$WORK/g-$mode-%p.trace" -- "$PY" "$h200/python/workloads/growth_steps.py" "$mode" >>"$LOG" 2>&1
  t=$(ls "$WORK"/g-$mode-*.trace | head -n 1)
  "$CLI" report "$t" | sed -n '/^Growth across/,/^$/p' >>"$LOG"
  "$CLI" report --json "$t" >"$OUT/growth-$mode.json"
  "$CLI" check "$t" --max-growth 0 >>"$LOG" 2>&1
  echo "check --max-growth 0: exit $?" >>"$LOG"
done
echo "== pytest plugin with PyTorch" >>"$LOG"
(cd "$h200" && PYTHONPATH="${CUMEMTRACE_PYTHON_DIR:-$top/python}" "$CLI" run -o "$WORK/pt-%p.trace" -- \
  "$PY" -m pytest -p cumemtrace.pytest_plugin -p no:cacheprovider -q -rA pytest_gpu) >>"$LOG" 2>&1
echo "pytest exit $?" >>"$LOG"
