#!/usr/bin/env bash
# Run L (docs/validation.md section 12): a stream capture that is its thread's first CUDA
# event (graph_memory.cu allocates nothing before it) must land on device 0, not on the
# host row; CUDA IPC through torch.multiprocessing with the native caching allocator and
# with expandable segments, which share through VMM (cuMemExportToShareableHandle and, in
# the consumer, cuMemImportFromShareableHandle). Binaries prebuilt in BIN_DIR (bin/, lib/).
#   examples/h200/run_l.sh BIN_DIR OUTDIR      (env: PYTHON)
set -u
h200=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "${1:?usage: run_l.sh BIN_DIR OUTDIR}" && pwd) out=${2:?usage: run_l.sh BIN_DIR OUTDIR}
mkdir -p "$out"
export PYTHON=${PYTHON:-python3} CUMEMTRACE=$bin/bin/cumemtrace CUMEMTRACE_LIBRARY=$bin/lib/libcumemtrace.so
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$out/gpu.txt"
"$h200/proofs/graph_memory.sh" "$out/graph" >/dev/null 2>&1; echo "graph_memory.sh exit $?" >>"$out/gpu.txt"
"$h200/proofs/ipc_share.sh" "$out/ipc-native" >/dev/null 2>&1; echo "ipc_share.sh (native) exit $?" >>"$out/gpu.txt"
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "$h200/proofs/ipc_share.sh" "$out/ipc-expandable" >/dev/null 2>&1
echo "ipc_share.sh (expandable segments) exit $?" >>"$out/gpu.txt"
