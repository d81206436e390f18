// The fragmentation index the tracer and the analyzer keep: the figures of
// FragmentationIndex (fragmentation.h, whose comment gives the definition and why it can
// be kept incrementally), the same arithmetic per neighbour pair (arena_rules.h), held in
// flat sorted blocks (sorted_blocks.h) and a gap-size table (gap_sizes.h) instead of two
// std::maps.
//
// Why not FragmentationIndex itself: its maps take a heap node per allocation and per
// gap size and a pointer chase per lookup. They were a quarter of `report`'s time, and
// in the traced process about 700 of the ~1,740 instructions an event spent in the
// tracker (callgrind, docs/performance.md). FragmentationIndex stays as the plain statement
// of the rules: test/analysis/replay/flat_fragmentation_test.cpp holds the two equal on every
// figure through random histories.
#pragma once

#include <algorithm>
#include <cstdint>

#include "cumemtrace/rules/arena_rules.h"
#include "cumemtrace/rules/fragmentation.h"
#include "cumemtrace/rules/gap_sizes.h"
#include "cumemtrace/rules/sorted_blocks.h"

namespace cumemtrace {

class FlatFragmentationIndex {
 public:
  explicit FlatFragmentationIndex(uint64_t granule = FragmentationIndex::kDefaultGranule) : granule_(granule) {}

  uint64_t granule() const { return granule_.bytes(); }  // bytes

  // Adds [start, start+size) (bytes). Returns false (and changes nothing) for an empty
  // range or one overlapping a live range.
  bool insert(uint64_t start, uint64_t size) {
    if (size == 0 || start + size < start) return false;
    const SortedBlocks::Pos next = live_.lower_bound(start);
    const bool has_n = !live_.is_end(next);
    if (has_n && live_.at(next).key < start + size) return false;
    Span p{}, n{};
    const bool has_p = next != live_.begin_pos();
    if (has_p) {
      const SortedBlocks::Entry& prev = live_.at(live_.prev(next));
      if (prev.key + prev.value > start) return false;
      p = {prev.key, prev.value};
    }
    if (has_n) n = {live_.at(next).key, live_.at(next).value};
    const Span s{start, size};
    account(has_p ? &p : nullptr, has_n ? &n : nullptr, -1);
    account(has_p ? &p : nullptr, &s, +1);
    account(&s, has_n ? &n : nullptr, +1);
    live_.insert(next, {start, size});
    live_bytes_ += size;
    return true;
  }

  // Removes the range starting at `start`; returns its size (bytes), or 0 if none starts there.
  uint64_t erase(uint64_t start) {
    const SortedBlocks::Pos it = live_.lower_bound(start);
    if (live_.is_end(it) || live_.at(it).key != start) return 0;
    const Span s{start, live_.at(it).value};
    Span p{}, n{};
    const bool has_p = it != live_.begin_pos();
    if (has_p) p = {live_.at(live_.prev(it)).key, live_.at(live_.prev(it)).value};
    const SortedBlocks::Pos nit = live_.next(it);
    const bool has_n = !live_.is_end(nit);
    if (has_n) n = {live_.at(nit).key, live_.at(nit).value};
    account(has_p ? &p : nullptr, &s, -1);
    account(&s, has_n ? &n : nullptr, -1);
    account(has_p ? &p : nullptr, has_n ? &n : nullptr, +1);
    live_bytes_ -= s.size;
    live_.erase(it);
    return s.size;
  }

  // Whether [start, start+size) lies wholly in live ranges, end to end: a caching
  // allocator's block inside its segment, or across adjacent mappings of one expandable
  // segment (PyTorch maps those in pieces).
  bool covers(uint64_t start, uint64_t size) const {
    if (size == 0 || start + size < start || live_.empty()) return false;
    SortedBlocks::Pos p = live_.lower_bound(start);
    if (live_.is_end(p) || live_.at(p).key != start) {
      if (p == live_.begin_pos()) return false;
      p = live_.prev(p);
    }
    uint64_t at = start;
    for (; !live_.is_end(p); p = live_.next(p)) {
      const SortedBlocks::Entry& e = live_.at(p);
      if (e.key > at) return false;
      at = std::max(at, e.key + e.value);
      if (at >= start + size) return true;
    }
    return false;
  }

  FragmentationFigures figures() const { return figures_of(live_bytes_, live_.size(), gaps_); }

  // The live ranges in address order: `for (const auto& [start, size] : index.live())`.
  const SortedBlocks& live() const { return live_; }

 private:
  struct Span {
    uint64_t start;
    uint64_t size;
  };

  // The gaps of the neighbour pair (p, n); a null p is "before the first", a null n "after the last".
  void account(const Span* p, const Span* n, int sign) {
    gaps_.account(granule_, p != nullptr, p ? p->start + p->size : 0, n != nullptr, n ? n->start : 0, sign);
  }

  Granule granule_;
  SortedBlocks live_;  // start -> size (bytes)
  GapTally<GapSizes> gaps_;
  uint64_t live_bytes_ = 0;
};

}  // namespace cumemtrace
