// The arena/gap rule for one pair of neighbouring live allocations, and the tally of
// every pair's gaps, shared by FragmentationIndex (fragmentation.h, which states the
// definition) and FlatFragmentationIndex (flat_fragmentation.h, which the tracer and the
// analyzer keep), so that the two can never disagree on a figure.
#pragma once

#include <cstdint>

namespace cumemtrace {

// Rounding to the driver's physical granule (bytes). A power-of-two granule (every one
// measured so far) rounds with a mask: the divisions were a fifth of an insert's cost in
// the hook (docs/performance.md).
class Granule {
 public:
  explicit Granule(uint64_t bytes)
      : bytes_(bytes ? bytes : 1), mask_((bytes_ & (bytes_ - 1)) == 0 ? ~(bytes_ - 1) : 0) {}
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

// The gaps of all neighbour pairs added up: their bytes, the pairs that break an arena,
// and how many gaps of each size, in `Sizes` (add(bytes), remove(bytes), largest()).
template <class Sizes>
class GapTally {
 public:
  // Adds (sign +1) or removes (-1) the gaps of the pair (p, n), as pair_gaps takes them.
  void account(const Granule& g, bool has_p, uint64_t p_end, bool has_n, uint64_t n_start, int sign) {
    const PairGaps pg = pair_gaps(g, has_p, p_end, has_n, n_start);
    if (pg.arena_break) arena_breaks_ += sign;
    gap(pg.first, sign);
    gap(pg.second, sign);
  }

  uint64_t gap_bytes() const { return gap_bytes_; }
  uint64_t arena_breaks() const { return arena_breaks_; }
  uint64_t largest() const { return sizes_.largest(); }  // bytes; 0 with no gaps

 private:
  void gap(uint64_t bytes, int sign) {
    if (bytes == 0) return;
    if (sign > 0) {
      gap_bytes_ += bytes;
      sizes_.add(bytes);
    } else {
      gap_bytes_ -= bytes;
      sizes_.remove(bytes);
    }
  }

  Sizes sizes_;
  uint64_t gap_bytes_ = 0;
  uint64_t arena_breaks_ = 0;  // neighbour pairs that sit in different arenas
};

}  // namespace cumemtrace
