// Self-test of the simulated driver: the behaviour docs/simulated-driver.md
// promises and the other tests rely on.
#include "selftest_support.h"

#include <cstdint>
#include <cstring>
#include <dlfcn.h>
#include <thread>
#include <utility>

namespace {
// What the dynamic linker resolves the name to: the same pointer cuGetProcAddress
// must return.
void* exported(const char* name) { return dlsym(RTLD_DEFAULT, name); }
}  // namespace

TEST_CASE("calls before cuInit fail with NOT_INITIALIZED, except the documented three") {
  FreshDriver fresh(0, 1, 0, 0, false);
  CUdeviceptr p = 0;
  int count, version;
  void* fn;
  CHECK(cuMemAlloc(&p, 512) == CUDA_ERROR_NOT_INITIALIZED);
  CHECK(cuDeviceGetCount(&count) == CUDA_ERROR_NOT_INITIALIZED);
  CHECK(cuDriverGetVersion(&version) == CUDA_SUCCESS);
  CHECK(version == 13000);
  CHECK(cuGetProcAddress("cuMemAlloc", &fn, 13000, 0, nullptr) == CUDA_SUCCESS);
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  CHECK(cuMemAlloc(&p, 512) == CUDA_ERROR_INVALID_CONTEXT);
}

TEST_CASE("small allocations pack at 512 B, 2 MiB and up take whole granules") {
  FreshDriver fresh;
  CHECK(must_alloc(512) == kBase0);
  CHECK(must_alloc(512) == kBase0 + 0x200);
  CHECK(must_alloc(512) == kBase0 + 0x400);
  CHECK(must_alloc(3 * MiB) == kBase0 + 0x200000);
  CHECK(simcuda_device_footprint_bytes(0) == 6 * MiB);  // one small page + two granules
  CHECK(must_alloc(1) == kBase0 + 0x600);               // rounded to 512, packed
  CHECK(must_alloc(2 * MiB) == kBase0 + 0x600000);
}

TEST_CASE("freed ranges are reused lowest address first, pages return when empty") {
  FreshDriver fresh;
  CUdeviceptr p[4];
  for (auto& q : p) q = must_alloc(512);
  REQUIRE(cuMemFree(p[2]) == CUDA_SUCCESS);
  CHECK(cuMemFree(p[2]) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemFree(0x1234) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemFree(0) == CUDA_SUCCESS);
  CHECK(must_alloc(512) == kBase0 + 0x400);
  for (auto q : p) REQUIRE(cuMemFree(q) == CUDA_SUCCESS);
  CHECK(simcuda_device_footprint_bytes(0) == 0);
}

TEST_CASE("frag5 layout: two single-page arenas 1 GiB apart") {
  FreshDriver fresh;
  CUdeviceptr a = must_alloc(512), filler = must_alloc(2 * MiB - 512), spacer = must_alloc(1024 * MiB),
              b = must_alloc(512);
  REQUIRE(cuMemFree(filler) == CUDA_SUCCESS);
  REQUIRE(cuMemFree(spacer) == CUDA_SUCCESS);
  CHECK(a == kBase0);
  CHECK(b == kBase0 + 0x40200000);
  CHECK(simcuda_device_footprint_bytes(0) == 4 * MiB);
}

TEST_CASE("out of memory leaves the pointer untouched, contexts and hidden bytes count") {
  FreshDriver fresh(8 * MiB);
  CUdeviceptr p = 0xdead;
  CHECK(cuMemAlloc(&p, 8 * MiB + 1) == CUDA_ERROR_OUT_OF_MEMORY);
  CHECK(p == 0xdead);
  CUdeviceptr six = must_alloc(6 * MiB);
  CHECK(cuMemAlloc(&p, 4 * MiB) == CUDA_ERROR_OUT_OF_MEMORY);
  size_t free_bytes, total;
  REQUIRE(cuMemGetInfo(&free_bytes, &total) == CUDA_SUCCESS);
  CHECK(total == 8 * MiB);
  CHECK(free_bytes == 2 * MiB);
  CHECK(cuMemFree(six) == CUDA_SUCCESS);

  FreshDriver costly(8 * MiB, 1, 4 * MiB, 2 * MiB);
  REQUIRE(cuMemGetInfo(&free_bytes, &total) == CUDA_SUCCESS);
  CHECK(free_bytes == 2 * MiB);
  CHECK(cuMemAlloc(&p, 4 * MiB) == CUDA_ERROR_OUT_OF_MEMORY);
}

