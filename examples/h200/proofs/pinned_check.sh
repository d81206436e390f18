#!/usr/bin/env bash
# Pinned host memory: PyTorch's host allocator's own figures against the trace's host row,
# with the default allocation path and with pinned_use_cuda_host_register (malloc +
# cudaHostRegister). Writes OUTDIR/pinned.txt.
#   examples/h200/proofs/pinned_check.sh OUTDIR     (env: PYTHON, CUMEMTRACE, CUMEMTRACE_LIB)
set -u
h200=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "$h200/../.." && pwd)
out=${1:?usage: pinned_check.sh OUTDIR}
mkdir -p "$out"
PY=${PYTHON:-python3} CLI=${CUMEMTRACE:-$top/build/bin/cumemtrace} LIB=${CUMEMTRACE_LIB:-$top/build/lib/libcumemtrace.so}
work=$(mktemp -d)
for conf in default pinned_use_cuda_host_register:True; do
  name=${conf%%:*}
  if [[ $conf == default ]]; then unset PYTORCH_CUDA_ALLOC_CONF; else export PYTORCH_CUDA_ALLOC_CONF=$conf; fi
  LD_PRELOAD=$LIB CUMEMTRACE_OUTPUT="$work/$name.trace" "$PY" "$h200/python/workloads/pinned_memory.py" >"$work/$name.stats" 2>"$work/$name.err"
  echo "== $name: exit $?"
  "$CLI" report --json "$work/$name.trace" >"$work/$name.json" 2>>"$work/$name.err"
  "$PY" - "$work/$name.stats" "$work/$name.json" <<'PY'
import json, sys
stats = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
rep = json.load(open(sys.argv[2]))
host = next((d for d in rep["devices"] if d["device"] == -1), None)
print("host_memory_stats:", {k: v for k, v in stats.items() if "bytes" in k and ("current" in k or "peak" in k)})
if host is None:
    print("trace: no host row (no host-pinned allocation seen)")
else:
    print("trace host row: peak_pinned", host["peak_pinned"]["bytes"], "end", host["end"]["live_bytes"],
          "counts_by_api", host["counts_by_api"])
    for key in ("reserved_bytes.peak", "allocated_bytes.peak", "segment_bytes.peak"):
        if key in stats:
            print(f"{key} {stats[key]} vs traced peak_pinned {host['peak_pinned']['bytes']}:",
                  "EQUAL" if stats[key] == host["peak_pinned"]["bytes"] else "DIFFERENT")
PY
  tail -3 "$work/$name.err"
done 2>&1 | tee "$out/pinned.txt"
rm -rf "$work"
