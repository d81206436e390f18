/* A global-mode stream capture that lasts 15 snapshot periods, with a new peak just
   before it (so the tracer wants a peak snapshot during it). In global mode a
   potentially unsafe CUDA call from ANY thread invalidates the capture; the simulated
   driver counts such calls (simcuda_capture_violations). Inside the capture two
   stream-ordered allocations become graph nodes (no device memory); one is freed in the
   capture, the other after it. Prints what it saw; exit 0 only when the capture ended
   well and nothing was called that a capture prohibits. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
  void *big = NULL, *node = NULL, *kept = NULL;
  cudaStream_t s;
  if (cudaMalloc(&big, 64 << 20) || cudaStreamCreate(&s)) return 2;
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal)) return 3;
  usleep(100 * 1000);
  const cudaError_t a = cudaMallocAsync(&node, 1 << 20, s);
  const cudaError_t f = cudaFreeAsync(node, s);
  const cudaError_t k = cudaMallocAsync(&kept, 3 << 20, s);
  usleep(50 * 1000);
  cudaGraph_t graph = NULL;
  const cudaError_t end = cudaStreamEndCapture(s, &graph);
  const cudaError_t after = cudaFreeAsync(kept, s);
  const cudaError_t freed = cudaFree(big);
  unsigned long long (*violations)(void) =
      (unsigned long long (*)(void))dlsym(dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD), "simcuda_capture_violations");
  const unsigned long long v = violations ? violations() : ~0ull;
  printf("graph allocs %d %d %d, end capture %d (%s), after %d %d, prohibited calls %llu\n", a, f, k, end,
         cudaGetErrorName(end), after, freed, v);
  return a || f || k || end || after || freed || v != 0;
}