TEST_CASE("pointer attributes and address range anywhere inside an allocation") {
  FreshDriver fresh;
  must_alloc(512);
  CUdeviceptr p = must_alloc(3 * MiB);
  CUdeviceptr start = 0;
  size_t size = 0;
  int ordinal = -1;
  unsigned type = 0;
  CUcontext ctx = nullptr;
  REQUIRE(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p + 12345) == CUDA_SUCCESS);
  REQUIRE(cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p + 12345) == CUDA_SUCCESS);
  REQUIRE(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p) == CUDA_SUCCESS);
  REQUIRE(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p) == CUDA_SUCCESS);
  REQUIRE(cuPointerGetAttribute(&ctx, CU_POINTER_ATTRIBUTE_CONTEXT, p) == CUDA_SUCCESS);
  CHECK(start == p);
  CHECK(size == 3 * MiB);
  CHECK(ordinal == 0);
  CHECK(type == CU_MEMORYTYPE_DEVICE);
  CHECK(ctx == fresh.primary);
  CUdeviceptr base = 0;
  REQUIRE(cuMemGetAddressRange(&base, &size, p + 3 * MiB - 1) == CUDA_SUCCESS);
  CHECK(base == p);
  CHECK(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p + 3 * MiB) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuGetProcAddress picks the ABI by version and stream flag") {
  FreshDriver fresh(0, 1, 0, 0, false);
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status;
  auto get = [&](const char* name, int version, cuuint64_t flags = 0) {
    fn = nullptr;
    return cuGetProcAddress(name, &fn, version, flags, &status);
  };
  REQUIRE(get("cuMemAlloc", 13000) == CUDA_SUCCESS);
  CHECK(fn == exported("cuMemAlloc_v2"));
  CHECK(get("cuMemAlloc", 3010) == CUDA_ERROR_NOT_FOUND);
  CHECK(status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  CHECK(fn == nullptr);
  CHECK(get("cuNoSuchThing", 13000) == CUDA_ERROR_NOT_FOUND);
  CHECK(status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);

  REQUIRE(get("cuCtxCreate", 11040) == CUDA_SUCCESS);
  CHECK(fn == exported("cuCtxCreate_v3"));
  REQUIRE(get("cuCtxCreate", 12050) == CUDA_SUCCESS);
  CHECK(fn == exported("cuCtxCreate_v4"));
  REQUIRE(get("cuCtxCreate", 11030) == CUDA_SUCCESS);
  CHECK(fn == exported("cuCtxCreate_v2"));

  REQUIRE(get("cuGetProcAddress", 11030) == CUDA_SUCCESS);
  void* v1 = fn;
  REQUIRE(get("cuGetProcAddress", 12000) == CUDA_SUCCESS);
  CHECK(fn == exported("cuGetProcAddress_v2"));
  CHECK(v1 != fn);
  CHECK(get("cuGetProcAddress", 11020) == CUDA_ERROR_NOT_FOUND);

  REQUIRE(get("cuMemAllocAsync", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) == CUDA_SUCCESS);
  void* ptsz = fn;
  REQUIRE(get("cuMemAllocAsync", 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM) == CUDA_SUCCESS);
  CHECK(fn == exported("cuMemAllocAsync"));
  CHECK(ptsz != fn);
  // No per-thread variant: the flag falls back to the only one.
  REQUIRE(get("cuMemAlloc", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) == CUDA_SUCCESS);
  CHECK(fn == exported("cuMemAlloc_v2"));
}

