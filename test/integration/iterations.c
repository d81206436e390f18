/* The CI gate's reference job: 64 MiB made before the loop and kept to the end; then 5
   iterations, each keeping 1 MiB and making and freeing 8 MiB. Leaked at the end:
   64 + 5 MiB = 72,351,744 B; peak 64 + 5 + 8 MiB = 80,740,352 B; largest single
   allocation 64 MiB. */
#include <cuda_runtime_api.h>
#include <stdio.h>

#define MiB (1ull << 20)

int main(void) {
  void *base, *kept[5], *scratch;
  if (cudaMalloc(&base, 64 * MiB)) return 1;
  for (int i = 0; i < 5; ++i) {
    if (cudaMalloc(&kept[i], MiB) || cudaMalloc(&scratch, 8 * MiB)) return 1;
    if (cudaFree(scratch)) return 1;
  }
  printf("5 iterations\n");
  return 0;
}
