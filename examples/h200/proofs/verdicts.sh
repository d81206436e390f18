#!/usr/bin/env bash
# The verdicts on unmodified training loops (docs/validation.md section 19): no marks, no
# NVTX ranges, no cumemtrace call in the program, so the iterations must be found from the
# trace. For each allocator mode and loop of verdict_loop.py: trace it, then keep `report`
# (text), `check --max-leaked 0 --max-growth 0` and the report's JSON as a user gets them.
# Before those, the exactness check of section 1 once more (train.py in the three allocator
# modes, check_pytorch.py), since the tracer's ledger and its NVML reader changed.
#   examples/h200/proofs/verdicts.sh OUTDIR
# Writes at most 8 files into OUTDIR: verdicts.log, check_pytorch.txt, one .txt per loop in
# the default mode and cudaMallocAsync's (4), and verdicts.json (every report's JSON).
set -u
h200=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "$h200/../.." && pwd)
OUT=${1:?usage: $0 OUTDIR}
mkdir -p "$OUT"
CLI=${CUMEMTRACE:-$top/build/bin/cumemtrace}
PY=${PYTHON:-python3}
WORK=$(mktemp -d /tmp/cumemtrace-verdicts.XXXXXX)
log=$OUT/verdicts.log
: >"$log"

# Exactness: train.py traced in each allocator mode, PyTorch's figures at each checkpoint
# (VERDICTS_SKIP_EXACT=1 leaves it out, for a second look at the verdicts alone).
[[ ${VERDICTS_SKIP_EXACT:-0} == 1 ]] || {
train=("$PY" "$h200/python/workloads/train.py" --log "$WORK/train.jsonl" --steps "${TRAIN_STEPS:-20}")
for mode in default expandable async; do
  case $mode in
    default) conf= ;;
    expandable) conf=expandable_segments:True ;;
    async) conf=backend:cudaMallocAsync ;;
  esac
  echo "== train $mode" >>"$log"
  PYTORCH_CUDA_ALLOC_CONF=$conf timeout 180 "$CLI" run -o "$WORK/train-$mode-%p.trace" -- \
    "${train[@]}" --mode "$mode" --run "$mode" >>"$log" 2>&1
  echo "exit $?" >>"$log"
done
timeout 180 "$PY" "$h200/python/checks/check_pytorch.py" --cli "$CLI" --trace-pattern "$WORK/train-{run}-{pid}.trace" \
  "$WORK/train.jsonl" >"$OUT/check_pytorch.txt" 2>&1
echo "check_pytorch exit $?" >>"$log"
}

# VERDICTS_SKIP_LOOPS=1 leaves the loops out: the exactness check alone.
loops=(normal loss-graph weights)
[[ ${VERDICTS_SKIP_LOOPS:-0} == 1 ]] && loops=()
for conf in default backend:cudaMallocAsync; do
  for mode in "${loops[@]}"; do
    name=$mode-${conf//:/-}
    c=$conf
    [[ $c == default ]] && c=
    echo "== $name" >>"$log"
    PYTORCH_CUDA_ALLOC_CONF=$c timeout 180 "$CLI" run -o "$WORK/$name-%p.trace" -- \
      "$PY" "$h200/python/workloads/verdict_loop.py" "$mode" 16 >>"$log" 2>&1
    echo "run exit $?" >>"$log"
    t=$(ls "$WORK/$name"-*.trace 2>/dev/null | head -n 1)
    [[ -n $t ]] || continue
    timeout 120 "$CLI" report --json "$t" >"$WORK/$name.json" 2>>"$log"
    # The weights loop's text is in the JSON; the two training loops' text comes back.
    [[ $mode == weights ]] && continue
    {
      timeout 120 "$CLI" report --top 5 --frames 8 "$t" 2>&1
      echo "== check --max-leaked 0 --max-growth 0"
      timeout 120 "$CLI" check "$t" --max-leaked 0 --max-growth 0 2>&1
      echo "check exit $?"
    } >"$OUT/$name.txt"
  done
done
"$PY" - "$WORK" "$OUT/verdicts.json" <<'PY'
import glob, json, os, sys
out = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    try:
        out[os.path.basename(f)] = json.load(open(f))
    except Exception as e:  # an empty or cut file says so instead of stopping the rest
        out[os.path.basename(f)] = {"error": str(e)}
json.dump(out, open(sys.argv[2], "w"))
PY
echo "traces in $WORK" >>"$log"
