// The growth analysis's classes (analysis/reports/growth/growth.h), on iterations marked "step", with the
// bytes each call site holds at each boundary worked out by hand below.
#include "catch.h"

#include <map>
#include <random>
#include <sstream>
#include <vector>

#include "gate/check.h"
#include "read/event_source.h"
#include "render/report_json.h"
#include "reports/report.h"
#include "render/report_text.h"
#include "parse_built.h"
#include "replay/replay.h"
#include "report_both.h"
#include "growth_site.h"
#include "trace_builder.h"
#include "sizes.h"

using namespace cumemtrace;
using cumemtrace::test::report_both;
using cumemtrace::test::TraceBuilder;

namespace {

const GrowthSite& site(const Growth& g, uint32_t stack) { return cumemtrace::test::growth_site(g, stack); }

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
  // The H200 run of examples/h200/python/workloads/growth_steps.py leak (docs/validation.md): cudaMalloc'd
  // MiB per step 1472, 192, 320, then 288 in each of the last nine, through one call
  // instruction reached from two callers (stacks 2 and 3 share the leaf address), both the
  // interpreter's: no caller of the user's tells the paths apart (call_site_rule.h).
  TraceBuilder b;
  b.process().device(0, 140ull * 1024 * MiB);
  b.stack(1, 0, 0x500000).stack(2, 1, 0x401000).stack(3, 0, 0x600000).stack(4, 3, 0x401000);
  b.symbol(0x500000, "_PyEval_EvalFrameDefault", "", 0).symbol(0x600000, "_PyObject_Call", "", 0);
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

// ---- issue 25, §3: iterations found, not assumed ----

namespace {

// `steps` iterations marked "step" at 10, 20, ... ms, each keeping `kept[i]` bytes from
// stack 1 and making and freeing 8 MiB from stack 2.
void marked_loop(TraceBuilder& b, const std::vector<uint64_t>& kept) {
  b.process().device(0, 1024 * MiB).stack(1, 0, 0x401000).stack(2, 0, 0x402000);
  uint64_t a = 0x7f0000000000;
  for (size_t i = 0; i < kept.size(); ++i) {
    const uint64_t t = 10 * (i + 1);
    b.mark(t * ms, "step");
    b.alloc((t + 1) * ms, a += 64 * MiB, kept[i], 1);
    a += 64 * MiB;
    b.alloc((t + 2) * ms, a, 8 * MiB, 2).free((t + 3) * ms, a);
  }
}

}  // namespace

TEST_CASE("growth: a mark after the loop ends the last iteration, and the short stretch after it is no iteration") {
  // Four iterations keep 1 MiB each; a fifth "step" mark at 50 ms ends the loop, the trace
  // ends cleanly 2 ms later (the median iteration lasts 10 ms): the stretch after the last
  // mark is partial and left out. Counted, it was one more (flat) iteration and the site
  // "cache-growth".
  TraceBuilder b;
  marked_loop(b, {MiB, MiB, MiB, MiB});
  b.mark(50 * ms, "step").end(52 * ms);
  const Report r = report_both(b, "t.trace");
  const uint64_t t0 = TraceBuilder::kStart;
  CHECK(r.growth.by == IterationsBy::kMarks);
  CHECK(r.growth.iterations == 4);
  CHECK(r.growth.partial_left_out);
  CHECK(r.growth.boundaries_ns ==
        std::vector<uint64_t>{t0 + 10 * ms, t0 + 20 * ms, t0 + 30 * ms, t0 + 40 * ms, t0 + 50 * ms});
  const GrowthSite& leak = site(r.growth, 1);
  CHECK(leak.cls == GrowthSite::Class::kLeak);
  CHECK(leak.bytes_at == std::vector<uint64_t>{0, 1 * MiB, 2 * MiB, 3 * MiB, 4 * MiB});
  CHECK(leak.growth_per_iteration == MiB);
  CHECK(leak.growth_min == MiB);
  CHECK(leak.growth_max == MiB);
  CHECK(site(r.growth, 2).cls == GrowthSite::Class::kTransient);
  CHECK(site(r.growth, 2).allocations_within == 4);
}

TEST_CASE("growth: the stretch after the last mark counts when the trace ends cleanly after a median iteration") {
  const uint64_t KiB = 1024;
  const std::vector<uint64_t> kept{1000 * KiB, 1050 * KiB, 1000 * KiB, 1100 * KiB};
  SECTION("clean end 10 ms after the last mark: a whole iteration") {
    TraceBuilder b;
    marked_loop(b, kept);
    b.end(50 * ms);
    const Report r = report_both(b, "t.trace");
    CHECK(r.growth.iterations == 4);
    CHECK_FALSE(r.growth.partial_left_out);
    CHECK(r.growth.boundaries_ns.size() == 5);
    const GrowthSite& leak = site(r.growth, 1);
    CHECK(leak.bytes_at == std::vector<uint64_t>{0, 1000 * KiB, 2050 * KiB, 3050 * KiB, 4150 * KiB});
    // The last half of the steps: 1,000 and 1,100 KiB (within 1.1 of each other).
    CHECK(leak.cls == GrowthSite::Class::kLeak);
    CHECK(leak.growth_per_iteration == 1050 * KiB);
    CHECK(leak.growth_min == 1000 * KiB);
    CHECK(leak.growth_max == 1100 * KiB);
  }
  SECTION("no End record (killed in the last iteration): partial, left out") {
    TraceBuilder b;
    marked_loop(b, kept);
    b.alloc(45 * ms, 0x7f8000000000, 2 * MiB, 2);  // half of what that iteration does
    const Report r = report_both(b, "t.trace");
    CHECK(r.growth.iterations == 3);
    CHECK(r.growth.partial_left_out);
    const uint64_t t0 = TraceBuilder::kStart;
    CHECK(r.growth.boundaries_ns == std::vector<uint64_t>{t0 + 10 * ms, t0 + 20 * ms, t0 + 30 * ms, t0 + 40 * ms});
    CHECK(site(r.growth, 1).bytes_at == std::vector<uint64_t>{0, 1000 * KiB, 2050 * KiB, 3050 * KiB});
    CHECK(site(r.growth, 1).cls == GrowthSite::Class::kLeak);
    CHECK(site(r.growth, 1).growth_per_iteration == 1025 * KiB);
  }
}

TEST_CASE("growth: the stretch after the last mark is judged by what it allocates, whatever it lasts") {
  // Four iterations marked "step" at 10, 20, 30, 40 ms, each keeping 3 MiB (stack 1) and
  // freeing 8 MiB (stack 2), as marked_loop makes them; then each shape of what follows.
  // Bytes stack 1 holds at the marks: 0, 3, 6, 9 MiB, and 12 MiB from 41 ms on.
  const uint64_t t0 = TraceBuilder::kStart;
  const std::vector<uint64_t> four{3 * MiB, 3 * MiB, 3 * MiB, 3 * MiB};
  const auto check_leak = [&](const Report& r, uint64_t iterations) {
    CHECK(r.growth.iterations == iterations);
    const GrowthSite& s = site(r.growth, 1);
    CHECK(s.cls == GrowthSite::Class::kLeak);
    CHECK(s.growth_per_iteration == 3 * MiB);
  };
  SECTION("one more mark after the loop, then an exit of 1 ms or of 500 ms: 4 iterations, the leak at +3 MiB each") {
    // The exit allocates nothing, where every iteration allocated: no iteration, whatever it lasts.
    for (const uint64_t exit_ms : {51, 550}) {
      TraceBuilder b;
      marked_loop(b, four);
      b.mark(50 * ms, "step").end(exit_ms * ms);
      const Report r = report_both(b, "t.trace");
      check_leak(r, 4);
      CHECK(r.growth.boundaries_ns ==
            std::vector<uint64_t>{t0 + 10 * ms, t0 + 20 * ms, t0 + 30 * ms, t0 + 40 * ms, t0 + 50 * ms});
      CHECK(site(r.growth, 1).bytes_at == std::vector<uint64_t>{0, 3 * MiB, 6 * MiB, 9 * MiB, 12 * MiB});
      std::ostringstream text;
      write_text(text, r);
      CHECK(text.str().find("  growth per iteration over 4 iterations: +3.00 MiB from ") != std::string::npos);
    }
  }
  SECTION("the mark after the loop, then exit work longer than an iteration (500 ms) that allocates apart") {
    TraceBuilder b;
    marked_loop(b, four);
    b.stack(3, 0, 0x403000);
    b.mark(50 * ms, "step").alloc(60 * ms, 0x7f9000000000, 100 * MiB, 3).free(500 * ms, 0x7f9000000000);
    b.end(550 * ms);
    const Report r = report_both(b, "t.trace");
    check_leak(r, 4);
    CHECK(r.growth.boundaries_ns.back() == t0 + 50 * ms);
    CHECK(r.growth.partial_left_out);
  }
  SECTION("the mark after the loop, then nothing at all (the End at the mark): empty, no iteration") {
    TraceBuilder b;
    marked_loop(b, four);
    b.mark(50 * ms, "step").end(50 * ms);
    const Report r = report_both(b, "t.trace");
    check_leak(r, 4);
    CHECK_FALSE(r.growth.partial_left_out);  // nothing after the last mark to leave out
  }
  SECTION("no mark after the loop, the End 200 ms after the fourth iteration's work: 4 iterations") {
    // The fourth stretch, 40 ms to the end, allocates as the others did: it is whole whatever
    // it lasts; the trace's end is the fifth boundary.
    TraceBuilder b;
    marked_loop(b, four);
    b.end(243 * ms);
    const Report r = report_both(b, "t.trace");
    check_leak(r, 4);
    CHECK(r.growth.boundaries_ns.back() == t0 + 243 * ms);
    CHECK_FALSE(r.growth.partial_left_out);
  }
  SECTION("half an iteration after the last mark (its 3 MiB kept, not its 8 MiB buffer): left out") {
    TraceBuilder b;
    marked_loop(b, four);
    b.mark(50 * ms, "step").alloc(51 * ms, 0x7fa000000000, 3 * MiB, 1).end(52 * ms);
    const Report r = report_both(b, "t.trace");
    check_leak(r, 4);
    CHECK(r.growth.boundaries_ns.back() == t0 + 50 * ms);
    CHECK(r.growth.partial_left_out);
  }
  SECTION("a whole iteration after the last mark, ended 1 ms after its work: 5 iterations") {
    TraceBuilder b;
    marked_loop(b, four);
    b.mark(50 * ms, "step").alloc(51 * ms, 0x7fa000000000, 3 * MiB, 1);
    b.alloc(52 * ms, 0x7fb000000000, 8 * MiB, 2).free(53 * ms, 0x7fb000000000).end(54 * ms);
    const Report r = report_both(b, "t.trace");
    check_leak(r, 5);
    CHECK(r.growth.boundaries_ns.back() == t0 + 54 * ms);
    CHECK(site(r.growth, 1).bytes_at == std::vector<uint64_t>{0, 3 * MiB, 6 * MiB, 9 * MiB, 12 * MiB, 15 * MiB});
  }
}

TEST_CASE(
    "growth over NVTX ranges: each range's end ends its iteration, an unended range and an inner range do not count") {
  // "step" pushed at 10, 20, 30, 40 ms and popped at 18, 28, 38 (the process stopped in the
  // fourth); "fwd" inside each of the first three (as many ranges, shorter in all). Stack 1
  // keeps 1 MiB in each step; stack 2 keeps 2 MiB once, between the first and second steps.
  TraceBuilder b;
  b.process().device(0, 1024 * MiB).stack(1, 0, 0x401000).stack(2, 0, 0x402000);
  uint64_t a = 0x7f0000000000;
  for (uint64_t t = 10; t <= 40; t += 10) {
    b.mark(t * ms, "step", format::MarkSource::kNvtxPush);
    b.alloc((t + 1) * ms, a += 64 * MiB, MiB, 1);
    if (t == 40) break;
    b.mark((t + 2) * ms, "fwd", format::MarkSource::kNvtxPush).range_end((t + 5) * ms, "fwd");
    b.range_end((t + 8) * ms, "step");
    if (t == 10) b.alloc(19 * ms, a += 64 * MiB, 2 * MiB, 2);
  }
  const Report r = report_both(b, "t.trace");
  const uint64_t t0 = TraceBuilder::kStart;
  CHECK(r.growth.by == IterationsBy::kRanges);
  CHECK(r.growth.mark == "step");
  CHECK(r.growth.iterations == 3);
  CHECK(r.growth.partial_left_out);
  CHECK(r.growth.boundaries_ns == std::vector<uint64_t>{t0 + 10 * ms, t0 + 18 * ms, t0 + 28 * ms, t0 + 38 * ms});
  CHECK(site(r.growth, 1).bytes_at == std::vector<uint64_t>{0, 1 * MiB, 2 * MiB, 3 * MiB});
  CHECK(site(r.growth, 1).cls == GrowthSite::Class::kLeak);
  CHECK(site(r.growth, 1).growth_per_iteration == MiB);
  CHECK(site(r.growth, 2).bytes_at == std::vector<uint64_t>{0, 0, 2 * MiB, 2 * MiB});
  CHECK(site(r.growth, 2).cls == GrowthSite::Class::kOneTime);
}

namespace {

// Weights: 3 × 16 MiB from stack 3, loaded by a loop of their own (nothing freed), at 1-3 ms.
// Then `steps` unmarked iterations from 10 ms, 10 ms apart: keep 1 MiB (stack 1), make
// 8 MiB (stack 2), in the first a 4 MiB workspace kept (stack 4), free the 8 MiB.
void unmarked_loop(TraceBuilder& b, int steps, bool last_whole) {
  b.process().device(0, 1024 * MiB);
  for (uint32_t s = 1; s <= 4; ++s) b.stack(s, 0, 0x401000 + 0x1000 * s);
  uint64_t a = 0x7f0000000000;
  for (uint64_t w = 1; w <= 3; ++w) b.alloc(w * ms, a += 64 * MiB, 16 * MiB, 3);
  for (int i = 0; i < steps; ++i) {
    const uint64_t t = 10 * uint64_t(i + 1);
    b.alloc(t * ms, a += 64 * MiB, MiB, 1);
    if (i + 1 == steps && !last_whole) break;
    b.alloc((t + 1) * ms, a += 64 * MiB, 8 * MiB, 2);
    const uint64_t scratch = a;
    if (i == 0) b.alloc((t + 2) * ms, a += 64 * MiB, 4 * MiB, 4);
    b.free((t + 3) * ms, scratch);
  }
}

}  // namespace

TEST_CASE("growth without marks: the loop is found from the stack that recurs once per iteration") {
  TraceBuilder b;
  unmarked_loop(b, 5, true);
  b.end(60 * ms);
  const Report r = report_both(b, "t.trace");
  const Growth& g = r.growth;
  const uint64_t t0 = TraceBuilder::kStart;
  CHECK(g.by == IterationsBy::kCallSite);
  CHECK(g.loop_stack == 1);
  // Stretches from one 1 MiB allocation to the next: 4, the first with the workspace too.
  CHECK(g.stretches == 4);
  CHECK(g.agreeing == 3);
  CHECK(g.iterations == 5);
  CHECK_FALSE(g.partial_left_out);
  CHECK(g.boundaries_ns ==
        std::vector<uint64_t>{t0 + 10 * ms, t0 + 20 * ms, t0 + 30 * ms, t0 + 40 * ms, t0 + 50 * ms, t0 + 60 * ms});
  CHECK(site(g, 1).bytes_at == std::vector<uint64_t>{0, 1 * MiB, 2 * MiB, 3 * MiB, 4 * MiB, 5 * MiB});
  CHECK(site(g, 1).cls == GrowthSite::Class::kLeak);
  CHECK(site(g, 1).growth_per_iteration == MiB);
  CHECK(site(g, 3).cls == GrowthSite::Class::kOneTime);  // weights, loaded once
  CHECK(site(g, 3).bytes_at.back() == 48 * MiB);
  CHECK(site(g, 4).cls == GrowthSite::Class::kOneTime);
  CHECK(site(g, 4).bytes_at == std::vector<uint64_t>{0, 4 * MiB, 4 * MiB, 4 * MiB, 4 * MiB, 4 * MiB});
  CHECK(site(g, 2).cls == GrowthSite::Class::kTransient);
  CHECK(site(g, 2).allocations_within == 5);
  std::ostringstream text;
  write_text(text, r);
  CHECK(text.str().find("Growth across iterations (5 iterations found: one allocation per iteration from the stack "
                        "below; 3 of 4 stretches between them allocate and free alike (the others differ: iterations "
                        "approximate))\n") != std::string::npos);
  CHECK(text.str().find("  leak: device from ? on device 0, +1.00 MiB (1,048,576 B) per iteration (steps 1.00 MiB to "
                        "1.00 MiB), 5.00 MiB (5,242,880 B) in 5 live at the end\n") != std::string::npos);
}

TEST_CASE("growth without marks: a last iteration cut short is left out") {
  TraceBuilder b;
  unmarked_loop(b, 6, false);  // killed after the sixth iteration's first allocation: no End
  const Report r = report_both(b, "t.trace");
  const Growth& g = r.growth;
  CHECK(g.by == IterationsBy::kCallSite);
  CHECK(g.stretches == 5);
  CHECK(g.agreeing == 4);
  CHECK(g.iterations == 5);
  CHECK(g.partial_left_out);
  CHECK(g.boundaries_ns.back() == TraceBuilder::kStart + 60 * ms);
  CHECK(site(g, 1).bytes_at == std::vector<uint64_t>{0, 1 * MiB, 2 * MiB, 3 * MiB, 4 * MiB, 5 * MiB});
  CHECK(site(g, 1).cls == GrowthSite::Class::kLeak);
}

TEST_CASE("growth with no loop: no iterations found, weights loaded over several snapshots are one-time") {
  // Three 16 MiB weights from one stack with periodic snapshots between them (which were the
  // boundaries, and made the weights "cache-growth"); one 8 MiB scratch made and freed.
  TraceBuilder b;
  b.process().device(0, 1024 * MiB).stack(2, 0, 0x402000).stack(3, 0, 0x403000);
  uint64_t a = 0x7f0000000000;
  for (uint64_t w = 1; w <= 3; ++w) {
    b.alloc(10 * w * ms, a += 64 * MiB, 16 * MiB, 3);
    b.snapshot((10 * w + 5) * ms, format::SnapshotReason::kPeriodic, {{0, 16 * MiB * w}});
  }
  a += 64 * MiB;
  b.alloc(40 * ms, a, 8 * MiB, 2).free(41 * ms, a);
  b.end(50 * ms);
  const Report r = report_both(b, "t.trace");
  CHECK(r.growth.by == IterationsBy::kNone);
  CHECK(r.growth.iterations == 0);
  CHECK(r.growth.boundaries_ns == std::vector<uint64_t>{TraceBuilder::kStart + 50 * ms});
  REQUIRE(r.growth.sites.size() == 2);
  CHECK(site(r.growth, 3).cls == GrowthSite::Class::kOneTime);
  CHECK(site(r.growth, 3).bytes_at == std::vector<uint64_t>{48 * MiB});
  CHECK(site(r.growth, 3).count_at_end == 3);
  CHECK(site(r.growth, 2).cls == GrowthSite::Class::kTransient);
  CHECK(site(r.growth, 2).allocations_within == 1);
  std::ostringstream text;
  write_text(text, r);
  CHECK(text.str().find("Growth across iterations (no iterations found: no NVTX range or mark name twice, and no "
                        "stack that recurs once per loop; the only boundary is the end)\n") != std::string::npos);
}

// The second pass sums each boundary's live set per stack where it stands (LiveSets::visit)
// instead of copying it: the sums against copies of the same sets (live_holding after a
// replay up to each boundary), over random allocations and frees on two devices, with
// stacks that are each their own site.
TEST_CASE("growth: the bytes and counts summed in place at each boundary are those of the live sets copied there") {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    std::mt19937_64 rng(seed);
    const auto pick = [&](uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng); };
    TraceBuilder b;
    b.process().device(0, 1024 * MiB).device(1, 1024 * MiB);
    for (uint32_t s = 1; s <= 6; ++s) b.stack(s, 0, 0x401000 + 0x10 * s);
    std::vector<std::pair<uint64_t, int32_t>> live;  // address, device
    uint64_t next = 0x7f0000000000;
    for (uint64_t t = 1; t <= 400; ++t) {
      if (t % 40 == 0) b.mark(t * ms, "step");
      if (!live.empty() && pick(3) == 0) {
        const size_t i = pick(live.size());
        b.free(t * ms, live[i].first, live[i].second);
        live.erase(live.begin() + long(i));
      } else {
        const int32_t device = int32_t(pick(2));
        b.alloc(t * ms, next += MiB, (1 + pick(8)) * 4096, uint32_t(1 + pick(6)), device);
        live.emplace_back(next, device);
      }
    }
    b.end(440 * ms);  // a whole last iteration after the last mark
    const Report r = report_both(b, "t.trace");
    const Growth& g = r.growth;
    REQUIRE(g.boundaries_ns.size() >= 10);
    const Trace t = cumemtrace::test::parse(b);
    std::map<std::pair<uint32_t, int32_t>, std::pair<std::vector<uint64_t>, uint64_t>> expected;  // bytes_at, count
    for (size_t k = 0; k < g.boundaries_ns.size(); ++k) {
      const Replayer upto = replay_until(t, g.boundaries_ns[k]);
      for (int32_t d = 0; d <= 1; ++d)
        for (const LiveAlloc& a : live_holding(upto, d)) {
          auto& [bytes_at, count] = expected[{a.stack_id, a.device}];
          bytes_at.resize(g.boundaries_ns.size());
          bytes_at[k] += a.size;
          if (k + 1 == g.boundaries_ns.size()) ++count;
        }
    }
    REQUIRE(expected.size() >= 6);
    size_t with_bytes = 0;
    for (const GrowthSite& s : g.sites) {
      INFO("seed " << seed << " stack " << s.node << " device " << s.device);
      const auto it = expected.find({s.node, s.device});
      if (it == expected.end()) {  // allocated and freed within iterations only
        CHECK(s.bytes_at == std::vector<uint64_t>(g.boundaries_ns.size(), 0));
        continue;
      }
      ++with_bytes;
      CHECK(s.bytes_at == it->second.first);
      CHECK(s.count_at_end == it->second.second);
    }
    CHECK(with_bytes == expected.size());
  }
}

