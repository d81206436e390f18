// Every runtime allocation call once, some frees, two allocations leaked.
#include "runtime_common.h"

#include <initializer_list>

int scenario_basic() {
  void* small[3];
  for (void*& p : small) {
    CHECK_RT(cudaMalloc(&p, 512));
    report_alloc("cudaMalloc", p, 512);
  }
  void* big;
  CHECK_RT(cudaMalloc(&big, 3 << 20));
  report_alloc("cudaMalloc", big, 3 << 20);

  void* pitched;
  size_t pitch;
  CHECK_RT(cudaMallocPitch(&pitched, &pitch, 1000, 100));
  report_alloc("cudaMallocPitch", pitched, pitch * 100);

  cudaPitchedPtr cube;
  cudaExtent extent = {300, 20, 10};  // width in bytes, height, depth
  CHECK_RT(cudaMalloc3D(&cube, extent));
  report_alloc("cudaMalloc3D", cube.ptr, cube.pitch * extent.height * extent.depth);

  void *managed, *pinned, *host;
  CHECK_RT(cudaMallocManaged(&managed, 4096, cudaMemAttachGlobal));
  report_alloc("cudaMallocManaged", managed, 4096);
  static_cast<char*>(managed)[4095] = 1;  // programs touch managed memory; it must be real
  CHECK_RT(cudaMallocHost(&pinned, 4096));
  report_alloc("cudaMallocHost", pinned, 4096);
  CHECK_RT(cudaHostAlloc(&host, 8192, cudaHostAllocPortable));
  report_alloc("cudaHostAlloc", host, 8192);

  for (void* p : {small[1], big, pitched, cube.ptr, managed}) {
    CHECK_RT(cudaFree(p));
    report_free("cudaFree", p);
  }
  CHECK_RT(cudaFreeHost(pinned));
  report_free("cudaFreeHost", pinned);
  CHECK_RT(cudaFreeHost(host));
  report_free("cudaFreeHost", host);
  std::printf("leaked 2\n");  // small[0] and small[2]
  return 0;
}
