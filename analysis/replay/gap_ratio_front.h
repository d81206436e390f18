// The maximum gap ratio over the moments that matter (docs/fragmentation.md): those whose
// footprint (arena bytes) is at least a tenth of the device's peak footprint. The first
// small allocation of every trace has a gap ratio near 1 (512 B in a 2 MiB granule) and
// says nothing about fragmentation; a maximum over all moments would always be that.
//
// The peak footprint is only known at the end, so one pass keeps the Pareto front of
// (footprint, gap ratio) pairs: a moment is dropped once an earlier one has at least its
// footprint and ratio, or a later one at least its footprint and a higher ratio, since no
// threshold can prefer it. Along the front the ratio never rises as the footprint grows, so the answer for a threshold
// is the entry with the smallest footprint at or above it. O(log n) per moment, amortised.
#pragma once

#include <cstdint>
#include <map>

namespace cumemtrace {

class GapRatioFront {
 public:
  // A moment with arena bytes `footprint` and gap ratio `ratio` at `time_ns`. Returns
  // false when nothing changed (so max_over_significant() is as it was: most moments).
  bool observe(uint64_t footprint, double ratio, uint64_t time_ns) {
    bool changed = false;
    if (footprint > peak_footprint_) {
      peak_footprint_ = footprint;
      changed = true;
    }
    if (footprint == 0) return changed;
    auto it = front_.lower_bound(footprint);
    if (it != front_.end() && it->second.ratio >= ratio) return changed;  // dominated (an earlier tie wins)
    // Remove what the new moment dominates: no more footprint and a lower ratio. An
    // earlier moment of equal ratio stays: it is the one first reaching that ratio.
    while (it != front_.begin()) {
      auto prev = std::prev(it);
      if (prev->second.ratio >= ratio) break;
      front_.erase(prev);
    }
    front_[footprint] = Point{ratio, time_ns};
    return true;
  }

  uint64_t peak_footprint() const { return peak_footprint_; }

  // The highest gap ratio among moments with footprint >= peak footprint / 10, and when
  // it was first reached; {0, 0} when no memory was ever laid out.
  std::pair<double, uint64_t> max_over_significant() const {
    const uint64_t threshold = (peak_footprint_ + 9) / 10;
    auto it = front_.lower_bound(threshold);
    if (it == front_.end()) return {0.0, 0};
    return {it->second.ratio, it->second.time_ns};
  }

 private:
  struct Point {
    double ratio;
    uint64_t time_ns;
  };
  std::map<uint64_t, Point> front_;  // footprint -> best ratio at it; ratio falls as footprint grows
  uint64_t peak_footprint_ = 0;
};

}  // namespace cumemtrace
