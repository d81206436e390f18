// Why an allocation failed, in the user's terms: a cause from a fixed list, the figures
// it rests on (bytes, each named), and what to do about it. docs/report-json.md
// ("diagnosis") documents the causes; the order below is the order they are tried in,
// the first that holds is the cause.
//
//   refused              the call failed with another error than out-of-memory
//                        (CUDA_ERROR_OUT_OF_MEMORY / cudaErrorMemoryAllocation): no memory
//                        figure explains it (e.g. PyTorch's expandable segments ask for a
//                        fabric handle first and get CUDA_ERROR_NOT_PERMITTED, H200 run L).
//   address-space        NVML saw free >= request at the failure, yet the driver refused:
//                        no contiguous range (only said when the reading is of one moment
//                        and was taken right after the failure).
//   cached-by-allocator  a live allocation at least as large as the request was made from
//                        the same library as the failing call: a caching allocator holds
//                        memory it could hand out or give back (PyTorch, CuPy, XLA, RMM).
//   pool-reserve         a stream-ordered pool keeps >= request beyond its live allocations
//                        (freed, not yet released: a pending free, a release threshold).
//   other-processes      other processes on the GPU hold what is missing: free + their
//                        bytes >= request.
//   context-and-untracked  memory no allocation explains (contexts, libraries' own use)
//                        is what is missing: free + (process usage - tracked footprint)
//                        >= request.
//   demand               the live allocations really need it: the request exceeds free by
//                        `shortfall`; the top call sites are the ones to shrink.
//   unknown              no NVML reading: free memory is not known.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "replay.h"
#include "stacks.h"

namespace cumemtrace {

enum class Cause {
  kAddressSpace, kCachedByAllocator, kPoolReserve, kOtherProcesses, kContextAndUntracked, kDemand, kUnknown, kRefused
};
std::string_view cause_name(Cause c);

struct Diagnosis {
  Cause cause = Cause::kUnknown;
  std::string summary;                                     // one sentence
  std::vector<std::pair<std::string, uint64_t>> figures;   // bytes (or counts), named
  std::vector<std::string> advice;
};

// What is known at the failure. Figures NVML did not give are format::kUnknown64.
struct FailureFacts {
  uint64_t request = 0;
  int32_t result = 2;          // the call's CUresult, or cudaError_t when runtime_layer (2: out of memory in both)
  bool runtime_layer = false;
  std::string library;           // of the failing call site
  uint64_t device_free = format::kUnknown64;
  uint64_t process_used = format::kUnknown64;
  bool reading_at_failure = false;  // the NVML reading is of the failure's own moment
  uint64_t tracked_footprint = 0;   // arena bytes at the reading
  uint64_t pool_reserved = format::kUnknown64;
  uint64_t async_live = 0;
  uint64_t other_processes_bytes = 0;
  std::vector<LiveAlloc> live;      // on the failing device, kinds holding device memory
};

Diagnosis diagnose(const FailureFacts& f, const Stacks& stacks);

}  // namespace cumemtrace
