// CUDA calls from an atexit handler, as exit-time cleanup in real programs
// (and the preload library's own exit hooks) makes them. By then the main
// thread's thread_local objects with destructors are gone; the driver must
// still answer. Scenarios:
//   driver   the handler calls cuMemAlloc/cuMemFree (links libcuda.so.1)
//   runtime  the handler calls cudaMalloc/cudaFree (links libcudart.so.13)
// In both the handler is registered before CUDA is first touched, so the
// driver's lazily built state is younger than the handler.
#include "driver_check.h"

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace {

// exit() from inside an atexit handler is undefined behaviour: report and _exit.
[[noreturn]] void fail_in_handler(const char* what, int code) {
  std::fflush(stdout);
  std::fprintf(stderr, "FAILED: %s returned %d\n", what, code);
  _exit(1);
}

void driver_handler() {
  CUdeviceptr p = 0;
  if (CUresult r = cuMemAlloc(&p, 512)) fail_in_handler("cuMemAlloc in atexit", r);
  report_alloc("cuMemAlloc_v2", p, 512);
  if (CUresult r = cuMemFree(p)) fail_in_handler("cuMemFree in atexit", r);
  report_free("cuMemFree_v2", p);
  std::printf("atexit driver ok\n");
  std::fflush(stdout);
}

void runtime_handler() {
  void* p = nullptr;
  if (cudaError_t e = cudaMalloc(&p, 512)) fail_in_handler("cudaMalloc in atexit", e);
  report_alloc("cudaMalloc", p, 512);
  if (cudaError_t e = cudaFree(p)) fail_in_handler("cudaFree in atexit", e);
  report_free("cudaFree", p);
  std::printf("atexit runtime ok\n");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const char* scenario = argc > 1 ? argv[1] : "driver";
  if (std::strcmp(scenario, "driver") == 0) {
    std::atexit(driver_handler);
    CHECK_CU(cuInit(0));
    CUcontext ctx;
    CHECK_CU(cuDevicePrimaryCtxRetain(&ctx, 0));
    CHECK_CU(cuCtxSetCurrent(ctx));
    CUdeviceptr p;
    CHECK_CU(cuMemAlloc(&p, 1 << 20));
    report_alloc("cuMemAlloc_v2", p, 1 << 20);  // left live on purpose
  } else if (std::strcmp(scenario, "runtime") == 0) {
    std::atexit(runtime_handler);
    void* p;
    if (cudaError_t e = cudaMalloc(&p, 1 << 20)) die("cudaMalloc", e);
    report_alloc("cudaMalloc", p, 1 << 20);
  } else {
    std::fprintf(stderr, "usage: prog_atexit driver|runtime\n");
    return 2;
  }
  return 0;
}
