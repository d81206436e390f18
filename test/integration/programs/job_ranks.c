/* One rank of a simulated job, for the job view of `cumemtrace report` (job_test.cpp).
   job_ranks OWN A_MIB B_MIB FOREIGN LEAK_B FAIL
     on device OWN: A_MIB MiB from alloc_a, then B_MIB MiB from alloc_b (0: none);
     FOREIGN >= 0: then 1 MiB on that device too (a context and an allocation there);
     FAIL 1: one cudaMalloc larger than the device (fails);
     everything is freed before exit except alloc_b's buffer when LEAK_B is 1.
   Exit 0 when every call went as planned. */
#include <cuda_runtime_api.h>
#include <stdlib.h>

#define MiB (1ull << 20)

__attribute__((noinline)) void* alloc_a(size_t bytes) {
  void* p = NULL;
  return cudaMalloc(&p, bytes) == cudaSuccess ? p : NULL;
}

__attribute__((noinline)) void* alloc_b(size_t bytes) {
  void* p = NULL;
  return cudaMalloc(&p, bytes) == cudaSuccess ? p : NULL;
}

int main(int argc, char** argv) {
  if (argc != 7) return 2;
  const int own = atoi(argv[1]), foreign = atoi(argv[4]);
  const size_t a = strtoull(argv[2], NULL, 10) * MiB, b = strtoull(argv[3], NULL, 10) * MiB;
  const int leak_b = atoi(argv[5]), fail = atoi(argv[6]);
  if (cudaSetDevice(own)) return 3;
  void *pa = alloc_a(a), *pb = b ? alloc_b(b) : NULL;
  if (!pa || (b && !pb)) return 4;
  if (fail) {
    void* q = NULL;
    if (cudaMalloc(&q, 1ull << 50) == cudaSuccess) return 5;
  }
  if (foreign >= 0) {
    void* f = NULL;
    if (cudaSetDevice(foreign) || cudaMalloc(&f, MiB) || cudaFree(f) || cudaSetDevice(own)) return 6;
  }
  if (cudaFree(pa)) return 7;
  if (pb && !leak_b && cudaFree(pb)) return 8;
  return 0;
}
