// VMM sharing on device 0: a physical allocation exported as a POSIX fd and imported back
// (the simulated driver lets one process import its own export; a real driver would
// hand the fd to another process), each import entry point reached by symbol, by dlsym
// and by cuGetProcAddress. Figures (worked out by hand in shareable_import_test.cpp):
//   W  cudaMalloc 1 MiB, freed at the end (it makes the context)
//   F  cuMemCreate 4 MiB asking for a fabric handle: refused (CUDA_ERROR_NOT_PERMITTED),
//      as PyTorch's expandable segments probe before falling back to a POSIX fd
//   P  cuMemCreate 4 MiB, exported (cuMemExportToShareableHandle), released before exit
//   I1 cuMemImportFromShareableHandle (symbol), mapped, unmapped and released
//   I2 the same by dlsym: released without ever being mapped
//   I3 the same by cuGetProcAddress: mapped while I1 is, open at exit
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

typedef CUresult (*import_fn)(CUmemGenericAllocationHandle*, void*, CUmemAllocationHandleType);

#define MiB (1024ull * 1024ull)
#define CHECK(call)                           \
  do {                                        \
    if ((call) != 0) {                        \
      fprintf(stderr, "failed: %s\n", #call); \
      return 1;                               \
    }                                         \
  } while (0)

int main(void) {
  void* w = NULL;
  CHECK(cudaMalloc(&w, 1 * MiB));

  CUmemAllocationProp prop = {0};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CUmemGenericAllocationHandle p = 0;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
  if (cuMemCreate(&p, 4 * MiB, &prop, 0) != CUDA_ERROR_NOT_PERMITTED) return 3;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CHECK(cuMemCreate(&p, 4 * MiB, &prop, 0));
  int fd = 0;
  CHECK(cuMemExportToShareableHandle(&fd, p, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  void* os_handle = (void*)(intptr_t)fd;  // a POSIX fd travels in the pointer

  CUmemGenericAllocationHandle i1 = 0, i2 = 0, i3 = 0;
  CHECK(cuMemImportFromShareableHandle(&i1, os_handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  import_fn by_dlsym = (import_fn)dlsym(RTLD_DEFAULT, "cuMemImportFromShareableHandle");
  if (!by_dlsym) return 2;
  CHECK(by_dlsym(&i2, os_handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  void* fn = NULL;
  CUdriverProcAddressQueryResult status;
  CHECK(cuGetProcAddress("cuMemImportFromShareableHandle", &fn, 10020, CU_GET_PROC_ADDRESS_DEFAULT, &status));
  CHECK(((import_fn)fn)(&i3, os_handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));

  CUdeviceptr va1 = 0, va3 = 0;
  CHECK(cuMemAddressReserve(&va1, 4 * MiB, 0, 0, 0));
  CHECK(cuMemAddressReserve(&va3, 4 * MiB, 0, 0, 0));
  CHECK(cuMemMap(va1, 4 * MiB, 0, i1, 0));
  CHECK(cuMemMap(va3, 4 * MiB, 0, i3, 0));
  CHECK(cuMemUnmap(va1, 4 * MiB));
  CHECK(cuMemRelease(i1));
  CHECK(cuMemRelease(i2));
  CHECK(cuMemAddressFree(va1, 4 * MiB));
  CHECK(cuMemRelease(p));
  CHECK(cudaFree(w));
  printf("imports done\n");
  return 0;
}
