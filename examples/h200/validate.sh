#!/usr/bin/env bash
# The proof of cumemtrace on a real GPU, in one command (docs/validation.md says what each
# step shows and how to read the result):
#
#   examples/h200/validate.sh OUTDIR
#
# Needs, on the GPU machine: the prebuilt build/bin/cumemtrace and build/lib/libcumemtrace.so
# (copied from the build machine), nvcc, and a python3 with PyTorch (CUDA) on PATH. Nothing
# is downloaded or installed. The CUDA C++ programs are compiled here, with nvcc's default
# static cudart, because binaries built elsewhere may not run here.
#
# Writes 7 files into OUTDIR (flat): validate.log (every step: command, exit status, time,
# stderr), train.jsonl (PyTorch checkpoints and step times of all training runs),
# check_pytorch.txt, programs.txt, oom-report.txt, summary.json, summary.md.
# Traces and build outputs stay in a scratch folder outside OUTDIR (they can be large).
#
# Every step runs under `timeout`, each step runs whatever happened before it, and the
# whole script keeps within VALIDATE_BUDGET_S (default 450 s): a step that would start
# with less than 15 s left is skipped and says so. Exit status: 0 when the summary was
# written (read it for the verdicts), 1 when it could not be.
#
# Environment (all optional):
#   CUMEMTRACE          the CLI (default: <repo>/build/bin/cumemtrace)
#   PYTHON              python with torch (default: python3)
#   NVCC                default: nvcc on PATH, else /usr/local/cuda/bin/nvcc
#   VALIDATE_COMPILE    compile command before SRC -o BIN (default: "$NVCC -O2 -g")
#   VALIDATE_LINK       words after SRC -o BIN (default: none)
#   VALIDATE_WORK       scratch folder (default: a fresh /tmp/cumemtrace-validate.XXXXXX)
#   VALIDATE_BUDGET_S   seconds for everything (default 450)
#   TRAIN_STEPS         steps per training run (default 60)
#   VALIDATE_SKIP_HISTORY=1  skip the _record_memory_history comparison run
set -u

