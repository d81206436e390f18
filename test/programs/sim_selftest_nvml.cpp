// The sim NVML's view of this process, as the SIMCUDA_* settings and the
// driver state determine it.
#include "selftest_support.h"

#include "nvml_types.h"

namespace {
nvmlDevice_t device(unsigned index) {
  nvmlDevice_t d;
  REQUIRE(nvmlDeviceGetHandleByIndex_v2(index, &d) == NVML_SUCCESS);
  return d;
}
}  // namespace

TEST_CASE("NVML lists the process once it has a context, with context, hidden and granule bytes") {
  FreshDriver fresh(0, 2, 512 * MiB, 100 * MiB, false);
  REQUIRE(nvmlInit_v2() == NVML_SUCCESS);
  unsigned count = 0;
  REQUIRE(nvmlDeviceGetCount_v2(&count) == NVML_SUCCESS);
  CHECK(count == 2);
  nvmlProcessInfo_t infos[4];
  unsigned n = 4;
  REQUIRE(nvmlDeviceGetComputeRunningProcesses_v3(device(0), &n, infos) == NVML_SUCCESS);
  CHECK(n == 0);

  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  CUcontext ctx;
  REQUIRE(cuDevicePrimaryCtxRetain(&ctx, 0) == CUDA_SUCCESS);
  REQUIRE(cuCtxSetCurrent(ctx) == CUDA_SUCCESS);
  must_alloc(512);
  n = 0;
  CHECK(nvmlDeviceGetComputeRunningProcesses_v3(device(0), &n, nullptr) == NVML_ERROR_INSUFFICIENT_SIZE);
  CHECK(n == 1);
  REQUIRE(nvmlDeviceGetComputeRunningProcesses_v3(device(0), &n, infos) == NVML_SUCCESS);
  CHECK(infos[0].pid == unsigned(getpid()));
  CHECK(infos[0].usedGpuMemory == 512 * MiB + 100 * MiB + 2 * MiB);
  n = 4;
  REQUIRE(nvmlDeviceGetComputeRunningProcesses_v2(device(1), &n, infos) == NVML_SUCCESS);
  CHECK(n == 0);

  nvmlMemory_t mem;
  REQUIRE(nvmlDeviceGetMemoryInfo(device(0), &mem) == NVML_SUCCESS);
  CHECK(mem.total == 150754820096ull);
  CHECK(mem.used == 614 * MiB);
  CHECK(mem.free == mem.total - mem.used);
  REQUIRE(nvmlShutdown() == NVML_SUCCESS);
}

TEST_CASE("NVML UUID and name match the driver's") {
  FreshDriver fresh(0, 2, 0, 0, false);
  REQUIRE(nvmlInit_v2() == NVML_SUCCESS);
  char uuid[NVML_DEVICE_UUID_BUFFER_SIZE], name[NVML_DEVICE_NAME_BUFFER_SIZE];
  REQUIRE(nvmlDeviceGetUUID(device(1), uuid, sizeof uuid) == NVML_SUCCESS);
  CHECK(std::string(uuid) == "GPU-73696d63-7564-612d-6832-303000000001");
  REQUIRE(nvmlDeviceGetName(device(0), name, sizeof name) == NVML_SUCCESS);
  CHECK(std::string(name) == "NVIDIA H200 (simulated)");
  REQUIRE(nvmlShutdown() == NVML_SUCCESS);
  CHECK(nvmlDeviceGetCount_v2(nullptr) == NVML_ERROR_UNINITIALIZED);
}
