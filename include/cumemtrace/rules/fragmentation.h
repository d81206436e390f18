// Fragmentation of one device's live allocations, kept up to date per event.
//
// Definition (docs/fragmentation.md is the long form, with worked examples):
//   The driver hands out physical memory in granules of G bytes (2 MiB on the H200).
//   An *arena* is a maximal run of adjacent granules each holding at least one live
//   allocation. A *gap* is a maximal part of an arena covered by no live allocation.
//   gap ratio              = gap bytes / arena bytes
//   external fragmentation = 1 - largest gap / gap bytes   (0 when there are no gaps)
//
// Why it can be incremental: live device allocations never overlap, so sorted by start
// they are also sorted by end, and the arena/gap structure is decided by each pair of
// neighbours alone. With R(x) = [floor(start/G)*G, ceil(end/G)*G):
//   - neighbours p < n share an arena iff R(p).end >= R(n).start; the gap between them
//     is then the single run [p.end, n.start);
//   - otherwise p ends its arena with the trailing gap [p.end, R(p).end) and n starts
//     a new one with the leading gap [R(n).start, n.start).
// Each insert/erase replaces one neighbour pair by two (or back), so every figure is
// O(log n) to maintain and O(1) to read: a snapshot of 100k live allocations costs
// no scan.
#pragma once

#include <cstdint>
#include <iterator>
#include <map>

#include "cumemtrace/rules/arena_rules.h"

namespace cumemtrace {

struct FragmentationFigures {
  uint64_t live_bytes = 0;  // sum of sizes of the allocations indexed
  uint64_t live_count = 0;
  uint64_t arena_bytes = 0;  // granule-rounded footprint: live_bytes + gap_bytes
  uint64_t arena_count = 0;
  uint64_t gap_bytes = 0;
  uint64_t largest_gap = 0;
  double gap_ratio() const { return arena_bytes ? double(gap_bytes) / double(arena_bytes) : 0.0; }
  double external_fragmentation() const { return gap_bytes ? 1.0 - double(largest_gap) / double(gap_bytes) : 0.0; }
};

// The figures of `live_count` allocations of `live_bytes` whose gaps are `gaps` (a GapTally).
template <class Tally>
FragmentationFigures figures_of(uint64_t live_bytes, uint64_t live_count, const Tally& gaps) {
  FragmentationFigures f;
  f.live_bytes = live_bytes;
  f.live_count = live_count;
  f.gap_bytes = gaps.gap_bytes();
  f.arena_bytes = live_bytes + f.gap_bytes;
  f.arena_count = gaps.arena_breaks() + (live_count ? 1 : 0);
  f.largest_gap = gaps.largest();
  return f;
}

class FragmentationIndex {
 public:
  static constexpr uint64_t kDefaultGranule = 2ull << 20;  // 2 MiB, measured on the H200

  explicit FragmentationIndex(uint64_t granule = kDefaultGranule) : granule_(granule) {}

  uint64_t granule() const { return granule_.bytes(); }

  // Adds [start, start+size). Returns false (and changes nothing) for an empty range or
  // one overlapping a live range: the caller's bookkeeping is wrong, not the device.
  bool insert(uint64_t start, uint64_t size) {
    if (size == 0 || start + size < start) return false;
    auto next = live_.lower_bound(start);
    if (next != live_.end() && next->first < start + size) return false;
    const Range* p = nullptr;
    if (next != live_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second > start) return false;
      p = &*prev;
    }
    const Range* n = next != live_.end() ? &*next : nullptr;
    account(p, n, -1);
    auto it = live_.emplace_hint(next, start, size);
    account(p, &*it, +1);
    account(&*it, n, +1);
    live_bytes_ += size;
    return true;
  }

  // Removes the range starting at `start`; returns its size, or 0 if none starts there.
  uint64_t erase(uint64_t start) {
    auto it = live_.find(start);
    if (it == live_.end()) return 0;
    const Range* p = it != live_.begin() ? &*std::prev(it) : nullptr;
    auto nit = std::next(it);
    const Range* n = nit != live_.end() ? &*nit : nullptr;
    account(p, &*it, -1);
    account(&*it, n, -1);
    account(p, n, +1);
    const uint64_t size = it->second;
    live_bytes_ -= size;
    live_.erase(it);
    return size;
  }

  FragmentationFigures figures() const { return figures_of(live_bytes_, live_.size(), gaps_); }

  const std::map<uint64_t, uint64_t>& live() const { return live_; }

 private:
  using Range = std::pair<const uint64_t, uint64_t>;

  // How many gaps of each size (bytes), for GapTally.
  struct SizeCounts {
    std::map<uint64_t, uint64_t> counts;
    void add(uint64_t bytes) { ++counts[bytes]; }
    void remove(uint64_t bytes) {
      if (auto it = counts.find(bytes); it != counts.end() && --it->second == 0) counts.erase(it);
    }
    uint64_t largest() const { return counts.empty() ? 0 : counts.rbegin()->first; }
  };

  // The gaps of the neighbour pair (p, n); a null p is "before the first", a null n "after the last".
  void account(const Range* p, const Range* n, int sign) {
    gaps_.account(granule_, p != nullptr, p ? p->first + p->second : 0, n != nullptr, n ? n->first : 0, sign);
  }

  Granule granule_;
  std::map<uint64_t, uint64_t> live_;  // start -> size
  GapTally<SizeCounts> gaps_;
  uint64_t live_bytes_ = 0;
};

}  // namespace cumemtrace
