// The handful of driver queries cumemtrace makes itself, resolved from the same libcuda
// the program uses. None of them creates a context or changes the current one.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>

namespace cumemtrace::interpose {

struct DriverApi {
  CUresult (*pointer_get_attribute)(void*, CUpointer_attribute, CUdeviceptr);
  CUresult (*ctx_get_device)(CUdevice*);
  CUresult (*ctx_get_current)(CUcontext*);
  CUresult (*device_get_name)(char*, int, CUdevice);
  CUresult (*device_total_mem)(size_t*, CUdevice);
  CUresult (*device_get_uuid)(CUuuid*, CUdevice);
  CUresult (*primary_ctx_get_state)(CUdevice, unsigned*, int*);
  CUresult (*device_get_default_mem_pool)(CUmemoryPool*, CUdevice);
  CUresult (*device_get_mem_pool)(CUmemoryPool*, CUdevice);
  CUresult (*mem_pool_get_attribute)(CUmemoryPool, CUmemPool_attribute, void*);
  CUresult (*device_get_graph_mem_attribute)(CUdevice, CUgraphMem_attribute, void*);
};

// nullptr until the program has reached a real driver function through us.
const DriverApi* driver_api();

// Each query below asks the driver only outside stream captures (probe/stream_capture.h); during one
// it answers "not asked" and asks nothing.

// Device ordinal of a live device pointer, else of the current context; -1 unknown;
// kDeviceNotAsked during a capture.
inline constexpr int32_t kDeviceNotAsked = -3;
int32_t device_of(uint64_t address);

// Bytes of the allocation whose range holds `address` (CU_POINTER_ATTRIBUTE_RANGE_SIZE,
// what cuMemGetAddressRange answers), or kUnknown64: not asked (a capture was open) or
// the driver could not tell.
uint64_t range_size_of(uint64_t address);

// The current context of the thread; 0 when none, unknown, or during a capture.
uint64_t current_context();

// Whether the primary context of `dev` is active; true when the driver was not asked (a
// capture was open) or could not tell, so that a caller never tears down on a guess.
bool primary_context_active(int32_t dev);

struct DeviceFacts {
  bool asked = false;  // false: a capture was open, nothing was asked
  std::string name;
  uint64_t total_bytes = 0;
  uint8_t uuid[16] = {};
  bool uuid_known = false;
  uint64_t pools[2] = {};  // its default and current memory pools (0: unknown)
};
DeviceFacts device_facts(int32_t ordinal);

// Bytes a memory pool holds (CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), or kUnknown64 (also
// during a capture). Only ever asked of a device's default pool, which cannot be
// destroyed under us.
uint64_t pool_reserved_bytes(uint64_t pool);

// The device's CUDA graph memory pool, bytes (cuDeviceGetGraphMemAttribute's four
// figures); each kUnknown64 during a capture, for a device < 0, or when the driver has
// no such attribute (before CUDA 11.4) or refuses it.
struct GraphMemFigures {
  uint64_t used_current = ~0ull;
  uint64_t reserved_current = ~0ull;
  uint64_t used_high = ~0ull;
  uint64_t reserved_high = ~0ull;
};
GraphMemFigures graph_mem_figures(int32_t device);

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", NVML's spelling of a UUID.
std::string nvml_uuid_string(const uint8_t (&uuid)[16]);

}  // namespace cumemtrace::interpose
