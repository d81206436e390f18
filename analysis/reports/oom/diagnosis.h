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
//   exceeds-device       the request is larger than the device's total memory: no release helps.
//   exceeds-device-less-contexts  larger than the total less this process's contexts on it.
//   (then the holders at the failure, holders.h: the fewest whose release makes
//   device_free + released >= request, ranked; the first set names the cause)
//   pool-reserve         stream-ordered pool slack alone.
//   graph-pool           the CUDA graph memory pool alone.
//   cached-by-allocator  a caching allocator's segments (PyTorch, CuPy, XLA, RMM): with a
//                        block map, segments split by blocks in use are said apart (its
//                        empty_cache cannot give them back).
//   other-processes      other processes on the GPU.
//   context-and-untracked  contexts and/or memory no allocation explains.
//   several-holders      holders of different kinds, together.
//   demand               the set holds the program's own live allocations: they are listed.
//   unknown              no NVML reading (free memory is not known), or not even every
//                        holder together would have let the request fit.
// Where the caching allocator's blocks are in the trace (blocks.h), its own out-of-memory
// error is diagnosed from them instead: allocator-limit, fragmented-cache or demand.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reports/oom/holders.h"
#include "replay/replay.h"
#include "stacks/stacks.h"

namespace cumemtrace {

enum class Cause {
  kAddressSpace,
  kCachedByAllocator,
  kPoolReserve,
  kOtherProcesses,
  kContextAndUntracked,
  kDemand,
  kUnknown,
  kRefused,
  kExceedsDevice,
  kExceedsDeviceLessContexts,
  kGraphPool,
  kSeveralHolders,
  kAllocatorLimit,   // blocks.h: the allocator refused on its own (a memory fraction)
  kFragmentedCache,  // blocks.h: enough free inside the cache, in pieces between live blocks
  kPendingFrees,     // blocks.h: enough free inside the cache once frees waiting on other streams complete
};
std::string_view cause_name(Cause c);

struct Diagnosis {
  Cause cause = Cause::kUnknown;
  std::string summary;                                    // one sentence
  std::vector<std::pair<std::string, uint64_t>> figures;  // bytes (or counts), named
  std::vector<std::string> advice;
  // The split at the failure and the ranked holder sets that would have let it fit
  // (holders.h); empty when the cause was decided before them.
  uint64_t device_free = format::kUnknown64;
  std::vector<Holder> holders;
  std::vector<Release> fits;
};

// What is known at the failure. Figures NVML did not give are format::kUnknown64.
struct FailureFacts {
  uint64_t request = 0;
  int32_t result = 2;  // the call's CUresult, or cudaError_t when runtime_layer (2: out of memory in both)
  bool runtime_layer = false;
  uint64_t device_free = format::kUnknown64;
  uint64_t process_used = format::kUnknown64;
  bool reading_at_failure = false;  // the NVML reading is of the failure's own moment
  uint64_t tracked_footprint = 0;   // arena bytes at the reading
  uint64_t pool_reserved = format::kUnknown64;
  uint64_t async_live = 0;
  std::vector<LiveAlloc> live;  // on the failing device, kinds holding device memory
  uint64_t device_total = format::kUnknown64;
  uint64_t contexts = 0;  // this process's contexts on the device up to the failure
  uint64_t graph_pool = format::kUnknown64;
  std::vector<format::GpuProcess> other_processes;
  const AllocatorMapView* allocator_map = nullptr;  // the block map given after the failure
  // Without a block map, the trace's own blocks at the failure (cache_layout.h): the
  // caching allocator's segments, each with whether a block in use lies in it.
  const std::vector<std::pair<uint64_t, bool>>* block_segments = nullptr;
  std::string block_allocator;  // its display name ("PyTorch")
};

Diagnosis diagnose(const FailureFacts& f, const Stacks& stacks);

}  // namespace cumemtrace
