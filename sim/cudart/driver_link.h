// How the runtime reaches the driver, the way NVIDIA's libcudart does it:
// dlopen("libcuda.so.1"), dlsym of cuGetProcAddress_v2 alone, then every other
// driver function by base name through that pointer, for CUDA 13.0. Nothing is
// linked directly, so a tracer sees exactly the lookups a real runtime makes.
#pragma once

#include "cudart_includes.h"

namespace simrt {

struct DriverApi {
    PFN_cuGetProcAddress_v12000 cuGetProcAddress;
    PFN_cuInit_v2000 cuInit;
    PFN_cuDeviceGetCount_v2000 cuDeviceGetCount;
    PFN_cuDriverGetVersion_v2020 cuDriverGetVersion;
    PFN_cuDevicePrimaryCtxRetain_v7000 cuDevicePrimaryCtxRetain;
    PFN_cuDevicePrimaryCtxReset_v11000 cuDevicePrimaryCtxReset;
    PFN_cuCtxGetCurrent_v4000 cuCtxGetCurrent;
    PFN_cuCtxSetCurrent_v4000 cuCtxSetCurrent;
    PFN_cuCtxSynchronize_v13000 cuCtxSynchronize;
    PFN_cuMemAlloc_v3020 cuMemAlloc;
    PFN_cuMemAllocPitch_v3020 cuMemAllocPitch;
    PFN_cuMemFree_v3020 cuMemFree;
    PFN_cuMemAllocManaged_v6000 cuMemAllocManaged;
    PFN_cuMemAllocHost_v3020 cuMemAllocHost;
    PFN_cuMemHostAlloc_v2020 cuMemHostAlloc;
    PFN_cuMemFreeHost_v2000 cuMemFreeHost;
    PFN_cuMemHostRegister_v6050 cuMemHostRegister;
    PFN_cuMemHostUnregister_v4000 cuMemHostUnregister;
    PFN_cuMemGetInfo_v3020 cuMemGetInfo;
    PFN_cuStreamCreate_v2000 cuStreamCreate;
    PFN_cuStreamDestroy_v4000 cuStreamDestroy;
    PFN_cuStreamSynchronize_v2000 cuStreamSynchronize;
    PFN_cuStreamSynchronize_v7000_ptsz cuStreamSynchronize_ptsz;
    PFN_cuLaunchHostFunc_v10000 cuLaunchHostFunc;
    PFN_cuStreamAddCallback_v5000 cuStreamAddCallback;
    PFN_cuDeviceGetDefaultMemPool_v11020 cuDeviceGetDefaultMemPool;
    PFN_cuMemPoolCreate_v11020 cuMemPoolCreate;
    PFN_cuMemPoolDestroy_v11020 cuMemPoolDestroy;
    PFN_cuMemPoolTrimTo_v11020 cuMemPoolTrimTo;
    PFN_cuMemPoolGetAttribute_v11020 cuMemPoolGetAttribute;
    PFN_cuMemPoolSetAttribute_v11020 cuMemPoolSetAttribute;
    PFN_cuMemAllocAsync_v11020 cuMemAllocAsync;
    PFN_cuMemAllocAsync_v11020_ptsz cuMemAllocAsync_ptsz;
    PFN_cuMemAllocFromPoolAsync_v11020 cuMemAllocFromPoolAsync;
    PFN_cuMemAllocFromPoolAsync_v11020_ptsz cuMemAllocFromPoolAsync_ptsz;
    PFN_cuMemFreeAsync_v11020 cuMemFreeAsync;
    PFN_cuMemFreeAsync_v11020_ptsz cuMemFreeAsync_ptsz;
    PFN_cuStreamBeginCapture_v10010 cuStreamBeginCapture;
    PFN_cuStreamEndCapture_v10000 cuStreamEndCapture;
    PFN_cuStreamIsCapturing_v10000 cuStreamIsCapturing;
    PFN_cuThreadExchangeStreamCaptureMode_v10010 cuThreadExchangeStreamCaptureMode;
    PFN_cuArrayCreate_v3020 cuArrayCreate;
    PFN_cuArray3DCreate_v3020 cuArray3DCreate;
    PFN_cuArrayDestroy_v2000 cuArrayDestroy;
    PFN_cuMipmappedArrayCreate_v5000 cuMipmappedArrayCreate;
    PFN_cuMipmappedArrayDestroy_v5000 cuMipmappedArrayDestroy;
    PFN_cuIpcGetMemHandle_v4010 cuIpcGetMemHandle;
    PFN_cuIpcOpenMemHandle_v11000 cuIpcOpenMemHandle;
    PFN_cuIpcCloseMemHandle_v4010 cuIpcCloseMemHandle;
    PFN_cuGraphInstantiateWithFlags_v11040 cuGraphInstantiateWithFlags;
    PFN_cuGraphLaunch_v10000 cuGraphLaunch;
    PFN_cuGraphLaunch_v10000_ptsz cuGraphLaunch_ptsz;
    PFN_cuGraphExecDestroy_v10000 cuGraphExecDestroy;
    PFN_cuGraphDestroy_v10000 cuGraphDestroy;
    PFN_cuDeviceGraphMemTrim_v11040 cuDeviceGraphMemTrim;
    PFN_cuDeviceGetGraphMemAttribute_v11040 cuDeviceGetGraphMemAttribute;
};

// The table, loaded on first call; null when libcuda.so.1 (or one of the
// functions) is missing, which the API reports as cudaErrorInsufficientDriver.
const DriverApi *driver();

}  // namespace simrt
