/* Three cudaMalloc calls (1, 3 and 5 MiB) and one cudaFree (the 3 MiB one), for a second
   preload that intercepts them (other_preload.c) beside ours. */
#include <cuda_runtime_api.h>

int main(void) {
  void *a = 0, *b = 0, *c = 0;
  if (cudaMalloc(&a, 1 << 20) || cudaMalloc(&b, 3 << 20) || cudaMalloc(&c, 5 << 20)) return 5;
  if (cudaFree(b)) return 6;
  return 0;
}
