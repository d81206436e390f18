// Stream-ordered allocation and memory pools. The _ptsz entry points are what
// code compiled with --default-stream per-thread calls; they reach the
// driver's _ptsz variants.
#include "runtime_state.h"
#include "sim_export.h"

#include <cstring>

using namespace simrt;

namespace {

template <typename Fn>
cudaError_t alloc_with(Fn fn, void **devPtr, size_t size, cudaStream_t stream) {
    const DriverApi *api;
    if (!devPtr) return result(cudaErrorInvalidValue);
    if (cudaError_t e = ensure_context(&api)) return result(e);
    CUdeviceptr p = 0;
    CUresult r = (api->*fn)(&p, size, reinterpret_cast<CUstream>(stream));
    if (r == CUDA_SUCCESS) *devPtr = reinterpret_cast<void *>(p);
    return result(r);
}

template <typename Fn>
cudaError_t alloc_from_pool_with(Fn fn, void **ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream) {
    const DriverApi *api;
    if (!ptr) return result(cudaErrorInvalidValue);
    if (cudaError_t e = ensure_context(&api)) return result(e);
    CUdeviceptr p = 0;
    CUresult r = (api->*fn)(&p, size, reinterpret_cast<CUmemoryPool>(pool), reinterpret_cast<CUstream>(stream));
    if (r == CUDA_SUCCESS) *ptr = reinterpret_cast<void *>(p);
    return result(r);
}

template <typename Fn>
cudaError_t free_with(Fn fn, void *devPtr, cudaStream_t stream) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    return result((api->*fn)(reinterpret_cast<CUdeviceptr>(devPtr), reinterpret_cast<CUstream>(stream)));
}

}  // namespace

SIM_API cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream) {
    return alloc_with(&DriverApi::cuMemAllocAsync, devPtr, size, hStream);
}
SIM_API cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream) {
    return alloc_with(&DriverApi::cuMemAllocAsync_ptsz, devPtr, size, hStream);
}
SIM_API cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream) {
    return alloc_from_pool_with(&DriverApi::cuMemAllocFromPoolAsync, ptr, size, memPool, stream);
}
SIM_API cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream) {
    return alloc_from_pool_with(&DriverApi::cuMemAllocFromPoolAsync_ptsz, ptr, size, memPool, stream);
}
SIM_API cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream) {
    return free_with(&DriverApi::cuMemFreeAsync, devPtr, hStream);
}
SIM_API cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream) {
    return free_with(&DriverApi::cuMemFreeAsync_ptsz, devPtr, hStream);
}

SIM_API cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device) {
    const DriverApi *api;
    if (cudaError_t e = init_driver(&api)) return result(e);
    return result(api->cuDeviceGetDefaultMemPool(reinterpret_cast<CUmemoryPool *>(memPool), device));
}

SIM_API cudaError_t cudaMemPoolCreate(cudaMemPool_t *memPool, const cudaMemPoolProps *poolProps) {
    const DriverApi *api;
    if (!poolProps) return result(cudaErrorInvalidValue);
    if (cudaError_t e = init_driver(&api)) return result(e);
    // Field by field: the runtime and driver structs agree in meaning and enum
    // values but are declared separately.
    CUmemPoolProps props;
    std::memset(&props, 0, sizeof props);
    props.allocType = static_cast<CUmemAllocationType>(poolProps->allocType);
    props.handleTypes = static_cast<CUmemAllocationHandleType>(poolProps->handleTypes);
    props.location.type = static_cast<CUmemLocationType>(poolProps->location.type);
    props.location.id = poolProps->location.id;
    props.maxSize = poolProps->maxSize;
    return result(api->cuMemPoolCreate(reinterpret_cast<CUmemoryPool *>(memPool), &props));
}

SIM_API cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool) {
    const DriverApi *api;
    if (cudaError_t e = init_driver(&api)) return result(e);
    return result(api->cuMemPoolDestroy(reinterpret_cast<CUmemoryPool>(memPool)));
}

SIM_API cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep) {
    const DriverApi *api;
    if (cudaError_t e = init_driver(&api)) return result(e);
    return result(api->cuMemPoolTrimTo(reinterpret_cast<CUmemoryPool>(memPool), minBytesToKeep));
}

// cudaMemPoolAttr and CUmemPool_attribute share their values.
SIM_API cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, cudaMemPoolAttr attr, void *value) {
    const DriverApi *api;
    if (cudaError_t e = init_driver(&api)) return result(e);
    return result(api->cuMemPoolGetAttribute(reinterpret_cast<CUmemoryPool>(memPool),
                                             static_cast<CUmemPool_attribute>(attr), value));
}

SIM_API cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool, cudaMemPoolAttr attr, void *value) {
    const DriverApi *api;
    if (cudaError_t e = init_driver(&api)) return result(e);
    return result(api->cuMemPoolSetAttribute(reinterpret_cast<CUmemoryPool>(memPool),
                                             static_cast<CUmemPool_attribute>(attr), value));
}
