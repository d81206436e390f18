// Devices, versions, synchronisation and streams.
#include "runtime_state.h"
#include "sim_export.h"

using namespace simrt;

SIM_API cudaError_t cudaGetDeviceCount(int *count) {
    const DriverApi *api;
    if (!count) return result(cudaErrorInvalidValue);
    if (cudaError_t e = init_driver(&api)) return result(e);
    return result(api->cuDeviceGetCount(count));
}

SIM_API cudaError_t cudaSetDevice(int device) { return result(set_device(device)); }

SIM_API cudaError_t cudaGetDevice(int *device) {
    if (!device) return result(cudaErrorInvalidValue);
    *device = current_device();
    return cudaSuccess;
}

SIM_API cudaError_t cudaDeviceReset(void) { return result(reset_device()); }

SIM_API cudaError_t cudaDeviceSynchronize(void) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    return result(api->cuCtxSynchronize(nullptr));
}

SIM_API cudaError_t cudaDriverGetVersion(int *driverVersion) {
    if (!driverVersion) return result(cudaErrorInvalidValue);
    const DriverApi *api = driver();
    if (!api) {
        *driverVersion = 0;  // documented: 0 when no driver is installed
        return cudaSuccess;
    }
    return result(api->cuDriverGetVersion(driverVersion));
}

SIM_API cudaError_t cudaRuntimeGetVersion(int *runtimeVersion) {
    if (!runtimeVersion) return result(cudaErrorInvalidValue);
    *runtimeVersion = CUDART_VERSION;
    return cudaSuccess;
}

SIM_API cudaError_t cudaMemGetInfo(size_t *free, size_t *total) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    return result(api->cuMemGetInfo(free, total));
}

SIM_API cudaError_t cudaStreamCreate(cudaStream_t *pStream) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    return result(api->cuStreamCreate(reinterpret_cast<CUstream *>(pStream), CU_STREAM_DEFAULT));
}

SIM_API cudaError_t cudaStreamDestroy(cudaStream_t stream) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    return result(api->cuStreamDestroy(reinterpret_cast<CUstream>(stream)));
}

SIM_API cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    return result(api->cuStreamSynchronize(reinterpret_cast<CUstream>(stream)));
}

SIM_API cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    return result(api->cuStreamSynchronize_ptsz(reinterpret_cast<CUstream>(stream)));
}

// Host functions run on the driver's callback thread (sim/cuda/api/api_callback.cpp).
SIM_API cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    return result(api->cuLaunchHostFunc(reinterpret_cast<CUstream>(stream), fn, userData));
}

// cudaStreamCallback_t and CUstreamCallback differ only in their enum's name.
SIM_API cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t fn, void *userData,
                                          unsigned int flags) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    return result(api->cuStreamAddCallback(reinterpret_cast<CUstream>(stream), reinterpret_cast<CUstreamCallback>(fn),
                                           userData, flags));
}
