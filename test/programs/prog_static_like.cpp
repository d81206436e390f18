// How a program built with nvcc's default static cudart reaches the driver:
// no libcuda or libcudart link; dlopen("libcuda.so.1"), dlsym of
// cuGetProcAddress_v2 once, then ask it for "cuGetProcAddress" itself and use
// the pointer it returns for every later lookup. A tracer that only
// interposes exported symbols sees none of these calls.
#include "driver_check.h"

#include <cudaTypedefs.h>
#include <dlfcn.h>

namespace {

PFN_cuGetProcAddress_v12000 g_lookup;

template <typename Fn>
Fn get(const char* name, int version = 13000, cuuint64_t flags = CU_GET_PROC_ADDRESS_DEFAULT) {
  void* p = nullptr;
  CUdriverProcAddressQueryResult status;
  CHECK_CU(g_lookup(name, &p, version, flags, &status));
  if (status != CU_GET_PROC_ADDRESS_SUCCESS) die(name, int(status));
  return reinterpret_cast<Fn>(p);
}

}  // namespace

int main() {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver) die(dlerror(), 0);
  auto bootstrap = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(driver, "cuGetProcAddress_v2"));
  if (!bootstrap) die("dlsym cuGetProcAddress_v2", 0);

  void *v1 = nullptr, *v2 = nullptr;
  CUdriverProcAddressQueryResult status;
  CHECK_CU(bootstrap("cuGetProcAddress", &v1, 11030, 0, &status));
  CHECK_CU(bootstrap("cuGetProcAddress", &v2, 12000, 0, &status));
  std::printf("cuGetProcAddress 11030 is %s\n", v1 == dlsym(driver, "cuGetProcAddress") ? "v1" : "other");
  std::printf("cuGetProcAddress 12000 is %s\n", v2 == dlsym(driver, "cuGetProcAddress_v2") ? "v2" : "other");
  g_lookup = reinterpret_cast<PFN_cuGetProcAddress_v12000>(v2);

  CHECK_CU(get<PFN_cuInit_v2000>("cuInit")(0));
  CUcontext ctx;
  CHECK_CU(get<PFN_cuDevicePrimaryCtxRetain_v7000>("cuDevicePrimaryCtxRetain")(&ctx, 0));
  CHECK_CU(get<PFN_cuCtxSetCurrent_v4000>("cuCtxSetCurrent")(ctx));

  auto mem_alloc = get<PFN_cuMemAlloc_v3020>("cuMemAlloc");
  auto mem_free = get<PFN_cuMemFree_v3020>("cuMemFree");
  constexpr cuuint64_t kPtsz = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  auto alloc_async = get<PFN_cuMemAllocAsync_v11020_ptsz>("cuMemAllocAsync", 13000, kPtsz);
  auto free_async = get<PFN_cuMemFreeAsync_v11020_ptsz>("cuMemFreeAsync", 13000, kPtsz);
  auto sync = get<PFN_cuStreamSynchronize_v7000_ptsz>("cuStreamSynchronize", 13000, kPtsz);
  std::printf("cuMemAllocAsync per-thread is %s\n",
              reinterpret_cast<void*>(alloc_async) == dlsym(driver, "cuMemAllocAsync_ptsz") ? "_ptsz" : "other");

  // The old v1 lookup still works for names it knows.
  auto v1_lookup = reinterpret_cast<PFN_cuGetProcAddress_v11030>(v1);
  void* get_info = nullptr;
  CHECK_CU(v1_lookup("cuMemGetInfo", &get_info, 13000, 0));

  CUdeviceptr a, b;
  CHECK_CU(mem_alloc(&a, 1 << 20));
  report_alloc("cuMemAlloc_v2", a, 1 << 20);
  CHECK_CU(alloc_async(&b, 2 << 20, CU_STREAM_PER_THREAD));
  report_alloc("cuMemAllocAsync_ptsz", b, 2 << 20);
  size_t free_bytes, total;
  CHECK_CU(reinterpret_cast<PFN_cuMemGetInfo_v3020>(get_info)(&free_bytes, &total));
  std::printf("device used %zu\n", total - free_bytes);
  CHECK_CU(free_async(b, CU_STREAM_PER_THREAD));
  report_free("cuMemFreeAsync_ptsz", b);
  CHECK_CU(sync(CU_STREAM_PER_THREAD));
  CHECK_CU(mem_free(a));
  report_free("cuMemFree_v2", a);
  CHECK_CU(get<PFN_cuDevicePrimaryCtxRelease_v11000>("cuDevicePrimaryCtxRelease")(0));
  return 0;
}
