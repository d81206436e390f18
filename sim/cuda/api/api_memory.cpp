// Ordinary device memory, pinned and managed host memory, and pointer queries.
#include "driver_state.h"
#include "host_memory.h"
#include "locate.h"
#include "sim_export.h"

#include <cstring>

using namespace sim;

namespace {

CUresult heap_alloc(Ctx *ctx, uint64_t size, CUdeviceptr *dptr) {
    Device &d = *state().devices[ctx->device];
    if (!fits(ctx->device, d.heap.granules_needed(size))) return CUDA_ERROR_OUT_OF_MEMORY;
    auto addr = d.heap.allocate(size, ctx);
    if (!addr) return CUDA_ERROR_OUT_OF_MEMORY;  // address region exhausted
    *dptr = *addr;
    return CUDA_SUCCESS;
}

CUresult host_alloc(void **pp, size_t size, bool managed) {
    Ctx *ctx;
    if (CUresult r = require_ctx(&ctx)) return r;
    if (!pp || size == 0) return CUDA_ERROR_INVALID_VALUE;
    void *p = host_map(size);
    if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
    state().host.emplace(reinterpret_cast<uint64_t>(p), HostBlock{size, managed, ctx->device, ctx});
    *pp = p;
    return CUDA_SUCCESS;
}

}  // namespace

SIM_API CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize) {
    SIM_LOCKED;
    Ctx *ctx;
    if (CUresult r = require_ctx(&ctx)) return r;
    if (!dptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
    return heap_alloc(ctx, bytesize, dptr);
}

SIM_API CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
                                    unsigned int ElementSizeBytes) {
    SIM_LOCKED;
    Ctx *ctx;
    if (CUresult r = require_ctx(&ctx)) return r;
    if (!dptr || !pPitch || WidthInBytes == 0 || Height == 0) return CUDA_ERROR_INVALID_VALUE;
    if (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16) return CUDA_ERROR_INVALID_VALUE;
    // A pitch or a pitch x height past 64 bits cannot exist: out of memory,
    // like any other size beyond the device (not a wrapped-around small block).
    auto pitch = round_up(WidthInBytes, 512);
    auto bytes = pitch ? multiply(*pitch, Height) : std::nullopt;
    if (!bytes) return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = heap_alloc(ctx, *bytes, dptr);
    if (r == CUDA_SUCCESS) *pPitch = *pitch;
    return r;
}

SIM_API CUresult cuMemFree_v2(CUdeviceptr dptr) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (dptr == 0) return CUDA_SUCCESS;
    State &s = state();
    auto where = locate(dptr);
    if (!where || where->start != dptr) return CUDA_ERROR_INVALID_VALUE;
    switch (where->kind) {
        case Kind::Heap: s.devices[where->device]->heap.release(dptr); return CUDA_SUCCESS;
        case Kind::Pool:  // cuMemFree accepts stream-ordered memory too (cuda.h)
            where->pool->release(dptr);
            maybe_erase_destroyed(where->pool);
            return CUDA_SUCCESS;
        case Kind::Managed:
            host_unmap(reinterpret_cast<void *>(dptr), where->size);
            s.host.erase(dptr);
            return CUDA_SUCCESS;
        case Kind::Vmm:
        case Kind::Pinned: break;
    }
    return CUDA_ERROR_INVALID_VALUE;
}

SIM_API CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags) {
    SIM_LOCKED;
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST) return CUDA_ERROR_INVALID_VALUE;
    if (!dptr) return CUDA_ERROR_INVALID_VALUE;
    void *p = nullptr;
    CUresult r = host_alloc(&p, bytesize, true);
    if (r == CUDA_SUCCESS) *dptr = reinterpret_cast<CUdeviceptr>(p);
    return r;
}

SIM_API CUresult cuMemAllocHost_v2(void **pp, size_t bytesize) {
    SIM_LOCKED;
    return host_alloc(pp, bytesize, false);
}

SIM_API CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags) {
    SIM_LOCKED;
    if (Flags & ~(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED))
        return CUDA_ERROR_INVALID_VALUE;
    return host_alloc(pp, bytesize, false);
}

SIM_API CUresult cuMemFreeHost(void *p) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    State &s = state();
    auto it = s.host.find(reinterpret_cast<uint64_t>(p));
    if (!p || it == s.host.end() || it->second.managed) return CUDA_ERROR_INVALID_VALUE;
    host_unmap(p, it->second.size);
    s.host.erase(it);
    return CUDA_SUCCESS;
}

// Page-locks memory the program already has. Like the driver: a range that overlaps one
// registered before fails with CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED; unregistering
// takes the start of a registered range, else CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED.
SIM_API CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!p || bytesize == 0 || (Flags & ~0xFu)) return CUDA_ERROR_INVALID_VALUE;
    State &s = state();
    const uint64_t start = reinterpret_cast<uint64_t>(p), end = start + bytesize;
    auto next = s.registered.lower_bound(start);
    if (next != s.registered.end() && next->first < end) return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    if (next != s.registered.begin() && std::prev(next)->first + std::prev(next)->second > start)
        return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    s.registered[start] = bytesize;
    return CUDA_SUCCESS;
}

SIM_API CUresult cuMemHostUnregister(void *p) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (state().registered.erase(reinterpret_cast<uint64_t>(p)) == 0) return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    return CUDA_SUCCESS;
}

SIM_API CUresult cuMemGetInfo_v2(size_t *free, size_t *total) {
    SIM_LOCKED;
    Ctx *ctx;
    if (CUresult r = require_ctx(&ctx)) return r;
    if (!free || !total) return CUDA_ERROR_INVALID_VALUE;
    uint64_t cap = state().cfg.capacity, used = device_used_bytes(ctx->device);
    *total = cap;
    *free = used < cap ? cap - used : 0;
    return CUDA_SUCCESS;
}

SIM_API CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    auto where = locate(dptr);
    if (!where || where->kind == Kind::Pinned) return CUDA_ERROR_NOT_FOUND;
    if (pbase) *pbase = where->start;
    if (psize) *psize = where->size;
    return CUDA_SUCCESS;
}

SIM_API CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!data) return CUDA_ERROR_INVALID_VALUE;
    auto where = locate(ptr);
    if (!where) return CUDA_ERROR_INVALID_VALUE;
    bool host = where->kind == Kind::Pinned;
    switch (attribute) {
        case CU_POINTER_ATTRIBUTE_CONTEXT: *static_cast<CUcontext *>(data) = to_handle(where->ctx); return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
            *static_cast<unsigned int *>(data) = host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
            return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *static_cast<CUdeviceptr *>(data) = ptr; return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_HOST_POINTER:
            if (where->kind != Kind::Pinned && where->kind != Kind::Managed) return CUDA_ERROR_INVALID_VALUE;
            *static_cast<void **>(data) = reinterpret_cast<void *>(ptr);
            return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_IS_MANAGED:
            *static_cast<bool *>(data) = where->kind == Kind::Managed;
            return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *static_cast<int *>(data) = where->device; return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
            *static_cast<CUdeviceptr *>(data) = where->start;
            return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *static_cast<size_t *>(data) = where->size; return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_MAPPED: *static_cast<bool *>(data) = true; return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
            *static_cast<CUmemoryPool *>(data) = reinterpret_cast<CUmemoryPool>(where->pool);
            return CUDA_SUCCESS;
        default: return CUDA_ERROR_INVALID_VALUE;
    }
}
