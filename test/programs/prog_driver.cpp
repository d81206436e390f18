// Plain driver API through the PLT (linked with -lcuda): ordinary, pitched,
// managed, pinned, stream-ordered and VMM memory on device 0, and a created
// context on device 1 when SIMCUDA_DEVICES >= 2.
#include "driver_check.h"

#include <initializer_list>

namespace {

void vmm() {
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  size_t granularity;
  CHECK_CU(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  const size_t reserved = 32 * granularity, chunk = 2 * granularity;
  CUdeviceptr va;
  CHECK_CU(cuMemAddressReserve(&va, reserved, 0, 0, 0));
  std::printf("reserve 0x%llx %zu\n", (unsigned long long)va, reserved);
  CUmemGenericAllocationHandle handle, again;
  CHECK_CU(cuMemCreate(&handle, chunk, &prop, 0));
  CHECK_CU(cuMemMap(va, chunk, 0, handle, 0));
  CUmemAccessDesc access = {};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CHECK_CU(cuMemSetAccess(va, chunk, &access, 1));
  std::printf("map 0x%llx %zu\n", (unsigned long long)va, chunk);
  CHECK_CU(cuMemRetainAllocationHandle(&again, reinterpret_cast<void*>(va + 4096)));
  CHECK_CU(cuMemRelease(again));
  CHECK_CU(cuMemRelease(handle));   // still mapped: physical memory stays
  CHECK_CU(cuMemUnmap(va, chunk));  // now it goes back
  std::printf("unmap 0x%llx %zu\n", (unsigned long long)va, chunk);
  CHECK_CU(cuMemAddressFree(va, reserved));
}

void second_device() {
  int count;
  CHECK_CU(cuDeviceGetCount(&count));
  if (count < 2) {
    std::printf("one device: no cuCtxCreate on device 1\n");
    return;
  }
  CUcontext ctx;
  CHECK_CU(cuCtxCreate(&ctx, nullptr, 0, 1));  // cuCtxCreate_v4 in CUDA 13 headers
  CUdeviceptr p;
  CHECK_CU(cuMemAlloc(&p, 512));
  report_alloc("cuMemAlloc_v2", p, 512);
  CHECK_CU(cuMemFree(p));
  report_free("cuMemFree_v2", p);
  CHECK_CU(cuCtxDestroy(ctx));
}

}  // namespace

int main() {
  CHECK_CU(cuInit(0));
  CUdevice dev;
  CHECK_CU(cuDeviceGet(&dev, 0));
  CUcontext primary;
  CHECK_CU(cuDevicePrimaryCtxRetain(&primary, dev));
  CHECK_CU(cuCtxSetCurrent(primary));

  CUdeviceptr small, big, pitched, managed;
  CHECK_CU(cuMemAlloc(&small, 512));
  report_alloc("cuMemAlloc_v2", small, 512);
  CHECK_CU(cuMemAlloc(&big, 3 << 20));
  report_alloc("cuMemAlloc_v2", big, 3 << 20);
  size_t pitch;
  CHECK_CU(cuMemAllocPitch(&pitched, &pitch, 1000, 10, 4));
  report_alloc("cuMemAllocPitch_v2", pitched, pitch * 10);
  CHECK_CU(cuMemAllocManaged(&managed, 8192, CU_MEM_ATTACH_GLOBAL));
  report_alloc("cuMemAllocManaged", managed, 8192);
  void *pinned, *host;
  CHECK_CU(cuMemAllocHost(&pinned, 4096));
  report_alloc("cuMemAllocHost_v2", pinned, 4096);
  CHECK_CU(cuMemHostAlloc(&host, 4096, CU_MEMHOSTALLOC_PORTABLE));
  report_alloc("cuMemHostAlloc", host, 4096);

  CUstream stream;
  CHECK_CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUdeviceptr async;
  CHECK_CU(cuMemAllocAsync(&async, 1 << 20, stream));
  report_alloc("cuMemAllocAsync", async, 1 << 20);
  CHECK_CU(cuMemFreeAsync(async, stream));
  report_free("cuMemFreeAsync", async);
  CHECK_CU(cuStreamSynchronize(stream));
  CHECK_CU(cuStreamDestroy(stream));

  vmm();
  second_device();

  for (CUdeviceptr p : {small, big, pitched, managed}) {
    CHECK_CU(cuMemFree(p));
    report_free("cuMemFree_v2", p);
  }
  CHECK_CU(cuMemFreeHost(pinned));
  report_free("cuMemFreeHost", pinned);
  CHECK_CU(cuMemFreeHost(host));
  report_free("cuMemFreeHost", host);
  CHECK_CU(cuDevicePrimaryCtxRelease(dev));
  return 0;
}
