// cudaGetDriverEntryPoint*: thin wrappers over the driver's cuGetProcAddress_v2
// pointer the runtime already holds, so they return what the driver returns.
#include "runtime_state.h"
#include "sim_export.h"

using namespace simrt;

namespace {

cudaError_t entry_point(const char *symbol, void **funcPtr, unsigned int cudaVersion, unsigned long long flags,
                        cudaDriverEntryPointQueryResult *status, bool per_thread_build) {
    if (!symbol || !funcPtr) return result(cudaErrorInvalidValue);
    const DriverApi *api;
    if (cudaError_t e = init_driver(&api)) return result(e);
    // cudaEnableDefault means "as this caller was compiled": the _ptsz entry
    // points exist exactly for callers built with per-thread default streams.
    if (flags == cudaEnableDefault)
        flags = per_thread_build ? cudaEnablePerThreadDefaultStream : cudaEnableLegacyStream;
    CUdriverProcAddressQueryResult driver_status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult r = api->cuGetProcAddress(symbol, funcPtr, int(cudaVersion), flags, &driver_status);
    if (status) *status = static_cast<cudaDriverEntryPointQueryResult>(driver_status);
    // A symbol that is missing is reported through driverStatus, not as an error.
    if (r == CUDA_ERROR_NOT_FOUND) return cudaSuccess;
    return result(r);
}

}  // namespace

SIM_API cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
                                            cudaDriverEntryPointQueryResult *driverStatus) {
    return entry_point(symbol, funcPtr, CUDART_VERSION, flags, driverStatus, false);
}
SIM_API cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr, unsigned long long flags,
                                                 cudaDriverEntryPointQueryResult *driverStatus) {
    return entry_point(symbol, funcPtr, CUDART_VERSION, flags, driverStatus, true);
}
SIM_API cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                                                     unsigned long long flags,
                                                     cudaDriverEntryPointQueryResult *driverStatus) {
    return entry_point(symbol, funcPtr, cudaVersion, flags, driverStatus, false);
}
SIM_API cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                                                          unsigned long long flags,
                                                          cudaDriverEntryPointQueryResult *driverStatus) {
    return entry_point(symbol, funcPtr, cudaVersion, flags, driverStatus, true);
}
