// Who held a device's memory at a failed allocation, and which of them, released, would
// have let the request fit: the one rule behind the diagnosis (diagnosis.h), the split of
// NVML's figure at a failure in the report's text and JSON. docs/report-json.md states it.
//
// The split, in bytes at the NVML reading used for the failure:
//   process_used = footprint + contexts + pool slack + graph pool + untracked
//   footprint    = live allocations (by owner) + rounding (granules, gaps: they go with
//                  the allocations, never released alone)
// and the device's free memory beside it. A holder set "fits" when
// device_free + the bytes its holders hold >= request.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reports/oom/allocator_map.h"
#include "read/reader.h"
#include "replay/replay.h"
#include "stacks/stacks.h"

namespace cumemtrace {

// The ranking's tie-break is holders.cpp's rank(): the cheapest to release first.
enum class HolderKind {
  kPoolSlack,       // a stream-ordered pool's reserve beyond its live allocations
  kGraphPool,       // the CUDA graph memory pool's reserve
  kCache,           // live allocations a caching allocator made (its segments), `owner` names it
  kOtherProcesses,  // other processes on the GPU
  kContexts,        // CUDA contexts this process created on the device
  kUntracked,       // what the process uses that nothing above explains
  kCacheInUse,      // a caching allocator's segments split by blocks in use (its block map says so)
  kLive,            // the program's own live allocations (and libraries' own), `owner`: the library
  kRounding,        // footprint beyond the live allocations' bytes; not releasable on its own
};

struct Holder {
  HolderKind kind{};
  std::string owner;  // the allocator, library, or "pid N, pid M"; empty when the kind says all
  uint64_t bytes = 0;
  uint64_t count = 0;  // allocations, blocks in use (kCacheInUse) or processes
};

std::string holder_key(const Holder& h);   // JSON: "pool_slack", "cache:PyTorch", "live:libfoo.so", ...
std::string holder_name(const Holder& h);  // text: "PyTorch's cache", "live allocations from libfoo.so", ...
bool releasable(HolderKind k);
// Releasing it means freeing memory the program still uses (a live allocation).
bool is_live(HolderKind k);

// What the report knows at a failure. Figures NVML did not give are format::kUnknown64.
struct HolderFacts {
  uint64_t process_used = format::kUnknown64;
  uint64_t footprint = 0;  // arena bytes of the reading (sections/readings.h footprint())
  uint64_t contexts = 0;   // context sizes on the device up to the failure
  uint64_t pool_reserved = format::kUnknown64;
  uint64_t async_live = 0;
  uint64_t graph_pool = format::kUnknown64;
  std::vector<format::GpuProcess> other_processes;
  const std::vector<LiveAlloc>* live = nullptr;                          // on the failing device, holding device memory
  const std::vector<std::pair<uint64_t, bool>>* map_segments = nullptr;  // AllocatorMapView::joined_in_use
  std::string map_allocator;                                             // its display name
};

// The holders with bytes > 0, largest live owners first within their kind.
std::vector<Holder> failure_holders(const HolderFacts& f, const CachingAllocators& owners);

struct Release {
  std::vector<size_t> holders;  // indexes into the holders, ranked order
  uint64_t released = 0;        // their bytes together
};

// The fewest releasable holders that fit: every set of that size that does, ranked (the
// cheapest kinds first, then the most bytes), at most `max`. Empty when not even all of
// them together fit.
std::vector<Release> fewest_holders(const std::vector<Holder>& holders, uint64_t device_free, uint64_t request,
                                    size_t max);

}  // namespace cumemtrace
