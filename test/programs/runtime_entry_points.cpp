// What PyTorch's expandable segments do: fetch the VMM functions through
// cudaGetDriverEntryPointByVersion (no libcuda link, no dlsym), reserve a large
// range, then map, and later unmap and release, physical chunks in it.
#include "runtime_common.h"

#include <cudaTypedefs.h>

namespace {

template <typename Fn>
Fn entry(const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult status;
  CHECK_RT(cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &status));
  if (status != cudaDriverEntryPointSuccess || !p) die(name, int(status));
  return reinterpret_cast<Fn>(p);
}

#define CHECK_CU(call)                                                  \
  do {                                                                  \
    CUresult check_cu_result_ = (call);                                 \
    if (check_cu_result_ != CUDA_SUCCESS) die(#call, check_cu_result_); \
  } while (0)

}  // namespace

int scenario_entry_points() {
  CHECK_RT(cudaFree(nullptr));  // context first, as PyTorch's lazy init does
  auto reserve = entry<PFN_cuMemAddressReserve_v10020>("cuMemAddressReserve");
  auto create = entry<PFN_cuMemCreate_v10020>("cuMemCreate");
  auto map = entry<PFN_cuMemMap_v10020>("cuMemMap");
  auto set_access = entry<PFN_cuMemSetAccess_v10020>("cuMemSetAccess");
  auto unmap = entry<PFN_cuMemUnmap_v10020>("cuMemUnmap");
  auto release = entry<PFN_cuMemRelease_v10020>("cuMemRelease");
  auto address_free = entry<PFN_cuMemAddressFree_v10020>("cuMemAddressFree");
  (void)address_free;  // fetched like PyTorch does; the segment stays reserved to exit

  constexpr size_t kReserve = 8ull << 30, kChunk = 20 << 20;
  CUdeviceptr base;
  CHECK_CU(reserve(&base, kReserve, 0, 0, 0));
  std::printf("reserve 0x%llx %zu\n", (unsigned long long)base, kReserve);

  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  CUmemAccessDesc access = {};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CUmemGenericAllocationHandle handles[3];
  for (int i = 0; i < 3; ++i) {
    CUdeviceptr at = base + i * kChunk;
    CHECK_CU(create(&handles[i], kChunk, &prop, 0));
    CHECK_CU(map(at, kChunk, 0, handles[i], 0));
    CHECK_CU(set_access(at, kChunk, &access, 1));
    std::printf("map 0x%llx %zu\n", (unsigned long long)at, kChunk);
  }
  CHECK_CU(unmap(base + kChunk, kChunk));
  CHECK_CU(release(handles[1]));
  std::printf("unmap 0x%llx %zu\n", (unsigned long long)(base + kChunk), kChunk);
  size_t free_bytes, total;
  CHECK_RT(cudaMemGetInfo(&free_bytes, &total));
  std::printf("device used %zu\n", total - free_bytes);
  return 0;
}
