// cuGetErrorName / cuGetErrorString for the codes the sim can return. Like the
// real ones they work before cuInit.
#include "driver_state.h"
#include "sim_export.h"

namespace {
struct ErrorText {
    CUresult code;
    const char *name;
    const char *text;
};
#define SIM_ERR(code, text) \
    { code, #code, text }
constexpr ErrorText kErrors[] = {
    SIM_ERR(CUDA_SUCCESS, "no error"),
    SIM_ERR(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
    SIM_ERR(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
    SIM_ERR(CUDA_ERROR_NOT_INITIALIZED, "initialization error"),
    SIM_ERR(CUDA_ERROR_DEINITIALIZED, "driver shutting down"),
    SIM_ERR(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"),
    SIM_ERR(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"),
    SIM_ERR(CUDA_ERROR_INVALID_CONTEXT, "invalid device context"),
    SIM_ERR(CUDA_ERROR_CONTEXT_ALREADY_IN_USE, "context already in use"),
    SIM_ERR(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"),
    SIM_ERR(CUDA_ERROR_NOT_FOUND, "named symbol not found"),
    SIM_ERR(CUDA_ERROR_NOT_SUPPORTED, "operation not supported"),
    SIM_ERR(CUDA_ERROR_ILLEGAL_STATE, "the operation cannot be performed in the present state"),
    SIM_ERR(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "operation not permitted when stream is capturing"),
    SIM_ERR(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "operation failed due to a previous error during capture"),
    SIM_ERR(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD,
            "attempt to terminate a thread-local capture sequence from another thread"),
    SIM_ERR(CUDA_ERROR_UNKNOWN, "unknown error"),
};
#undef SIM_ERR

const ErrorText *lookup(CUresult code) {
    for (const auto &e : kErrors)
        if (e.code == code) return &e;
    return nullptr;
}
}  // namespace

SIM_API CUresult cuGetErrorName(CUresult error, const char **pStr) {
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    const ErrorText *e = lookup(error);
    *pStr = e ? e->name : nullptr;
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

SIM_API CUresult cuGetErrorString(CUresult error, const char **pStr) {
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    const ErrorText *e = lookup(error);
    *pStr = e ? e->text : nullptr;
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
