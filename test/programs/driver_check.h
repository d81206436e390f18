// CHECK_CU for the programs that call the driver API.
#pragma once

#include "report.h"

#include <cuda.h>

#define CHECK_CU(call)                                                  \
  do {                                                                  \
    CUresult check_cu_result_ = (call);                                 \
    if (check_cu_result_ != CUDA_SUCCESS) die(#call, check_cu_result_); \
  } while (0)
