#include "reports/cache/cache_layout.h"

#include <algorithm>

#include "read/in_file_order.h"

namespace cumemtrace {

using format::Kind;
using format::Op;

void CacheLayout::apply(const Event& e) {
  if (e.device < 0 || e.result != 0 || (e.flags & format::kEventCaptured)) return;
  const bool whole = e.kind == Kind::kDevice || e.kind == Kind::kPitch || e.kind == Kind::kAsyncPool;
  const bool mapping = e.kind == Kind::kVmmMap;
  if (!whole && !mapping) return;
  if ((e.op == Op::kAlloc && whole) || (e.op == Op::kMap && mapping)) {
    if (e.address != 0 && e.size != 0) segments_[e.address] = {e.size, e.device, mapping, false};
    return;
  }
  if ((e.op == Op::kFree && whole) || (e.op == Op::kUnmap && mapping)) {
    const auto it = segments_.find(e.address);
    if (it == segments_.end()) return;
    // Blocks still in it go with it: the allocator's frees of them were not reported.
    const uint64_t end = e.address + it->second.size;
    for (auto b = blocks_.lower_bound(e.address); b != blocks_.end() && b->first < end;) b = blocks_.erase(b);
    segments_.erase(it);
  }
}

void CacheLayout::apply(const BlockEvent& b) {
  if (b.op == format::BlockOp::kFree && (b.flags & format::kBlockPendingFree)) {
    if (auto it = blocks_.find(b.address); it != blocks_.end()) it->second.pending = true;
    return;
  }
  if (b.op == format::BlockOp::kFree) {
    blocks_.erase(b.address);
    return;
  }
  if (b.op == format::BlockOp::kFreeCompleted) {
    if (auto it = blocks_.find(b.address); it != blocks_.end() && it->second.pending) blocks_.erase(it);
    return;
  }
  if (b.op != format::BlockOp::kAlloc || b.size == 0 || b.size == format::kUnknown64) return;
  blocks_[b.address] = {b.size, b.device, false};
  // Every segment the block touches holds blocks (a block spans adjacent mappings).
  auto it = segments_.upper_bound(b.address);
  if (it != segments_.begin()) --it;
  for (; it != segments_.end() && it->first < b.address + b.size; ++it)
    if (it->first + it->second.size > b.address) it->second.holds = true;
}

CacheFigures CacheLayout::figures(int32_t device, uint64_t time_ns) const {
  CacheFigures f;
  f.time_ns = time_ns;
  for (auto it = segments_.begin(); it != segments_.end();) {
    if (it->second.device != device) {
      ++it;
      continue;
    }
    // One segment: a whole allocation, or a run of adjacent mappings.
    const uint64_t start = it->first;
    uint64_t end = start + it->second.size;
    bool holds = it->second.holds;
    const bool mapping = it->second.mapping;
    for (++it;
         mapping && it != segments_.end() && it->first == end && it->second.mapping && it->second.device == device;
         ++it)
      end += it->second.size, holds |= it->second.holds;
    if (!holds) continue;
    ++f.segments;
    f.reserved += end - start;
    uint64_t at = start;
    const auto gap = [&](uint64_t to) {
      if (to <= at) return;
      f.free += to - at, ++f.free_blocks;
      f.largest_free = std::max(f.largest_free, to - at);
    };
    for (auto b = blocks_.lower_bound(start); b != blocks_.end() && b->first < end; ++b) {
      gap(b->first);
      const uint64_t b_end = std::min(end, b->first + b->second.size);
      if (b_end > at) (b->second.pending ? f.pending : f.allocated) += b_end - std::max(at, b->first), at = b_end;
    }
    gap(end);
  }
  return f;
}

std::vector<std::pair<uint64_t, bool>> CacheLayout::segments_in_use(int32_t device) const {
  std::vector<std::pair<uint64_t, bool>> out;
  for (const auto& [address, s] : segments_) {
    if (s.device != device || !s.holds) continue;
    // A block starting before the segment may reach into it (a block spans mappings).
    auto b = blocks_.upper_bound(address);
    bool busy = b != blocks_.end() && b->first < address + s.size;
    if (!busy && b != blocks_.begin()) busy = std::prev(b)->first + std::prev(b)->second.size > address;
    out.emplace_back(address, busy);
  }
  return out;
}

SegmentsInUse segments_in_use_at(const Trace& trace, const EventSource& events, const std::vector<SegmentsAt>& at) {
  SegmentsInUse out;
  out.at.resize(at.size());
  // When block records (usage reports) were on: from the first `on` to the first `off`.
  uint64_t on = format::kUnknown64, off = format::kUnknown64;
  for (const BlockSource& s : trace.block_sources) {
    if (!(s.flags & format::kBlockSourceUsageReports)) continue;
    if (s.state == format::BlockSourceState::kOn && s.time_ns < on)
      on = s.time_ns, out.allocator = std::string(format::block_allocator_name(s.allocator));
    if (s.state == format::BlockSourceState::kOff) off = std::min(off, s.time_ns);
  }
  std::multimap<size_t, size_t> wanted;  // event index -> position in `at`
  for (size_t k = 0; k < at.size(); ++k)
    if (on != format::kUnknown64 && at[k].time_ns >= on && at[k].time_ns < off) wanted.emplace(at[k].event_index, k);
  if (wanted.empty()) return out;
  CacheLayout layout;
  size_t index = 0;
  in_file_order(trace, events, [&](const Event* e, const BlockEvent* b, size_t) {
    if (b) return layout.apply(*b);
    for (auto [it, end] = wanted.equal_range(index++); it != end; ++it)
      out.at[it->second] = layout.segments_in_use(at[it->second].device);
    layout.apply(*e);
  });
  return out;
}

}  // namespace cumemtrace
