#!/usr/bin/env bash
# The traces that the HTML report and the exports are checked on (issue 11), made on the
# GPU: PyTorch training (train.py, default allocator), CuPy and JAX (frameworks.py). Each
# trace is exported to memviz, chrome and folded; the memviz snapshot of the training
# run is opened with PyTorch's own torch.cuda._memory_viz (memviz_check.py). The traces
# are copied into OUTDIR so that `cumemtrace html` and the browser test can run on them
# elsewhere.
#   examples/h200/proofs/views.sh OUTDIR      (env: PYTHON, CUMEMTRACE, CUMEMTRACE_LIB, STEPS=20)
set -u
h200=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "$h200/../.." && pwd)
out=${1:?usage: views.sh OUTDIR}
mkdir -p "$out"
PY=${PYTHON:-python3} CLI=${CUMEMTRACE:-$top/build/bin/cumemtrace} LIB=${CUMEMTRACE_LIB:-$top/build/lib/libcumemtrace.so}
steps=${STEPS:-20}
work=$(mktemp -d)
trace() {  # NAME CMD...: runs CMD traced, the trace to OUTDIR/NAME.trace
  local name=$1; shift
  LD_PRELOAD=$LIB CUMEMTRACE_OUTPUT="$out/$name.trace" "$@" >"$work/$name.out" 2>"$work/$name.err"
  echo "== $name: exit $? ($(stat -c %s "$out/$name.trace" 2>/dev/null) B of trace)"
  tail -2 "$work/$name.err"
}
{
  trace train "$PY" "$h200/python/workloads/train.py" --steps "$steps" --log "$work/train.jsonl"
  trace cupy "$PY" "$h200/python/workloads/frameworks.py" cupy "$work/fw.jsonl"
  trace jax "$PY" "$h200/python/workloads/frameworks.py" jax "$work/fw.jsonl"
  for name in train cupy jax; do
    t=$out/$name.trace
    [[ -s $t ]] || continue
    "$CLI" export --format memviz "$t" -o "$out/$name.pickle" && echo "memviz $name: $(stat -c %s "$out/$name.pickle") B"
    "$CLI" export --format chrome "$t" -o "$out/$name.chrome.json" && echo "chrome $name: $(stat -c %s "$out/$name.chrome.json") B"
    "$CLI" export --format folded --at peak "$t" -o "$out/$name.folded" && echo "folded $name: $(wc -l <"$out/$name.folded") stacks"
    "$PY" - "$out/$name.chrome.json" <<'PY'
import json, sys
text = open(sys.argv[1]).read().rstrip().rstrip(",")
events = json.loads(text if text.endswith("]") else text + "]")
print("chrome:", len(events), "events,", sum(e.get("ph") == "C" for e in events), "counter samples")
PY
  done
  mkdir -p "$out/memviz-train"
  "$PY" "$h200/python/checks/memviz_check.py" "$out/train.pickle" "$out/memviz-train"
  echo "memviz_check exit $?"
} 2>&1 | tee "$out/views.txt"
rm -rf "$work"
