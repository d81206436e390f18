// Helpers shared by prog_runtime's scenarios.
#pragma once

#include "report.h"

#include <cuda_runtime_api.h>

#define CHECK_RT(call)                                                 \
  do {                                                                 \
    cudaError_t check_rt_result_ = (call);                             \
    if (check_rt_result_ != cudaSuccess) die(#call, check_rt_result_); \
  } while (0)

// Scenarios: each returns the process exit status.
int scenario_basic();
int scenario_async();
int scenario_async_ptsz();  // runtime_ptsz.cpp, built with per-thread default stream
int scenario_threads(int threads);
int scenario_fork(bool child_sleeps);
int scenario_oom();
int scenario_frag(int which, int hold_ms);
int scenario_entry_points();
int scenario_context();
