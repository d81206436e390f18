#include "read/result_names.h"

#include <cuda.h>
#include <driver_types.h>

namespace cumemtrace {

#define CUMEMTRACE_NAME(code) \
  case code: return #code;

std::string_view cu_result_name(int32_t result) {
  switch (result) {
    CUMEMTRACE_NAME(CUDA_SUCCESS)
    CUMEMTRACE_NAME(CUDA_ERROR_INVALID_VALUE)
    CUMEMTRACE_NAME(CUDA_ERROR_OUT_OF_MEMORY)
    CUMEMTRACE_NAME(CUDA_ERROR_NOT_INITIALIZED)
    CUMEMTRACE_NAME(CUDA_ERROR_DEINITIALIZED)
    CUMEMTRACE_NAME(CUDA_ERROR_NO_DEVICE)
    CUMEMTRACE_NAME(CUDA_ERROR_INVALID_DEVICE)
    CUMEMTRACE_NAME(CUDA_ERROR_INVALID_CONTEXT)
    CUMEMTRACE_NAME(CUDA_ERROR_ALREADY_MAPPED)
    CUMEMTRACE_NAME(CUDA_ERROR_CONTEXT_ALREADY_IN_USE)
    CUMEMTRACE_NAME(CUDA_ERROR_INVALID_HANDLE)
    CUMEMTRACE_NAME(CUDA_ERROR_NOT_FOUND)
    CUMEMTRACE_NAME(CUDA_ERROR_ILLEGAL_ADDRESS)
    CUMEMTRACE_NAME(CUDA_ERROR_INVALID_ADDRESS_SPACE)
    CUMEMTRACE_NAME(CUDA_ERROR_NOT_PERMITTED)
    CUMEMTRACE_NAME(CUDA_ERROR_NOT_SUPPORTED)
    CUMEMTRACE_NAME(CUDA_ERROR_UNKNOWN)
    default: return {};
  }
}

std::string_view cuda_error_name(int32_t result) {
  switch (result) {
    CUMEMTRACE_NAME(cudaSuccess)
    CUMEMTRACE_NAME(cudaErrorInvalidValue)
    CUMEMTRACE_NAME(cudaErrorMemoryAllocation)
    CUMEMTRACE_NAME(cudaErrorInitializationError)
    CUMEMTRACE_NAME(cudaErrorCudartUnloading)
    CUMEMTRACE_NAME(cudaErrorNoDevice)
    CUMEMTRACE_NAME(cudaErrorInvalidDevice)
    CUMEMTRACE_NAME(cudaErrorNotPermitted)
    CUMEMTRACE_NAME(cudaErrorNotSupported)
    CUMEMTRACE_NAME(cudaErrorUnknown)
    default: return {};
  }
}

#undef CUMEMTRACE_NAME

}  // namespace cumemtrace
