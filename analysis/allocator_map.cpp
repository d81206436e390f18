#include "allocator_map.h"

#include <algorithm>
#include <unordered_map>

namespace cumemtrace {

void BlockTotals::add(const AllocatorBlock& b) {
  switch (b.state) {
    case format::BlockState::kActiveAllocated:
      allocated_bytes += b.size, ++allocated_blocks;
      break;
    case format::BlockState::kActivePendingFree:
      pending_free_bytes += b.size, ++pending_free_blocks;
      break;
    case format::BlockState::kInactive:
      free_bytes += b.size, ++free_blocks;
      largest_free_block = std::max(largest_free_block, b.size);
      break;
  }
}

void BlockTotals::add(const BlockTotals& o) {
  allocated_bytes += o.allocated_bytes, allocated_blocks += o.allocated_blocks;
  pending_free_bytes += o.pending_free_bytes, pending_free_blocks += o.pending_free_blocks;
  free_bytes += o.free_bytes, free_blocks += o.free_blocks;
  largest_free_block = std::max(largest_free_block, o.largest_free_block);
}

AllocatorMapView view_allocator_map(const AllocatorMap& m, const std::vector<LiveAlloc>& live, uint64_t request,
                                    const Stacks& stacks, size_t top) {
  std::unordered_map<uint64_t, const LiveAlloc*> at;
  for (const auto& a : live)
    if (a.address) at[a.address] = &a;
  AllocatorMapView v;
  v.allocator = m.allocator;
  v.time_ns = m.time_ns;
  v.request = request;
  v.segments = m.segments.size();
  std::vector<SegmentView> all;
  for (const auto& s : m.segments) {
    SegmentView sv;
    sv.address = s.address;
    sv.total_bytes = s.total_bytes;
    sv.stream = s.stream;
    sv.small = s.flags & format::kSegmentSmall;
    sv.blocks = s.blocks.size();
    for (const auto& b : s.blocks) sv.totals.add(b);
    if (auto it = at.find(s.address); it != at.end()) {
      sv.joined = true;
      sv.library = stacks.call_site(it->second->stack_id).library;
      sv.kind = it->second->kind;
      sv.allocation_bytes = it->second->size;
      ++v.joined;
    }
    v.total_bytes += s.total_bytes;
    v.totals.add(sv.totals);
    all.push_back(std::move(sv));
  }
  v.free_block_fits = v.totals.free_blocks && v.totals.largest_free_block >= request;
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.total_bytes > b.total_bytes; });
  if (all.size() > top) all.resize(top);
  v.largest = std::move(all);
  return v;
}

}  // namespace cumemtrace