TEST_CASE("VMM: physical memory returns only when released and unmapped") {
  FreshDriver fresh;
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  CUmemGenericAllocationHandle h;
  CHECK(cuMemCreate(&h, 3 * MiB, &prop, 0) == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(cuMemCreate(&h, 4 * MiB, &prop, 0) == CUDA_SUCCESS);
  CHECK(simcuda_device_footprint_bytes(0) == 4 * MiB);

  CUdeviceptr va;
  REQUIRE(cuMemAddressReserve(&va, 157ull << 30, 0, 0, 0) == CUDA_SUCCESS);  // PyTorch-sized
  CHECK(va == 0x7f8000000000ull);
  CHECK(simcuda_device_footprint_bytes(0) == 4 * MiB);  // reservations cost no capacity
  CHECK(cuMemMap(va + 4096, 2 * MiB, 0, h, 0) == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(cuMemMap(va, 4 * MiB, 0, h, 0) == CUDA_SUCCESS);
  REQUIRE(cuMemRelease(h) == CUDA_SUCCESS);
  CHECK(simcuda_device_footprint_bytes(0) == 4 * MiB);  // still mapped
  unsigned type = 0;
  REQUIRE(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, va + MiB) == CUDA_SUCCESS);
  CHECK(type == CU_MEMORYTYPE_DEVICE);
  CHECK(cuMemAddressFree(va, 157ull << 30) == CUDA_ERROR_INVALID_VALUE);  // unmap first
  REQUIRE(cuMemUnmap(va, 4 * MiB) == CUDA_SUCCESS);
  CHECK(simcuda_device_footprint_bytes(0) == 0);
  CHECK(cuMemAddressFree(va, 157ull << 30) == CUDA_SUCCESS);

  CUdeviceptr aligned;
  REQUIRE(cuMemAddressReserve(&aligned, 2 * MiB, 1ull << 30, 0, 0) == CUDA_SUCCESS);
  CHECK(aligned % (1ull << 30) == 0);
}

TEST_CASE("pools keep freed blocks reserved until trimmed or synced past the threshold") {
  FreshDriver fresh;
  CUmemoryPool pool;
  REQUIRE(cuDeviceGetDefaultMemPool(&pool, 0) == CUDA_SUCCESS);
  CUdeviceptr a, b;
  REQUIRE(cuMemAllocAsync(&a, MiB, nullptr) == CUDA_SUCCESS);
  REQUIRE(cuMemAllocAsync(&b, 3 * MiB, nullptr) == CUDA_SUCCESS);
  CHECK(a == 0x7f4000000000ull);
  CHECK(b == 0x7f4000200000ull);
  REQUIRE(cuMemFreeAsync(a, nullptr) == CUDA_SUCCESS);
  REQUIRE(cuMemFreeAsync(b, nullptr) == CUDA_SUCCESS);
  cuuint64_t reserved = 0, used = 1;
  REQUIRE(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved) == CUDA_SUCCESS);
  REQUIRE(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used) == CUDA_SUCCESS);
  CHECK(reserved == 6 * MiB);
  CHECK(used == 0);
  CHECK(simcuda_device_footprint_bytes(0) == 6 * MiB);

  CUdeviceptr c;  // reuses the reservation
  REQUIRE(cuMemAllocAsync(&c, 512, nullptr) == CUDA_SUCCESS);
  CHECK(c == 0x7f4000000000ull);
  REQUIRE(cuMemPoolTrimTo(pool, 0) == CUDA_SUCCESS);  // keeps the granule c lives in
  REQUIRE(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved) == CUDA_SUCCESS);
  CHECK(reserved == 2 * MiB);
  REQUIRE(cuMemFreeAsync(c, nullptr) == CUDA_SUCCESS);

  cuuint64_t keep = 2 * MiB;
  REQUIRE(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep) == CUDA_SUCCESS);
  REQUIRE(cuMemAllocAsync(&a, 5 * MiB, nullptr) == CUDA_SUCCESS);
  REQUIRE(cuMemFreeAsync(a, nullptr) == CUDA_SUCCESS);
  REQUIRE(cuStreamSynchronize(nullptr) == CUDA_SUCCESS);
  REQUIRE(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved) == CUDA_SUCCESS);
  CHECK(reserved == 2 * MiB);
}

TEST_CASE("contexts are per thread and primary release frees the context's memory") {
  FreshDriver fresh(0, 2);
  CUcontext created;
  REQUIRE(cuCtxCreate(&created, nullptr, 0, 1) == CUDA_SUCCESS);
  CHECK(must_alloc(512) == 0x800000000000ull);
  CUdevice dev;
  REQUIRE(cuCtxGetDevice(&dev) == CUDA_SUCCESS);
  CHECK(dev == 1);
  REQUIRE(cuCtxDestroy(created) == CUDA_SUCCESS);
  CHECK(simcuda_device_footprint_bytes(1) == 0);
  CUcontext now;
  REQUIRE(cuCtxGetCurrent(&now) == CUDA_SUCCESS);
  CHECK(now == fresh.primary);

  must_alloc(512);
  REQUIRE(cuDevicePrimaryCtxRelease(0) == CUDA_SUCCESS);
  CHECK(simcuda_device_footprint_bytes(0) == 0);
  CHECK(simcuda_device_context_count(0) == 0);
}

