/* One out-of-memory failure per cause the report diagnoses (analysis/reports/oom/diagnosis.h), on a
   16 GiB simulated device (SIMCUDA_CAPACITY=17179869184) with its 512 MiB context:
     cached   keeps a 9 GiB buffer, then asks for 9 GiB again (from the same library)
     pool     frees 10 GiB back to the stream-ordered pool (no sync: it keeps it), then
              asks cudaMalloc for 8 GiB
     pool_free  frees 6 GiB back to the stream-ordered pool, then asks cudaMalloc for 12 GiB:
              neither the 9.5 GiB free nor the 6 GiB slack holds it, the two together do
     other    asks for 8 GiB while another process holds 10 GiB
              (SIMCUDA_OTHER_PROCESS_BYTES=10737418240)
     hidden   asks for 12 GiB while the driver hides 6 GiB (SIMCUDA_HIDDEN_BYTES=6442450944)
     demand   keeps seven 2 GiB buffers, then asks for 4 GiB
     brief    holds 1 GiB for 5 ms, frees it and exits (no failure: the peak's NVML split)
     exit     fails to allocate 32 GiB and exits at once
     hang     fails to allocate 32 GiB, then, still running, waits up to 10 s for the
              post-mortem `cumemtrace run` writes beside its trace (CUMEMTRACE_OUTPUT with
              one %p) and says whether it came
   Prints the failing call's result; exit 0 when it failed as planned. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GiB (1ull << 30)

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const char* c = argv[1];
  void *p = NULL, *q = NULL;
  cudaError_t e;
  if (strcmp(c, "cached") == 0) {
    if (cudaMalloc(&p, 9 * GiB)) return 3;
    e = cudaMalloc(&q, 9 * GiB);
  } else if (strcmp(c, "pool") == 0) {
    cudaStream_t s;
    if (cudaStreamCreate(&s) || cudaMallocAsync(&p, 10 * GiB, s) || cudaFreeAsync(p, s)) return 3;
    e = cudaMalloc(&q, 8 * GiB);
  } else if (strcmp(c, "pool_free") == 0) {
    cudaStream_t s;
    if (cudaStreamCreate(&s) || cudaMallocAsync(&p, 6 * GiB, s) || cudaFreeAsync(p, s)) return 3;
    e = cudaMalloc(&q, 12 * GiB);
  } else if (strcmp(c, "other") == 0 || strcmp(c, "hidden") == 0) {
    e = cudaMalloc(&q, (strcmp(c, "other") == 0 ? 8 : 12) * GiB);
  } else if (strcmp(c, "demand") == 0) {
    for (int i = 0; i < 7; ++i)
      if (cudaMalloc(&p, 2 * GiB)) return 3;
    e = cudaMalloc(&q, 4 * GiB);
  } else if (strcmp(c, "hang") == 0) {
    e = cudaMalloc(&q, 32 * GiB);
    const char* pattern = getenv("CUMEMTRACE_OUTPUT");
    const char* at = pattern ? strstr(pattern, "%p") : NULL;
    if (!at) return 4;
    char path[4096];
    snprintf(path, sizeof path, "%.*s%d%s.oom.txt", (int)(at - pattern), pattern, (int)getpid(), at + 2);
    for (int waited = 0; waited < 10000; waited += 50) {
      if (access(path, R_OK) == 0) {
        printf("hang: %s, post-mortem appeared while running\n", cudaGetErrorName(e));
        return e == cudaErrorMemoryAllocation ? 0 : 1;
      }
      usleep(50 * 1000);
    }
    printf("hang: no post-mortem within 10 s\n");
    return 1;
  } else if (strcmp(c, "exit") == 0) {
    e = cudaMalloc(&q, 32 * GiB);
  } else if (strcmp(c, "brief") == 0) {
    if (cudaMalloc(&p, GiB)) return 3;
    usleep(5000);
    return cudaFree(p) != cudaSuccess;
  } else {
    return 2;
  }
  printf("%s: %s\n", c, cudaGetErrorName(e));
  return e == cudaErrorMemoryAllocation ? 0 : 1;
}
