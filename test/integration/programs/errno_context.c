// errno must survive a hooked call that does not itself set it.
#include <cuda_runtime_api.h>
#include <errno.h>
#include <stdio.h>
int main(void) {
  errno = 4242;
  cudaError_t r = cudaSetDevice(0);  // retains the primary context: ContextProbe -> NVML dlopen
  printf("cudaSetDevice=%d errno=%d\n", r, errno);
  return errno != 4242;
}
