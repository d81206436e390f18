#include "cumemtrace/rules/flat_fragmentation.h"

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "catch.h"
#include "cumemtrace/rules/fragmentation.h"
#include "sizes.h"

using cumemtrace::FlatFragmentationIndex;
using cumemtrace::FragmentationFigures;
using cumemtrace::FragmentationIndex;

namespace {

bool same(const FragmentationFigures& a, const FragmentationFigures& b) {
  return a.live_bytes == b.live_bytes && a.live_count == b.live_count && a.arena_bytes == b.arena_bytes &&
         a.arena_count == b.arena_count && a.gap_bytes == b.gap_bytes && a.largest_gap == b.largest_gap;
}

std::vector<std::pair<uint64_t, uint64_t>> ranges(const FlatFragmentationIndex& f) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (const auto& [start, size] : f.live()) out.emplace_back(start, size);
  return out;
}

std::vector<std::pair<uint64_t, uint64_t>> ranges(const FragmentationIndex& f) {
  return {f.live().begin(), f.live().end()};
}

}  // namespace

TEST_CASE("the flat fragmentation index works out arenas and gaps by hand") {
  // Granule 2 MiB. [0, 1 MiB) and [3 MiB, 4 MiB): granules 0 and 1 hold them and touch, so
  // one arena of 4 MiB with a gap of 2 MiB between; [10 MiB, 10.5 MiB) is an arena of its
  // own (granule 5), leading gap 0, trailing 1.5 MiB.
  FlatFragmentationIndex f(2 * MiB);
  REQUIRE(f.insert(0, MiB));
  REQUIRE(f.insert(3 * MiB, MiB));
  REQUIRE(f.insert(10 * MiB, MiB / 2));
  FragmentationFigures g = f.figures();
  CHECK(g.live_bytes == 2 * MiB + MiB / 2);
  CHECK(g.live_count == 3);
  CHECK(g.arena_count == 2);
  CHECK(g.gap_bytes == 2 * MiB + 3 * MiB / 2);
  CHECK(g.arena_bytes == 6 * MiB);
  CHECK(g.largest_gap == 2 * MiB);
  CHECK_FALSE(f.insert(MiB / 2, MiB));  // overlaps [0, 1 MiB)
  CHECK_FALSE(f.insert(5 * MiB, 0));
  CHECK(f.erase(3 * MiB) == MiB);
  CHECK(f.erase(3 * MiB) == 0);
  g = f.figures();
  CHECK(g.arena_count == 2);
  CHECK(g.gap_bytes == MiB + 3 * MiB / 2);  // trailing 1 MiB of granule 0, 1.5 MiB of granule 5
  CHECK(g.largest_gap == 3 * MiB / 2);
  CHECK(ranges(f) == std::vector<std::pair<uint64_t, uint64_t>>{{0, MiB}, {10 * MiB, MiB / 2}});
}

TEST_CASE("the flat fragmentation index agrees with FragmentationIndex over 100,000 random operations") {
  // Sizes from 512 B to 8 MiB at 512 B alignment over a 64 GiB window: inserts collide with
  // live ranges often enough to exercise refusals, and the live set grows past a few
  // thousand ranges (many blocks of the flat index) before erases take over.
  for (uint64_t granule : {2 * MiB, uint64_t(3000)}) {  // a power of two, and not
    std::mt19937_64 rng(granule);
    FragmentationIndex tree(granule);
    FlatFragmentationIndex flat(granule);
    std::vector<uint64_t> starts;
    uint64_t mismatches = 0;
    size_t most_live = 0;
    for (int op = 0; op < 100000; ++op) {
      const bool insert = starts.empty() || (rng() % 10) < (op < 50000 ? 7u : 3u);
      if (insert) {
        const uint64_t start = (rng() % (128 * MiB)) * 512;
        const uint64_t size = (1 + rng() % 16384) * 512;
        const bool a = tree.insert(start, size), b = flat.insert(start, size);
        if (a != b) ++mismatches;
        if (a) starts.push_back(start);
      } else {
        const size_t i = rng() % starts.size();
        // Now and then an address that starts nothing.
        const uint64_t start = rng() % 8 == 0 ? starts[i] + 512 : starts[i];
        const uint64_t a = tree.erase(start), b = flat.erase(start);
        if (a != b) ++mismatches;
        if (a) {
          starts[i] = starts.back();
          starts.pop_back();
        }
      }
      if (!same(tree.figures(), flat.figures())) ++mismatches;
      most_live = std::max(most_live, starts.size());
      if (op % 10000 == 9999) CHECK(ranges(flat) == ranges(tree));
    }
    CHECK(mismatches == 0);
    CHECK(most_live > 1024);  // several of the flat index's blocks (at most 128 ranges each), split and emptied
    CHECK(starts.size() == flat.figures().live_count);
    CHECK(ranges(flat) == ranges(tree));
  }
}
