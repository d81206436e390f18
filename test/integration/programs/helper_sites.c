/* A program's own allocation helper, alloc(), called from three places: the weights
   (64 MiB, kept), each step's activations (32 MiB, freed at the step's end) and a history
   kept per step (8 MiB, never freed). Five steps, each an NVTX range "step" (under
   `cumemtrace run`). Every cudaMalloc is made on one line of alloc(): only the callers tell
   the three sites apart. Peak 64 + 5 × 8 + 32 MiB = 136 MiB (142,606,336 B), in the last
   step; live at the end 64 + 40 MiB. */
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <stddef.h>
#include <stdio.h>

#define MiB (1ull << 20)

/* Never inlined nor cloned per argument (GCC's interprocedural constant propagation would
   make one alloc per size), and never left by a tail call: each caller stays a frame. */
#if defined(__clang__)
#define FRAME __attribute__((noinline, optnone))
#else
#define FRAME __attribute__((noinline, noipa))
#endif

static void* volatile last;

FRAME static void* alloc(size_t bytes) {
  void* p = NULL;
  volatile int r = cudaMalloc(&p, bytes);
  return r ? NULL : p;
}

FRAME static void* load_weights(void) {
  last = alloc(64 * MiB);
  return last;
}

FRAME static void* forward(void) {
  last = alloc(32 * MiB);
  return last;
}

FRAME static void keep_history(void) { last = alloc(8 * MiB); }

int main(void) {
  if (!load_weights()) return 1;
  for (int i = 0; i < 5; ++i) {
    nvtxRangePushA("step");
    void* activations = forward();
    if (!activations) return 1;
    keep_history();
    if (!last || cudaFree(activations)) return 1;
    nvtxRangePop();
  }
  printf("5 steps\n");
  return 0;
}
