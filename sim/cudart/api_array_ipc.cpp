// CUDA arrays and CUDA IPC through the runtime: each call is the driver call beneath it.
// A channel description becomes the driver's format: x bits (8, 16 or 32) of its kind,
// one channel per non-zero x/y/z/w; anything else is cudaErrorInvalidChannelDescriptor.
#include "runtime_state.h"
#include "sim_export.h"

#include <initializer_list>

using namespace simrt;

namespace {

bool to_driver_format(const cudaChannelFormatDesc *d, CUarray_format *format, unsigned *channels) {
    if (!d) return false;
    const int bits = d->x;
    *channels = unsigned(d->x != 0) + unsigned(d->y != 0) + unsigned(d->z != 0) + unsigned(d->w != 0);
    for (int b : {d->y, d->z, d->w})
        if (b != 0 && b != bits) return false;
    switch (d->f) {
        case cudaChannelFormatKindUnsigned:
            *format = bits == 8    ? CU_AD_FORMAT_UNSIGNED_INT8
                      : bits == 16 ? CU_AD_FORMAT_UNSIGNED_INT16
                                   : CU_AD_FORMAT_UNSIGNED_INT32;
            break;
        case cudaChannelFormatKindSigned:
            *format = bits == 8    ? CU_AD_FORMAT_SIGNED_INT8
                      : bits == 16 ? CU_AD_FORMAT_SIGNED_INT16
                                   : CU_AD_FORMAT_SIGNED_INT32;
            break;
        case cudaChannelFormatKindFloat:
            if (bits != 16 && bits != 32) return false;
            *format = bits == 16 ? CU_AD_FORMAT_HALF : CU_AD_FORMAT_FLOAT;
            break;
        default: return false;
    }
    return (bits == 8 || bits == 16 || bits == 32) && *channels != 0;
}

}  // namespace

SIM_API cudaError_t cudaMallocArray(cudaArray_t *array, const cudaChannelFormatDesc *desc, size_t width, size_t height,
                                    unsigned int flags) {
    const DriverApi *api;
    if (!array) return result(cudaErrorInvalidValue);
    CUDA_ARRAY_DESCRIPTOR d{width, height, CU_AD_FORMAT_UNSIGNED_INT8, 0};
    if (!to_driver_format(desc, &d.Format, &d.NumChannels)) return result(cudaErrorInvalidChannelDescriptor);
    if (flags != 0) return result(cudaErrorInvalidValue);  // surface/texture-gather flags: not modelled
    if (cudaError_t e = ensure_context(&api)) return result(e);
    CUarray a = nullptr;
    CUresult r = api->cuArrayCreate(&a, &d);
    if (r == CUDA_SUCCESS) *array = reinterpret_cast<cudaArray_t>(a);
    return result(r);
}

SIM_API cudaError_t cudaMalloc3DArray(cudaArray_t *array, const cudaChannelFormatDesc *desc, cudaExtent extent,
                                      unsigned int flags) {
    const DriverApi *api;
    if (!array) return result(cudaErrorInvalidValue);
    CUDA_ARRAY3D_DESCRIPTOR d{extent.width, extent.height, extent.depth, CU_AD_FORMAT_UNSIGNED_INT8, 0, flags};
    if (!to_driver_format(desc, &d.Format, &d.NumChannels)) return result(cudaErrorInvalidChannelDescriptor);
    if (cudaError_t e = ensure_context(&api)) return result(e);
    CUarray a = nullptr;
    CUresult r = api->cuArray3DCreate(&a, &d);
    if (r == CUDA_SUCCESS) *array = reinterpret_cast<cudaArray_t>(a);
    return result(r);
}

SIM_API cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t *array, const cudaChannelFormatDesc *desc,
                                             cudaExtent extent, unsigned int numLevels, unsigned int flags) {
    const DriverApi *api;
    if (!array) return result(cudaErrorInvalidValue);
    CUDA_ARRAY3D_DESCRIPTOR d{extent.width, extent.height, extent.depth, CU_AD_FORMAT_UNSIGNED_INT8, 0, flags};
    if (!to_driver_format(desc, &d.Format, &d.NumChannels)) return result(cudaErrorInvalidChannelDescriptor);
    if (cudaError_t e = ensure_context(&api)) return result(e);
    CUmipmappedArray a = nullptr;
    CUresult r = api->cuMipmappedArrayCreate(&a, &d, numLevels);
    if (r == CUDA_SUCCESS) *array = reinterpret_cast<cudaMipmappedArray_t>(a);
    return result(r);
}

SIM_API cudaError_t cudaFreeArray(cudaArray_t array) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    if (!array) return cudaSuccess;
    return result(api->cuArrayDestroy(reinterpret_cast<CUarray>(array)));
}

SIM_API cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t array) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    if (!array) return cudaSuccess;
    return result(api->cuMipmappedArrayDestroy(reinterpret_cast<CUmipmappedArray>(array)));
}

// cudaIpcMemHandle_t and CUipcMemHandle are the same 64 bytes.
SIM_API cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *handle, void *devPtr) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    return result(
        api->cuIpcGetMemHandle(reinterpret_cast<CUipcMemHandle *>(handle), reinterpret_cast<CUdeviceptr>(devPtr)));
}

SIM_API cudaError_t cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle, unsigned int flags) {
    const DriverApi *api;
    if (!devPtr) return result(cudaErrorInvalidValue);
    if (cudaError_t e = ensure_context(&api)) return result(e);
    CUipcMemHandle h;
    static_assert(sizeof h == sizeof handle);
    __builtin_memcpy(&h, &handle, sizeof h);
    CUdeviceptr p = 0;
    CUresult r = api->cuIpcOpenMemHandle(&p, h, flags);
    if (r == CUDA_SUCCESS) *devPtr = reinterpret_cast<void *>(p);
    return result(r);
}

SIM_API cudaError_t cudaIpcCloseMemHandle(void *devPtr) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    return result(api->cuIpcCloseMemHandle(reinterpret_cast<CUdeviceptr>(devPtr)));
}
