/* Frees refused inside host functions. A host function runs on the driver's own callback
   thread, where CUDA refuses every call (cudaErrorNotPermitted, 800: the runtime's, before
   the driver is reached). N pinned buffers of 4 KiB (default 20,000): for each, a host
   function on the legacy stream tries cudaFreeHost on it, from release(), and is refused;
   the main thread then frees every buffer itself. So: N failed frees, one call site
   (release), on one thread (the callback thread, not the main one); N successful frees of
   the main thread's; nothing left live. Prints "N refused". */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__clang__)
#define FRAME __attribute__((noinline, optnone))
#else
#define FRAME __attribute__((noinline, noipa))
#endif

static int refused;

FRAME static void CUDART_CB release(void* p) {
  if (cudaFreeHost(p) == cudaErrorNotPermitted) ++refused; /* the launch waits for it: no race */
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 20000;
  void** buffers = calloc((size_t)n, sizeof *buffers);
  if (!buffers) return 1;
  for (int i = 0; i < n; ++i)
    if (cudaMallocHost(&buffers[i], 4096)) return 1;
  for (int i = 0; i < n; ++i)
    if (cudaLaunchHostFunc(0, release, buffers[i])) return 1;
  if (cudaStreamSynchronize(0)) return 1;
  for (int i = 0; i < n; ++i)
    if (cudaFreeHost(buffers[i])) return 1;
  free(buffers);
  printf("%d refused\n", refused);
  return 0;
}