TEST_CASE("growth: a buffer replaced by a larger one each iteration is `growing`, one kept each iteration a `leak`") {
  // Marks "step" at 10 … 50 ms: four iterations, the End at the last mark. In iteration i
  // (1 … 4): stack 1 frees its buffer of the iteration before and allocates 32·i MiB (a batch
  // that grows); stack 2 allocates 16 MiB and keeps it.
  // Bytes at the boundaries: stack 1 0, 32, 64, 96, 128 MiB, nothing of one boundary live at
  // the next (each buffer is allocated after the boundary before); stack 2 0, 16, 32, 48,
  // 64 MiB, every earlier one still live.
  TraceBuilder b;
  b.process().device(0, 1024 * MiB).stack(1, 0, 0x401000).stack(2, 0, 0x402000);
  uint64_t buffer = 0;
  for (uint64_t i = 1; i <= 4; ++i) {
    const uint64_t t = 10 * i;
    b.mark(t * ms, "step");
    if (buffer) b.free((t + 1) * ms, buffer);
    buffer = 0x7f0000000000 + i * 1024 * MiB;
    b.alloc((t + 2) * ms, buffer, 32 * i * MiB, 1);
    b.alloc((t + 3) * ms, 0x7e0000000000 + i * 64 * MiB, 16 * MiB, 2);
  }
  b.mark(50 * ms, "step").end(50 * ms);
  const Report r = report_both(b, "t.trace");
  REQUIRE(r.growth.iterations == 4);
  const GrowthSite& replaced = site(r.growth, 1);
  CHECK(replaced.bytes_at == std::vector<uint64_t>{0, 32 * MiB, 64 * MiB, 96 * MiB, 128 * MiB});
  CHECK(replaced.carried_at == std::vector<uint64_t>{0, 0, 0, 0, 0});
  CHECK(replaced.cls == GrowthSite::Class::kGrowing);
  CHECK(replaced.growth_per_iteration == 32 * MiB);
  const GrowthSite& kept = site(r.growth, 2);
  CHECK(kept.carried_at == std::vector<uint64_t>{0, 0, 16 * MiB, 32 * MiB, 48 * MiB});
  CHECK(kept.cls == GrowthSite::Class::kLeak);
  CHECK(kept.growth_per_iteration == 16 * MiB);
  CHECK(to_json(r)["growth"]["sites"][1]["class"] == "growing");  // leak first, then growing

  std::ostringstream text;
  write_text(text, r);
  CHECK(text.str().find("  growth per iteration over 4 iterations: +16.00 MiB from ") != std::string::npos);
  CHECK(text.str().find("  growing need per iteration (each buffer replaced by a larger one, not a leak): "
                        "+32.00 MiB from ") != std::string::npos);

  // --max-growth measures both and names the larger, a growing need here.
  const Trace t = parse_trace(b.vec(), "t.trace");
  const Report rep = build_report(t, ReportOptions{});
  const auto growth_check = [&](const char* limit) {
    std::string error;
    const auto l = parse_limit(Limit::What::kGrowth, limit, &error);
    REQUIRE(l);
    const TraceCheck c = check_trace(t, MemoryEvents(t.events), rep, {*l});
    REQUIRE(c.results.size() == 1);
    return c.results[0];
  };
  CHECK(growth_check("32MiB").ok);
  const LimitResult over = growth_check("20MiB");
  CHECK_FALSE(over.ok);
  CHECK(
      over.message.starts_with("growth per iteration on device 0: 32.00 MiB (33,554,432 B), limit 20.00 MiB "
                               "(20,971,520 B); a growing need (not a leak) from "));
}

TEST_CASE("growth: steady growth is `growing` only when nothing is carried over any step it was measured on") {
  const std::vector<uint64_t> b{0, 10, 20, 30, 40};
  // Measured steps: the last half, two at least: 2 → 3 and 3 → 4 (from = 2), so carried_at[3..4].
  const std::vector<uint64_t> none{0, 0, 0, 0, 0}, early{0, 0, 10, 0, 0}, late{0, 0, 0, 0, 5};
  CHECK(classify_growth(b, 4, &none).cls == GrowthSite::Class::kGrowing);
  CHECK(classify_growth(b, 4, &early).cls == GrowthSite::Class::kGrowing);  // before the measured steps
  CHECK(classify_growth(b, 4, &late).cls == GrowthSite::Class::kLeak);
  CHECK(classify_growth(b, 4).cls == GrowthSite::Class::kLeak);  // not known (pools): a leak, as before
  CHECK(classify_growth(b, 4, &none).per_iteration == 10);
}
