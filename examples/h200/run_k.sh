#!/usr/bin/env bash
# Run K (docs/validation.md section 11): CUDA graph memory, CUDA IPC and arrays on a real
# H200, where device memory goes outside every allocation (the byte ledger's probe), and
# the hook's added time per call over depth x stacks x threads against the simulated
# driver on the GPU host's quiet CPU. Binaries come prebuilt in BIN_DIR (bin/, lib/,
# build/ for the bench); every log lands in OUTDIR.
#   examples/h200/run_k.sh BIN_DIR OUTDIR      (env: PYTHON)
set -u
h200=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$h200/../.." && pwd)
bin=$(cd "${1:?usage: run_k.sh BIN_DIR OUTDIR}" && pwd) out=${2:?usage: run_k.sh BIN_DIR OUTDIR}
mkdir -p "$out"
export PYTHON=${PYTHON:-python3} CUMEMTRACE=$bin/bin/cumemtrace CUMEMTRACE_LIBRARY=$bin/lib/libcumemtrace.so
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$out/gpu.txt"
"$h200/proofs/graph_memory.sh" "$out/graph" >/dev/null 2>&1; echo "graph_memory.sh exit $?" >>"$out/gpu.txt"
"$h200/proofs/ipc_share.sh" "$out/ipc" >/dev/null 2>&1; echo "ipc_share.sh exit $?" >>"$out/gpu.txt"
for loading in LAZY EAGER; do
  CUDA_MODULE_LOADING=$loading "$PYTHON" "$h200/python/workloads/ledger_probe.py" >>"$out/ledger.txt" 2>&1
done
ROUNDS=${ROUNDS:-3} PAIRS=${PAIRS:-30000} "$top/bench/run_hook_matrix.sh" "$bin/build" >"$out/matrix.txt" 2>&1
