#!/usr/bin/env bash
# The training step's traced/untraced time ratio in PyTorch's three allocator modes, at
# CUMEMTRACE_DEPTH 0, 8 and 32 (issue: <= 1.01 in every mode at the default depth).
# The runs are interleaved: each round runs, per mode, untraced and each depth, in an order
# that rotates from round to round, so that drift on a shared machine hits all of them alike; a ratio is taken against the same
# round's untraced run, and the summary gives every round's ratio (min-max is the spread).
#
#   examples/h200/step_ratio.sh OUTDIR      (env: ROUNDS=2 STEPS=40 MODES PYTHON CUMEMTRACE_LIB)
#
# MODES: the allocator modes to run, default "default expandable async". CONFIGS: the
# configurations per mode, default "untraced depth0 depth8 depth32"; "default" sets no
# CUMEMTRACE_DEPTH (the library's defaults, whatever they are); "depthN" sets
# CUMEMTRACE_DEPTH=N; "nopyN" is depth N
# without Python frames (CUMEMTRACE_PYTHON=0), to tell their cost from the native stack's;
# "noblocks" is the defaults without the blocks inside PyTorch's cache (CUMEMTRACE_BLOCKS=0),
# to tell their cost from the segments'; "nosnap" and "nozstd" are the default depth without periodic snapshots
# (CUMEMTRACE_SNAPSHOT_MS=0) and without compression (CUMEMTRACE_COMPRESS=0), to tell the
# writer thread's periodic work from the hooks'. "again" is a second untraced run, the A/A
# control: its ratio is how far one untraced run is from another (docs/validation.md
# section 16: within 0.7 % there). "before" is the defaults with another build of the
# library, BEFORE_LIB (e.g. the previous commit's), to compare two builds in the same rounds.
# "anchor" is untraced with PyTorch's own _record_memory_history(stacks="python") (issue 26).
# TRAIN_ARGS: more arguments for train.py in every run (e.g. a small CPU-bound model:
# "--batch 32 --seq 32 --d-model 256 --layers 2 --heads 4").
# PIN (a taskset CPU list, e.g. 4-7) runs every run on those CPUs: on the lent machine a
# process otherwise ran either at full speed or about 1.6x slower, whichever it drew
# (docs/validation.md section 18).
#
# Writes OUTDIR/step_ratio.jsonl (train.py's records of every run, labelled
# MODE/CONFIG/rROUND) and OUTDIR/step_ratio.md (the table for docs/performance.md).
set -u
h200=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$h200/../.." && pwd)
out=${1:?usage: step_ratio.sh OUTDIR}
mkdir -p "$out"
PY=${PYTHON:-python3}
LIB=${CUMEMTRACE_LIB:-$top/build/lib/libcumemtrace.so}
rounds=${ROUNDS:-2} steps=${STEPS:-40}
pin=()
[[ -n ${PIN:-} ]] && pin=(taskset -c "$PIN")
log=$out/step_ratio.jsonl
: >"$log"
traces=$(mktemp -d)
trap 'rm -rf "$traces"' EXIT
for ((r = 1; r <= rounds; ++r)); do
  for mode in ${MODES:-default expandable async}; do
    # Each round starts one configuration later: the CPU's time to queue a step grew with
    # a run's place in its round (untraced 17 ms first, 22 ms second: docs/validation.md
    # section 17), so no configuration keeps one place.
    cfgs=(${CONFIGS:-untraced depth0 depth8 depth32})
    for ((i = 0; i < ${#cfgs[@]}; ++i)); do
      cfg=${cfgs[(i + r - 1) % ${#cfgs[@]}]}
      run="$mode/$cfg/r$r"
      if [[ $cfg == untraced || $cfg == again ]]; then
        timeout 120 "${pin[@]}" "$PY" "$h200/python/workloads/train.py" --mode "$mode" --steps "$steps" --log "$log" --run "$run" ${TRAIN_ARGS:-} >/dev/null
      elif [[ $cfg == anchor ]]; then
        timeout 120 "${pin[@]}" "$PY" "$h200/python/workloads/train.py" --mode "$mode" --steps "$steps" --log "$log" --run "$run" ${TRAIN_ARGS:-} \
          --record-history --history-stacks python >/dev/null
      else
        python=1 depth=${cfg#depth} snapshot_ms=1000 compress=1 blocks=1
        [[ $cfg == nopy* ]] && python=0 depth=${cfg#nopy}
        [[ $cfg == nosnap ]] && depth=32 snapshot_ms=0
        [[ $cfg == nozstd ]] && depth=32 compress=0
        [[ $cfg == noblocks ]] && depth= blocks=0
        [[ $cfg == default || $cfg == before ]] && depth=
        lib=$LIB
        [[ $cfg == before ]] && lib=${BEFORE_LIB:?the "before" configuration needs BEFORE_LIB}
        env LD_PRELOAD=$lib ${depth:+CUMEMTRACE_DEPTH=$depth} CUMEMTRACE_PYTHON=$python \
          CUMEMTRACE_SNAPSHOT_MS=$snapshot_ms CUMEMTRACE_COMPRESS=$compress CUMEMTRACE_BLOCKS=$blocks CUMEMTRACE_OUTPUT="$traces/t-%p.trace" \
          timeout 120 "${pin[@]}" "$PY" "$h200/python/workloads/train.py" --mode "$mode" --steps "$steps" --log "$log" --run "$run" ${TRAIN_ARGS:-} >/dev/null
      fi
      echo "step_ratio: $run exit $?" >&2
      rm -f "$traces"/*
    done
  done
done
"$PY" - "$log" >"$out/step_ratio.md" <<'PY'
import json, sys, collections
mean = {}
for line in open(sys.argv[1]):
    rec = json.loads(line)
    if rec.get("event") == "end":
        mean[rec["run"]] = rec["mean_step_ms"]
ratios = collections.defaultdict(list)
untraced = collections.defaultdict(list)
for run, ms in mean.items():
    mode, cfg, rnd = run.split("/")
    base = mean.get(f"{mode}/untraced/{rnd}")
    if cfg == "untraced":
        untraced[mode].append(ms)
    elif base:
        ratios[(mode, cfg)].append(ms / base)
configs = list(dict.fromkeys(cfg for (mode, cfg) in ratios))  # in the order run
names = {c: c.replace("depth", "depth ").replace("nopy", "no Python frames, depth ") for c in configs}
names.update({"default": "defaults (no CUMEMTRACE_DEPTH)", "depth32": "depth 32", "nosnap": "no periodic snapshots", "before": "defaults, BEFORE_LIB", "nozstd": "uncompressed",
              "again": "untraced again (A/A)", "anchor": "PyTorch's history, Python stacks (untraced)"})
print("| allocator mode | untraced step (ms) | " + " | ".join(names[c] for c in configs) + " |")
print("|---|---:|" + "---:|" * len(configs))
for mode in ("default", "expandable", "async"):
    if not untraced.get(mode):
        continue
    cells = []
    for cfg in configs:
        v = sorted(ratios.get((mode, cfg), []))
        cells.append(f"{v[0]:.3f}–{v[-1]:.3f} ({len(v)})" if v else "–")
    u = sorted(untraced.get(mode, []))
    base = f"{u[0]:.1f}–{u[-1]:.1f}" if u else "–"
    print(f"| {mode} | {base} | " + " | ".join(cells) + " |")
PY
cat "$out/step_ratio.md"
