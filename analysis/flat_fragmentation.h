// The analyzer's fragmentation index: the same figures as FragmentationIndex
// (include/cumemtrace/fragmentation.h, whose comment gives the definition and why it can
// be kept incrementally), the same arithmetic per neighbour pair, held in flat sorted
// blocks (sorted_blocks.h) instead of two std::maps.
//
// Why a second one: the tracer's index lives in the traced process and is the contract
// header; the analyzer replays millions of events and spent a quarter of `report` in the
// maps' nodes (docs/performance.md). Agreement with FragmentationIndex on every figure is
// pinned down by test/analysis/flat_fragmentation_test.cpp; the rule per neighbour pair
// is the one both share (cumemtrace/arena_rules.h).
#pragma once

#include <cstdint>

#include "cumemtrace/arena_rules.h"
#include "cumemtrace/fragmentation.h"
#include "gap_sizes.h"
#include "sorted_blocks.h"

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

  FragmentationFigures figures() const {
    FragmentationFigures f;
    f.live_bytes = live_bytes_;
    f.live_count = live_.size();
    f.gap_bytes = gap_bytes_;
    f.arena_bytes = live_bytes_ + gap_bytes_;
    f.arena_count = arena_breaks_ + (live_.empty() ? 0 : 1);
    f.largest_gap = gaps_.largest();
    return f;
  }

  // The live ranges in address order: `for (const auto& [start, size] : index.live())`.
  const SortedBlocks& live() const { return live_; }

 private:
  struct Span {
    uint64_t start;
    uint64_t size;
  };

  // The gaps of the neighbour pair (p, n), added (+1) or removed (-1); a null p is
  // "before the first", a null n "after the last".
  void account(const Span* p, const Span* n, int sign) {
    const PairGaps g = pair_gaps(granule_, p != nullptr, p ? p->start + p->size : 0, n != nullptr, n ? n->start : 0);
    if (g.arena_break) arena_breaks_ += sign;
    gap(g.first, sign);
    gap(g.second, sign);
  }

  void gap(uint64_t bytes, int sign) {
    if (bytes == 0) return;
    gap_bytes_ += sign > 0 ? bytes : -bytes;
    if (sign > 0) {
      gaps_.add(bytes);
    } else {
      gaps_.remove(bytes);
    }
  }

  Granule granule_;
  SortedBlocks live_;   // start -> size (bytes)
  GapSizes gaps_;
  uint64_t live_bytes_ = 0;
  uint64_t gap_bytes_ = 0;
  uint64_t arena_breaks_ = 0;  // neighbour pairs that sit in different arenas
};

}  // namespace cumemtrace
