// Ordinary, pitched, managed and pinned host allocations.
#include "runtime_state.h"
#include "sim_export.h"

using namespace simrt;

namespace {
// The runtime asks the driver for pitched memory with this element size; the
// pitch does not depend on it in the sim (always width rounded up to 512).
constexpr unsigned kPitchElementSize = 4;
}  // namespace

SIM_API cudaError_t cudaMalloc(void **devPtr, size_t size) {
    const DriverApi *api;
    if (!devPtr) return result(cudaErrorInvalidValue);
    if (cudaError_t e = ensure_context(&api)) return result(e);
    if (size == 0) {  // the runtime treats 0 bytes as success with a null pointer
        *devPtr = nullptr;
        return cudaSuccess;
    }
    CUdeviceptr p = 0;
    CUresult r = api->cuMemAlloc(&p, size);
    if (r == CUDA_SUCCESS) *devPtr = reinterpret_cast<void *>(p);
    return result(r);
}

SIM_API cudaError_t cudaFree(void *devPtr) {
    // cudaFree(NULL) is the idiomatic "initialise CUDA now": it creates the context.
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    if (!devPtr) return cudaSuccess;
    return result(api->cuMemFree(reinterpret_cast<CUdeviceptr>(devPtr)));
}

SIM_API cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height) {
    const DriverApi *api;
    if (!devPtr || !pitch) return result(cudaErrorInvalidValue);
    if (cudaError_t e = ensure_context(&api)) return result(e);
    CUdeviceptr p = 0;
    CUresult r = api->cuMemAllocPitch(&p, pitch, width, height, kPitchElementSize);
    if (r == CUDA_SUCCESS) *devPtr = reinterpret_cast<void *>(p);
    return result(r);
}

SIM_API cudaError_t cudaMalloc3D(cudaPitchedPtr *pitchedDevPtr, cudaExtent extent) {
    const DriverApi *api;
    if (!pitchedDevPtr) return result(cudaErrorInvalidValue);
    if (cudaError_t e = ensure_context(&api)) return result(e);
    CUdeviceptr p = 0;
    size_t pitch = 0;
    // One pitched block of height * depth rows, which is what cudaMalloc3D is.
    // Rows past 64 bits would wrap to a small block: out of memory instead.
    size_t rows;
    if (__builtin_mul_overflow(extent.height, extent.depth, &rows)) return result(cudaErrorMemoryAllocation);
    CUresult r = api->cuMemAllocPitch(&p, &pitch, extent.width, rows, kPitchElementSize);
    if (r == CUDA_SUCCESS)
        *pitchedDevPtr = cudaPitchedPtr{reinterpret_cast<void *>(p), pitch, extent.width, extent.height};
    return result(r);
}

SIM_API cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags) {
    const DriverApi *api;
    if (!devPtr) return result(cudaErrorInvalidValue);
    if (cudaError_t e = ensure_context(&api)) return result(e);
    CUdeviceptr p = 0;
    CUresult r = api->cuMemAllocManaged(&p, size, flags);
    if (r == CUDA_SUCCESS) *devPtr = reinterpret_cast<void *>(p);
    return result(r);
}

SIM_API cudaError_t cudaMallocHost(void **ptr, size_t size) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    return result(api->cuMemAllocHost(ptr, size));
}

SIM_API cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    // cudaHostAllocPortable/Mapped/WriteCombined have the driver's bit values.
    return result(api->cuMemHostAlloc(pHost, size, flags));
}

SIM_API cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    return result(api->cuMemHostRegister(ptr, size, flags));  // cudaHostRegister* flags have the driver's bits
}

SIM_API cudaError_t cudaHostUnregister(void *ptr) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    return result(api->cuMemHostUnregister(ptr));
}

SIM_API cudaError_t cudaFreeHost(void *ptr) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    return result(api->cuMemFreeHost(ptr));
}
