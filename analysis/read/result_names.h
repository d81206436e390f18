// Names for the result codes a failed allocation carries, so a report says
// CUDA_ERROR_OUT_OF_MEMORY (an OOM) apart from, say, CUDA_ERROR_NOT_PERMITTED (PyTorch
// probing a handle type the driver refuses, seen on the H200). Values from cuda.h and
// driver_types.h of the toolkit; unknown codes get an empty name.
#pragma once

#include <cstdint>
#include <string_view>

namespace cumemtrace {

std::string_view cu_result_name(int32_t result);   // CUresult
std::string_view cuda_error_name(int32_t result);  // cudaError_t (runtime-layer events)

}  // namespace cumemtrace
