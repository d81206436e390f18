// How many gaps of each size (bytes) a device has, and the largest: the part of the
// fragmentation index that every allocation and free touches three or four times.
//
// Why not a sorted structure: only the largest size is ever read in order. Counts live in
// an open-addressing table (address_map.h); the sizes are also kept in a max-heap that
// may hold stale entries (sizes whose count fell to 0), dropped when they reach the top,
// so the top is always a size with gaps. A sorted block structure cost 17 % of `report`
// (docs/performance.md). The heap is rebuilt from the table when stale entries outnumber
// live ones, so it stays within twice the number of distinct sizes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cumemtrace/rules/address_map.h"

namespace cumemtrace {

class GapSizes {
 public:
  void add(uint64_t bytes) {
    uint64_t* n = counts_.find(bytes);
    if (n) {
      ++*n;
      return;
    }
    counts_.insert_or_assign(bytes, 1);
    heap_.push_back(bytes);
    std::push_heap(heap_.begin(), heap_.end());
    if (heap_.size() > 2 * counts_.size() + 64) rebuild();
  }

  // Removes one gap of `bytes`; a size with no gaps is left alone.
  void remove(uint64_t bytes) {
    uint64_t* n = counts_.find(bytes);
    if (!n || --*n != 0) return;
    counts_.erase(bytes);
    while (!heap_.empty() && !counts_.find(heap_.front())) {
      std::pop_heap(heap_.begin(), heap_.end());
      heap_.pop_back();
    }
  }

  uint64_t largest() const { return heap_.empty() ? 0 : heap_.front(); }  // bytes; 0 with no gaps

 private:
  void rebuild() {
    heap_.clear();
    counts_.for_each([&](uint64_t size, uint64_t) { heap_.push_back(size); });
    std::make_heap(heap_.begin(), heap_.end());
  }

  AddressMap<uint64_t> counts_;  // gap size (bytes) -> how many gaps of that size
  std::vector<uint64_t> heap_;   // max-heap of sizes; the top always has gaps
};

}  // namespace cumemtrace
