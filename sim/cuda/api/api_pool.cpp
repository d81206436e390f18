// Streams, memory pools and stream-ordered allocation. Streams are not
// asynchronous here: work "on" a stream happens at the call.
#include "driver_state.h"
#include "locate.h"
#include "sim_export.h"

using namespace sim;

namespace {

// The context a stream belongs to; the special handles mean the calling
// thread's current context.
CUresult stream_ctx(CUstream s, Ctx **out) {
    if (s == nullptr || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) return require_ctx(out);
    if (CUresult r = check_init()) return r;
    auto &streams = state().streams;
    auto it = streams.find(reinterpret_cast<const Stream *>(s));
    if (it == streams.end()) return CUDA_ERROR_INVALID_HANDLE;
    if (!valid_ctx(it->second->ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    *out = it->second->ctx;
    return CUDA_SUCCESS;
}

CUresult alloc_from(Pool &pool, CUdeviceptr *dptr, size_t size, Ctx *ctx) {
    if (!dptr || size == 0) return CUDA_ERROR_INVALID_VALUE;
    if (!fits(pool.device, pool.granules_needed(size))) return CUDA_ERROR_OUT_OF_MEMORY;
    auto addr = pool.allocate(size, ctx, state().devices[pool.device]->async_space);
    if (!addr) return CUDA_ERROR_OUT_OF_MEMORY;
    *dptr = *addr;
    return CUDA_SUCCESS;
}

// On a capturing stream an allocation becomes a graph memory node: a virtual address,
// no device memory until the graph runs (capture.h, graph.h).
CUresult alloc_in_graph(Capture &cap, CUdeviceptr *dptr, size_t size) {
    if (!dptr || size == 0) return CUDA_ERROR_INVALID_VALUE;
    *dptr = graph_alloc(size);
    cap.ops.push_back({true, *dptr, size});
    return CUDA_SUCCESS;
}

CUresult alloc_async(CUdeviceptr *dptr, size_t size, CUstream s) {
    SIM_LOCKED;
    const CaptureSafeCall safe;
    Ctx *ctx;
    if (CUresult r = stream_ctx(s, &ctx)) return r;
    if (Capture *cap = capture_of(s)) return alloc_in_graph(*cap, dptr, size);
    return alloc_from(pool_for_device(ctx->device), dptr, size, ctx);
}

CUresult alloc_from_pool_async(CUdeviceptr *dptr, size_t size, CUmemoryPool handle, CUstream s) {
    SIM_LOCKED;
    const CaptureSafeCall safe;
    Ctx *ctx;
    if (CUresult r = stream_ctx(s, &ctx)) return r;
    Pool *pool = find_pool(handle);
    if (!pool) return CUDA_ERROR_INVALID_VALUE;
    if (Capture *cap = capture_of(s)) return alloc_in_graph(*cap, dptr, size);
    return alloc_from(*pool, dptr, size, ctx);
}

CUresult free_async(CUdeviceptr dptr, CUstream s) {
    SIM_LOCKED;
    const CaptureSafeCall safe;
    Ctx *ctx;
    if (CUresult r = stream_ctx(s, &ctx)) return r;
    if (dptr == 0) return CUDA_SUCCESS;
    // A graph allocation: freed by a free node of the capture, by the program once the
    // launch made it live (its memory goes back to the graph pool), or, never launched,
    // nothing to do.
    if (is_graph_address(dptr)) {
        if (Capture *cap = capture_of(s)) cap->ops.push_back({false, dptr, 0});
        else graph_free_escaped(dptr);
        return CUDA_SUCCESS;
    }
    auto where = locate(dptr);
    if (!where || where->kind != Kind::Pool || where->start != dptr) return CUDA_ERROR_INVALID_VALUE;
    where->pool->release(dptr);
    maybe_erase_destroyed(where->pool);
    return CUDA_SUCCESS;
}

CUresult stream_sync(CUstream s) {
    SIM_LOCKED;
    Ctx *ctx;
    if (CUresult r = stream_ctx(s, &ctx)) return r;
    trim_pools_on_sync(ctx->device);
    return CUDA_SUCCESS;
}

CUresult stream_get_ctx(CUstream s, CUcontext *pctx, CUgreenCtx *pgreen) {
    SIM_LOCKED;
    Ctx *ctx;
    if (CUresult r = stream_ctx(s, &ctx)) return r;
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    *pctx = to_handle(ctx);
    if (pgreen) *pgreen = nullptr;
    return CUDA_SUCCESS;
}

CUresult stream_destroy(CUstream s) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    auto &streams = state().streams;
    auto it = streams.find(reinterpret_cast<const Stream *>(s));
    if (it == streams.end()) return CUDA_ERROR_INVALID_HANDLE;
    streams.erase(it);
    return CUDA_SUCCESS;
}

}  // namespace

SIM_API CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags) {
    SIM_LOCKED;
    Ctx *ctx;
    if (CUresult r = require_ctx(&ctx)) return r;
    if (!phStream || (Flags & ~CU_STREAM_NON_BLOCKING)) return CUDA_ERROR_INVALID_VALUE;
    auto stream = std::make_unique<Stream>(Stream{ctx});
    *phStream = reinterpret_cast<CUstream>(stream.get());
    state().streams.emplace(stream.get(), std::move(stream));
    return CUDA_SUCCESS;
}

