// Inside the pools (trace format 1.12; docs/cli.md, "Annotated pools"): what a pool said
// through NVTX's memory extension about the device memory it took from CUDA. A heap is a
// range the pool manages; a region is a piece it handed out. The device-memory figures
// see a pool's slab as one allocation; this is what was in it.
//
// The rules:
//   - A region belongs to the heap it was registered in, and lives from its register to its
//     unregister, its heap's reset or unregister, or the trace's end; a resize changes its
//     bytes from then on; its name is the last one it was given (nvtxMemRegionsName) while
//     it lived, for its whole life. A region
//     registered at an address where one is live replaces it (the pool reused the address
//     without saying so). A resize, unregister or name of an address where no region lives
//     is counted as an unknown reference, and changes nothing; so is a reset or unregister
//     of a heap not registered then. Overlapping regions each count their bytes.
//   - A reset of heap 0 (the process-wide heap) resets every heap registered then. A region
//     of a heap not registered at the time (registered before the trace began, used after
//     its unregister, or the process-wide heap itself) goes to a heap of that handle shown
//     with no range, as not declared.
//   - Its regions are grouped by call site (call_site_rule.h, the same rule as allocations'
//     sites; NVTX's own functions are frames of the pool, skipped like an allocator's) and
//     name. Each site is classified across the report's iterations by growth.h's rule, at
//     growth's boundaries: the bytes of its regions live at each boundary. `leak` there is a
//     leak inside the pool: the slab's allocation does not grow, what is handed out of it does.
//   - Fragmentation inside a heap with a range (fragmentation.h's figures): arena bytes are
//     the heap's bytes, live bytes its regions' (summed), gap bytes the heap's bytes no
//     region covers, the largest gap the longest run of them: external fragmentation
//     = 1 - largest gap / gap bytes. At the heap's peak (its regions' bytes at their most,
//     the first time) and at the end (or when the heap went away).
//   - Where the heap lies: the last successful device-memory allocation made before the
//     heap was registered whose bytes hold the heap's start and not freed before it (its
//     device and range). Ranges that pass 2^64 end there.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cumemtrace/rules/fragmentation.h"
#include "read/event_source.h"
#include "read/reader.h"
#include "reports/growth/growth.h"
#include "stacks/call_site_rule.h"
#include "stacks/stacks.h"

namespace cumemtrace {

struct PoolSite {
  std::string name;           // the regions' name; empty: never named
  uint32_t node = 0;          // native StackNode to show frames from (UserSite::node)
  uint64_t key = 0;           // UserSite::key
  bool from_python = false;   // the key names a Python frame
  CallerNames::Names caller;  // the caller that tells it from sites of the same frame (call_site_rule.h)
  std::vector<Frame> frames;
  std::vector<Frame> python_frames;         // from the user's Python frame outwards
  uint64_t registered = 0;                  // regions registered over the run
  uint64_t peak_bytes = 0, peak_count = 0;  // live at the heap's peak
  uint64_t end_bytes = 0, end_count = 0;    // live at the end (or when the heap went away)
  GrowthSite::Class cls = GrowthSite::Class::kVaries;
  std::vector<uint64_t> bytes_at;           // live at each of growth's boundaries
  uint64_t registered_within = 0;           // registered between the first and the last boundary
  uint64_t growth_per_iteration = 0;        // leak only
  uint64_t growth_min = 0, growth_max = 0;  // leak only
};

struct PoolHeap {
  uint64_t handle = 0;  // as the program held it
  std::string name;
  uint8_t usage = 0;                               // NVTX_MEM_HEAP_USAGE_TYPE_* bits: 1 sub-allocator, 2 layout
  bool declared = false;                           // registered in the trace (else: no range, no register time)
  uint64_t address = 0, size = 0;                  // its range (size 0: none given)
  uint64_t registered_ns = 0;                      // 0 when not declared
  std::optional<uint64_t> gone_ns;                 // unregistered then
  uint64_t resets = 0;                             // nvtxMemHeapReset calls
  int32_t device = -1;                             // of the allocation it lies in; -1: not found
  uint64_t backing_address = 0, backing_size = 0;  // that allocation (size 0: not found)
  uint64_t regions_registered = 0, bytes_registered = 0;
  uint64_t outside = 0;  // regions registered not wholly inside its range
  uint64_t peak_bytes = 0, peak_count = 0, peak_time_ns = 0;
  uint64_t end_bytes = 0, end_count = 0;
  FragmentationFigures inside_at_peak, inside_at_end;  // only for a heap with a range
  std::vector<PoolSite> sites;  // leaks first (by growth), then by bytes at the peak, then at the end
};

struct Pools {
  std::vector<PoolHeap> heaps;      // in the order they were registered (undeclared ones last)
  uint64_t unknown_references = 0;  // resizes, unregisters and names of no live region
};

// Empty when the trace has no NvtxMem records. `events` are the trace's (read whole or in
// passes: event_source.h); `growth` gives the iterations' boundaries.
Pools pool_report(const Trace& trace, const EventSource& events, const Stacks& stacks, const Growth& growth,
                  size_t frames);

}  // namespace cumemtrace
