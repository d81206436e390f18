// Bodies of the runtime hooks. They tag the driver events beneath them with the API the
// program called; `fallback` records only if no driver hook did (call.h says why).
#pragma once

#include <cuda_runtime_api.h>

#include "track/call.h"
#include "hooks/hooks_driver.h"
#include "resolve/resolve.h"

namespace cumemtrace::interpose {

// The runtime resets the primary context through cuDevicePrimaryCtxReset (recorded there);
// the device is asked before, as the reset leaves the thread no current context.
cudaError_t on_cuda_device_reset(HookId id, auto real) {
  RuntimeCall call(id);
  const int32_t device = device_of(0);
  const cudaError_t r = real();
  if (r == cudaSuccess) call.fallback_teardown(device);
  return r;
}

cudaError_t on_cuda_malloc(HookId id, auto real, void** p, size_t size) {
  RuntimeCall call(id);
  const cudaError_t r = real(p, size);
  call.fallback({.op = Op::kAlloc, .kind = Kind::kDevice, .result = r, .address = out(r, p), .size = size});
  return r;
}

cudaError_t on_cuda_malloc_pitch(HookId id, auto real, void** p, size_t* pitch, size_t width, size_t height) {
  RuntimeCall call(id);
  const cudaError_t r = real(p, pitch, width, height);
  const uint64_t bytes = r == cudaSuccess && pitch ? uint64_t(*pitch) * height : uint64_t(width) * height;
  call.fallback({.op = Op::kAlloc, .kind = Kind::kPitch, .result = r, .address = out(r, p), .size = bytes});
  return r;
}

cudaError_t on_cuda_malloc_3d(HookId id, auto real, cudaPitchedPtr* p, cudaExtent extent) {
  RuntimeCall call(id);
  const cudaError_t r = real(p, extent);
  const bool ok = r == cudaSuccess && p;
  const uint64_t bytes = uint64_t(ok ? p->pitch : extent.width) * extent.height * extent.depth;
  call.fallback({.op = Op::kAlloc, .kind = Kind::kPitch, .result = r, .address = ok ? bits(p->ptr) : 0, .size = bytes});
  return r;
}

cudaError_t on_cuda_malloc_managed(HookId id, auto real, void** p, size_t size, unsigned flags) {
  RuntimeCall call(id);
  const cudaError_t r = real(p, size, flags);
  call.fallback({.op = Op::kAlloc, .kind = Kind::kManaged, .result = r, .address = out(r, p), .size = size});
  return r;
}

cudaError_t on_cuda_malloc_async(HookId id, auto real, void** p, size_t size, cudaStream_t stream) {
  RuntimeCall call(id);
  const uint32_t flags = captured(stream);
  const cudaError_t r = real(p, size, stream);
  call.fallback({.op = Op::kAlloc,
                 .kind = Kind::kAsyncPool,
                 .result = r,
                 .address = out(r, p),
                 .size = size,
                 .stream = bits(stream),
                 .flags = flags});
  return r;
}

cudaError_t on_cuda_malloc_pool(HookId id, auto real, void** p, size_t size, cudaMemPool_t pool, cudaStream_t stream) {
  RuntimeCall call(id);
  const uint32_t flags = captured(stream);
  const cudaError_t r = real(p, size, pool, stream);
  call.fallback({.op = Op::kAlloc,
                 .kind = Kind::kAsyncPool,
                 .result = r,
                 .address = out(r, p),
                 .size = size,
                 .stream = bits(stream),
                 .handle = bits(pool),
                 .flags = flags});
  return r;
}

cudaError_t on_cuda_free(HookId id, auto real, void* p) {
  RuntimeCall call(id);
  const cudaError_t r = real(p);
  if (p) call.fallback({.op = Op::kFree, .result = r, .address = bits(p)});
  return r;
}

cudaError_t on_cuda_free_async(HookId id, auto real, void* p, cudaStream_t stream) {
  RuntimeCall call(id);
  const uint32_t flags = captured(stream);
  const cudaError_t r = real(p, stream);
  if (p) call.fallback({.op = Op::kFree, .result = r, .address = bits(p), .stream = bits(stream), .flags = flags});
  return r;
}

cudaError_t on_cuda_malloc_host(HookId id, auto real, void** p, size_t size) {
  RuntimeCall call(id);
  const cudaError_t r = real(p, size);
  call.fallback(
      {.op = Op::kAlloc, .kind = Kind::kHostPinned, .result = r, .address = out(r, p), .size = size, .device = -1});
  return r;
}

cudaError_t on_cuda_host_alloc(HookId id, auto real, void** p, size_t size, unsigned flags) {
  RuntimeCall call(id);
  const cudaError_t r = real(p, size, flags);
  call.fallback(
      {.op = Op::kAlloc, .kind = Kind::kHostPinned, .result = r, .address = out(r, p), .size = size, .device = -1});
  return r;
}

// As on_mem_host_register: recorded only when it succeeded. (cudaHostUnregister shares
// on_cuda_free_host: both end host-pinned bytes at an address.)
cudaError_t on_cuda_host_register(HookId id, auto real, void* p, size_t size, unsigned flags) {
  RuntimeCall call(id);
  const cudaError_t r = real(p, size, flags);
  if (r == cudaSuccess)
    call.fallback(
        {.op = Op::kAlloc, .kind = Kind::kHostPinned, .result = r, .address = bits(p), .size = size, .device = -1});
  return r;
}

cudaError_t on_cuda_free_host(HookId id, auto real, void* p) {
  RuntimeCall call(id);
  const cudaError_t r = real(p);
  if (p) call.fallback({.op = Op::kFree, .result = r, .address = bits(p), .device = -1});
  return r;
}

// The runtime answers this through the driver's cuGetProcAddress, which is already ours,
// so the pointer is normally a wrapper and stays as it is; substitute only what is not.
cudaError_t on_cuda_entry_point_by_version(HookId, auto real, const char* symbol, void** fn, unsigned version,
                                           unsigned long long flags, cudaDriverEntryPointQueryResult* status) {
  const cudaError_t r = real(symbol, fn, version, flags, status);
  if (r == cudaSuccess && fn) *fn = substitute_proc(symbol, static_cast<int>(version), flags, *fn);
  return r;
}

}  // namespace cumemtrace::interpose
