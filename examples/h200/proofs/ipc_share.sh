#!/usr/bin/env bash
# CUDA arrays and CUDA IPC on a real GPU (trace 1.9). Writes OUTDIR/ipc_share.txt.
#  1. ipc_share.py under `cumemtrace run`: a producer shares a 256 MiB tensor with a
#     spawned consumer. Check: counted once, in the producer (peak >= 268,435,456 B,
#     counts.shares >= 1); the consumer lists the import (imports.count >= 1, peak_bytes
#     268,435,456) and its own peak does not include it; the job view's GPU sum is the
#     producer's peak plus the consumer's own, not 256 MiB more.
#  2. arrays.cu (nvcc, -cudart shared): the trace's array bytes against the printed ones.
#  With PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True PyTorch shares through VMM
#  (cuMemExportToShareableHandle, then cuMemImportFromShareableHandle in the consumer).
#   examples/h200/proofs/ipc_share.sh OUTDIR    (env: PYTHON, NVCC, CUMEMTRACE, CUMEMTRACE_LIBRARY)
set -u
h200=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "$h200/../.." && pwd)
out=${1:?usage: ipc_share.sh OUTDIR}
mkdir -p "$out/traces" "$out/arrays"
PY=${PYTHON:-python3} CLI=${CUMEMTRACE:-$top/build/bin/cumemtrace} NVCC=${NVCC:-nvcc}
export CUMEMTRACE_LIBRARY=${CUMEMTRACE_LIBRARY:-$top/build/lib/libcumemtrace.so}
{
  echo "== 1. IPC through torch.multiprocessing"
  "$CLI" run -o "$out/traces/%p.trace" -- "$PY" "$h200/python/workloads/ipc_share.py"; echo "run exit $?"
  for t in "$out"/traces/*.trace; do "$CLI" report --json "$t" > "${t%.trace}.json"; done
  "$CLI" report "$out"/traces/*.trace > "$out/job-report.txt"; echo "job report exit $?"
  "$PY" - "$out"/traces/*.json <<'PY'
import json, sys
for path in sys.argv[1:]:
    rep = json.load(open(path))
    pid = rep["process"]["pid"] if rep.get("process") else "?"
    for d in rep["devices"]:
        if d["device"] < 0:
            continue
        imp = d.get("imports", {})
        print(f"pid {pid} device {d['device']}: peak {d['peak']['device_bytes']} B, end {d['end']['device_bytes']} B, "
              f"shares {d['counts'].get('shares')}, imports {imp}")
        by_api = {k: v for k, v in d["counts_by_api"].items()
                  if "Ipc" in k or "Shareable" in k or k in ("cuMemCreate", "cuMemMap", "cuMemRelease")}
        print("   IPC calls by API:", by_api)
        if imp.get("count"):
            print("   consumer: import of", imp["peak_bytes"], "B;",
                  "EXPECTED 268435456" if imp["peak_bytes"] == 268435456 else "DIFFERENT from 268435456",
                  "; own peak", d["peak"]["device_bytes"],
                  "(must be < 268435456)" if d["peak"]["device_bytes"] < 268435456 else "(INCLUDES the import?)")
        elif d["counts"].get("shares"):
            print("   producer: peak", d["peak"]["device_bytes"],
                  "OK (>= 268435456)" if d["peak"]["device_bytes"] >= 268435456 else "LOW")
PY
  grep -n "imports\|exported\|GPU\|peak" "$out/job-report.txt" | head -30

  echo "== 2. CUDA arrays"
  "$NVCC" -O1 -cudart shared -o "$out/arrays/arrays" "$h200/cuda/arrays.cu"; echo "nvcc exit $?"
  LD_PRELOAD=$CUMEMTRACE_LIBRARY CUMEMTRACE_OUTPUT="$out/arrays/arrays.trace" "$out/arrays/arrays"; echo "arrays exit $?"
  "$CLI" report --json "$out/arrays/arrays.trace" > "$out/arrays/arrays.json"
  "$PY" - "$out/arrays/arrays.json" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
for d in rep["devices"]:
    if d["device"] < 0:
        continue
    live = d["end"]["live_bytes"].get("array", 0)
    print(f"device {d['device']}: peak {d['peak']['device_bytes']} (expected 34930688:",
          "EQUAL)" if d["peak"]["device_bytes"] == 34930688 else "DIFFERENT)",
          f"end array bytes {live} (expected 16777216:", "EQUAL)" if live == 16777216 else "DIFFERENT)")
    print("   by API:", {k: v for k, v in d["counts_by_api"].items() if "rray" in k})
    print("   NVML at peak:", d.get("nvml_at_peak"))
PY
} 2>&1 | tee "$out/ipc_share.txt"
