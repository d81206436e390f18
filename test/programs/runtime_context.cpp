// cudaSetDevice(1) creates device 1's primary context (CUDA >= 12 does so at
// once) and the first allocation lands in device 1's address range. Needs
// SIMCUDA_DEVICES >= 2; exits 77 (CTest "skipped") otherwise.
#include "runtime_common.h"

int scenario_context() {
  int count = 0;
  CHECK_RT(cudaGetDeviceCount(&count));
  if (count < 2) {
    std::printf("needs SIMCUDA_DEVICES>=2, have %d\n", count);
    return 77;
  }
  CHECK_RT(cudaSetDevice(1));
  void* p;
  CHECK_RT(cudaMalloc(&p, 1 << 20));
  report_alloc("cudaMalloc", p, 1 << 20);
  int device = -1;
  CHECK_RT(cudaGetDevice(&device));
  std::printf("device %d\n", device);
  CHECK_RT(cudaFree(p));
  report_free("cudaFree", p);
  return 0;
}