TEST_CASE("the context stack holds 64 per thread, a deeper push is OUT_OF_MEMORY") {
  FreshDriver fresh;  // the primary is the first entry
  for (int i = 1; i < 64; ++i) REQUIRE(cuCtxPushCurrent(fresh.primary) == CUDA_SUCCESS);
  CHECK(cuCtxPushCurrent(fresh.primary) == CUDA_ERROR_OUT_OF_MEMORY);
  CUcontext created = nullptr;
  CHECK(cuCtxCreate(&created, nullptr, 0, 0) == CUDA_ERROR_OUT_OF_MEMORY);
  CHECK(created == nullptr);
  CHECK(simcuda_device_context_count(0) == 1);
  CUcontext popped;
  for (int i = 0; i < 64; ++i) REQUIRE(cuCtxPopCurrent(&popped) == CUDA_SUCCESS);
  CHECK(cuCtxPopCurrent(&popped) == CUDA_ERROR_INVALID_CONTEXT);
}

TEST_CASE("device identity") {
  FreshDriver fresh(0, 2);
  CUuuid uuid;
  REQUIRE(cuDeviceGetUuid(&uuid, 1) == CUDA_SUCCESS);
  CHECK(std::memcmp(uuid.bytes, "simcuda-h200\0\0\0\1", 16) == 0);
  char name[64];
  REQUIRE(cuDeviceGetName(name, sizeof name, 0) == CUDA_SUCCESS);
  CHECK(std::string(name) == "NVIDIA H200 (simulated)");
  size_t total;
  REQUIRE(cuDeviceTotalMem(&total, 0) == CUDA_SUCCESS);
  CHECK(total == 150754820096ull);
}

