// Bodies of the driver hooks (hook_table.def names them). Each: open the call, forward,
// describe the outcome. `real` is exactly the function the program would have called.
#pragma once

#include <cuda.h>

#include "track/call.h"
#include "probe/stream_capture.h"
#include "hooks/context_probe.h"
#include "probe/driver_api.h"
#include "resolve/resolve.h"

namespace cumemtrace::interpose {

using format::Kind;
using format::Op;

CUresult on_mem_alloc(HookId id, auto real, CUdeviceptr* dptr, size_t size) {
  DriverCall call(id);
  const CUresult r = real(dptr, size);
  call.record({.op = Op::kAlloc, .kind = Kind::kDevice, .result = r, .address = out(r, dptr), .size = size});
  return r;
}

CUresult on_mem_alloc_pitch(HookId id, auto real, CUdeviceptr* dptr, size_t* pitch, size_t width, size_t height,
                            unsigned elem) {
  DriverCall call(id);
  const CUresult r = real(dptr, pitch, width, height, elem);
  const uint64_t bytes = r == CUDA_SUCCESS && pitch ? uint64_t(*pitch) * height : uint64_t(width) * height;
  call.record({.op = Op::kAlloc, .kind = Kind::kPitch, .result = r, .address = out(r, dptr), .size = bytes});
  return r;
}

CUresult on_mem_free(HookId id, auto real, CUdeviceptr dptr) {
  DriverCall call(id);
  const auto freed = dptr ? call.record_before({.op = Op::kFree, .address = dptr}) : format::EventRecord{};
  const CUresult r = real(dptr);
  call.restore_if_failed(freed, r);
  return r;
}

CUresult on_mem_alloc_managed(HookId id, auto real, CUdeviceptr* dptr, size_t size, unsigned flags) {
  DriverCall call(id);
  const CUresult r = real(dptr, size, flags);
  call.record({.op = Op::kAlloc, .kind = Kind::kManaged, .result = r, .address = out(r, dptr), .size = size});
  return r;
}

// On a capturing stream, stream-ordered calls become nodes of the graph (kEventCaptured).
inline uint32_t captured(CUstream stream) {
  return stream_capturing(bits(stream)) ? uint32_t(format::kEventCaptured) : 0u;
}

CUresult on_mem_alloc_async(HookId id, auto real, CUdeviceptr* dptr, size_t size, CUstream stream) {
  DriverCall call(id);
  const uint32_t flags = captured(stream);
  const CUresult r = real(dptr, size, stream);
  call.record({.op = Op::kAlloc,
               .kind = Kind::kAsyncPool,
               .result = r,
               .address = out(r, dptr),
               .size = size,
               .stream = bits(stream),
               .flags = flags});
  return r;
}

CUresult on_mem_alloc_pool(HookId id, auto real, CUdeviceptr* dptr, size_t size, CUmemoryPool pool, CUstream stream) {
  DriverCall call(id);
  const uint32_t flags = captured(stream);
  const CUresult r = real(dptr, size, pool, stream);
  call.record({.op = Op::kAlloc,
               .kind = Kind::kAsyncPool,
               .result = r,
               .address = out(r, dptr),
               .size = size,
               .stream = bits(stream),
               .handle = bits(pool),
               .flags = flags});
  return r;
}

CUresult on_mem_free_async(HookId id, auto real, CUdeviceptr dptr, CUstream stream) {
  DriverCall call(id);
  const auto freed =
      dptr ? call.record_before({.op = Op::kFree, .address = dptr, .stream = bits(stream), .flags = captured(stream)})
           : format::EventRecord{};
  const CUresult r = real(dptr, stream);
  call.restore_if_failed(freed, r);
  return r;
}

CUresult on_mem_pool_trim(HookId id, auto real, CUmemoryPool pool, size_t keep) {
  DriverCall call(id);
  const CUresult r = real(pool, keep);
  call.record({.op = Op::kPoolTrim,
               .kind = Kind::kAsyncPool,
               .result = r,
               .size = keep,
               .handle = bits(pool),
               .device = -1});  // the tracker puts it on the pool's device
  return r;
}

CUresult on_mem_create(HookId id, auto real, CUmemGenericAllocationHandle* handle, size_t size,
                       const CUmemAllocationProp* prop, unsigned long long flags) {
  DriverCall call(id);
  const CUresult r = real(handle, size, prop, flags);
  const bool on_device = prop && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE;
  call.record({.op = Op::kAlloc,
               .kind = Kind::kVmmPhysical,
               .result = r,
               .size = size,
               .handle = out(r, handle),
               .device = on_device ? prop->location.id : -1});
  return r;
}

CUresult on_mem_release(HookId id, auto real, CUmemGenericAllocationHandle handle) {
  DriverCall call(id);
  const CUresult r = real(handle);
  call.record({.op = Op::kFree, .kind = Kind::kVmmPhysical, .result = r, .handle = handle});
  return r;
}

CUresult on_mem_retain(HookId id, auto real, CUmemGenericAllocationHandle* handle, void* addr) {
  DriverCall call(id);
  const CUresult r = real(handle, addr);
  call.record({.op = Op::kRetain,
               .kind = Kind::kVmmPhysical,
               .result = r,
               .address = bits(addr),
               .handle = out(r, handle),
               .device = -1});  // the tracker puts it on the handle's device
  return r;
}

CUresult on_mem_map(HookId id, auto real, CUdeviceptr ptr, size_t size, size_t offset,
                    CUmemGenericAllocationHandle handle, unsigned long long flags) {
  DriverCall call(id);
  const CUresult r = real(ptr, size, offset, handle, flags);
  call.record({.op = Op::kMap, .kind = Kind::kVmmMap, .result = r, .address = ptr, .size = size, .handle = handle});
  return r;
}

CUresult on_mem_unmap(HookId id, auto real, CUdeviceptr ptr, size_t size) {
  DriverCall call(id);
  const CUresult r = real(ptr, size);
  call.record({.op = Op::kUnmap, .kind = Kind::kVmmMap, .result = r, .address = ptr, .size = size});
  return r;
}

CUresult on_mem_reserve(HookId id, auto real, CUdeviceptr* ptr, size_t size, size_t align, CUdeviceptr addr,
                        unsigned long long flags) {
  DriverCall call(id);
  const CUresult r = real(ptr, size, align, addr, flags);
  call.record(
      {.op = Op::kReserve, .kind = Kind::kVmmReserve, .result = r, .address = out(r, ptr), .size = size, .device = -1});
  return r;
}

CUresult on_mem_reserve_free(HookId id, auto real, CUdeviceptr ptr, size_t size) {
  DriverCall call(id);
  const CUresult r = real(ptr, size);
  call.record(
      {.op = Op::kReserveFree, .kind = Kind::kVmmReserve, .result = r, .address = ptr, .size = size, .device = -1});
  return r;
}

CUresult on_mem_alloc_host(HookId id, auto real, void** pp, size_t size) {
  DriverCall call(id);
  const CUresult r = real(pp, size);
  call.record(
      {.op = Op::kAlloc, .kind = Kind::kHostPinned, .result = r, .address = out(r, pp), .size = size, .device = -1});
  return r;
}

CUresult on_mem_host_alloc(HookId id, auto real, void** pp, size_t size, unsigned flags) {
  DriverCall call(id);
  const CUresult r = real(pp, size, flags);
  call.record(
      {.op = Op::kAlloc, .kind = Kind::kHostPinned, .result = r, .address = out(r, pp), .size = size, .device = -1});
  return r;
}

CUresult on_mem_free_host(HookId id, auto real, void* p) {
  DriverCall call(id);
  const auto freed =
      p ? call.record_before({.op = Op::kFree, .address = bits(p), .device = -1}) : format::EventRecord{};
  const CUresult r = real(p);
  call.restore_if_failed(freed, r);
  return r;
}

// Page-locking memory the program already has (PyTorch's pinned memory can take this
// path): host-pinned bytes like cuMemHostAlloc's, told apart by the API. Only a
// registration that succeeded is recorded: a failed one (the range is already registered)
// takes no memory and is no allocation failure to diagnose.
CUresult on_mem_host_register(HookId id, auto real, void* p, size_t size, unsigned flags) {
  DriverCall call(id);
  const CUresult r = real(p, size, flags);
  if (r == CUDA_SUCCESS)
    call.record(
        {.op = Op::kAlloc, .kind = Kind::kHostPinned, .result = r, .address = bits(p), .size = size, .device = -1});
  return r;
}

CUresult on_mem_host_unregister(HookId id, auto real, void* p) { return on_mem_free_host(id, real, p); }

CUresult on_primary_ctx_retain(HookId id, auto real, CUcontext* ctx, CUdevice dev) {
  DriverCall call(id);
  const ContextProbe probe(call, dev, ContextProbe::kPrimary);
  const CUresult r = real(ctx, dev);
  probe.record(call, r, out(r, ctx));
  return r;
}

CUresult on_ctx_create_v2(HookId id, auto real, CUcontext* ctx, unsigned flags, CUdevice dev) {
  DriverCall call(id);
  const ContextProbe probe(call, dev, ContextProbe::kNew);
  const CUresult r = real(ctx, flags, dev);
  probe.record(call, r, out(r, ctx));
  return r;
}

CUresult on_ctx_create_v3(HookId id, auto real, CUcontext* ctx, CUexecAffinityParam* params, int count, unsigned flags,
                          CUdevice dev) {
  DriverCall call(id);
  const ContextProbe probe(call, dev, ContextProbe::kNew);
  const CUresult r = real(ctx, params, count, flags, dev);
  probe.record(call, r, out(r, ctx));
  return r;
}

CUresult on_ctx_create_v4(HookId id, auto real, CUcontext* ctx, CUctxCreateParams* params, unsigned flags,
                          CUdevice dev) {
  DriverCall call(id);
  const ContextProbe probe(call, dev, ContextProbe::kNew);
  const CUresult r = real(ctx, params, flags, dev);
  probe.record(call, r, out(r, ctx));
  return r;
}

// Teardowns: the context's memory goes with it (tracker.h: track_teardown), recorded once
// the driver has done it. Nothing is asked of the driver before the call.
CUresult on_primary_ctx_reset(HookId id, auto real, CUdevice dev) {
  DriverCall call(id);
  const CUresult r = real(dev);
  if (r == CUDA_SUCCESS) call.teardown(dev, 0);
  return r;
}

// Only the last release destroys the primary context: the driver says whether it is gone.
CUresult on_primary_ctx_release(HookId id, auto real, CUdevice dev) {
  DriverCall call(id);
  const CUresult r = real(dev);
  if (r == CUDA_SUCCESS && call.recording() && !primary_context_active(dev)) call.teardown(dev, 0);
  return r;
}

CUresult on_ctx_destroy(HookId id, auto real, CUcontext ctx) {
  DriverCall call(id);
  const CUresult r = real(ctx);
  if (r == CUDA_SUCCESS) call.teardown(-1, bits(ctx));
  return r;
}

// The lookups: record nothing, hand back our wrapper for what the driver returned.
CUresult on_get_proc_address(HookId, auto real, const char* symbol, void** pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* status) {
  const CUresult r = real(symbol, pfn, version, flags, status);
  if (r == CUDA_SUCCESS && pfn) *pfn = substitute_proc(symbol, version, flags, *pfn);
  return r;
}

CUresult on_get_proc_address_v1(HookId, auto real, const char* symbol, void** pfn, int version, cuuint64_t flags) {
  const CUresult r = real(symbol, pfn, version, flags);
  if (r == CUDA_SUCCESS && pfn) *pfn = substitute_proc(symbol, version, flags, *pfn);
  return r;
}

}  // namespace cumemtrace::interpose
