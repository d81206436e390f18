// FragmentationIndex against the figures the definition gives by hand (the issue's
// worked examples, docs/fragmentation.md) and against a brute-force recomputation from
// the definition after every step of a random sequence of allocations and frees.
#include <catch2/catch.hpp>

#include "cumemtrace/rules/fragmentation.h"

#include <map>
#include <random>
#include <set>

#include "../sizes.h"

using cumemtrace::FragmentationFigures;
using cumemtrace::FragmentationIndex;

namespace {

// Straight from the definition: mark granules holding any allocation, walk runs of
// marked granules (arenas), and within each collect maximal uncovered stretches (gaps).
FragmentationFigures brute_force(const std::map<uint64_t, uint64_t>& live, uint64_t g) {
  std::set<uint64_t> granules;
  for (auto [a, s] : live)
    for (uint64_t k = a / g; k < (a + s + g - 1) / g; ++k) granules.insert(k);
  FragmentationFigures f;
  for (auto [a, s] : live) f.live_bytes += s, ++f.live_count;
  uint64_t gap_run = 0;
  auto close_gap = [&] {
    if (gap_run) f.gap_bytes += gap_run, f.largest_gap = std::max(f.largest_gap, gap_run);
    gap_run = 0;
  };
  uint64_t prev = ~0ull;
  for (uint64_t k : granules) {
    if (prev == ~0ull || k != prev + 1) close_gap(), ++f.arena_count;
    f.arena_bytes += g;
    // Walk this granule's bytes in covered/uncovered stretches.
    uint64_t pos = k * g;
    const uint64_t end = pos + g;
    auto it = live.upper_bound(pos);
    if (it != live.begin()) --it;
    while (pos < end) {
      while (it != live.end() && it->first + it->second <= pos) ++it;
      if (it != live.end() && it->first <= pos) {
        close_gap();
        pos = std::min(end, it->first + it->second);
      } else {
        const uint64_t next = it != live.end() ? std::min(end, it->first) : end;
        gap_run += next - pos;
        pos = next;
      }
    }
    prev = k;
  }
  close_gap();
  return f;
}

void require_same(const FragmentationFigures& a, const FragmentationFigures& b) {
  REQUIRE(a.live_bytes == b.live_bytes);
  REQUIRE(a.live_count == b.live_count);
  REQUIRE(a.arena_bytes == b.arena_bytes);
  REQUIRE(a.arena_count == b.arena_count);
  REQUIRE(a.gap_bytes == b.gap_bytes);
  REQUIRE(a.largest_gap == b.largest_gap);
}

}  // namespace

TEST_CASE("three packed 512 B allocations leave a 512 B hole and the rest of the page") {
  FragmentationIndex idx;
  idx.insert(0x10000000, 512);
  idx.insert(0x10000200, 512);
  idx.insert(0x10000600, 512);
  const auto f = idx.figures();
  CHECK(f.arena_count == 1);
  CHECK(f.arena_bytes == 2'097'152);
  CHECK(f.gap_bytes == 2'095'616);
  CHECK(f.largest_gap == 2'095'104);
  CHECK(f.gap_ratio() == Approx(0.99926758).epsilon(1e-8));
  CHECK(f.external_fragmentation() == Approx(0.00024432).margin(1e-8));
}

TEST_CASE("adjacent 64 MiB allocations form one arena, freeing the middle splits it without a gap") {
  FragmentationIndex idx;
  for (uint64_t a : {0x20000000ull, 0x24000000ull, 0x28000000ull}) idx.insert(a, 64 * MiB);
  auto f = idx.figures();
  CHECK(f.arena_count == 1);
  CHECK(f.arena_bytes == 201'326'592);
  CHECK(f.gap_bytes == 0);
  CHECK(f.gap_ratio() == 0.0);
  CHECK(idx.erase(0x24000000) == 64 * MiB);
  f = idx.figures();
  CHECK(f.arena_count == 2);
  CHECK(f.arena_bytes == 2 * 67'108'864);
  CHECK(f.gap_bytes == 0);
  CHECK(f.external_fragmentation() == 0.0);
}

TEST_CASE("a 3 MiB allocation occupies two granules") {
  FragmentationIndex idx;
  idx.insert(0x30000000, 3 * MiB);
  const auto f = idx.figures();
  CHECK(f.arena_bytes == 4'194'304);
  CHECK(f.largest_gap == 1'048'576);
  CHECK(f.gap_ratio() == 0.25);
}

TEST_CASE("two packed 1 MiB allocations fill a page, freeing the first leaves a half-page gap") {
  FragmentationIndex idx;
  idx.insert(0x40000000, MiB);
  idx.insert(0x40100000, MiB);
  CHECK(idx.figures().gap_bytes == 0);
  idx.erase(0x40000000);
  const auto f = idx.figures();
  CHECK(f.gap_bytes == 1'048'576);
  CHECK(f.gap_ratio() == 0.5);
}

TEST_CASE("512 B in two distant pages make two arenas") {
  FragmentationIndex idx;
  idx.insert(0x50000000, 512);
  idx.insert(0x90000000, 512);
  const auto f = idx.figures();
  CHECK(f.arena_count == 2);
  CHECK(f.gap_bytes == 4'193'280);
  CHECK(f.largest_gap == 2'096'640);
}

TEST_CASE("overlapping, empty and unknown ranges are refused without changing anything") {
  FragmentationIndex idx;
  REQUIRE(idx.insert(0x1000, 0x1000));
  CHECK_FALSE(idx.insert(0x1800, 0x100));
  CHECK_FALSE(idx.insert(0x800, 0x1000));
  CHECK_FALSE(idx.insert(0x3000, 0));
  CHECK(idx.erase(0x5000) == 0);
  CHECK(idx.figures().live_count == 1);
}

TEST_CASE("incremental figures equal a recomputation from the definition after every event") {
  for (uint64_t granule : {2 * MiB, uint64_t{4096}, 3 * MiB, uint64_t{1536}}) {  // masks, and divisions
    std::mt19937_64 rng(granule);
    FragmentationIndex idx(granule);
    std::map<uint64_t, uint64_t> live;
    for (int step = 0; step < 3000; ++step) {
      if (!live.empty() && rng() % 3 == 0) {
        auto it = std::next(live.begin(), static_cast<long>(rng() % live.size()));
        REQUIRE(idx.erase(it->first) == it->second);
        live.erase(it);
      } else {
        const uint64_t start = (rng() % 65536) * 512;  // 32 MiB window, 512 B aligned: dense enough to touch
        const uint64_t size = rng() % 4 == 0 ? (1 + rng() % 6) * granule + rng() % granule : 1 + rng() % 8192;
        auto next = live.lower_bound(start);
        const bool overlaps = (next != live.end() && next->first < start + size) ||
                              (next != live.begin() && std::prev(next)->first + std::prev(next)->second > start);
        REQUIRE(idx.insert(start, size) == !overlaps);
        if (!overlaps) live[start] = size;
      }
      require_same(idx.figures(), brute_force(live, granule));
    }
  }
}
