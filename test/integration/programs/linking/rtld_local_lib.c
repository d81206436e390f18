/* A library that links the CUDA runtime and driver, to be dlopen'ed RTLD_LOCAL as Python
   loads extension modules: its CUDA libraries are then in no global scope. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
int go(void) {
  void* p = 0;
  cudaError_t r = cudaMalloc(&p, 1000);
  CUdeviceptr d = 0;
  CUresult r2 = cuMemAlloc(&d, 2000);
  printf("cudaMalloc=%d p=%p cuMemAlloc=%d d=%llx\n", r, p, r2, (unsigned long long)d);
  return r;
}
