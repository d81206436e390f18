// Bodies of the hooks for CUDA arrays and CUDA IPC (hook_table.def names them), driver
// and runtime. Arrays hold device memory with no device pointer: the event's address is
// the CUarray handle. An IPC import is memory another process holds, mapped here: listed,
// never this process's device bytes (trace_format.h: kIpcImport).
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "cumemtrace/rules/ipc_id.h"
#include "hooks/array_size.h"
#include "track/call.h"
#include "probe/driver_api.h"
#include "hooks/hooks_driver.h"

namespace cumemtrace::interpose {

// A size the tracer could not work out is 0, flagged (trace_format.h: kEventSizeUnknown).
inline uint32_t size_flags(uint64_t size) { return size ? 0u : uint32_t(format::kEventSizeUnknown); }

inline CUresult record_array(DriverCall& call, CUresult r, uint64_t handle, uint64_t size) {
  call.record({.op = Op::kAlloc,
               .kind = Kind::kArray,
               .result = r,
               .address = handle,
               .size = size,
               .flags = size_flags(size)});
  return r;
}

CUresult on_array_create(HookId id, auto real, CUarray* handle, const CUDA_ARRAY_DESCRIPTOR* desc) {
  DriverCall call(id);
  const CUresult r = real(handle, desc);
  return record_array(call, r, out(r, handle), array_bytes(desc));
}

CUresult on_array_3d_create(HookId id, auto real, CUarray* handle, const CUDA_ARRAY3D_DESCRIPTOR* desc) {
  DriverCall call(id);
  const CUresult r = real(handle, desc);
  return record_array(call, r, out(r, handle), array_bytes(desc));
}

CUresult on_mipmapped_array_create(HookId id, auto real, CUmipmappedArray* handle, const CUDA_ARRAY3D_DESCRIPTOR* desc,
                                   unsigned levels) {
  DriverCall call(id);
  const CUresult r = real(handle, desc, levels);
  return record_array(call, r, out(r, handle), mipmapped_array_bytes(desc, levels));
}

// cuArrayDestroy and cuMipmappedArrayDestroy: a free at the handle, recorded before the
// call like every free (call.h says why).
CUresult on_array_destroy(HookId id, auto real, auto handle) {
  DriverCall call(id);
  const auto freed = handle ? call.record_before({.op = Op::kFree, .address = bits(handle)}) : format::EventRecord{};
  const CUresult r = real(handle);
  call.restore_if_failed(freed, r);
  return r;
}

// An IPC export or import carries the handle's identity (rules/ipc_id.h): the importer's
// trace cannot name the exporter, so a reader of both traces pairs them by it.
inline EventDraft export_of(int32_t result, uint64_t address, uint64_t id) {
  return {.op = Op::kShare, .result = result, .address = address, .handle = id, .flags = format::kEventIpcId};
}

// Export: marks the allocation at `dptr` as shared with other processes.
CUresult on_ipc_get_mem_handle(HookId id, auto real, CUipcMemHandle* out_handle, CUdeviceptr dptr) {
  DriverCall call(id);
  const CUresult r = real(out_handle, dptr);
  if (r == CUDA_SUCCESS) call.record(export_of(r, dptr, format::ipc_id(out_handle->reserved)));
  return r;
}

CUresult on_mem_export_shareable(HookId id, auto real, void* shareable, CUmemGenericAllocationHandle handle,
                                 CUmemAllocationHandleType type, unsigned long long flags) {
  DriverCall call(id);
  const CUresult r = real(shareable, handle, type, flags);
  if (r == CUDA_SUCCESS)
    call.record({.op = Op::kShare, .kind = Kind::kVmmPhysical, .result = r, .handle = handle, .device = -1});
  return r;
}

// Import: the driver maps the exporter's allocation here. Its size is the exported
// allocation's, asked of the driver (its range at the mapped address) unless a capture
// is open; then 0, flagged. The exporter is named by the handle's identity only.
inline EventDraft import_of(int32_t result, uint64_t address, uint64_t id) {
  const uint64_t asked = address ? range_size_of(address) : 0;
  const uint64_t size = asked == format::kUnknown64 ? 0 : asked;
  return {.op = Op::kAlloc,
          .kind = Kind::kIpcImport,
          .result = result,
          .address = address,
          .size = size,
          .handle = id,
          .flags = uint32_t(format::kEventIpcId) | (result == 0 ? size_flags(size) : 0u)};
}

CUresult on_ipc_open_mem_handle(HookId id, auto real, CUdeviceptr* dptr, CUipcMemHandle handle, unsigned flags) {
  DriverCall call(id);
  const CUresult r = real(dptr, handle, flags);
  call.record(import_of(r, out(r, dptr), format::ipc_id(handle.reserved)));
  return r;
}

CUresult on_ipc_close_mem_handle(HookId id, auto real, CUdeviceptr dptr) { return on_mem_free(id, real, dptr); }

// Import of a VMM allocation exported by another process: a physical handle of its memory,
// on the device of this thread's context. No driver query tells a handle's bytes: the
// tracker takes them from the handle's first cuMemMap. cuMemRelease ends it.
CUresult on_mem_import_shareable(HookId id, auto real, CUmemGenericAllocationHandle* handle, void* os_handle,
                                 CUmemAllocationHandleType type) {
  DriverCall call(id);
  const CUresult r = real(handle, os_handle, type);
  call.record({.op = Op::kAlloc,
               .kind = Kind::kIpcImport,
               .result = r,
               .handle = out(r, handle),
               .flags = r == CUDA_SUCCESS ? uint32_t(format::kEventSizeUnknown) : 0u});
  return r;
}

// ---- runtime: tag the driver events beneath; record only if none was (call.h) ----

// Bytes of one texel of a runtime channel description (bits of its four channels).
inline uint64_t texel_bytes(const cudaChannelFormatDesc* d) {
  return d ? uint64_t(unsigned(d->x) + unsigned(d->y) + unsigned(d->z) + unsigned(d->w)) / 8 : 0;
}
inline uint64_t one(size_t v) { return v ? v : 1; }

cudaError_t on_cuda_malloc_array(HookId id, auto real, cudaArray_t* a, const cudaChannelFormatDesc* desc, size_t width,
                                 size_t height, unsigned flags) {
  RuntimeCall call(id);
  const cudaError_t r = real(a, desc, width, height, flags);
  const uint64_t size = one(width) * one(height) * texel_bytes(desc);
  call.fallback({.op = Op::kAlloc,
                 .kind = Kind::kArray,
                 .result = r,
                 .address = out(r, a),
                 .size = size,
                 .flags = size_flags(size)});
  return r;
}

cudaError_t on_cuda_malloc_3d_array(HookId id, auto real, cudaArray_t* a, const cudaChannelFormatDesc* desc,
                                    cudaExtent extent, unsigned flags) {
  RuntimeCall call(id);
  const cudaError_t r = real(a, desc, extent, flags);
  const uint64_t size = one(extent.width) * one(extent.height) * one(extent.depth) * texel_bytes(desc);
  call.fallback({.op = Op::kAlloc,
                 .kind = Kind::kArray,
                 .result = r,
                 .address = out(r, a),
                 .size = size,
                 .flags = size_flags(size)});
  return r;
}

cudaError_t on_cuda_malloc_mipmapped_array(HookId id, auto real, cudaMipmappedArray_t* a,
                                           const cudaChannelFormatDesc* desc, cudaExtent extent, unsigned levels,
                                           unsigned flags) {
  RuntimeCall call(id);
  const cudaError_t r = real(a, desc, extent, levels, flags);
  // Driver's view of the same request: texel_bytes as one 8-bit channel per byte.
  const CUDA_ARRAY3D_DESCRIPTOR d{
      extent.width, extent.height, extent.depth, CU_AD_FORMAT_UNSIGNED_INT8, unsigned(texel_bytes(desc)), flags};
  const uint64_t size = mipmapped_array_bytes(&d, levels);
  call.fallback({.op = Op::kAlloc,
                 .kind = Kind::kArray,
                 .result = r,
                 .address = out(r, a),
                 .size = size,
                 .flags = size_flags(size)});
  return r;
}

// cudaFreeArray, cudaFreeMipmappedArray, cudaIpcCloseMemHandle: a free at the handle or pointer.
cudaError_t on_cuda_free_handle(HookId id, auto real, auto p) {
  RuntimeCall call(id);
  const cudaError_t r = real(p);
  if (p) call.fallback({.op = Op::kFree, .result = r, .address = bits(p)});
  return r;
}

cudaError_t on_cuda_ipc_get_mem_handle(HookId id, auto real, cudaIpcMemHandle_t* h, void* p) {
  RuntimeCall call(id);
  const cudaError_t r = real(h, p);
  if (r == cudaSuccess) call.fallback(export_of(r, bits(p), format::ipc_id(h->reserved)));
  return r;
}

cudaError_t on_cuda_ipc_open_mem_handle(HookId id, auto real, void** p, cudaIpcMemHandle_t h, unsigned flags) {
  RuntimeCall call(id);
  const cudaError_t r = real(p, h, flags);
  call.fallback(import_of(r, out(r, p), format::ipc_id(h.reserved)));
  return r;
}

}  // namespace cumemtrace::interpose
