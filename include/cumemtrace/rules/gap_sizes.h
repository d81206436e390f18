// How many gaps of each size (bytes) a device has, and the largest: the part of the
// fragmentation index that every allocation and free touches three or four times.
//
// Why not a sorted structure: only the largest size is ever read in order. Counts live in
// an open-addressing table (address_map.h); every size in the table is also in a max-heap
// once, and the top of the heap always has gaps. A sorted block structure cost 17 % of
// `report` (docs/performance.md).
//
// A size whose last gap goes keeps its entry, with no gaps, until it reaches the top of the
// heap or the heap is rebuilt: in a churning live set the same gap sizes go and come back
// again and again, and an entry erased at once was erased, inserted and pushed onto the
// heap anew each time (the largest cost of `report`'s replay: docs/performance.md, "Where
// `report`'s time goes"). The heap is rebuilt without the sizes that have no gaps when they
// outnumber the others, so the table and the heap stay within twice the number of sizes
// with gaps (and 64).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cumemtrace/rules/address_map.h"

namespace cumemtrace {

class GapSizes {
 public:
  void add(uint64_t bytes) {
    if (uint64_t* n = counts_.find(bytes)) {
      if ((*n)++ == 0) ++with_gaps_;  // back before it reached the top: still in the heap
      return;
    }
    counts_.insert_or_assign(bytes, 1);
    ++with_gaps_;
    heap_.push_back(bytes);
    std::push_heap(heap_.begin(), heap_.end());
    if (heap_.size() > 2 * with_gaps_ + 64) rebuild();
  }

  // Removes one gap of `bytes`; a size with no gaps is left alone.
  void remove(uint64_t bytes) {
    uint64_t* n = counts_.find(bytes);
    if (!n || *n == 0 || --*n != 0) return;
    --with_gaps_;
    while (!heap_.empty() && *counts_.find(heap_.front()) == 0) {
      counts_.erase(heap_.front());
      std::pop_heap(heap_.begin(), heap_.end());
      heap_.pop_back();
    }
  }

  uint64_t largest() const { return heap_.empty() ? 0 : heap_.front(); }  // bytes; 0 with no gaps

 private:
  void rebuild() {
    std::vector<uint64_t> gone;
    heap_.clear();
    counts_.for_each([&](uint64_t size, uint64_t n) { (n ? heap_ : gone).push_back(size); });
    for (uint64_t size : gone) counts_.erase(size);
    std::make_heap(heap_.begin(), heap_.end());
  }

  AddressMap<uint64_t> counts_;  // gap size (bytes) -> how many gaps of that size; each in heap_ once
  std::vector<uint64_t> heap_;   // max-heap of the sizes in counts_; the top always has gaps
  size_t with_gaps_ = 0;         // sizes in counts_ with gaps
};

}  // namespace cumemtrace
