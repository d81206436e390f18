// The device's and this process's memory use as NVML (and so nvidia-smi) sees it.
// libnvidia-ml.so.1 is dlopen'ed on first use; NVML never creates a CUDA context.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <cumemtrace/trace_format.h>

namespace cumemtrace::interpose {

struct NvmlFigures {
  int32_t index = -1;                          // NVML index of the GPU
  uint64_t process_used = format::kUnknown64;  // this process's used memory on it
  uint64_t device_free = format::kUnknown64;
  uint64_t device_total = format::kUnknown64;
  uint64_t read_ns = format::kUnknown64;  // CLOCK_MONOTONIC after the reading
  bool processes_known = false;
  std::vector<format::GpuProcess> processes;  // every compute process on the GPU
};

// `uuid` in NVML's spelling (driver_api.h: nvml_uuid_string). Unknown fields stay
// kUnknown64 when NVML is missing or says nothing; a process not (yet) listed on the
// GPU has process_used 0.
// On the reader thread only (sampler.h): NVML may take any time to answer.
NvmlFigures nvml_query(const std::string& uuid);

// Whether libnvidia-ml.so.1 has been looked for (found or not): its first use, dlopen and
// nvmlInit, may take far longer than a reading (sampler.cpp waits longer for it).
bool nvml_looked_for();

// In a forked child: the load's lock afresh if the parent had not finished loading.
void nvml_after_fork_child();

}  // namespace cumemtrace::interpose
