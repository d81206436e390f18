// The growth analysis's classes (analysis/growth.h), on iterations marked "step", with the
// bytes each call site holds at each boundary worked out by hand below.
#include "catch.h"

#include "report.h"
#include "report_both.h"
#include "trace_builder.h"

using namespace cumemtrace;
using cumemtrace::test::report_both;
using cumemtrace::test::TraceBuilder;

namespace {

constexpr uint64_t MiB = 1ull << 20, ms = 1'000'000;

const GrowthSite& site(const Growth& g, uint32_t stack) {
  for (const auto& s : g.sites)
    if (s.node == stack) return s;
  FAIL("no growth site for stack " << stack);
  throw;
}

}  // namespace

TEST_CASE("growth classes: leak, one-time, cache-growth, transient and varies over marked iterations") {
  TraceBuilder b;
  b.process().device(0, 1024 * MiB);
  for (uint32_t s = 1; s <= 5; ++s) b.stack(s, 0, 0x401000 + 0x10 * s);
  uint64_t a = 0x7f0000000000;
  auto alloc = [&](uint64_t t, uint64_t size, uint32_t stack) { b.alloc(t * ms, a += 64 * MiB, size, stack); };
  b.mark(5 * ms, "other");  // one mark of its own name: delimits nothing
  b.mark(10 * ms, "step");
  alloc(11, 16 * MiB, 4), alloc(12, 4 * MiB, 2), alloc(13, 1 * MiB, 3);
  b.mark(20 * ms, "step");
  alloc(21, 2 * MiB, 1), alloc(22, 4 * MiB, 2), alloc(23, 4 * MiB, 3);
  alloc(24, 1 * MiB, 5);
  b.free(25 * ms, a);
  b.mark(30 * ms, "step");
  alloc(31, 2 * MiB, 1), alloc(33, 1 * MiB, 3);
  b.mark(40 * ms, "step");
  alloc(41, 2 * MiB, 1), alloc(43, 14 * MiB, 3);
  b.end(50 * ms);
  const Report r = report_both(b, "t.trace");
  const Growth& g = r.growth;
  CHECK(g.mark == "step");
  CHECK(g.iterations == 4);
  const uint64_t t0 = TraceBuilder::kStart;
  CHECK(g.boundaries_ns == std::vector<uint64_t>{t0 + 10 * ms, t0 + 20 * ms, t0 + 30 * ms, t0 + 40 * ms, t0 + 50 * ms});
  REQUIRE(g.sites.size() == 5);

  const GrowthSite& leak = site(g, 1);
  CHECK(leak.cls == GrowthSite::Class::kLeak);
  CHECK(leak.bytes_at == std::vector<uint64_t>{0, 0, 2 * MiB, 4 * MiB, 6 * MiB});
  CHECK(leak.growth_per_iteration == 2 * MiB);
  CHECK(leak.count_at_end == 3);
  CHECK(site(g, 4).cls == GrowthSite::Class::kOneTime);
  CHECK(site(g, 4).bytes_at == std::vector<uint64_t>{0, 16 * MiB, 16 * MiB, 16 * MiB, 16 * MiB});
  CHECK(site(g, 2).cls == GrowthSite::Class::kCacheGrowth);
  CHECK(site(g, 2).bytes_at == std::vector<uint64_t>{0, 4 * MiB, 8 * MiB, 8 * MiB, 8 * MiB});
  CHECK(site(g, 5).cls == GrowthSite::Class::kTransient);
  CHECK(site(g, 5).allocations_within == 1);
  CHECK(site(g, 3).cls == GrowthSite::Class::kVaries);  // grows every time, but unevenly
  CHECK(site(g, 3).bytes_at == std::vector<uint64_t>{0, 1 * MiB, 5 * MiB, 6 * MiB, 20 * MiB});
  CHECK(site(g, 3).growth_per_iteration == 0);
  // Leaks first, then one-time, cache-growth, transient, varies.
  std::vector<uint32_t> order;
  for (const auto& s : g.sites) order.push_back(s.node);
  CHECK(order == std::vector<uint32_t>{1, 4, 2, 5, 3});
}

