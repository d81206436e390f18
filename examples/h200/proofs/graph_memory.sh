#!/usr/bin/env bash
# CUDA graph memory on a real GPU (issue 12 §2), for the lead to run on an H200:
#   1. graph_memory.cu's two cases (3 x 1 GiB freed inside a capture; 3 x 1 GiB escaping it),
#      printing cudaDeviceGetGraphMemAttribute's figures after each step, untraced and then
#      traced under `cumemtrace run`, with `cumemtrace report` (text and the JSON graph_pool /
#      graph_nodes / nvml_at_peak parts) of each trace;
#   2. graph_memory_torch.py: torch.cuda.graph capture + replays, memory_reserved() and the
#      graph pool after each step, untraced and traced.
# Expected: inside -> pool reserved 1024 MiB from the launch until the trim; escape -> 3072 MiB
# until the trim; the report's "graph memory pool" line shows the same highest reading, and
# NVML's "untracked" does not contain it. PyTorch: the graph pool stays 0.
#   examples/h200/proofs/graph_memory.sh OUTDIR     (env: NVCC, PYTHON, CUMEMTRACE)
set -u
h200=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "$h200/../.." && pwd)
out=${1:?usage: graph_memory.sh OUTDIR}
mkdir -p "$out"
NVCC=${NVCC:-nvcc} PY=${PYTHON:-python3} CLI=${CUMEMTRACE:-$top/build/bin/cumemtrace}
{
  echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
  "$NVCC" -O2 -cudart shared -o "$out/graph_memory" "$h200/cuda/graph_memory.cu" || exit 1
  for mode in inside escape; do
    echo "== $mode, untraced"
    "$out/graph_memory" "$mode"
    echo "== $mode, traced"
    rm -f "$out/$mode"-*.trace
    "$CLI" run -o "$out/$mode-%p.trace" -- "$out/graph_memory" "$mode"
    "$CLI" report "$out/$mode"-*.trace
    "$CLI" report --json "$out/$mode"-*.trace >"$out/$mode.json"
    "$PY" - "$out/$mode.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
reports = doc["reports"] if isinstance(doc, dict) and "reports" in doc else (doc if isinstance(doc, list) else [doc])
for rep in reports:
    for d in rep["devices"]:
        if d["device"] < 0:
            continue
        print("device", d["device"], "graph_pool", json.dumps(d.get("graph_pool")))
        print("device", d["device"], "graph_nodes count/bytes", d["graph_nodes"]["count"], d["graph_nodes"]["bytes"])
        n = d.get("nvml_at_peak")
        if n:
            print("device", d["device"], "nvml_at_peak", {k: n[k] for k in ("process_used", "footprint", "context",
                                                                           "pool_slack", "graph_pool", "untracked")})
PY
  done
  echo "== torch.cuda.graph, untraced"
  "$PY" "$h200/python/workloads/graph_memory_torch.py"
  echo "== torch.cuda.graph, traced"
  rm -f "$out"/torch-*.trace
  "$CLI" run -o "$out/torch-%p.trace" -- "$PY" "$h200/python/workloads/graph_memory_torch.py"
  "$CLI" report "$out"/torch-*.trace
} 2>&1 | tee "$out/graph_memory.txt"
