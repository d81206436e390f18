// Growth's figures at each boundary are kept per stack as the second replay goes (added at
// each allocation, taken away at each free; reports/growth/growth.h), never summed over the live
// set there. These tests hold them to the bytes worked out by hand below, and to the same
// figures summed over copies of the live sets at the same prefixes of the file (what was
// done before: live_after), boundary by boundary.
#include "catch.h"

#include <map>
#include <utility>
#include <vector>

#include "parse_built.h"
#include "read/event_source.h"
#include "replay/replay.h"
#include "report_both.h"
#include "growth_site.h"
#include "reports/report.h"
#include "sizes.h"
#include "trace_builder.h"

using namespace cumemtrace;
using cumemtrace::test::growth_site;
using cumemtrace::test::report_both;
using cumemtrace::test::TraceBuilder;

namespace {

struct WalkedSums {
  std::vector<uint64_t> bytes_at, carried_at;
  uint64_t count_at_end = 0;
};

// Per stack, what the live sets copied just before the events `prefixes[k]` hold (events
// before it: 0, nothing live), summed as the report once did: bytes at each boundary, those
// of them allocated at or before the boundary before (`times`), and how many at the last.
std::map<uint32_t, WalkedSums> walked_sums(const Trace& t, const std::vector<size_t>& prefixes,
                                           const std::vector<uint64_t>& times, const std::vector<int32_t>& devices) {
  std::vector<std::pair<size_t, int32_t>> stops;
  std::vector<size_t> boundary_of;
  for (size_t k = 0; k < prefixes.size(); ++k)
    for (int32_t d : devices)
      if (prefixes[k] > 0) stops.emplace_back(prefixes[k] - 1, d), boundary_of.push_back(k);
  const auto sets = live_after(MemoryEvents(t.events), t.granule(), stops);
  std::map<uint32_t, WalkedSums> out;
  for (size_t i = 0; i < sets.size(); ++i) {
    const size_t k = boundary_of[i];
    for (const LiveAlloc& a : sets[i]) {
      WalkedSums& w = out[a.stack_id];
      w.bytes_at.resize(prefixes.size()), w.carried_at.resize(prefixes.size());
      w.bytes_at[k] += a.size;
      if (k && a.time_ns <= times[k - 1]) w.carried_at[k] += a.size;
      if (k + 1 == prefixes.size()) ++w.count_at_end;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("growth tally: marked boundaries, frees, a handle and events out of time order, by hand and walked") {
  // Marks "step" at 10, 20, 30, 40 ms, the End at 40 ms: four boundaries. Stacks 1, 2, 4 on
  // device 0 (4: a cuMemCreate handle), stack 3 on device 1. In file order (ms):
  //   1 A1 = 1 MiB (1)   2 B1 = 2 MiB (2)   3 H = 2 MiB handle (4)
  //   | 10: A1, B1, H
  //   12 A2 = 1 MiB (1)   13 free B1   14 C1 = 4 MiB (3)   15 free C1   16 C2 = 4 MiB (3)
  //   | 20 (the prefix ends before the 22 ms event): A1, A2, H, C2
  //   22 free A1   25 B2 = 8 MiB (2)   19 A3 = 1 MiB (1), out of order   32 release H
  //   | 30 (the prefix ends before the 32 ms release): A2, A3, H, C2, B2
  //   33 free C2   35 C3 = 16 MiB (3)
  //   | 40: A2, A3, B2, C3
  // Carried at a boundary: live there and allocated at or before the boundary before, by
  // time: A3 (19 ms) is carried at 30 ms though the 20 ms prefix ended before it.
  //   stack 1: bytes 1, 2, 2, 2 MiB; carried 0, 1 (A1), 2 (A2, A3), 2 MiB; 2 live at the end
  //   stack 2: bytes 2, 0, 8, 8 MiB; carried 0, 0, 0, 8 MiB (B2 at 25 ms); 1 at the end
  //   stack 3: bytes 0, 4, 4, 16 MiB; carried 0, 0, 4 (C2 at 16 ms), 0 MiB; 1 at the end
  //   stack 4: bytes 2, 2, 2, 0 MiB; carried 0, 2, 2, 0 MiB; none at the end
  TraceBuilder b;
  b.process().device(0, 1024 * MiB).device(1, 1024 * MiB);
  for (uint32_t s = 1; s <= 4; ++s) b.stack(s, 0, 0x401000 + 0x10 * s);
  b.mark(10 * ms, "step").mark(20 * ms, "step").mark(30 * ms, "step").mark(40 * ms, "step");
  const uint64_t a1 = 0x7f0000000000, a2 = 0x7f0001000000, a3 = 0x7f0002000000, b1 = 0x7f0010000000,
                 b2 = 0x7f0011000000, c1 = 0x7f0020000000, c2 = 0x7f0021000000, c3 = 0x7f0022000000;
  auto handle = TraceBuilder::ev(3 * ms, format::Op::kAlloc, format::Kind::kVmmPhysical, 0, 2 * MiB, 0, 4, 1);
  handle.handle = 0x55;
  auto release = TraceBuilder::ev(32 * ms, format::Op::kFree, format::Kind::kVmmPhysical, 0, 0, 0, 0, 2);
  release.handle = 0x55;
  b.alloc(1 * ms, a1, 1 * MiB, 1).alloc(2 * ms, b1, 2 * MiB, 2).event(handle);           // events 0-2
  b.alloc(12 * ms, a2, 1 * MiB, 1).free(13 * ms, b1).alloc(14 * ms, c1, 4 * MiB, 3, 1);  // 3-5
  b.free(15 * ms, c1, 1).alloc(16 * ms, c2, 4 * MiB, 3, 1);                              // 6-7
  b.free(22 * ms, a1).alloc(25 * ms, b2, 8 * MiB, 2).alloc(19 * ms, a3, 1 * MiB, 1);     // 8-10
  b.event(release).free(33 * ms, c2, 1).alloc(35 * ms, c3, 16 * MiB, 3, 1);              // 11-13
  b.end(40 * ms);
  const Report r = report_both(b, "t.trace");
  const Growth& g = r.growth;
  const uint64_t t0 = TraceBuilder::kStart;
  REQUIRE(g.boundaries_ns == std::vector<uint64_t>{t0 + 10 * ms, t0 + 20 * ms, t0 + 30 * ms, t0 + 40 * ms});
  CHECK(growth_site(g, 1).bytes_at == std::vector<uint64_t>{1 * MiB, 2 * MiB, 2 * MiB, 2 * MiB});
  CHECK(growth_site(g, 1).carried_at == std::vector<uint64_t>{0, 1 * MiB, 2 * MiB, 2 * MiB});
  CHECK(growth_site(g, 1).count_at_end == 2);
  CHECK(growth_site(g, 2).bytes_at == std::vector<uint64_t>{2 * MiB, 0, 8 * MiB, 8 * MiB});
  CHECK(growth_site(g, 2).carried_at == std::vector<uint64_t>{0, 0, 0, 8 * MiB});
  CHECK(growth_site(g, 2).count_at_end == 1);
  CHECK(growth_site(g, 3).bytes_at == std::vector<uint64_t>{0, 4 * MiB, 4 * MiB, 16 * MiB});
  CHECK(growth_site(g, 3).carried_at == std::vector<uint64_t>{0, 0, 4 * MiB, 0});
  CHECK(growth_site(g, 3).count_at_end == 1);
  CHECK(growth_site(g, 3).device == 1);
  CHECK(growth_site(g, 4).bytes_at == std::vector<uint64_t>{2 * MiB, 2 * MiB, 2 * MiB, 0});
  CHECK(growth_site(g, 4).carried_at == std::vector<uint64_t>{0, 2 * MiB, 2 * MiB, 0});
  CHECK(growth_site(g, 4).count_at_end == 0);

  // The same from copies of the live sets at the prefixes (events before each boundary:
  // 3, 8, 11, 14).
  const Trace t = cumemtrace::test::parse(b);
  const auto w = walked_sums(t, {3, 8, 11, 14}, g.boundaries_ns, {0, 1});
  REQUIRE(w.size() == 4);
  for (const auto& [stack, sums] : w) {
    INFO("stack " << stack);
    CHECK(growth_site(g, stack).bytes_at == sums.bytes_at);
    CHECK(growth_site(g, stack).carried_at == sums.carried_at);
    CHECK(growth_site(g, stack).count_at_end == sums.count_at_end);
  }
}

TEST_CASE("growth tally: a loop found from allocations whose boundaries go back in time, by hand and walked") {
  // No marks: stack 1 (L) allocates once per iteration and is freed at the start of the
  // next; stack 2 (K) keeps i MiB in iteration i. The loop is found from L (reports/
  // iterations.h: its stretches and K's agree alike; L's come first), so the boundaries are
  // L's allocations, and the trace's end as the last stretch is whole. L3 is written after
  // L2 with an earlier time: the boundaries' times are 10, 19, 18, 30, 40, 50 ms.
  // In file order (ms):
  //   10 L1   12 K1 (1 MiB)
  //   15 free L1   19 L2   19 K2 (2 MiB)
  //   23 free L2   18 L3   24 K3 (3 MiB)
  //   29 free L3   30 L4   32 K4 (4 MiB)
  //   39 free L4   40 L5   42 K5 (5 MiB)
  //   45 free L5   end 50
  // Each boundary's prefix ends just before its L (the first nothing: nothing live there),
  // so L is never live at a boundary. K at the boundaries: 0, 1, 3, 6, 10, 15 MiB. Carried,
  // allocated at or before the boundary before: at 18 ms K1 and K2 (19 ms ≤ 19), 3 MiB; at
  // 30 ms only K1 (≤ 18 ms: K2 is carried no more), 1 MiB; at 40 ms K1-K3 (≤ 30), 6 MiB; at
  // 50 ms K1-K4 (≤ 40), 10 MiB.
  TraceBuilder b;
  b.process().device(0, 1024 * MiB).stack(1, 0, 0x401000).stack(2, 0, 0x402000);
  const uint64_t l = 0x7f0000000000, k = 0x7f1000000000;
  b.alloc(10 * ms, l + 1 * GiB, 64 * MiB, 1).alloc(12 * ms, k + 1 * GiB, 1 * MiB, 2);
  b.free(15 * ms, l + 1 * GiB).alloc(19 * ms, l + 2 * GiB, 64 * MiB, 1).alloc(19 * ms, k + 2 * GiB, 2 * MiB, 2);
  b.free(23 * ms, l + 2 * GiB).alloc(18 * ms, l + 3 * GiB, 64 * MiB, 1).alloc(24 * ms, k + 3 * GiB, 3 * MiB, 2);
  b.free(29 * ms, l + 3 * GiB).alloc(30 * ms, l + 4 * GiB, 64 * MiB, 1).alloc(32 * ms, k + 4 * GiB, 4 * MiB, 2);
  b.free(39 * ms, l + 4 * GiB).alloc(40 * ms, l + 5 * GiB, 64 * MiB, 1).alloc(42 * ms, k + 5 * GiB, 5 * MiB, 2);
  b.free(45 * ms, l + 5 * GiB).end(50 * ms);
  const Report r = report_both(b, "t.trace");
  const Growth& g = r.growth;
  const uint64_t t0 = TraceBuilder::kStart;
  REQUIRE(g.by == IterationsBy::kCallSite);
  REQUIRE(g.loop_stack == 1);
  REQUIRE(g.boundaries_ns ==
          std::vector<uint64_t>{t0 + 10 * ms, t0 + 19 * ms, t0 + 18 * ms, t0 + 30 * ms, t0 + 40 * ms, t0 + 50 * ms});
  CHECK(growth_site(g, 2).bytes_at == std::vector<uint64_t>{0, 1 * MiB, 3 * MiB, 6 * MiB, 10 * MiB, 15 * MiB});
  CHECK(growth_site(g, 2).carried_at == std::vector<uint64_t>{0, 0, 3 * MiB, 1 * MiB, 6 * MiB, 10 * MiB});
  CHECK(growth_site(g, 2).count_at_end == 5);
  CHECK(growth_site(g, 1).bytes_at == std::vector<uint64_t>(6, 0));
  CHECK(growth_site(g, 1).cls == GrowthSite::Class::kTransient);

  // Walked: the prefixes end before events 0, 3, 6, 9, 12 (each L) and at the end (15).
  const Trace t = cumemtrace::test::parse(b);
  const auto w = walked_sums(t, {0, 3, 6, 9, 12, 15}, g.boundaries_ns, {0});
  REQUIRE(w.size() == 1);
  CHECK(growth_site(g, 2).bytes_at == w.at(2).bytes_at);
  CHECK(growth_site(g, 2).carried_at == w.at(2).carried_at);
  CHECK(growth_site(g, 2).count_at_end == w.at(2).count_at_end);
}