TEST_CASE("growth: a caching allocator's warm-up is left out, and every path through one call is one site") {
  // The H200 run of examples/h200/growth_steps.py leak (docs/validation.md): cudaMalloc'd
  // MiB per step 1472, 192, 320, then 288 in each of the last nine, through one call
  // instruction reached from two callers (stacks 2 and 3 share the leaf address).
  TraceBuilder b;
  b.process().device(0, 140ull * 1024 * MiB);
  b.stack(1, 0, 0x500000).stack(2, 1, 0x401000).stack(3, 0, 0x600000).stack(4, 3, 0x401000);
  const uint64_t grown[] = {1472, 192, 320, 288, 288, 288, 288, 288, 288, 288, 288, 288};
  uint64_t a = 0x7f0000000000;
  for (size_t step = 0; step < 12; ++step) {
    b.mark((10 + 10 * step) * ms, "step");
    b.alloc((11 + 10 * step) * ms, a += 4096 * MiB, grown[step] * MiB / 2, 2);
    b.alloc((12 + 10 * step) * ms, a += 4096 * MiB, grown[step] * MiB / 2, 4);
  }
  b.end(130 * ms);
  const Report r = report_both(b, "t.trace");
  const Growth& g = r.growth;
  CHECK(g.iterations == 12);
  REQUIRE(g.sites.size() == 1);
  CHECK(g.sites[0].cls == GrowthSite::Class::kLeak);
  CHECK(g.sites[0].growth_per_iteration == 288 * MiB);
  CHECK(g.sites[0].bytes_at.back() == (1472 + 192 + 320 + 9 * 288) * MiB);
  CHECK(g.sites[0].count_at_end == 24);
}

TEST_CASE("growth: a workspace that appears in the first iteration on top of earlier memory is one-time") {
  TraceBuilder b;
  b.process().device(0, 1024 * MiB).stack(1, 0, 0x401000);
  b.alloc(1 * ms, 0x7f0000000000, 258 * MiB, 1);
  for (uint64_t step = 0; step < 4; ++step) b.mark((10 + 10 * step) * ms, "step");
  b.alloc(11 * ms, 0x7f0100000000, 100 * MiB, 1);
  b.end(50 * ms);
  const Report r = report_both(b, "t.trace");
  REQUIRE(r.growth.sites.size() == 1);
  CHECK(r.growth.sites[0].cls == GrowthSite::Class::kOneTime);
  CHECK(r.growth.sites[0].bytes_at == std::vector<uint64_t>{258 * MiB, 358 * MiB, 358 * MiB, 358 * MiB, 358 * MiB});
}

TEST_CASE("growth boundaries on events out of time order: each boundary ends the prefix before the first later event") {
  // Events in file order at 5, 25, 15 ms; marks at 10, 20, 30 ms. The live set at a
  // boundary is that of a prefix of the file: up to (not including) the first event later
  // than it. 10 ms: the prefix ends before the 25 ms event, {A}; 20 ms: the same, {A};
  // 30 ms: all three. The End record (28 ms) is before the last mark: no boundary of its own.
  TraceBuilder b;
  b.process().device(0, 1024 * MiB);
  for (uint32_t s = 1; s <= 3; ++s) b.stack(s, 0, 0x401000 + 0x10 * s);
  b.mark(10 * ms, "step").mark(20 * ms, "step").mark(30 * ms, "step");
  b.alloc(5 * ms, 0x7f0000000000, 1 * MiB, 1);
  b.alloc(25 * ms, 0x7f0010000000, 2 * MiB, 2);
  b.alloc(15 * ms, 0x7f0020000000, 4 * MiB, 3);
  b.end(28 * ms);
  const Report r = report_both(b, "t.trace");
  const uint64_t t0 = TraceBuilder::kStart;
  CHECK(r.growth.boundaries_ns == std::vector<uint64_t>{t0 + 10 * ms, t0 + 20 * ms, t0 + 30 * ms});
  CHECK(site(r.growth, 1).bytes_at == std::vector<uint64_t>{1 * MiB, 1 * MiB, 1 * MiB});
  CHECK(site(r.growth, 2).bytes_at == std::vector<uint64_t>{0, 0, 2 * MiB});
  CHECK(site(r.growth, 3).bytes_at == std::vector<uint64_t>{0, 0, 4 * MiB});
  // Allocated after the first boundary (10 ms): the 25 and 15 ms ones.
  CHECK(site(r.growth, 1).allocations_within == 0);
  CHECK(site(r.growth, 2).allocations_within == 1);
  CHECK(site(r.growth, 3).allocations_within == 1);
  // `live` on the same events out of order: each moment replays the events at or before
  // it wherever they are in the file (12 ms: A; 20 ms: A and the 15 ms one; 30 ms: all).
  const auto& s = b.bytes();
  const auto lives = cumemtrace::test::live_both({reinterpret_cast<const uint8_t*>(s.data()), s.size()},
                                                 {t0 + 20 * ms, t0 + 12 * ms, t0 + 30 * ms});
  CHECK(lives[0].devices.at(0).device_bytes == 5 * MiB);
  CHECK(lives[1].devices.at(0).device_bytes == 1 * MiB);
  CHECK(lives[2].devices.at(0).device_bytes == 7 * MiB);
  CHECK(lives[0].events_applied == 2);
}
