// Context creation, with what it cost on the device. A context (CUDA's per-process
// state on a GPU) takes hundreds of MiB that no allocation API shows; users find out
// who created one on GPU 0 from this event's stack. The cost is NVML's figure for this
// process just after minus just before the call (0 when NVML cannot tell).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>

#include "track/call.h"

namespace cumemtrace::interpose {

class ContextProbe {
 public:
  enum Mode { kPrimary, kNew };  // retain the primary context (maybe existing) / create one
  ContextProbe(const DriverCall& call, CUdevice dev, Mode mode);
  void record(DriverCall& call, CUresult r, uint64_t ctx) const;

 private:
  CUdevice dev_;
  std::string uuid_;  // NVML's name for the device, for both measurements
  bool creates_ = false;
  bool new_ = false;  // cuCtxCreate: allocations made in it go with its cuCtxDestroy
  uint64_t used_before_ = 0;
  bool measured_ = false;
};

}  // namespace cumemtrace::interpose
