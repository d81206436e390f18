// Bytes and counts per category (stacks/categories.h) of what was live at one moment: the
// peak, the end, a failed allocation (docs/categories.md; `report --by category`).
//
// A caching allocator's allocation is a segment that serves many tensors: the driver sees
// one cudaMalloc (or one physical handle) per segment, so its category is that of the
// stack that grew the segment, the first tensor's. Such bytes are counted apart
// (segment_bytes) so that the report can say the category is inferred. A stream-ordered
// pool's allocation (cudaMallocAsync, PyTorch's async backend) is one tensor and is not.
// Memory in no allocation comes from the NVML split (report.h: NvmlSplit): contexts, the
// default async pool's slack, the CUDA graph memory pool's reserve, untracked.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "replay/replay.h"
#include "reports/oom/allocator_map.h"
#include "stacks/categories.h"
#include "stacks/stacks.h"

namespace cumemtrace {

struct CategoryRow {
  std::string category;
  uint64_t bytes = 0;
  uint64_t count = 0;
  // Of them, caching-allocator segments whose category is their first allocation's.
  uint64_t segment_bytes = 0;
  uint64_t segment_count = 0;
  bool allocations = true;  // false: memory in no allocation (count is 0)
};

// Memory in no allocation at one moment; 0 where unknown.
struct MemoryBeyondAllocations {
  uint64_t contexts = 0;
  uint64_t pool_slack = 0;
  uint64_t graph_memory_pool = 0;
  uint64_t untracked = 0;
};

struct NvmlSplit;
struct GraphPoolFigures;
struct FailedRow;
// At the peak: NVML's split when known (report.h: the reading may be of another moment,
// as the device section says), else `contexts` and the graph pool's reading at the peak.
MemoryBeyondAllocations beyond_at_peak(const NvmlSplit& n, const GraphPoolFigures& g, uint64_t contexts);
// One NVML reading's figures (kUnknown64 where not read), split as the peak's is.
struct ReadingFigures {
  uint64_t footprint = 0;  // sections/readings.h footprint(): arenas, unmapped physical memory, arrays
  uint64_t pool_reserved = format::kUnknown64;
  uint64_t async_live = 0;
  uint64_t graph_reserved = format::kUnknown64;
  uint64_t process_used = format::kUnknown64;
};
MemoryBeyondAllocations beyond_of_reading(const ReadingFigures& r, uint64_t contexts);
// At a failure: the row's own reading (FailedRow).
MemoryBeyondAllocations beyond_at_failure(const FailedRow& row, uint64_t contexts);

class Categorizer {
 public:
  Categorizer(const Stacks& stacks, const CategoryRules& rules) : stacks_(stacks), rules_(rules), owners_(stacks) {}

  struct Found {
    std::string category;
    bool segment = false;
  };
  Found of(uint32_t stack_id, uint32_t python_stack_id, format::Kind kind) const;

  // Kinds that hold device memory only (a mapping is its physical handle's memory again),
  // then the memory beyond them; largest first, ties by name; categories at 0 left out.
  std::vector<CategoryRow> table(const std::vector<LiveAlloc>& live, const MemoryBeyondAllocations& beyond) const;

 private:
  struct Memo {
    std::string category;
    bool cached = false;  // made by a caching allocator (allocator_map.h)
  };
  const Memo& memo(uint32_t stack_id, uint32_t python_stack_id) const;

  const Stacks& stacks_;
  const CategoryRules& rules_;
  CachingAllocators owners_;
  mutable std::map<std::pair<uint32_t, uint32_t>, Memo> memo_;
  // Per frame text: stacks share most frames, and every rule is searched in each frame.
  mutable std::unordered_map<std::string, int> frame_rule_;
};

}  // namespace cumemtrace
