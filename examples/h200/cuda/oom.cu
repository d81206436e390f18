// An out-of-memory failure a user would want explained: 1 GiB held, then a request far
// larger than the card. The report must show the failed request with its size, the
// stack with these function names (built with -g, kept out of line on purpose), the
// tracked live bytes (the 1 GiB) and NVML's free/total right after the failure.
//
// usage: oom [REQUEST_GIB]   (default 200: more than an H200's 141 GiB)
// Prints what it did; exit status 0 when the big request failed with
// cudaErrorMemoryAllocation, 1 otherwise.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace {

unsigned long long monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

}  // namespace

// Not static and never inlined: their names must survive into the symbolized stack.
__attribute__((noinline)) void* reserve_workspace(size_t bytes) {
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, bytes);
  std::printf("reserve_workspace: cudaMalloc(%zu) -> %d %p\n", bytes, int(e), p);
  return e == cudaSuccess ? p : nullptr;
}

__attribute__((noinline)) cudaError_t allocate_weights(size_t bytes, void** out) {
  cudaError_t e = cudaMalloc(out, bytes);
  std::printf("allocate_weights: cudaMalloc(%zu) -> %d (%s) at %llu ns\n", bytes, int(e), cudaGetErrorName(e),
              monotonic_ns());
  return e;
}

__attribute__((noinline)) cudaError_t load_model(size_t bytes, void** out) {
  const cudaError_t e = allocate_weights(bytes, out);
  // Work after the call keeps it from becoming a tail jump that would drop this frame.
  std::printf("load_model: %s\n", e == cudaSuccess ? "loaded" : "failed");
  return e;
}

int main(int argc, char** argv) {
  const double gib = argc > 1 ? std::atof(argv[1]) : 200.0;
  const size_t request = size_t(gib * double(1ull << 30));
  void* ws = reserve_workspace(1ull << 30);
  if (!ws) {
    std::fprintf(stderr, "FAILED: could not hold the first 1 GiB\n");
    return 1;
  }
  size_t free_b = 0, total_b = 0;
  cudaMemGetInfo(&free_b, &total_b);
  std::printf("cudaMemGetInfo before: free=%zu total=%zu\n", free_b, total_b);
  void* big = nullptr;
  const cudaError_t e = load_model(request, &big);
  cudaGetLastError();  // clear the sticky-looking last error; OOM is not sticky
  cudaFree(ws);
  if (e == cudaErrorMemoryAllocation) {
    std::printf("oom: as expected, request=%zu failed with cudaErrorMemoryAllocation\n", request);
    return 0;
  }
  if (e == cudaSuccess) cudaFree(big);
  std::fprintf(stderr, "FAILED: request of %zu bytes returned %d, expected cudaErrorMemoryAllocation (2)\n", request,
               int(e));
  return 1;
}
