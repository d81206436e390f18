#!/usr/bin/env bash
# The post-mortem proof on a real GPU (docs/validation.md, "Post-mortem"):
#   examples/h200/proofs/post_mortem.sh OUTDIR
# Runs each scenario of oom_kinds.py (and JAX's default preallocation) under `cumemtrace
# run`, then prints, per trace, each failed allocation's diagnosis and the NVML split at the
# peak with whether it is of one moment. Writes OUTDIR/post_mortem.txt and the text reports.
. "$(dirname "$0")/../proof_setup.sh" post_mortem "$@"
summary() { "$CLI" report --json "$1" | "$PY" "$h200/python/checks/pm_summary.py"; }
run() {
  local name=$1
  shift
  echo "== $name" | tee -a "$LOG"
  timeout 240 env "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
  echo "  exit $?: $(tail -n 2 "$WORK/$name.out" | tr '\n' ' ')" | tee -a "$LOG"
  local t
  t=$(ls -t "$WORK"/$name-*.trace 2>/dev/null | tail -n 1)
  if [[ -n $t ]]; then
    summary "$t" | tee -a "$LOG"
    "$CLI" report "$t" >"$OUT/report-$name.txt" 2>&1
  else
    echo "  no trace" | tee -a "$LOG"
  fi
}
run cached "$CLI" run -o "$WORK/cached-%p.trace" -- "$PY" "$h200/python/workloads/oom_kinds.py" cached
run pool PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync "$CLI" run -o "$WORK/pool-%p.trace" -- "$PY" "$h200/python/workloads/oom_kinds.py" pool
run other "$CLI" run -o "$WORK/other-%p.trace" -- "$PY" "$h200/python/workloads/oom_kinds.py" other
run peak15 "$CLI" run -o "$WORK/peak15-%p.trace" -- "$PY" "$h200/python/workloads/oom_kinds.py" peak15
run jax "$CLI" run -o "$WORK/jax-%p.trace" -- "$PY" -c 'import jax, jax.numpy as jnp; print(float(jnp.ones(1000).sum()))'
