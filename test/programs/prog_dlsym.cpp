// How other libraries in a PyTorch process reach the driver: dlopen and dlsym
// of exported, versioned names (cuMemAlloc_v2, ...), and dlsym(RTLD_DEFAULT)
// once the driver is loaded RTLD_GLOBAL. Links neither libcuda nor libcudart.
#include "driver_check.h"

#include <cudaTypedefs.h>
#include <dlfcn.h>

namespace {
template <typename Fn>
Fn sym(void* handle, const char* name) {
  void* p = dlsym(handle, name);
  if (!p) die(name, 0);
  return reinterpret_cast<Fn>(p);
}
}  // namespace

int main() {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!driver) die(dlerror(), 0);
  CHECK_CU(sym<PFN_cuInit_v2000>(driver, "cuInit")(0));
  CUcontext ctx;
  CHECK_CU(sym<PFN_cuDevicePrimaryCtxRetain_v7000>(driver, "cuDevicePrimaryCtxRetain")(&ctx, 0));
  CHECK_CU(sym<PFN_cuCtxSetCurrent_v4000>(driver, "cuCtxSetCurrent")(ctx));

  auto alloc = sym<PFN_cuMemAlloc_v3020>(driver, "cuMemAlloc_v2");
  auto release = sym<PFN_cuMemFree_v3020>(driver, "cuMemFree_v2");
  auto info = sym<PFN_cuMemGetInfo_v3020>(driver, "cuMemGetInfo_v2");
  CUdeviceptr a;
  CHECK_CU(alloc(&a, 4 << 20));
  report_alloc("cuMemAlloc_v2", a, 4 << 20);

  auto global_alloc = sym<PFN_cuMemAlloc_v3020>(RTLD_DEFAULT, "cuMemAlloc_v2");
  auto global_free = sym<PFN_cuMemFree_v3020>(RTLD_DEFAULT, "cuMemFree_v2");
  CUdeviceptr b;
  CHECK_CU(global_alloc(&b, 512));
  report_alloc("cuMemAlloc_v2", b, 512);

  size_t free_bytes, total;
  CHECK_CU(info(&free_bytes, &total));
  std::printf("device used %zu\n", total - free_bytes);
  CHECK_CU(global_free(b));
  report_free("cuMemFree_v2", b);
  CHECK_CU(release(a));
  report_free("cuMemFree_v2", a);
  return 0;
}
