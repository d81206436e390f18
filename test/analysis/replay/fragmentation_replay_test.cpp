// The five reference cases of docs/fragmentation.md (granule 2 MiB), driven through the
// reader and replay rather than FragmentationIndex directly: this pins down that replay
// feeds the index the right ranges at the right moments.
#include <tuple>
#include <vector>

#include "catch.h"
#include "replay/replay.h"
#include "parse_built.h"

using namespace cumemtrace;
using cumemtrace::test::parse;
using cumemtrace::test::TraceBuilder;

namespace {

FragmentationFigures now(const Replayer& r, int32_t d = 0) { return r.devices().at(d).frag.figures(); }

}  // namespace

TEST_CASE("case 1: three 512 B allocations in one granule") {
  TraceBuilder b;
  b.process().alloc(1, 0x10000000, 512).alloc(2, 0x10000200, 512).alloc(3, 0x10000600, 512);
  const Trace t = parse(b);
  const Replayer r = replay(t);
  const auto& s = r.devices().at(0);
  CHECK(s.peak_bytes == 1536);
  CHECK(s.peak_time_ns == TraceBuilder::kStart + 3);
  const auto& f = s.frag_at_peak;
  CHECK(f.arena_bytes == 2'097'152);
  CHECK(f.arena_count == 1);
  CHECK(f.gap_bytes == 2'095'616);
  CHECK(f.largest_gap == 2'095'104);
  CHECK(f.gap_ratio() == Approx(0.99926758).margin(1e-8));
  CHECK(f.external_fragmentation() == Approx(0.00024432).margin(1e-8));
}

TEST_CASE("case 2: three adjacent 64 MiB allocations, then the middle one freed") {
  const uint64_t mib64 = 64ull << 20;
  TraceBuilder b;
  b.process().alloc(1, 0x20000000, mib64).alloc(2, 0x24000000, mib64).alloc(3, 0x28000000, mib64);
  Replayer r = replay(parse(b));
  auto f = now(r);
  CHECK(f.arena_count == 1);
  CHECK(f.arena_bytes == 201'326'592);
  CHECK(f.gap_bytes == 0);
  CHECK(f.largest_gap == 0);

  b.free(4, 0x24000000);
  r = replay(parse(b));
  f = now(r);
  CHECK(f.arena_count == 2);
  CHECK(f.arena_bytes == 134'217'728);
  CHECK(f.gap_bytes == 0);
  // The peak stays where it was, with its one arena.
  CHECK(r.devices().at(0).peak_bytes == 3 * mib64);
  CHECK(r.devices().at(0).frag_at_peak.arena_count == 1);
}

TEST_CASE("case 3: 3 MiB spills into a second granule") {
  TraceBuilder b;
  b.process().alloc(1, 0x30000000, 3ull << 20);
  const auto f = now(replay(parse(b)));
  CHECK(f.arena_bytes == 4'194'304);
  CHECK(f.largest_gap == 1'048'576);
  CHECK(f.gap_ratio() == Approx(0.25));
}

TEST_CASE("case 4: two 1 MiB halves of a granule, then the first freed") {
  TraceBuilder b;
  b.process().alloc(1, 0x40000000, 1 << 20).alloc(2, 0x40100000, 1 << 20);
  Replayer r = replay(parse(b));
  CHECK(now(r).gap_bytes == 0);
  CHECK(now(r).arena_bytes == 2'097'152);
  b.free(3, 0x40000000);
  r = replay(parse(b));
  CHECK(now(r).gap_bytes == 1'048'576);
  CHECK(now(r).largest_gap == 1'048'576);
  CHECK(now(r).gap_ratio() == Approx(0.5));
  CHECK(r.devices().at(0).max_gap_ratio == Approx(0.5));
  CHECK(r.devices().at(0).max_gap_ratio_time_ns == TraceBuilder::kStart + 1);  // already 0.5 with one half
}

TEST_CASE("case 5: two 512 B allocations far apart make two arenas") {
  TraceBuilder b;
  b.process().alloc(1, 0x50000000, 512).alloc(2, 0x90000000, 512);
  const auto f = now(replay(parse(b)));
  CHECK(f.arena_count == 2);
  CHECK(f.arena_bytes == 4'194'304);
  CHECK(f.gap_bytes == 4'193'280);
  CHECK(f.largest_gap == 2'096'640);
}

TEST_CASE("the maximum gap ratio leaves out moments under a tenth of the peak footprint") {
  TraceBuilder b;
  b.process()
      .alloc(1, 0x10000000, 512)          // 2 MiB footprint, gap ratio 0.99976: too small to matter
      .alloc(2, 0x20000000, 64ull << 20)  // 66 MiB footprint, gap 2,096,640 B
      .alloc(3, 0x24000000, 64ull << 20)  // 130 MiB
      .alloc(4, 0x30000000, 3ull << 20);  // 134 MiB (the peak footprint), gap + 1 MiB
  const Replayer r = replay(parse(b));
  const DeviceState& s = r.devices().at(0);
  CHECK(s.gap_front.peak_footprint() == 134ull << 20);
  CHECK(s.max_gap_ratio == Approx(2096640.0 / (66ull << 20)));
  CHECK(s.max_gap_ratio_time_ns == TraceBuilder::kStart + 2);
}

TEST_CASE("the gap ratio front gives the maximum over significant moments, as a scan over all of them does") {
  uint64_t x = 0x243f6a8885a308d3ull;
  auto next = [&] { return x ^= x << 13, x ^= x >> 7, x ^= x << 17; };
  for (int round = 0; round < 200; ++round) {
    GapRatioFront front;
    std::vector<std::tuple<uint64_t, double, uint64_t>> moments;
    const int n = 1 + int(next() % 60);
    for (int i = 0; i < n; ++i) {
      const uint64_t footprint = (next() % 40) * (2ull << 20);
      const double ratio = double(next() % 1000) / 1000;
      moments.emplace_back(footprint, ratio, uint64_t(i));
      front.observe(footprint, ratio, uint64_t(i));
    }
    uint64_t peak = 0;
    for (auto& [f, r, t] : moments) peak = std::max(peak, f);
    double best = 0;
    uint64_t when = 0;
    for (auto& [f, r, t] : moments)
      if (f > 0 && f * 10 >= peak && r > best) best = r, when = t;
    INFO("round " << round);
    CHECK(front.max_over_significant().first == best);
    if (best > 0) CHECK(front.max_over_significant().second == when);
  }
}