h200=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$h200/../.." && pwd)
if [[ $# -ne 1 ]]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
mkdir -p "$1" || exit 1
OUT=$(cd "$1" && pwd)
CLI=${CUMEMTRACE:-$top/build/bin/cumemtrace}
PY=${PYTHON:-python3}
if [[ -z ${NVCC:-} ]]; then
  NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
fi
COMPILE=${VALIDATE_COMPILE:-"$NVCC -O2 -g"}
LINK=${VALIDATE_LINK:-}
WORK=${VALIDATE_WORK:-$(mktemp -d /tmp/cumemtrace-validate.XXXXXX)}
BUDGET=${VALIDATE_BUDGET_S:-450}
STEPS=${TRAIN_STEPS:-60}
LOG=$OUT/validate.log
mkdir -p "$WORK/bin" || exit 1
rm -f "$OUT"/{validate.log,train.jsonl,check_pytorch.txt,programs.txt,oom-report.txt,summary.json,summary.md}
: >"$WORK/steps.tsv"
start=$(date +%s)

say() {
  printf '[%4ss] %s\n' "$(($(date +%s) - start))" "$*" | tee -a "$LOG" >&2
}

# step NAME LIMIT_S STDOUT CMD...: runs CMD under timeout (LIMIT_S, or what is left of the
# budget), its stdout to the file STDOUT ("-": into the log), its stderr into the log.
# Appends "NAME<TAB>STATUS<TAB>SECONDS" to steps.tsv; STATUS is the exit status,
# "timeout" or "skipped". Never fails: the next step runs regardless.
step() {
  local name=$1 limit=$2 out=$3
  shift 3
  local left=$((BUDGET - ($(date +%s) - start)))
  if ((left < 15)); then
    say "SKIP $name: time budget of ${BUDGET}s spent"
    printf '%s\tskipped\t0\n' "$name" >>"$WORK/steps.tsv"
    return 0
  fi
  ((limit > left - 5)) && limit=$((left - 5))
  say "RUN  $name (limit ${limit}s): $*"
  printf -- '----- %s: output -----\n' "$name" >>"$LOG"
  local t0 rc
  t0=$(date +%s%N)
  if [[ $out == - ]]; then
    timeout -k 10 "$limit" "$@" >>"$LOG" 2>&1
  else
    timeout -k 10 "$limit" "$@" >"$out" 2>>"$LOG"
  fi
  rc=$?
  local secs
  secs=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  local status=$rc
  ((rc == 124 || rc == 137)) && status=timeout
  say "DONE $name: status $status in ${secs}s"
  printf '%s\t%s\t%s\n' "$name" "$status" "$secs" >>"$WORK/steps.tsv"
  return 0
}

# The newest file matching a glob (unquoted on purpose: it is the pattern), or nothing.
# shellcheck disable=SC2012,SC2086  # our own file names: no spaces, no odd characters
newest() { ls -t $1 2>/dev/null | head -n1; }

say "cumemtrace validation: out $OUT, scratch $WORK, budget ${BUDGET}s"

# --- 0. where we are ------------------------------------------------------------------
{
  echo "host: $(hostname) $(uname -srm)"
  echo "glibc: $(ldd --version 2>&1 | head -n1)"
  echo "repo: $top"
  echo "cli: $CLI"
  ls -l "$CLI" "$top/build/lib/libcumemtrace.so" 2>&1
  echo "nvcc: $($NVCC --version 2>&1 | tail -n2 | head -n1)"
  echo "python: $(command -v "$PY") $($PY --version 2>&1)"
  echo "PYTORCH_CUDA_ALLOC_CONF in the environment: ${PYTORCH_CUDA_ALLOC_CONF:-<unset>} (each run sets its own)"
} >>"$LOG" 2>&1
step nvidia-smi 20 "$WORK/gpu.csv" nvidia-smi --query-gpu=index,name,driver_version,memory.total,memory.used \
  --format=csv,noheader
cat "$WORK/gpu.csv" >>"$LOG" 2>/dev/null
# The CLI preloads the library beside it: <dir of the CLI>/../lib (docs/cli.md, `run`).
if [[ ! -x $CLI || ! -f $(dirname "$CLI")/../lib/libcumemtrace.so ]]; then
  say "MISSING: $CLI or $(dirname "$CLI")/../lib/libcumemtrace.so: every traced step will fail (copy them from the build machine)"
fi
unset PYTORCH_CUDA_ALLOC_CONF

# --- 1. build the CUDA C++ programs (static cudart) -------------------------------------
for prog in static_runtime alloc_loop oom; do
  # shellcheck disable=SC2086  # COMPILE and LINK are word lists on purpose
  step "build-$prog" 120 - $COMPILE "$h200/cuda/$prog.cu" -o "$WORK/bin/$prog" $LINK
done

# --- 2. every runtime entry point, static cudart: each allocation seen exactly once -----
step static-runtime 60 "$WORK/static_runtime.out" \
  "$CLI" run -o "$WORK/static-%p.trace" -- "$WORK/bin/static_runtime"
step check-static 60 "$WORK/check_static.txt" \
  "$PY" "$h200/python/checks/check_programs.py" static --cli "$CLI" --trace "$(newest "$WORK/static-*.trace")" \
  --program-out "$WORK/static_runtime.out" --json-out "$WORK/check_static.json"

# --- 3. an out-of-memory failure, explained --------------------------------------------
step oom 60 "$WORK/oom.out" "$CLI" run -o "$WORK/oom-%p.trace" -- "$WORK/bin/oom" 200
oom_trace=$(newest "$WORK/oom-*.trace")
step oom-report 60 "$OUT/oom-report.txt" "$CLI" report "${oom_trace:-$WORK/oom-missing.trace}"
step check-oom 60 "$WORK/check_oom.txt" \
  "$PY" "$h200/python/checks/check_programs.py" oom --cli "$CLI" --trace "${oom_trace:-$WORK/oom-missing.trace}" \
  --program-out "$WORK/oom.out" --json-out "$WORK/check_oom.json"

# --- 4. overhead per cudaMalloc+cudaFree pair: plain, stacks off, 32-frame stacks -------
# Rounds alternate the three variants so that clock ramps and other drift hit all alike
# (a first, single-round run here once showed a traced variant faster than plain).
for round in 1 2 3 4; do
  step "alloc-loop-plain-r$round" 90 "$WORK/alloc-plain-r$round.jsonl" "$WORK/bin/alloc_loop" plain
  step "alloc-loop-depth0-r$round" 90 "$WORK/alloc-depth0-r$round.jsonl" \
    "$CLI" run --depth 0 -o "$WORK/alloc-depth0-%p.trace" -- "$WORK/bin/alloc_loop" depth0
  step "alloc-loop-depth32-r$round" 120 "$WORK/alloc-depth32-r$round.jsonl" \
    "$CLI" run -o "$WORK/alloc-depth32-%p.trace" -- "$WORK/bin/alloc_loop" depth32
  rm -f "$WORK"/alloc-depth*.trace  # tens of MB each, and nothing reads them
done
for v in plain depth0 depth32; do cat "$WORK"/alloc-$v-r*.jsonl >"$WORK/alloc-$v.jsonl" 2>/dev/null; done

# --- 5. PyTorch: untraced baseline, then traced under the three allocator modes ---------
train=("$PY" "$h200/python/workloads/train.py" --log "$WORK/train.jsonl" --steps "$STEPS")
step train-default-untraced 150 /dev/null env -u PYTORCH_CUDA_ALLOC_CONF \
  "${train[@]}" --mode default --run default-untraced
step train-default 180 /dev/null env -u PYTORCH_CUDA_ALLOC_CONF \
  "$CLI" run -o "$WORK/train-default-%p.trace" -- "${train[@]}" --mode default --run default
# Each allocator mode gets its own untraced baseline: the modes differ in speed by themselves.
step train-expandable-untraced 150 /dev/null env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \
  "${train[@]}" --mode expandable --run expandable-untraced
step train-expandable 180 /dev/null env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \
  "$CLI" run -o "$WORK/train-expandable-%p.trace" -- "${train[@]}" --mode expandable --run expandable
step train-async-untraced 150 /dev/null env PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync \
  "${train[@]}" --mode async --run async-untraced
step train-async 180 /dev/null env PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync \
  "$CLI" run -o "$WORK/train-async-%p.trace" -- "${train[@]}" --mode async --run async
if [[ ${VALIDATE_SKIP_HISTORY:-0} != 1 ]]; then
  step train-record-history 150 /dev/null env -u PYTORCH_CUDA_ALLOC_CONF \
    "${train[@]}" --mode default --run record-history --record-history
fi
step check-pytorch 180 "$OUT/check_pytorch.txt" \
  "$PY" "$h200/python/checks/check_pytorch.py" --cli "$CLI" --trace-pattern "$WORK/train-{run}-{pid}.trace" \
  --json-out "$WORK/check_pytorch.json" "$WORK/train.jsonl"

# --- 5b. other frameworks: CuPy and JAX load CUDA from RTLD_LOCAL extension modules -------
for fw in cupy jax; do
  step "framework-$fw" 90 /dev/null "$CLI" run -o "$WORK/fw-$fw-%p.trace" -- \
    "$PY" "$h200/python/workloads/frameworks.py" "$fw" "$WORK/frameworks.jsonl"
done
step check-frameworks 60 "$WORK/check_frameworks.txt" "$PY" "$h200/python/checks/check_frameworks.py" --cli "$CLI" \
  --log "$WORK/frameworks.jsonl" --trace-glob "$WORK/fw-{mode}-*.trace"

# --- 6. gather ---------------------------------------------------------------------------
ls -l "$WORK" >>"$LOG" 2>&1
cp "$WORK/train.jsonl" "$OUT/train.jsonl" 2>/dev/null
{
  for f in static_runtime.out check_static.txt oom.out check_oom.txt alloc-plain.jsonl alloc-depth0.jsonl \
    alloc-depth32.jsonl check_frameworks.txt frameworks.jsonl; do
    echo "===== $f ====="
    cat "$WORK/$f" 2>/dev/null || echo "(missing)"
    echo
  done
} >"$OUT/programs.txt"
# The summary gets a fixed budget of its own, so that it is written even when the steps
# above used up theirs.
say "RUN  summarize"
timeout -k 5 60 "$PY" "$h200/python/checks/summarize.py" --work "$WORK" --out "$OUT" >>"$LOG" 2>&1
rc=$?
say "DONE summarize: status $rc; total $(($(date +%s) - start))s; scratch left in $WORK"
[[ -f $OUT/summary.json ]] || exit 1
exit 0
