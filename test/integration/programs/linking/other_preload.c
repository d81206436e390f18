/* Another preload library that intercepts cudaMalloc and cudaFree, as a memory saver
   does (torch_memory_saver). OTHER_PRELOAD=forward passes each call on to the next
   definition (dlsym RTLD_NEXT); OTHER_PRELOAD=vmm serves cudaMalloc itself from the
   driver's virtual memory API (reserve, create, map, set access: size rounded up to the
   granule) and cudaFree by unmapping and releasing. It counts its calls on stderr at exit
   ("other preload: N cudaMalloc"), so a test sees that it ran. */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define kMax 64
static struct {
  CUdeviceptr ptr;
  size_t size;
  CUmemGenericAllocationHandle handle;
} g_vmm[kMax];
static int g_calls;

static int vmm_mode(void) {
  const char* mode = getenv("OTHER_PRELOAD");
  return mode && !strcmp(mode, "vmm");
}

static cudaError_t vmm_malloc(void** p, size_t size) {
  CUmemAllocationProp prop;
  memset(&prop, 0, sizeof prop);
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  size_t granule = 0;
  if (cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM)) return cudaErrorUnknown;
  const size_t rounded = (size + granule - 1) / granule * granule;
  int slot = 0;
  while (slot < kMax && g_vmm[slot].ptr) ++slot;
  if (slot == kMax) return cudaErrorMemoryAllocation;
  CUdeviceptr ptr = 0;
  CUmemGenericAllocationHandle handle = 0;
  if (cuMemAddressReserve(&ptr, rounded, 0, 0, 0)) return cudaErrorMemoryAllocation;
  if (cuMemCreate(&handle, rounded, &prop, 0)) {
    cuMemAddressFree(ptr, rounded);
    return cudaErrorMemoryAllocation;
  }
  CUmemAccessDesc access;
  memset(&access, 0, sizeof access);
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (cuMemMap(ptr, rounded, 0, handle, 0) || cuMemSetAccess(ptr, rounded, &access, 1)) return cudaErrorUnknown;
  g_vmm[slot].ptr = ptr, g_vmm[slot].size = rounded, g_vmm[slot].handle = handle;
  *p = (void*)ptr;
  return cudaSuccess;
}

cudaError_t cudaMalloc(void** p, size_t size) {
  ++g_calls;
  if (vmm_mode()) {
    cudaFree(0);  // the runtime's context, as a memory saver's process has one already
    return vmm_malloc(p, size);
  }
  cudaError_t (*next)(void**, size_t) = (cudaError_t(*)(void**, size_t))dlsym(RTLD_NEXT, "cudaMalloc");
  return next ? next(p, size) : cudaErrorInitializationError;
}

cudaError_t cudaFree(void* p) {
  for (int i = 0; p && vmm_mode() && i < kMax; ++i) {
    if (g_vmm[i].ptr != (CUdeviceptr)p) continue;
    cuMemUnmap(g_vmm[i].ptr, g_vmm[i].size);
    cuMemRelease(g_vmm[i].handle);
    cuMemAddressFree(g_vmm[i].ptr, g_vmm[i].size);
    g_vmm[i].ptr = 0;
    return cudaSuccess;
  }
  cudaError_t (*next)(void*) = (cudaError_t(*)(void*))dlsym(RTLD_NEXT, "cudaFree");
  return next ? next(p) : cudaErrorInitializationError;
}

__attribute__((destructor)) static void say(void) { fprintf(stderr, "other preload: %d cudaMalloc\n", g_calls); }
