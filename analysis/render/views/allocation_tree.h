// heaptrack's top-down and bottom-up trees, for device memory, as both `report --view
// tree|callers` and the page draw them. Every allocation's stack as the flame graph draws
// it (export_frames.h: from the call site outward, Python frames merged in, libc's
// start-up frames left out) adds its bytes and its count to each frame on the path:
// top-down from the outermost frame (what each part of the program allocated below it),
// bottom-up from the call site (who called each site, and how much through each caller).
// Frames of one name at one level are one node, so a function called from two places is
// two nodes top-down and one bottom-up, heaptrack's merging.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "reports/views/allocation_stats.h"
#include "stacks/stacks.h"

namespace cumemtrace {

struct AllocationTree {
  using Child = std::pair<const std::string, AllocationTree>;  // a frame's words (FrameStyle::kExport), its node

  uint64_t bytes = 0, allocations = 0;
  std::map<std::string, AllocationTree> children;

  // The children in the order every view shows them: the most bytes first, then the most
  // allocations, then by name.
  std::vector<const Child*> ranked() const;
};

// The root's children are the outermost frames (top_down) or the call sites' frames; the
// frames named with `stacks`'s symbols.
AllocationTree allocation_tree(const AllocationStats& st, const Stacks& stacks, bool top_down);

}  // namespace cumemtrace
