// Asking for more than the device has: cudaErrorMemoryAllocation, and the
// pointer left as it was.
#include "runtime_common.h"

int scenario_oom() {
  size_t free_bytes, total;
  CHECK_RT(cudaMemGetInfo(&free_bytes, &total));
  void* p = reinterpret_cast<void*>(0x1234);
  cudaError_t e = cudaMalloc(&p, total + 1);
  std::printf("oom cudaMalloc %zu -> %d %s %s\n", total + 1, int(e), cudaGetErrorName(e), cudaGetErrorString(e));
  cudaError_t last = cudaGetLastError();
  std::printf("last error %d, then %d\n", int(last), int(cudaGetLastError()));
  bool ok = e == cudaErrorMemoryAllocation && last == e && p == reinterpret_cast<void*>(0x1234);
  return ok ? 0 : 1;
}
