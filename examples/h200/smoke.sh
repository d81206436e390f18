#!/usr/bin/env bash
# A first look on a GPU machine, in under two minutes: does the prebuilt library load,
# does the CLI run, does PyTorch import and allocate under the preload in each allocator
# mode. validate.sh is the full proof; this is the check to run before spending on it.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-/tmp/cumemtrace-smoke}
mkdir -p "$OUT"
CLI=$top/build/bin/cumemtrace
LIB=$top/build/lib/libcumemtrace.so
{
  nvidia-smi -L
  ldd "$LIB" "$CLI"
  for mode in default expandable_segments:True backend:cudaMallocAsync; do
    conf=$mode
    [[ $mode == default ]] && conf=
    echo "== $mode"
    PYTORCH_CUDA_ALLOC_CONF=$conf timeout 120 "$CLI" run -o "$OUT/smoke-%p.trace" -- python3 -c '
import torch, time
x = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
y = torch.empty(1000, device="cuda")
torch.cuda.synchronize()
print("reserved", torch.cuda.memory_reserved(), "allocated", torch.cuda.memory_allocated(), "at", time.monotonic_ns())
'
    echo "exit $?"
  done
  for t in "$OUT"/smoke-*.trace; do timeout 60 "$CLI" report --top 3 --frames 4 "$t"; done
} 2>&1
