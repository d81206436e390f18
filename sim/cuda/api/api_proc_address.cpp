// cuGetProcAddress: the driver's own symbol table, by base name and version.
//
// One row per ABI variant, keyed by the version in the matching
// PFN_<name>_v<version> typedef of cudaTypedefs.h: a request for version V gets
// the row with the highest version <= V. Variants the sim does not implement
// (the 32-bit-size ABIs of CUDA 2.x, e.g. PFN_cuMemAlloc_v2000) have no row, so
// asking for them reports CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT.
//
// The pointers are this library's own definitions (bound with -Bsymbolic), the
// same values dlsym(handle_of_libcuda, name) gives, and NOT whatever an
// LD_PRELOAD library interposes: that is what the real driver does, and why a
// tracer has to hook cuGetProcAddress itself.
#include "driver_state.h"
#include "sim_export.h"

#include <cstring>

namespace {

struct Row {
    const char *name;
    int version;
    void *legacy;  // CU_GET_PROC_ADDRESS_DEFAULT / _LEGACY_STREAM
    void *ptsz;    // CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, where one exists
};

#define FN(f) reinterpret_cast<void *>(&f)
#define ROW(name, version, f) \
    { name, version, FN(f), nullptr }
#define ROW_PTSZ(name, version, f) \
    { name, version, FN(f), FN(f##_ptsz) }

const Row kRows[] = {
    ROW("cuInit", 2000, cuInit),
    ROW("cuDriverGetVersion", 2020, cuDriverGetVersion),
    ROW("cuGetProcAddress", 11030, cuGetProcAddress),
    ROW("cuGetProcAddress", 12000, cuGetProcAddress_v2),
    ROW("cuGetErrorName", 6000, cuGetErrorName),
    ROW("cuGetErrorString", 6000, cuGetErrorString),

    ROW("cuDeviceGet", 2000, cuDeviceGet),
    ROW("cuDeviceGetCount", 2000, cuDeviceGetCount),
    ROW("cuDeviceGetName", 2000, cuDeviceGetName),
    ROW("cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2),
    ROW("cuDeviceGetUuid", 9020, cuDeviceGetUuid),
    ROW("cuDeviceGetUuid", 11040, cuDeviceGetUuid_v2),
    ROW("cuDeviceGetAttribute", 2000, cuDeviceGetAttribute),
    ROW("cuDeviceGetPCIBusId", 4010, cuDeviceGetPCIBusId),

    ROW("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain),
    ROW("cuDevicePrimaryCtxRelease", 7000, cuDevicePrimaryCtxRelease),
    ROW("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2),
    ROW("cuDevicePrimaryCtxReset", 7000, cuDevicePrimaryCtxReset),
    ROW("cuDevicePrimaryCtxGetState", 7000, cuDevicePrimaryCtxGetState),
    ROW("cuDevicePrimaryCtxReset", 11000, cuDevicePrimaryCtxReset_v2),
    ROW("cuCtxCreate", 2000, cuCtxCreate),
    ROW("cuCtxCreate", 3020, cuCtxCreate_v2),
    ROW("cuCtxCreate", 11040, cuCtxCreate_v3),
    ROW("cuCtxCreate", 12050, cuCtxCreate_v4),
    ROW("cuCtxDestroy", 2000, cuCtxDestroy),
    ROW("cuCtxDestroy", 4000, cuCtxDestroy_v2),
    ROW("cuCtxPushCurrent", 2000, cuCtxPushCurrent),
    ROW("cuCtxPushCurrent", 4000, cuCtxPushCurrent_v2),
    ROW("cuCtxPopCurrent", 2000, cuCtxPopCurrent),
    ROW("cuCtxPopCurrent", 4000, cuCtxPopCurrent_v2),
    ROW("cuCtxSetCurrent", 4000, cuCtxSetCurrent),
    ROW("cuCtxGetCurrent", 4000, cuCtxGetCurrent),
    ROW("cuCtxGetDevice", 2000, cuCtxGetDevice),
    ROW("cuCtxGetDevice", 13000, cuCtxGetDevice_v2),
    ROW("cuCtxSynchronize", 2000, cuCtxSynchronize),
    ROW("cuCtxSynchronize", 13000, cuCtxSynchronize_v2),

    ROW("cuMemGetInfo", 3020, cuMemGetInfo_v2),
    ROW("cuMemAlloc", 3020, cuMemAlloc_v2),
    ROW("cuMemAllocPitch", 3020, cuMemAllocPitch_v2),
    ROW("cuMemFree", 3020, cuMemFree_v2),
    ROW("cuMemGetAddressRange", 3020, cuMemGetAddressRange_v2),
    ROW("cuMemAllocHost", 3020, cuMemAllocHost_v2),
    ROW("cuMemHostAlloc", 2020, cuMemHostAlloc),
    ROW("cuMemFreeHost", 2000, cuMemFreeHost),
    ROW("cuMemHostRegister", 6050, cuMemHostRegister_v2),
    ROW("cuMemHostUnregister", 4000, cuMemHostUnregister),
    ROW("cuMemAllocManaged", 6000, cuMemAllocManaged),
    ROW("cuPointerGetAttribute", 4000, cuPointerGetAttribute),

    ROW("cuStreamCreate", 2000, cuStreamCreate),
    ROW("cuStreamDestroy", 2000, cuStreamDestroy),
    ROW("cuStreamDestroy", 4000, cuStreamDestroy_v2),
    {"cuStreamSynchronize", 2000, FN(cuStreamSynchronize), nullptr},
    ROW_PTSZ("cuStreamSynchronize", 7000, cuStreamSynchronize),
    ROW_PTSZ("cuStreamAddCallback", 5000, cuStreamAddCallback),
    ROW_PTSZ("cuLaunchHostFunc", 10000, cuLaunchHostFunc),
    ROW_PTSZ("cuStreamGetCtx", 9020, cuStreamGetCtx),
    ROW_PTSZ("cuStreamGetCtx", 12050, cuStreamGetCtx_v2),
    ROW_PTSZ("cuStreamBeginCapture", 10000, cuStreamBeginCapture),
    ROW_PTSZ("cuStreamBeginCapture", 10010, cuStreamBeginCapture_v2),
    ROW_PTSZ("cuStreamEndCapture", 10000, cuStreamEndCapture),
    ROW_PTSZ("cuStreamIsCapturing", 10000, cuStreamIsCapturing),
    ROW_PTSZ("cuStreamGetCaptureInfo", 11030, cuStreamGetCaptureInfo_v2),
    ROW_PTSZ("cuStreamGetCaptureInfo", 12030, cuStreamGetCaptureInfo_v3),
    ROW("cuThreadExchangeStreamCaptureMode", 10010, cuThreadExchangeStreamCaptureMode),
    ROW("cuGraphCreate", 10000, cuGraphCreate),
    ROW("cuGraphDestroy", 10000, cuGraphDestroy),
    ROW("cuGraphAddMemAllocNode", 11040, cuGraphAddMemAllocNode),
    ROW("cuGraphAddMemFreeNode", 11040, cuGraphAddMemFreeNode),
    ROW("cuGraphInstantiateWithFlags", 11040, cuGraphInstantiateWithFlags),
    ROW("cuGraphInstantiate", 12000, cuGraphInstantiateWithFlags),
    ROW_PTSZ("cuGraphLaunch", 10000, cuGraphLaunch),
    ROW("cuGraphExecDestroy", 10000, cuGraphExecDestroy),
    ROW("cuDeviceGraphMemTrim", 11040, cuDeviceGraphMemTrim),
    ROW("cuDeviceGetGraphMemAttribute", 11040, cuDeviceGetGraphMemAttribute),

    ROW("cuDeviceGetDefaultMemPool", 11020, cuDeviceGetDefaultMemPool),
    ROW("cuDeviceGetMemPool", 11020, cuDeviceGetMemPool),
    ROW("cuDeviceSetMemPool", 11020, cuDeviceSetMemPool),
    ROW("cuMemPoolCreate", 11020, cuMemPoolCreate),
    ROW("cuMemPoolDestroy", 11020, cuMemPoolDestroy),
    ROW("cuMemPoolTrimTo", 11020, cuMemPoolTrimTo),
    ROW("cuMemPoolGetAttribute", 11020, cuMemPoolGetAttribute),
    ROW("cuMemPoolSetAttribute", 11020, cuMemPoolSetAttribute),
    ROW_PTSZ("cuMemAllocAsync", 11020, cuMemAllocAsync),
    ROW_PTSZ("cuMemAllocFromPoolAsync", 11020, cuMemAllocFromPoolAsync),
    ROW_PTSZ("cuMemFreeAsync", 11020, cuMemFreeAsync),

    ROW("cuArrayCreate", 3020, cuArrayCreate_v2),
    ROW("cuArray3DCreate", 3020, cuArray3DCreate_v2),
    ROW("cuArrayDestroy", 2000, cuArrayDestroy),
    ROW("cuMipmappedArrayCreate", 5000, cuMipmappedArrayCreate),
    ROW("cuMipmappedArrayDestroy", 5000, cuMipmappedArrayDestroy),
    ROW("cuIpcGetMemHandle", 4010, cuIpcGetMemHandle),
    ROW("cuIpcOpenMemHandle", 4010, cuIpcOpenMemHandle),
    ROW("cuIpcOpenMemHandle", 11000, cuIpcOpenMemHandle_v2),
    ROW("cuIpcCloseMemHandle", 4010, cuIpcCloseMemHandle),
    ROW("cuMemExportToShareableHandle", 10020, cuMemExportToShareableHandle),
    ROW("cuMemImportFromShareableHandle", 10020, cuMemImportFromShareableHandle),

    ROW("cuMemGetAllocationGranularity", 10020, cuMemGetAllocationGranularity),
    ROW("cuMemAddressReserve", 10020, cuMemAddressReserve),
    ROW("cuMemAddressFree", 10020, cuMemAddressFree),
    ROW("cuMemCreate", 10020, cuMemCreate),
    ROW("cuMemRelease", 10020, cuMemRelease),
    ROW("cuMemMap", 10020, cuMemMap),
    ROW("cuMemUnmap", 10020, cuMemUnmap),
    ROW("cuMemSetAccess", 10020, cuMemSetAccess),
    ROW("cuMemGetAllocationPropertiesFromHandle", 10020, cuMemGetAllocationPropertiesFromHandle),
    ROW("cuMemRetainAllocationHandle", 11000, cuMemRetainAllocationHandle),
};

#undef ROW_PTSZ
#undef ROW
#undef FN

CUresult lookup(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                CUdriverProcAddressQueryResult *status) {
    if (status) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (!symbol || !pfn) return CUDA_ERROR_INVALID_VALUE;
    *pfn = nullptr;
    if (flags & ~cuuint64_t(CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
        return CUDA_ERROR_INVALID_VALUE;
    bool per_thread = flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    const Row *best = nullptr;
    bool known = false;
    for (const Row &row : kRows) {
        if (std::strcmp(row.name, symbol) != 0) continue;
        known = true;
        if (row.version <= cudaVersion && (!best || row.version > best->version)) best = &row;
    }
    if (!best) {
        if (known && status) *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
        return CUDA_ERROR_NOT_FOUND;
    }
    *pfn = per_thread && best->ptsz ? best->ptsz : best->legacy;
    if (status) *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
}

}  // namespace

SIM_API CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags) {
    return lookup(symbol, pfn, cudaVersion, flags, nullptr);
}

SIM_API CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                     CUdriverProcAddressQueryResult *symbolStatus) {
    return lookup(symbol, pfn, cudaVersion, flags, symbolStatus);
}
