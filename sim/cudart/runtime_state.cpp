#include "runtime_state.h"

#include <mutex>

namespace simrt {
namespace {

thread_local int t_device = 0;
thread_local cudaError_t t_last_error = cudaSuccess;

std::mutex g_primary_mutex;
constexpr int kMaxDevices = 64;
CUcontext g_primary[kMaxDevices];  // retained once, never released (as the real runtime until exit)

cudaError_t primary_for(const DriverApi *api, int device, CUcontext *out) {
    if (device < 0 || device >= kMaxDevices) return cudaErrorInvalidDevice;
    std::lock_guard<std::mutex> lock(g_primary_mutex);
    if (!g_primary[device])
        if (CUresult r = api->cuDevicePrimaryCtxRetain(&g_primary[device], device)) return to_runtime(r);
    *out = g_primary[device];
    return cudaSuccess;
}

}  // namespace

cudaError_t to_runtime(CUresult r) {
    switch (r) {
        case CUDA_SUCCESS: return cudaSuccess;
        case CUDA_ERROR_INVALID_VALUE: return cudaErrorInvalidValue;
        case CUDA_ERROR_OUT_OF_MEMORY: return cudaErrorMemoryAllocation;
        case CUDA_ERROR_NOT_INITIALIZED: return cudaErrorInitializationError;
        case CUDA_ERROR_DEINITIALIZED: return cudaErrorCudartUnloading;
        case CUDA_ERROR_NO_DEVICE: return cudaErrorNoDevice;
        case CUDA_ERROR_INVALID_DEVICE: return cudaErrorInvalidDevice;
        case CUDA_ERROR_INVALID_CONTEXT: return cudaErrorDeviceUninitialized;
        case CUDA_ERROR_INVALID_HANDLE: return cudaErrorInvalidResourceHandle;
        case CUDA_ERROR_NOT_FOUND: return cudaErrorSymbolNotFound;
        case CUDA_ERROR_NOT_SUPPORTED: return cudaErrorNotSupported;
        case CUDA_ERROR_ILLEGAL_STATE: return cudaErrorIllegalState;
        case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: return cudaErrorStreamCaptureUnsupported;
        case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: return cudaErrorStreamCaptureInvalidated;
        case CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD: return cudaErrorStreamCaptureWrongThread;
        case CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED: return cudaErrorHostMemoryAlreadyRegistered;
        case CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED: return cudaErrorHostMemoryNotRegistered;
        case CUDA_ERROR_NOT_PERMITTED: return cudaErrorNotPermitted;
        default: return cudaErrorUnknown;
    }
}

cudaError_t result(cudaError_t e) {
    if (e != cudaSuccess) t_last_error = e;
    return e;
}

cudaError_t last_error(bool reset) {
    cudaError_t e = t_last_error;
    if (reset) t_last_error = cudaSuccess;
    return e;
}

cudaError_t init_driver(const DriverApi **api) {
    const DriverApi *d = driver();
    if (!d) return cudaErrorInsufficientDriver;
    static std::once_flag once;
    static CUresult init_result = CUDA_SUCCESS;
    std::call_once(once, [d] { init_result = d->cuInit(0); });
    if (init_result != CUDA_SUCCESS) return to_runtime(init_result);
    *api = d;
    return cudaSuccess;
}

cudaError_t ensure_context(const DriverApi **api) {
    if (cudaError_t e = init_driver(api)) return e;
    CUcontext current = nullptr;
    if (CUresult r = (*api)->cuCtxGetCurrent(&current)) return to_runtime(r);
    if (current) return cudaSuccess;
    CUcontext primary;
    if (cudaError_t e = primary_for(*api, t_device, &primary)) return e;
    return to_runtime((*api)->cuCtxSetCurrent(primary));
}

int current_device() { return t_device; }

cudaError_t reset_device() {
    const DriverApi *api;
    if (cudaError_t e = init_driver(&api)) return e;
    const int device = t_device;
    {
        std::lock_guard<std::mutex> lock(g_primary_mutex);
        if (CUresult r = api->cuDevicePrimaryCtxReset(device)) return to_runtime(r);
        g_primary[device] = nullptr;
    }
    return to_runtime(api->cuCtxSetCurrent(nullptr));
}

cudaError_t set_device(int device) {
    const DriverApi *api;
    if (cudaError_t e = init_driver(&api)) return e;
    int count = 0;
    if (CUresult r = api->cuDeviceGetCount(&count)) return to_runtime(r);
    if (device < 0 || device >= count) return cudaErrorInvalidDevice;
    t_device = device;
    CUcontext primary;
    if (cudaError_t e = primary_for(api, device, &primary)) return e;
    return to_runtime(api->cuCtxSetCurrent(primary));
}

}  // namespace simrt
