/* Context teardowns take their memory with them (trace format 1.8, kEventTeardown).
   teardown reset    14 small cudaMallocs (12 x 512 B + 2 x 696 B = 7,536 B) and one of 65 MiB,
                     then cudaDeviceReset(); a cudaFree of the 65 MiB afterwards fails
                     (prints "free after reset: cudaErrorInvalidValue")
   teardown destroy  2 MiB in device 0's primary context, 1 MiB in a cuCtxCreate context on
                     it; cuCtxDestroy takes the 1 MiB, the 2 MiB stays (leaked at exit)
   teardown release  the primary context retained twice, 3 MiB allocated in it; the first
                     cuDevicePrimaryCtxRelease leaves it, the second (the last) takes it
   teardown old-reset   4 MiB in the primary context, then the 7.0 ABI's cuDevicePrimaryCtxReset,
                        found as CUDA 13's static runtime finds it: cuGetProcAddress, version 7000
   teardown old-release 3 MiB in the primary context retained once; its one release by the
                        7.0 ABI's exported name (dlsym), the last: it takes the 3 MiB
   Exit 0 when every call went as planned. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define MiB (1ull << 20)

static int reset(void) {
  void *small[14], *big = NULL;
  for (int i = 0; i < 14; ++i)
    if (cudaMalloc(&small[i], i < 12 ? 512 : 696)) return 3;
  if (cudaMalloc(&big, 65 * MiB) || cudaDeviceReset()) return 4;
  const cudaError_t e = cudaFree(big);
  printf("free after reset: %s\n", cudaGetErrorName(e));
  return e == cudaErrorInvalidValue ? 0 : 5;
}

static int destroy(void) {
  CUcontext primary, own;
  CUdeviceptr in_primary, in_own;
  if (cuInit(0) || cuDevicePrimaryCtxRetain(&primary, 0) || cuCtxSetCurrent(primary) ||
      cuMemAlloc(&in_primary, 2 * MiB))
    return 3;
  if (cuCtxCreate(&own, NULL, 0, 0) || cuMemAlloc(&in_own, MiB) || cuCtxDestroy(own)) return 4;
  return cuCtxSetCurrent(primary) ? 5 : 0;
}

static int release(void) {
  CUcontext a, b;
  CUdeviceptr p;
  if (cuInit(0) || cuDevicePrimaryCtxRetain(&a, 0) || cuDevicePrimaryCtxRetain(&b, 0) || cuCtxSetCurrent(a) ||
      cuMemAlloc(&p, 3 * MiB))
    return 3;
  if (cuDevicePrimaryCtxRelease(0) || cuDevicePrimaryCtxRelease(0)) return 4;
  return 0;
}

typedef CUresult (*device_fn)(CUdevice);

static int old_abi(int reset) {
  CUcontext c;
  CUdeviceptr p;
  if (cuInit(0) || cuDevicePrimaryCtxRetain(&c, 0) || cuCtxSetCurrent(c) || cuMemAlloc(&p, (reset ? 4 : 3) * MiB))
    return 3;
  void* fn = NULL;
  if (reset) {
    CUdriverProcAddressQueryResult status;
    if (cuGetProcAddress("cuDevicePrimaryCtxReset", &fn, 7000, CU_GET_PROC_ADDRESS_DEFAULT, &status)) return 4;
  } else {
    fn = dlsym(RTLD_DEFAULT, "cuDevicePrimaryCtxRelease");
  }
  return !fn || ((device_fn)fn)(0) ? 5 : 0;
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  if (strcmp(argv[1], "reset") == 0) return reset();
  if (strcmp(argv[1], "destroy") == 0) return destroy();
  if (strcmp(argv[1], "release") == 0) return release();
  if (strcmp(argv[1], "old-reset") == 0) return old_abi(1);
  if (strcmp(argv[1], "old-release") == 0) return old_abi(0);
  return 2;
}
