// Stream-ordered allocation from the device's default pool and from a pool of
// our own, and how each pool's reservation changes on free, sync and trim.
#include "runtime_common.h"

#include <cstdint>

namespace {
void report_pool(const char* name, cudaMemPool_t pool) {
  uint64_t reserved = 0, used = 0;
  CHECK_RT(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  CHECK_RT(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  std::printf("pool %s reserved %llu used %llu\n", name, (unsigned long long)reserved, (unsigned long long)used);
}
}  // namespace

int scenario_async() {
  cudaStream_t stream;
  CHECK_RT(cudaStreamCreate(&stream));
  cudaMemPool_t defaults;
  CHECK_RT(cudaDeviceGetDefaultMemPool(&defaults, 0));

  void *a, *b;
  CHECK_RT(cudaMallocAsync(&a, 1 << 20, stream));
  report_alloc("cudaMallocAsync", a, 1 << 20);
  CHECK_RT(cudaMallocAsync(&b, 3 << 20, stream));
  report_alloc("cudaMallocAsync", b, 3 << 20);
  CHECK_RT(cudaFreeAsync(a, stream));
  report_free("cudaFreeAsync", a);
  CHECK_RT(cudaFreeAsync(b, stream));
  report_free("cudaFreeAsync", b);
  report_pool("default", defaults);  // freed, still reserved

  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t own;
  CHECK_RT(cudaMemPoolCreate(&own, &props));
  uint64_t keep_everything = UINT64_MAX;
  CHECK_RT(cudaMemPoolSetAttribute(own, cudaMemPoolAttrReleaseThreshold, &keep_everything));
  void* c;
  CHECK_RT(cudaMallocFromPoolAsync(&c, 5 << 20, own, stream));
  report_alloc("cudaMallocFromPoolAsync", c, 5 << 20);
  CHECK_RT(cudaFreeAsync(c, stream));
  report_free("cudaFreeAsync", c);

  // Sync releases what a pool holds above its release threshold: all of the
  // default pool's (threshold 0), none of ours (threshold UINT64_MAX).
  CHECK_RT(cudaStreamSynchronize(stream));
  report_pool("default", defaults);
  report_pool("own", own);
  CHECK_RT(cudaMemPoolTrimTo(own, 2 << 20));
  report_pool("own", own);
  CHECK_RT(cudaMemPoolTrimTo(own, 0));
  report_pool("own", own);
  CHECK_RT(cudaMemPoolDestroy(own));
  CHECK_RT(cudaStreamDestroy(stream));
  return 0;
}
