// CUDA arrays and CUDA IPC on device 0, each entry point reached by symbol, by dlsym and
// by cuGetProcAddress. Sizes (worked out by hand in arrays_ipc_test.cpp):
//   A1 cudaMallocArray float4 1024x768                 12,582,912 B  freed (cudaFreeArray)
//   A2 cudaMalloc3DArray half2 64x64x16                    262,144 B  live at exit
//   D1 cuArrayCreate_v2 (symbol) u16 x1, 1000 wide           2,000 B  freed (cuArrayDestroy, symbol)
//   D2 cuArray3DCreate_v2 (symbol) s32 x2 32x32x8           65,536 B  live at exit
//   M  cuMipmappedArrayCreate (dlsym) float x1 256x256, 3 levels  344,064 B  freed (dlsym)
//   P  cuArrayCreate (cuGetProcAddress) u8 x4 100x10         4,000 B  freed (cuGetProcAddress)
//   B  cudaMalloc 8 MiB, exported twice (cudaIpcGetMemHandle; cuIpcGetMemHandle by
//      cuGetProcAddress), live at exit
//   I1 cudaIpcOpenMemHandle of B, closed by cudaIpcCloseMemHandle
//   I2 cuIpcOpenMemHandle_v2 (dlsym) of B, closed by cuIpcCloseMemHandle (symbol)
//   I3 a handle made here by hand, as the simulated driver lays one out (api_ipc.cpp):
//      3,145,733 B of pid 4242, opened by symbol, open at exit
//   I4 cuIpcOpenMemHandle (the 4.1 ABI, symbol) of B, closed
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#undef cuIpcOpenMemHandle
CUresult cuIpcOpenMemHandle(CUdeviceptr* pdptr, CUipcMemHandle handle, unsigned int Flags);

typedef CUresult (*mipmapped_create_fn)(CUmipmappedArray*, const CUDA_ARRAY3D_DESCRIPTOR*, unsigned);
typedef CUresult (*mipmapped_destroy_fn)(CUmipmappedArray);
typedef CUresult (*array_create_fn)(CUarray*, const CUDA_ARRAY_DESCRIPTOR*);
typedef CUresult (*array_destroy_fn)(CUarray);
typedef CUresult (*ipc_get_fn)(CUipcMemHandle*, CUdeviceptr);
typedef CUresult (*ipc_open_fn)(CUdeviceptr*, CUipcMemHandle, unsigned);

static void* proc(const char* name, int version) {
  void* p = NULL;
  CUdriverProcAddressQueryResult status;
  if (cuGetProcAddress(name, &p, version, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS) return NULL;
  return p;
}

int main(void) {
  // Runtime arrays (the runtime reaches the driver through cuGetProcAddress).
  cudaArray_t a1 = NULL, a2 = NULL;
  const struct cudaChannelFormatDesc f4 = {32, 32, 32, 32, cudaChannelFormatKindFloat};
  const struct cudaChannelFormatDesc h2 = {16, 16, 0, 0, cudaChannelFormatKindFloat};
  const struct cudaExtent extent = {64, 64, 16};
  if (cudaMallocArray(&a1, &f4, 1024, 768, 0) != cudaSuccess) return 2;
  if (cudaMalloc3DArray(&a2, &h2, extent, 0) != cudaSuccess) return 3;

  // Driver arrays by symbol.
  CUarray d1 = NULL, d2 = NULL;
  const CUDA_ARRAY_DESCRIPTOR one_d = {1000, 0, CU_AD_FORMAT_UNSIGNED_INT16, 1};
  const CUDA_ARRAY3D_DESCRIPTOR three_d = {32, 32, 8, CU_AD_FORMAT_SIGNED_INT32, 2, 0};
  if (cuArrayCreate_v2(&d1, &one_d) != CUDA_SUCCESS) return 4;
  if (cuArray3DCreate_v2(&d2, &three_d) != CUDA_SUCCESS) return 5;

  // By dlsym: a mipmapped array.
  mipmapped_create_fn mcreate = (mipmapped_create_fn)dlsym(RTLD_DEFAULT, "cuMipmappedArrayCreate");
  mipmapped_destroy_fn mdestroy = (mipmapped_destroy_fn)dlsym(RTLD_DEFAULT, "cuMipmappedArrayDestroy");
  CUmipmappedArray m = NULL;
  const CUDA_ARRAY3D_DESCRIPTOR mip = {256, 256, 0, CU_AD_FORMAT_FLOAT, 1, 0};
  if (!mcreate || !mdestroy || mcreate(&m, &mip, 3) != CUDA_SUCCESS) return 6;

  // By cuGetProcAddress.
  array_create_fn pcreate = (array_create_fn)proc("cuArrayCreate", 13000);
  array_destroy_fn pdestroy = (array_destroy_fn)proc("cuArrayDestroy", 13000);
  CUarray p = NULL;
  const CUDA_ARRAY_DESCRIPTOR rgba = {100, 10, CU_AD_FORMAT_UNSIGNED_INT8, 4};
  if (!pcreate || !pdestroy || pcreate(&p, &rgba) != CUDA_SUCCESS) return 7;

  if (cudaFreeArray(a1) != cudaSuccess) return 8;
  if (cuArrayDestroy(d1) != CUDA_SUCCESS) return 9;
  if (mdestroy(m) != CUDA_SUCCESS) return 10;
  if (pdestroy(p) != CUDA_SUCCESS) return 11;
  if (cuArrayDestroy(d1) != CUDA_ERROR_INVALID_HANDLE) return 12;  // twice: refused, changes nothing

  // IPC: export B, import it back (the simulated driver allows the exporter to open it).
  void *b = NULL, *i1 = NULL;
  if (cudaMalloc(&b, 8 << 20) != cudaSuccess) return 13;
  cudaIpcMemHandle_t rh;
  if (cudaIpcGetMemHandle(&rh, b) != cudaSuccess) return 14;
  if (cudaIpcOpenMemHandle(&i1, rh, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) return 15;
  if (cudaIpcCloseMemHandle(i1) != cudaSuccess) return 16;

  ipc_get_fn pget = (ipc_get_fn)proc("cuIpcGetMemHandle", 13000);
  ipc_open_fn dopen = (ipc_open_fn)dlsym(RTLD_DEFAULT, "cuIpcOpenMemHandle_v2");
  CUipcMemHandle h;
  CUdeviceptr i2 = 0, i3 = 0, i4 = 0;
  if (!pget || !dopen || pget(&h, (CUdeviceptr)b) != CUDA_SUCCESS) return 17;
  if (dopen(&i2, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) != CUDA_SUCCESS) return 18;
  if (cuIpcCloseMemHandle(i2) != CUDA_SUCCESS) return 19;

  CUipcMemHandle crafted;
  memset(&crafted, 0, sizeof crafted);
  struct {
    char magic[8];
    uint32_t pid;
    int32_t device;
    uint64_t address, size;
  } wire = {{'s', 'i', 'm', 'c', 'u', 'I', 'P', 'C'}, 4242, 0, 0x7f0012345000ull, 3145733};
  memcpy(crafted.reserved, &wire, sizeof wire);
  if (cuIpcOpenMemHandle_v2(&i3, crafted, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) != CUDA_SUCCESS) return 20;
  if (cuIpcOpenMemHandle(&i4, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) != CUDA_SUCCESS) return 21;
  if (cuIpcCloseMemHandle(i4) != CUDA_SUCCESS) return 22;
  printf("arrays and imports done\n");
  return 0;
}
