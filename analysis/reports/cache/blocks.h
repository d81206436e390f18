// Inside a caching allocator (trace format 1.13; docs/cli.md, "Inside PyTorch's cache"):
// the blocks PyTorch's CUDA caching allocator handed out of the segments it took from the
// driver, as it reported them. The device-memory figures see the segments; these are the
// tensors in them.
//
// The rules:
//   - A block lives from its `alloc` to its `free` (or the trace's end). allocated is the
//     allocator's own figure after each action (torch.cuda.memory_allocated()), reserved
//     likewise (memory_reserved()); a device's peak of allocated is the first action after
//     which allocated was at its most, and the blocks live then are who held it.
//   - Blocks are grouped by call site (call_site_rule.h, the rule every table follows;
//     PyTorch's dispatch and allocator frames are skipped) per device, and each site is
//     classified across the report's iterations by growth.h's rule at growth's boundaries:
//     the bytes of its blocks live at each boundary. `leak` there is a tensor kept per
//     iteration inside the cache, which the segments may never show.
//   - An out-of-memory error the allocator raised (its `oom` action), with its allocated and
//     reserved bytes then, has one cause, the first that holds:
//       allocator-limit   no device-memory allocation failed in the driver on its thread
//                         since that thread's last block action: the allocator refused on
//                         its own (a per-process memory fraction);
//       pending-frees     free bytes inside the cache (reserved - allocated) are at least
//                         the request, but part of them are blocks freed while other streams
//                         still use them (`free` marked pending, its `free-completed` not yet
//                         come: only the allocator's trace entries tell) and what is free at
//                         once is less than the request;
//       fragmented-cache  free bytes inside the cache (reserved - allocated) are at least
//                         the request: enough is cached, in pieces between live blocks that
//                         no free block as large holds (PyTorch gives whole free segments back
//                         before it fails, so what is left is split by live tensors). The
//                         largest free block then (cache_layout.h) is said beside it; one at
//                         least as large as the request lies where the allocator would not
//                         take it for this request (another stream's or pool's segment, or
//                         the pool of small blocks), and is said so;
//       demand            else: live tensors hold allocated bytes, and what the cache holds
//                         free is less than the request.
//     Without trace entries a free that waits on other streams' events is not seen as such:
//     its block counts as free when the program frees it.
//   - Where the trace has none of these records but a caching allocator held device memory
//     (its segments' stacks name it: allocator_map.h, CachingAllocators), what happened
//     inside that cache is not visible, and figures that depend on it say so.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "read/event_source.h"
#include "read/reader.h"
#include "reports/cache/cache_layout.h"
#include "reports/oom/diagnosis.h"
#include "reports/growth/growth.h"
#include "stacks/stacks.h"

namespace cumemtrace {

struct BlockSite {
  int32_t device = -1;
  uint32_t node = 0;          // native StackNode to show frames from (UserSite::node)
  uint64_t key = 0;           // UserSite::key
  bool from_python = false;   // the key names a Python frame
  uint32_t python_stack = 0;  // the first block's Python stack
  CallerNames::Names caller;  // the caller that tells it from sites of the same frame (call_site_rule.h)
  std::vector<Frame> frames;
  std::vector<Frame> python_frames;  // from the user's Python frame outwards
  uint64_t allocations = 0;
  uint64_t peak_bytes = 0, peak_count = 0;  // live at its device's peak of allocated
  uint64_t end_bytes = 0, end_count = 0;    // live at the end
  GrowthSite::Class cls = GrowthSite::Class::kVaries;
  std::vector<uint64_t> bytes_at;    // live at each of growth's boundaries
  std::vector<uint64_t> carried_at;  // ... of them allocated before the boundary before (growth.h)
  uint64_t allocations_within = 0;
  uint64_t growth_per_iteration = 0, growth_min = 0, growth_max = 0;  // leak only
};

struct BlockDevice {
  int32_t device = -1;
  uint64_t allocations = 0, frees = 0;
  uint64_t unknown_frees = 0;  // frees of no live block (made before the records began)
  uint64_t peak_allocated = 0, peak_time_ns = 0, reserved_at_peak = 0;
  uint64_t peak_reserved = 0, peak_reserved_time_ns = 0;
  uint64_t end_allocated = 0, end_reserved = 0, end_count = 0;  // the allocator's last figures
  // Inside its segments (cache_layout.h) at the peak of allocated, the peak of reserved and
  // the end; and over time, at most kTimelinePoints moments spread over its records' time
  // (in each stretch, the record after which allocated was highest).
  CacheFigures at_peak, at_peak_reserved, at_end;
  struct Moment {
    uint64_t allocated = 0, reserved = 0;  // the allocator's own figures then
    CacheFigures inside;
  };
  std::vector<Moment> timeline;
  std::vector<BlockSite> sites;  // leaks first (by growth), then by bytes at the peak, then at the end
};

struct BlockOom {
  uint64_t time_ns = 0;
  int32_t device = -1;
  uint32_t tid = 0;
  uint64_t request = 0, allocated = 0, reserved = 0;  // bytes, as the allocator said
  uint64_t since_ns = 0;                              // its thread's block action before it (0: none)
  bool driver_refused = false;                        // a driver allocation failed on its thread since then
  CacheFigures cache;                                 // inside its device's segments then
  Diagnosis diagnosis;                                // allocator-limit, pending-frees, fragmented-cache or demand
  std::vector<Frame> frames;
  std::vector<Frame> python_frames;
  std::vector<BlockSite> live_sites;  // blocks live on its device then, by bytes, at most `top`
};

inline constexpr size_t kTimelinePoints = 200;

struct Blocks {
  bool recorded = false;  // a BlockSource turned block events on
  std::string allocator;  // "PyTorch"
  std::string version, settings;
  std::optional<uint64_t> off_time_ns;  // they were turned off then ...
  std::string off_reason;               // ... for this reason
  // The allocator's trace entries (requested bytes, streams, pools, frees that wait on
  // other streams) were recorded; or why not, when they were refused or turned off.
  bool trace_entries = false;
  std::string entries_off_reason;
  std::vector<BlockDevice> devices;  // in device order
  std::vector<BlockOom> ooms;        // in time order
  // Caching allocators that held device memory in this trace with no block records of
  // their own (or after theirs were turned off): "PyTorch", "CuPy", "XLA", "RMM".
  std::vector<std::string> not_visible;
  bool visible(int32_t device) const;  // block records cover `device`
};

// Empty (recorded false) when the trace has no block records. `growth` gives the
// iterations' boundaries; `cached` the caching allocators whose segments the trace holds.
// `events`: the trace's (event_source.h), scanned once when the allocator raised an error.
Blocks block_report(const Trace& trace, const EventSource& events, const Stacks& stacks, const Growth& growth,
                    size_t frames, size_t top, const std::vector<std::string>& cached);

// The sentence figures that depend on a cache say where it is not visible: "inside
// PyTorch's cache: not visible (no block records in this trace)", one per allocator.
std::vector<std::string> not_visible_notes(const Blocks& b);

// What the blocks add to a report's other findings, once it has growth's sites and the
// failed allocations: the sites join growth (marked `inside`), so that a tensor kept per
// iteration is a leak wherever leaks are read (the summary, check, baselines); the
// allocator's own out-of-memory errors diagnose the driver's refusals they explain, or are
// failed allocations of their own.
struct Report;
void add_block_findings(Report& rep, const Stacks& stacks);

}  // namespace cumemtrace