SIM_API CUresult cuStreamDestroy(CUstream s) { return stream_destroy(s); }
SIM_API CUresult cuStreamDestroy_v2(CUstream s) { return stream_destroy(s); }
SIM_API CUresult cuStreamSynchronize(CUstream s) { return stream_sync(s); }
SIM_API CUresult cuStreamSynchronize_ptsz(CUstream s) { return stream_sync(s); }
SIM_API CUresult cuStreamGetCtx(CUstream s, CUcontext *pctx) { return stream_get_ctx(s, pctx, nullptr); }
SIM_API CUresult cuStreamGetCtx_ptsz(CUstream s, CUcontext *pctx) { return stream_get_ctx(s, pctx, nullptr); }
SIM_API CUresult cuStreamGetCtx_v2(CUstream s, CUcontext *pctx, CUgreenCtx *g) { return stream_get_ctx(s, pctx, g); }
SIM_API CUresult cuStreamGetCtx_v2_ptsz(CUstream s, CUcontext *pctx, CUgreenCtx *g) {
    return stream_get_ctx(s, pctx, g);
}

SIM_API CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream s) {
    return alloc_async(dptr, bytesize, s);
}
SIM_API CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream s) {
    return alloc_async(dptr, bytesize, s);
}
SIM_API CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream s) {
    return alloc_from_pool_async(dptr, bytesize, pool, s);
}
SIM_API CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream s) {
    return alloc_from_pool_async(dptr, bytesize, pool, s);
}
SIM_API CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream s) { return free_async(dptr, s); }
SIM_API CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream s) { return free_async(dptr, s); }

SIM_API CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!pool_out) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    Device &d = *state().devices[dev];
    Pool *saved = d.current_pool;
    d.current_pool = nullptr;  // pool_for_device creates the default when missing
    *pool_out = reinterpret_cast<CUmemoryPool>(&pool_for_device(dev));
    d.current_pool = saved;
    return CUDA_SUCCESS;
}

SIM_API CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!pool) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    *pool = reinterpret_cast<CUmemoryPool>(&pool_for_device(dev));
    return CUDA_SUCCESS;
}

SIM_API CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool handle) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    Pool *pool = find_pool(handle);
    if (!pool || pool->device != dev) return CUDA_ERROR_INVALID_VALUE;
    state().devices[dev]->current_pool = pool;
    return CUDA_SUCCESS;
}

SIM_API CUresult cuMemPoolCreate(CUmemoryPool *pool_out, const CUmemPoolProps *props) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!pool_out || !props || props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
        props->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(props->location.id)) return CUDA_ERROR_INVALID_DEVICE;
    auto pool = std::make_unique<Pool>(props->location.id);
    *pool_out = reinterpret_cast<CUmemoryPool>(pool.get());
    state().pools.emplace(pool.get(), std::move(pool));
    return CUDA_SUCCESS;
}

SIM_API CUresult cuMemPoolDestroy(CUmemoryPool handle) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    Pool *pool = find_pool(handle);
    if (!pool) return CUDA_ERROR_INVALID_VALUE;
    Device &d = *state().devices[pool->device];
    if (pool == d.default_pool) return CUDA_ERROR_INVALID_VALUE;  // "cannot be destroyed" (cuda.h)
    if (d.current_pool == pool) d.current_pool = nullptr;
    // cuda.h: destruction waits for outstanding allocations to be freed.
    pool->destroyed = true;
    maybe_erase_destroyed(pool);
    return CUDA_SUCCESS;
}

SIM_API CUresult cuMemPoolTrimTo(CUmemoryPool handle, size_t minBytesToKeep) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    Pool *pool = find_pool(handle);
    if (!pool) return CUDA_ERROR_INVALID_VALUE;
    pool->trim_to(minBytesToKeep, state().devices[pool->device]->async_space);
    return CUDA_SUCCESS;
}

SIM_API CUresult cuMemPoolGetAttribute(CUmemoryPool handle, CUmemPool_attribute attr, void *value) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    Pool *pool = find_pool(handle);
    if (!pool || !value) return CUDA_ERROR_INVALID_VALUE;
    auto *u64 = static_cast<cuuint64_t *>(value);
    switch (attr) {
        case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: *static_cast<int *>(value) = 1; return CUDA_SUCCESS;
        case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: *u64 = pool->release_threshold; return CUDA_SUCCESS;
        case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: *u64 = pool->reserved_bytes(); return CUDA_SUCCESS;
        case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: *u64 = pool->reserved_high; return CUDA_SUCCESS;
        case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: *u64 = pool->used_bytes(); return CUDA_SUCCESS;
        case CU_MEMPOOL_ATTR_USED_MEM_HIGH: *u64 = pool->used_high; return CUDA_SUCCESS;
        default: return CUDA_ERROR_INVALID_VALUE;
    }
}

SIM_API CUresult cuMemPoolSetAttribute(CUmemoryPool handle, CUmemPool_attribute attr, void *value) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    Pool *pool = find_pool(handle);
    if (!pool || !value) return CUDA_ERROR_INVALID_VALUE;
    cuuint64_t u64 = *static_cast<cuuint64_t *>(value);
    switch (attr) {
        case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
            return CUDA_SUCCESS;  // accepted; reuse policy is not modelled
        case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: pool->release_threshold = u64; return CUDA_SUCCESS;
        // The high watermarks can only be reset, to the current value (cuda.h).
        case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
            if (u64 != 0) return CUDA_ERROR_INVALID_VALUE;
            pool->reserved_high = pool->reserved_bytes();
            return CUDA_SUCCESS;
        case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
            if (u64 != 0) return CUDA_ERROR_INVALID_VALUE;
            pool->used_high = pool->used_bytes();
            return CUDA_SUCCESS;
        default: return CUDA_ERROR_INVALID_VALUE;
    }
}