TEST_CASE("impossible sizes are OUT_OF_MEMORY, never a block that wrapped around") {
  FreshDriver fresh;
  constexpr size_t kMax = SIZE_MAX;
  CUdeviceptr p = 0xdead;
  size_t pitch = 0xbeef;
  // Rounding these up to 512 B or 2 MiB used to wrap to a tiny block that
  // shared its address with the next real allocation.
  for (size_t size : {kMax, kMax - 511, kMax - size_t(2 * MiB) + 2, size_t(1) << 63, (size_t(1) << 40) * 300}) {
    INFO("size " << size);
    CHECK(cuMemAlloc(&p, size) == CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(p == 0xdead);
    CHECK(cuMemAllocAsync(&p, size, nullptr) == CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(p == 0xdead);
    void* host = reinterpret_cast<void*>(0xdead);
    CHECK(cuMemAllocHost(&host, size) == CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(cuMemHostAlloc(&host, size, 0) == CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(host == reinterpret_cast<void*>(0xdead));
    CHECK(cuMemAllocManaged(&p, size, CU_MEM_ATTACH_GLOBAL) == CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(p == 0xdead);
  }
  // Pitch rounding and pitch x height overflow separately.
  for (auto [width, height] :
       {std::pair<size_t, size_t>{kMax, kMax}, {kMax, 1}, {size_t(1) << 40, size_t(1) << 40}, {512, kMax / 256}}) {
    INFO("width " << width << " height " << height);
    CHECK(cuMemAllocPitch(&p, &pitch, width, height, 4) == CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(p == 0xdead);
    CHECK(pitch == 0xbeef);
  }
  CHECK(simcuda_device_footprint_bytes(0) == 0);
  CHECK(must_alloc(512) == kBase0);  // nothing was placed
  CUdeviceptr async = 0;
  REQUIRE(cuMemAllocAsync(&async, 512, nullptr) == CUDA_SUCCESS);
  CHECK(async == 0x7f4000000000ull);
  REQUIRE(cuMemFreeAsync(async, nullptr) == CUDA_SUCCESS);

  // VMM: sizes that are granule multiples but cannot exist.
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  CUmemGenericAllocationHandle h = 0x77;
  const size_t huge = kMax - 2 * MiB + 1;  // the largest multiple of 2 MiB
  CHECK(cuMemCreate(&h, huge, &prop, 0) == CUDA_ERROR_OUT_OF_MEMORY);
  CHECK(h == 0x77);
  CUdeviceptr va = 0xdead;
  CHECK(cuMemAddressReserve(&va, huge, 0, 0, 0) == CUDA_ERROR_OUT_OF_MEMORY);
  CHECK(cuMemAddressReserve(&va, huge, 0, 0x7f8000000000ull, 0) == CUDA_ERROR_OUT_OF_MEMORY);
  CHECK(cuMemAddressReserve(&va, 2 * MiB, size_t(1) << 63, 0, 0) == CUDA_ERROR_OUT_OF_MEMORY);
  CHECK(va == 0xdead);
  REQUIRE(cuMemAddressReserve(&va, 4 * MiB, 0, 0, 0) == CUDA_SUCCESS);
  REQUIRE(cuMemCreate(&h, 2 * MiB, &prop, 0) == CUDA_SUCCESS);
  CHECK(cuMemMap(va + 2 * MiB, huge, 0, h, 0) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemMap(va, 2 * MiB, huge, h, 0) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemUnmap(va + 2 * MiB, huge) == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(cuMemRelease(h) == CUDA_SUCCESS);
  REQUIRE(cuMemAddressFree(va, 4 * MiB) == CUDA_SUCCESS);
}

// Stream capture (capture.h): what a capture prohibits, from which threads.
namespace {
unsigned long long violations() {
  auto fn = reinterpret_cast<unsigned long long (*)()>(exported("simcuda_capture_violations"));
  return fn ? fn() : ~0ull;
}

// Runs `call` on a new thread in `mode` and returns its result.
template <class Call>
CUresult on_other_thread(CUstreamCaptureMode mode, Call call) {
  CUresult r = CUDA_ERROR_UNKNOWN;
  CUcontext ctx = nullptr;
  REQUIRE(cuCtxGetCurrent(&ctx) == CUDA_SUCCESS);
  std::thread t([&] {
    cuCtxSetCurrent(ctx);
    CUstreamCaptureMode m = mode;
    cuThreadExchangeStreamCaptureMode(&m);
    r = call();
  });
  t.join();
  return r;
}
}  // namespace

TEST_CASE("a global capture: a memory query from another thread fails and invalidates it") {
  FreshDriver fresh;
  CUstream s;
  REQUIRE(cuStreamCreate(&s, 0) == CUDA_SUCCESS);
  const unsigned long long before = violations();
  REQUIRE(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL) == CUDA_SUCCESS);
  size_t free_bytes = 0, total = 0;
  CHECK(on_other_thread(CU_STREAM_CAPTURE_MODE_GLOBAL, [&] { return cuMemGetInfo(&free_bytes, &total); }) ==
        CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  CHECK(violations() == before + 1);
  CUstreamCaptureStatus status;
  CHECK(cuStreamIsCapturing(s, &status) == CUDA_SUCCESS);
  CHECK(status == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
  CUgraph g;
  CHECK(cuStreamEndCapture(s, &g) == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  CHECK(cuStreamIsCapturing(s, &status) == CUDA_SUCCESS);
  CHECK(status == CU_STREAM_CAPTURE_STATUS_NONE);
  CHECK(cuMemGetInfo(&free_bytes, &total) == CUDA_SUCCESS);  // no capture: allowed again
}

TEST_CASE("a capture: the capturing thread's own allocation fails, stream-ordered ones become graph nodes") {
  FreshDriver fresh;
  CUstream s;
  REQUIRE(cuStreamCreate(&s, 0) == CUDA_SUCCESS);
  REQUIRE(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_SUCCESS);
  CUdeviceptr node = 0, p = 0;
  CHECK(cuMemAllocAsync(&node, 3 * MiB, s) == CUDA_SUCCESS);
  CHECK(node == 0x6f0000000000ull);
  CHECK(simcuda_device_footprint_bytes(0) == 0);  // a graph node takes no device memory
  CHECK(cuMemFreeAsync(node, s) == CUDA_SUCCESS);
  CHECK(cuMemAlloc(&p, 512) == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  CUgraph g;
  CHECK(cuStreamEndCapture(s, &g) == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
}

TEST_CASE("thread-local and relaxed captures do not reach other threads, relaxed threads are never stopped") {
  FreshDriver fresh;
  CUstream s;
  REQUIRE(cuStreamCreate(&s, 0) == CUDA_SUCCESS);
  size_t free_bytes = 0, total = 0;
  auto query = [&] { return cuMemGetInfo(&free_bytes, &total); };
  const unsigned long long before = violations();
  REQUIRE(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_SUCCESS);
  CHECK(on_other_thread(CU_STREAM_CAPTURE_MODE_GLOBAL, query) == CUDA_SUCCESS);
  CUgraph g;
  CHECK(cuStreamEndCapture(s, &g) == CUDA_SUCCESS);
  REQUIRE(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL) == CUDA_SUCCESS);
  CHECK(on_other_thread(CU_STREAM_CAPTURE_MODE_RELAXED, query) == CUDA_SUCCESS);
  CHECK(on_other_thread(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, query) == CUDA_SUCCESS);
  CHECK(on_other_thread(CU_STREAM_CAPTURE_MODE_GLOBAL, [&] { return cuStreamEndCapture(s, &g); }) ==
        CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
  CHECK(cuStreamEndCapture(s, &g) == CUDA_SUCCESS);
  CHECK(violations() == before);
}
