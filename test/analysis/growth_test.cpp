// The growth analysis's classes (analysis/growth.h), on iterations marked "step", with the
// bytes each call site holds at each boundary worked out by hand below.
#include "catch.h"

#include "report.h"
#include "trace_builder.h"

using namespace cumemtrace;
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
  const Report r = build_report(parse_trace(b.vec(), "t.trace"), ReportOptions{});
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
