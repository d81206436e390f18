/* A training loop's NVTX ranges, as many as a real job's: 16 MiB of weights made first
   (the trace starts at the first CUDA call: a range pushed before it is not in it), then
   STEPS steps (argv[1], default 500), each three ranges "forward", "backward" and
   "optimizer" one after the other. In each range 1 MiB is made and freed; "optimizer"
   keeps 4 KiB a step as well. Under
   `cumemtrace run` each push is a mark: 3 × STEPS marks of three names, which the page's
   timeline must still draw legibly (docs/html-report.md, "Timeline"). */
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>

#define KiB (1ull << 10)
#define MiB (1ull << 20)

int main(int argc, char** argv) {
  const int steps = argc > 1 ? atoi(argv[1]) : 500;
  static const char* const names[3] = {"forward", "backward", "optimizer"};
  void *weights, *scratch, *kept;
  if (cudaMalloc(&weights, 16 * MiB)) return 1;
  for (int i = 0; i < steps; ++i) {
    for (int r = 0; r < 3; ++r) {
      nvtxRangePushA(names[r]);
      if (cudaMalloc(&scratch, MiB) || cudaFree(scratch)) return 1;
      if (r == 2 && cudaMalloc(&kept, 4 * KiB)) return 1;
      nvtxRangePop();
    }
  }
  printf("%d steps of 3 ranges\n", steps);
  return 0;
}
