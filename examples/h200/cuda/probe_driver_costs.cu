// What the driver queries cumemtrace makes per allocation cost on a real GPU, so the
// per-event device lookup can use the cheapest sound one. Times cuPointerGetAttribute
// (DEVICE_ORDINAL) right after cudaMalloc of 512 B (inside a held 2 MiB page) and of
// 2 MiB (a fresh range), against cuCtxGetCurrent and cuCtxGetDevice.
#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>

using Clock = std::chrono::steady_clock;

static double ns_since(Clock::time_point t0, int n) {
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / n;
}

int main() {
  void* hold = nullptr;
  cudaMalloc(&hold, 512);
  for (size_t size : {size_t(512), size_t(2) << 20}) {
    const int n = size == 512 ? 20000 : 2000;
    double plain = 0, attr = 0;
    for (int rep = 0; rep < 3; ++rep) {
      auto t0 = Clock::now();
      for (int i = 0; i < n; ++i) {
        void* p;
        cudaMalloc(&p, size);
        cudaFree(p);
      }
      plain = ns_since(t0, n);
      t0 = Clock::now();
      for (int i = 0; i < n; ++i) {
        void* p;
        cudaMalloc(&p, size);
        int ordinal = -1;
        cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, reinterpret_cast<CUdeviceptr>(p));
        cudaFree(p);
      }
      attr = ns_since(t0, n);
    }
    std::printf("size %zu: pair %.1f ns, pair + cuPointerGetAttribute %.1f ns (+%.1f)\n", size, plain, attr,
                attr - plain);
  }
  const int n = 200000;
  auto t0 = Clock::now();
  CUcontext ctx;
  for (int i = 0; i < n; ++i) cuCtxGetCurrent(&ctx);
  std::printf("cuCtxGetCurrent %.1f ns\n", ns_since(t0, n));
  t0 = Clock::now();
  CUdevice dev;
  for (int i = 0; i < n; ++i) cuCtxGetDevice(&dev);
  std::printf("cuCtxGetDevice %.1f ns\n", ns_since(t0, n));
  return 0;
}
