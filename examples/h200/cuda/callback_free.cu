// A free inside a host function (cudaLaunchHostFunc): CUDA forbids CUDA calls there, and the
// driver refuses them (docs/validation.md, "Failed frees inside host functions"). The
// program frees a pinned buffer inside the callback (refused), then frees it outside.
#include <cuda_runtime.h>
#include <stdio.h>

static void* g_buffer;
static cudaError_t g_inside = cudaSuccess;

static void CUDART_CB release(void*) { g_inside = cudaFreeHost(g_buffer); }

int main() {
  cudaStream_t s;
  if (cudaStreamCreate(&s) != cudaSuccess || cudaMallocHost(&g_buffer, 1 << 20) != cudaSuccess) return 2;
  cudaLaunchHostFunc(s, release, nullptr);
  cudaStreamSynchronize(s);
  const cudaError_t outside = cudaFreeHost(g_buffer);
  printf("inside the host function: %d (%s); outside: %d\n", int(g_inside), cudaGetErrorName(g_inside), int(outside));
  cudaStreamDestroy(s);
  return 0;
}
