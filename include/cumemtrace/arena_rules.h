// The arena/gap rule for one pair of neighbouring live allocations, shared by the
// tracer's FragmentationIndex (fragmentation.h, which states the definition) and the
// analyzer's FlatFragmentationIndex (analysis/flat_fragmentation.h), so that the two can
// never disagree on a figure.
#pragma once

#include <cstdint>

namespace cumemtrace {

// Rounding to the driver's physical granule (bytes). A power-of-two granule (every one
// measured so far) rounds with a mask: the divisions were a fifth of an insert's cost in
// the hook (docs/performance.md).
class Granule {
 public:
  explicit Granule(uint64_t bytes) : bytes_(bytes ? bytes : 1), mask_((bytes_ & (bytes_ - 1)) == 0 ? ~(bytes_ - 1) : 0) {}
  uint64_t bytes() const { return bytes_; }
  uint64_t floor(uint64_t a) const { return mask_ ? a & mask_ : a / bytes_ * bytes_; }
  uint64_t ceil(uint64_t a) const { return floor(a + bytes_ - 1); }

 private:
  uint64_t bytes_;
  uint64_t mask_;  // ~(bytes_ - 1) when bytes_ is a power of two, else 0
};

// The gaps (bytes; 0 = none) that the neighbour pair (p, n) contributes, and whether the
// two sit in different arenas. No p: n is the first live allocation; no n: p is the last.
struct PairGaps {
  uint64_t first = 0;
  uint64_t second = 0;
  bool arena_break = false;
};

inline PairGaps pair_gaps(const Granule& g, bool has_p, uint64_t p_end, bool has_n, uint64_t n_start) {
  if (!has_p && !has_n) return {};
  if (!has_p) return {n_start - g.floor(n_start), 0, false};
  if (!has_n) return {g.ceil(p_end) - p_end, 0, false};
  if (g.ceil(p_end) >= g.floor(n_start)) return {n_start - p_end, 0, false};
  return {g.ceil(p_end) - p_end, n_start - g.floor(n_start), true};
}

}  // namespace cumemtrace
