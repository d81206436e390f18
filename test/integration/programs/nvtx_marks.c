/* The CI gate's reference job marked with NVTX, as a program linked against NVTX's
   headers would (PyTorch's torch.cuda.nvtx.range_push arrives the same way): 64 MiB kept
   before the loop, then 5 iterations in an NVTX range "iter" each keeping 1 MiB and
   making and freeing 8 MiB, and one nvtxMarkA("done"). Under `cumemtrace run` the ranges
   reach the trace through NVTX_INJECTION64_PATH. */
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>

#define MiB (1ull << 20)

int main(void) {
  void *base, *kept[5], *scratch;
  if (cudaMalloc(&base, 64 * MiB)) return 1;
  for (int i = 0; i < 5; ++i) {
    nvtxRangePushA("iter");
    if (cudaMalloc(&kept[i], MiB) || cudaMalloc(&scratch, 8 * MiB) || cudaFree(scratch)) return 1;
    nvtxRangePop();
  }
  nvtxMarkA("done");
  printf("5 marked iterations\n");
  return 0;
}
