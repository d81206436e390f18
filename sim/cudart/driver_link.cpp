#include "driver_link.h"

#include <dlfcn.h>
#include <mutex>

namespace simrt {
namespace {

constexpr int kRuntimeVersion = 13000;

DriverApi g_api;
const DriverApi *g_loaded = nullptr;

template <typename Fn>
bool fetch(const char *base_name, Fn &out, cuuint64_t flags = CU_GET_PROC_ADDRESS_DEFAULT) {
    void *p = nullptr;
    CUdriverProcAddressQueryResult status;
    if (g_api.cuGetProcAddress(base_name, &p, kRuntimeVersion, flags, &status) != CUDA_SUCCESS) return false;
    out = reinterpret_cast<Fn>(p);
    return p != nullptr;
}

void load() {
    // RTLD_LOCAL, as the real runtime: the driver's symbols stay out of the
    // global scope, so only cuGetProcAddress_v2 is ever resolved by name.
    void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle) return;
    g_api.cuGetProcAddress = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(handle, "cuGetProcAddress_v2"));
    if (!g_api.cuGetProcAddress) return;
    constexpr cuuint64_t kPtsz = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    bool ok =
        fetch("cuInit", g_api.cuInit) && fetch("cuDeviceGetCount", g_api.cuDeviceGetCount) &&
        fetch("cuDriverGetVersion", g_api.cuDriverGetVersion) &&
        fetch("cuDevicePrimaryCtxRetain", g_api.cuDevicePrimaryCtxRetain) &&
        fetch("cuDevicePrimaryCtxReset", g_api.cuDevicePrimaryCtxReset) &&
        fetch("cuCtxGetCurrent", g_api.cuCtxGetCurrent) && fetch("cuCtxSetCurrent", g_api.cuCtxSetCurrent) &&
        fetch("cuCtxSynchronize", g_api.cuCtxSynchronize) && fetch("cuMemAlloc", g_api.cuMemAlloc) &&
        fetch("cuMemAllocPitch", g_api.cuMemAllocPitch) && fetch("cuMemFree", g_api.cuMemFree) &&
        fetch("cuMemAllocManaged", g_api.cuMemAllocManaged) && fetch("cuMemAllocHost", g_api.cuMemAllocHost) &&
        fetch("cuMemHostAlloc", g_api.cuMemHostAlloc) && fetch("cuMemFreeHost", g_api.cuMemFreeHost) &&
        fetch("cuMemHostRegister", g_api.cuMemHostRegister) &&
        fetch("cuMemHostUnregister", g_api.cuMemHostUnregister) && fetch("cuMemGetInfo", g_api.cuMemGetInfo) &&
        fetch("cuStreamCreate", g_api.cuStreamCreate) && fetch("cuStreamDestroy", g_api.cuStreamDestroy) &&
        fetch("cuStreamSynchronize", g_api.cuStreamSynchronize) &&
        fetch("cuStreamSynchronize", g_api.cuStreamSynchronize_ptsz, kPtsz) &&
        fetch("cuLaunchHostFunc", g_api.cuLaunchHostFunc) && fetch("cuStreamAddCallback", g_api.cuStreamAddCallback) &&
        fetch("cuDeviceGetDefaultMemPool", g_api.cuDeviceGetDefaultMemPool) &&
        fetch("cuMemPoolCreate", g_api.cuMemPoolCreate) && fetch("cuMemPoolDestroy", g_api.cuMemPoolDestroy) &&
        fetch("cuMemPoolTrimTo", g_api.cuMemPoolTrimTo) &&
        fetch("cuMemPoolGetAttribute", g_api.cuMemPoolGetAttribute) &&
        fetch("cuMemPoolSetAttribute", g_api.cuMemPoolSetAttribute) &&
        fetch("cuMemAllocAsync", g_api.cuMemAllocAsync) &&
        fetch("cuMemAllocAsync", g_api.cuMemAllocAsync_ptsz, kPtsz) &&
        fetch("cuMemAllocFromPoolAsync", g_api.cuMemAllocFromPoolAsync) &&
        fetch("cuMemAllocFromPoolAsync", g_api.cuMemAllocFromPoolAsync_ptsz, kPtsz) &&
        fetch("cuMemFreeAsync", g_api.cuMemFreeAsync) && fetch("cuMemFreeAsync", g_api.cuMemFreeAsync_ptsz, kPtsz) &&
        fetch("cuStreamBeginCapture", g_api.cuStreamBeginCapture) &&
        fetch("cuStreamEndCapture", g_api.cuStreamEndCapture) &&
        fetch("cuStreamIsCapturing", g_api.cuStreamIsCapturing) &&
        fetch("cuThreadExchangeStreamCaptureMode", g_api.cuThreadExchangeStreamCaptureMode) &&
        fetch("cuArrayCreate", g_api.cuArrayCreate) && fetch("cuArray3DCreate", g_api.cuArray3DCreate) &&
        fetch("cuArrayDestroy", g_api.cuArrayDestroy) &&
        fetch("cuMipmappedArrayCreate", g_api.cuMipmappedArrayCreate) &&
        fetch("cuMipmappedArrayDestroy", g_api.cuMipmappedArrayDestroy) &&
        fetch("cuIpcGetMemHandle", g_api.cuIpcGetMemHandle) && fetch("cuIpcOpenMemHandle", g_api.cuIpcOpenMemHandle) &&
        fetch("cuIpcCloseMemHandle", g_api.cuIpcCloseMemHandle) &&
        fetch("cuGraphInstantiateWithFlags", g_api.cuGraphInstantiateWithFlags) &&
        fetch("cuGraphLaunch", g_api.cuGraphLaunch) && fetch("cuGraphLaunch", g_api.cuGraphLaunch_ptsz, kPtsz) &&
        fetch("cuGraphExecDestroy", g_api.cuGraphExecDestroy) && fetch("cuGraphDestroy", g_api.cuGraphDestroy) &&
        fetch("cuDeviceGraphMemTrim", g_api.cuDeviceGraphMemTrim) &&
        fetch("cuDeviceGetGraphMemAttribute", g_api.cuDeviceGetGraphMemAttribute);
    if (ok) g_loaded = &g_api;
}

}  // namespace

const DriverApi *driver() {
    static std::once_flag once;
    std::call_once(once, load);
    return g_loaded;
}

}  // namespace simrt
