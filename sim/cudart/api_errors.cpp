// Error names, texts, and the per-thread last error.
#include "runtime_state.h"
#include "sim_export.h"

using namespace simrt;

namespace {
struct ErrorText {
    cudaError_t code;
    const char *name;
    const char *text;
};
#define SIM_ERR(code, text) \
    { code, #code, text }
constexpr ErrorText kErrors[] = {
    SIM_ERR(cudaSuccess, "no error"),
    SIM_ERR(cudaErrorInvalidValue, "invalid argument"),
    SIM_ERR(cudaErrorMemoryAllocation, "out of memory"),
    SIM_ERR(cudaErrorInitializationError, "initialization error"),
    SIM_ERR(cudaErrorCudartUnloading, "driver shutting down"),
    SIM_ERR(cudaErrorInsufficientDriver, "CUDA driver version is insufficient for CUDA runtime version"),
    SIM_ERR(cudaErrorNoDevice, "no CUDA-capable device is detected"),
    SIM_ERR(cudaErrorInvalidDevice, "invalid device ordinal"),
    SIM_ERR(cudaErrorDeviceUninitialized, "invalid device context"),
    SIM_ERR(cudaErrorInvalidResourceHandle, "invalid resource handle"),
    SIM_ERR(cudaErrorSymbolNotFound, "named symbol not found"),
    SIM_ERR(cudaErrorNotSupported, "operation not supported"),
    SIM_ERR(cudaErrorUnknown, "unknown error"),
};
#undef SIM_ERR

const ErrorText *lookup(cudaError_t code) {
    for (const auto &e : kErrors)
        if (e.code == code) return &e;
    return nullptr;
}
}  // namespace

SIM_API const char *cudaGetErrorName(cudaError_t error) {
    const ErrorText *e = lookup(error);
    return e ? e->name : "cudaErrorUnknown";
}

SIM_API const char *cudaGetErrorString(cudaError_t error) {
    const ErrorText *e = lookup(error);
    return e ? e->text : "unrecognized error code";
}

SIM_API cudaError_t cudaGetLastError(void) { return last_error(true); }
SIM_API cudaError_t cudaPeekAtLastError(void) { return last_error(false); }
