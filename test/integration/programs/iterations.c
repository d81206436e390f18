/* The CI gate's reference job: 64 MiB made before the loop and kept to the end; then 5
   iterations, each keeping 1 MiB and making and freeing 8 MiB. Leaked at the end:
   64 + 5 MiB = 72,351,744 B; peak 64 + 5 + 8 MiB = 80,740,352 B; largest single
   allocation 64 MiB. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

#define MiB (1ull << 20)

/* "grown": one more 2 MiB kept per iteration, from a call site of its own (the change a
   baseline must catch). */
__attribute__((noinline)) static int keep_more(void** p) {
  volatile int r = cudaMalloc(p, 2 * MiB); /* no tail call: keep_more stays on the stack */
  return r;
}

int main(int argc, char** argv) {
  const int grown = argc > 1 && strcmp(argv[1], "grown") == 0;
  void *base, *kept[5], *more[5], *scratch;
  if (cudaMalloc(&base, 64 * MiB)) return 1;
  for (int i = 0; i < 5; ++i) {
    if (cudaMalloc(&kept[i], MiB) || cudaMalloc(&scratch, 8 * MiB)) return 1;
    if (grown && keep_more(&more[i])) return 1;
    if (cudaFree(scratch)) return 1;
  }
  printf("5 iterations\n");
  return 0;
}
