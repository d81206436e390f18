#include "probe/driver_api.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include <cumemtrace/trace_format.h>

#include "probe/stream_capture.h"
#include "base/errno_guard.h"
#include "base/loader_lock.h"
#include "base/log.h"
#include "resolve/resolve.h"

namespace cumemtrace::interpose {
namespace {

DriverApi* load_driver_api() {
  const LoaderUse in_loader;
  void* known = any_real_driver_function();
  Dl_info info{};
  if (!known || !dladdr(known, &info) || !info.dli_fname) {
    log_debug("driver queries: no real driver function known yet");
    return nullptr;
  }
  // RTLD_NOLOAD: only a handle to the library already in the process, never a new load.
  void* lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (!lib) {
    log_warn("driver queries: cannot reach {} ({}); devices will be unknown", info.dli_fname, dlerror());
    return nullptr;
  }
  log_debug("driver queries through {}", info.dli_fname);
  auto* api = new DriverApi{};  // lives as long as the process
  bind_function(lib, api->pointer_get_attribute, "cuPointerGetAttribute");
  bind_function(lib, api->ctx_get_device, "cuCtxGetDevice");
  bind_function(lib, api->ctx_get_current, "cuCtxGetCurrent");
  bind_function(lib, api->device_get_name, "cuDeviceGetName");
  bind_function(lib, api->device_total_mem, "cuDeviceTotalMem_v2");
  bind_function(lib, api->device_get_uuid, "cuDeviceGetUuid_v2");
  if (!api->device_get_uuid) bind_function(lib, api->device_get_uuid, "cuDeviceGetUuid");
  bind_function(lib, api->primary_ctx_get_state, "cuDevicePrimaryCtxGetState");
  bind_function(lib, api->device_get_default_mem_pool, "cuDeviceGetDefaultMemPool");
  bind_function(lib, api->device_get_mem_pool, "cuDeviceGetMemPool");
  bind_function(lib, api->mem_pool_get_attribute, "cuMemPoolGetAttribute");
  bind_function(lib, api->device_get_graph_mem_attribute, "cuDeviceGetGraphMemAttribute");
  return api;
}

}  // namespace

// No lock: a fork while another thread held one between load_driver_api() and its release left the
// child waiting on it forever at its first allocation. Two threads may both load; the
// first to publish wins and the other's table is dropped.
namespace {
std::atomic<DriverApi*> g_api{nullptr};
}  // namespace

const DriverApi* driver_api() {
  if (DriverApi* a = g_api.load(std::memory_order_acquire)) return a;
  DriverApi* fresh = load_driver_api();
  if (!fresh) return nullptr;
  DriverApi* seen = nullptr;
  if (g_api.compare_exchange_strong(seen, fresh, std::memory_order_acq_rel)) return fresh;
  delete fresh;
  return seen;
}

int32_t device_of(uint64_t address) {
  const OwnCudaCalls own;
  if (!own) return kDeviceNotAsked;
  const DriverApi* d = driver_api();
  if (!d) return -1;
  int ordinal = -1;
  if (address && d->pointer_get_attribute &&
      d->pointer_get_attribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, address) == CUDA_SUCCESS)
    return ordinal;
  CUdevice dev = -1;
  if (d->ctx_get_device && d->ctx_get_device(&dev) == CUDA_SUCCESS) return dev;
  return -1;
}

uint64_t range_size_of(uint64_t address) {
  const ErrnoGuard keep;
  const OwnCudaCalls own;
  const DriverApi* d = own ? driver_api() : nullptr;
  size_t size = 0;
  if (!d || !d->pointer_get_attribute ||
      d->pointer_get_attribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, address) != CUDA_SUCCESS)
    return format::kUnknown64;
  return size;
}

uint64_t current_context() {
  const OwnCudaCalls own;
  const DriverApi* d = own ? driver_api() : nullptr;
  CUcontext ctx = nullptr;
  if (!d || !d->ctx_get_current || d->ctx_get_current(&ctx) != CUDA_SUCCESS) return 0;
  return reinterpret_cast<uintptr_t>(ctx);
}

bool primary_context_active(int32_t dev) {
  const OwnCudaCalls own;
  const DriverApi* d = own ? driver_api() : nullptr;
  unsigned flags = 0;
  int active = 1;
  if (!d || !d->primary_ctx_get_state || d->primary_ctx_get_state(dev, &flags, &active) != CUDA_SUCCESS) return true;
  return active != 0;
}

DeviceFacts device_facts(int32_t ordinal) {
  DeviceFacts f;
  const OwnCudaCalls own;
  f.asked = bool(own);
  const DriverApi* d = driver_api();
  if (!own || !d || ordinal < 0) return f;
  char name[256] = {};
  if (d->device_get_name && d->device_get_name(name, sizeof name - 1, ordinal) == CUDA_SUCCESS) f.name = name;
  size_t total = 0;
  if (d->device_total_mem && d->device_total_mem(&total, ordinal) == CUDA_SUCCESS) f.total_bytes = total;
  CUuuid uuid{};
  if (d->device_get_uuid && d->device_get_uuid(&uuid, ordinal) == CUDA_SUCCESS) {
    std::memcpy(f.uuid, uuid.bytes, sizeof f.uuid);
    f.uuid_known = true;
  }
  // So that cuMemPoolTrimTo(pool) can be put on its device.
  CUmemoryPool pool = nullptr;
  if (d->device_get_default_mem_pool && d->device_get_default_mem_pool(&pool, ordinal) == CUDA_SUCCESS)
    f.pools[0] = reinterpret_cast<uint64_t>(pool);
  if (d->device_get_mem_pool && d->device_get_mem_pool(&pool, ordinal) == CUDA_SUCCESS)
    f.pools[1] = reinterpret_cast<uint64_t>(pool);
  return f;
}

uint64_t pool_reserved_bytes(uint64_t pool) {
  const OwnCudaCalls own;
  const DriverApi* d = driver_api();
  cuuint64_t bytes = 0;
  if (!own || !pool || !d || !d->mem_pool_get_attribute ||
      d->mem_pool_get_attribute(reinterpret_cast<CUmemoryPool>(pool), CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &bytes) !=
          CUDA_SUCCESS)
    return ~0ull;
  return bytes;
}

GraphMemFigures graph_mem_figures(int32_t device) {
  GraphMemFigures f;
  const OwnCudaCalls own;
  const DriverApi* d = own ? driver_api() : nullptr;
  if (!d || !d->device_get_graph_mem_attribute || device < 0) return f;
  const auto read = [&](CUgraphMem_attribute attr, uint64_t& out) {
    cuuint64_t v = 0;
    if (d->device_get_graph_mem_attribute(device, attr, &v) == CUDA_SUCCESS) out = v;
  };
  read(CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, f.used_current);
  read(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, f.reserved_current);
  read(CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, f.used_high);
  read(CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, f.reserved_high);
  return f;
}

std::string nvml_uuid_string(const uint8_t (&u)[16]) {
  char s[48];
  std::snprintf(s, sizeof s, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  return s;
}

}  // namespace cumemtrace::interpose
