// Memory per range (reports/by/ranges.h, `report --by range`): NVTX push ranges of one thread,
// a start/end range and marks of every thread, nested, repeated and left open; each
// figure worked out by hand from the trace below.
#include "reports/by/ranges.h"

#include <map>
#include <sstream>

#include "catch.h"
#include "parse_built.h"
#include "render/report_json.h"
#include "render/report_text.h"
#include "reports/report.h"

using namespace cumemtrace;
using cumemtrace::test::parse;
using cumemtrace::test::TraceBuilder;
namespace fmt = cumemtrace::format;
using fmt::MarkSource;

namespace {

// Events are thread 7's unless said (TraceBuilder's); device 0's bytes after each event:
//   t=60  A +1000 -> 1000   t=110 B +2000 -> 3000   t=130 C +500 -> 3500   t=140 free B -> 1500
//   t=160 D +300 (thread 8) -> 1800   t=310 E +4000 -> 5800   t=320 free C -> 5300
//   t=360 free E -> 1300    t=600 F +100 -> 1400    end at 700
// Ranges: step (push, thread 7) [100,200) and [300,400); fwd (push) [120,150) inside the
// first step; load (start/end, thread 1) [50,350); iter (mark) at 100 and 300, so
// [100,300) and [300,end); idle (push) from 500, never popped.
TraceBuilder ranged() {
  TraceBuilder b;
  b.process().device(0, 1ull << 30);
  b.mark(50, "load", MarkSource::kNvtxStart, 1).alloc(60, 0xA000, 1000);
  b.mark(100, "step", MarkSource::kNvtxPush, 7).mark(100, "iter").alloc(110, 0xB000, 2000);
  b.mark(120, "fwd", MarkSource::kNvtxPush, 7).alloc(130, 0xC000, 500).free(140, 0xB000);
  b.range_end(150, "fwd", MarkSource::kNvtxPop, 7);
  auto d = TraceBuilder::ev(160, fmt::Op::kAlloc, fmt::Kind::kDevice, 0xD000, 300, 0, 0, 1);
  d.tid = 8;
  b.event(d);
  b.range_end(200, "step", MarkSource::kNvtxPop, 7);
  b.mark(300, "step", MarkSource::kNvtxPush, 7).mark(300, "iter").alloc(310, 0xE000, 4000).free(320, 0xC000);
  b.range_end(350, "load", MarkSource::kNvtxEnd, 1).free(360, 0xE000);
  b.range_end(400, "step", MarkSource::kNvtxPop, 7);
  b.mark(500, "idle", MarkSource::kNvtxPush, 7).alloc(600, 0xF000, 100);
  b.end(700);
  return b;
}

}  // namespace

TEST_CASE("memory per range: calls, allocations, bytes, peak inside and bytes held after, per NVTX range and mark") {
  ReportOptions opt;
  opt.by_range = true;
  const Report r = build_report(parse(ranged()), opt);
  REQUIRE(r.ranges);
  std::map<std::string, RangeRow> by;
  std::vector<std::string> order;
  for (const RangeRow& row : *r.ranges) by[row.name] = row, order.push_back(row.name);
  // By bytes allocated, largest first.
  CHECK(order == std::vector<std::string>{"load", "iter", "step", "fwd", "idle"});

  // Every thread's: A, B, C, D, E; B and C freed inside; A, D and E (freed at 360) held.
  const RangeRow& load = by["load"];
  CHECK(load.kind == "nvtx start");
  CHECK(load.calls == 1);
  CHECK(load.open_at_end == 0);
  CHECK(load.time_ns == 300);
  CHECK(load.allocations == 5);
  CHECK(load.bytes_allocated == 7800);
  CHECK(load.peak_bytes == 5800);
  CHECK(load.peak_device == 0);
  CHECK(load.held_after_bytes == 5300);

  // Thread 7's only (not D): B and C in the first call (B freed inside: C held), E in the
  // second (freed inside). Peaks 3500 and 5800.
  const RangeRow& step = by["step"];
  CHECK(step.kind == "nvtx push");
  CHECK(step.calls == 2);
  CHECK(step.time_ns == 200);
  CHECK(step.allocations == 3);
  CHECK(step.bytes_allocated == 6500);
  CHECK(step.peak_bytes == 5800);
  CHECK(step.held_after_bytes == 500);

  // Nested in the first step: C only; B's free inside it takes nothing off (B began before).
  const RangeRow& fwd = by["fwd"];
  CHECK(fwd.calls == 1);
  CHECK(fwd.allocations == 1);
  CHECK(fwd.bytes_allocated == 500);
  CHECK(fwd.peak_bytes == 3500);
  CHECK(fwd.held_after_bytes == 500);

  // [100,300): B, C, D (B freed inside); [300,700), open at the end: E, F (E freed inside).
  const RangeRow& iter = by["iter"];
  CHECK(iter.kind == "mark");
  CHECK(iter.calls == 2);
  CHECK(iter.open_at_end == 1);
  CHECK(iter.time_ns == 600);
  CHECK(iter.allocations == 5);
  CHECK(iter.bytes_allocated == 6900);
  CHECK(iter.peak_bytes == 5800);
  CHECK(iter.held_after_bytes == 900);

  // Never popped: to the end, from 1300 bytes live when it began.
  const RangeRow& idle = by["idle"];
  CHECK(idle.calls == 1);
  CHECK(idle.open_at_end == 1);
  CHECK(idle.time_ns == 200);
  CHECK(idle.allocations == 1);
  CHECK(idle.bytes_allocated == 100);
  CHECK(idle.peak_bytes == 1400);
  CHECK(idle.held_after_bytes == 100);

  // The same rows in JSON and text.
  const auto j = to_json(r);
  REQUIRE(j["by_range"].size() == 5);
  CHECK(j["by_range"][2]["name"] == "step");
  CHECK(j["by_range"][2]["held_after_bytes"] == 500);
  CHECK(j["by_range"][2]["peak_bytes"] == 5800);
  std::ostringstream text;
  write_text(text, r);
  INFO(text.str());
  CHECK(text.str().find("  step (nvtx push): 2 calls, 3 allocations of ") != std::string::npos);
  CHECK(text.str().find("  idle (nvtx push): 1 call (1 open at the end), 1 allocation of ") != std::string::npos);
}

TEST_CASE("memory per range: none asked, none computed, and asked with no range in the trace, said so") {
  const Trace t = parse(TraceBuilder().process().alloc(10, 0xA000, 100).end(20));
  CHECK_FALSE(build_report(t, ReportOptions{}).ranges);
  ReportOptions opt;
  opt.by_range = true;
  const Report r = build_report(t, opt);
  REQUIRE(r.ranges);
  CHECK(r.ranges->empty());
  std::ostringstream text;
  write_text(text, r);
  CHECK(text.str().find("no NVTX range or mark in the trace") != std::string::npos);
}

namespace {

std::map<std::string, RangeRow> ranges_of(const TraceBuilder& b) {
  ReportOptions opt;
  opt.by_range = true;
  const Report r = build_report(parse(b), opt);
  std::map<std::string, RangeRow> by;
  for (const RangeRow& row : *r.ranges) by[row.name] = row;
  return by;
}

}  // namespace

TEST_CASE("memory per range: tags nest per thread, count their own thread's allocations, and pair by name") {
  TraceBuilder b;
  b.process().device(0, 1ull << 30);
  b.mark(100, "load", MarkSource::kTagPush, 7).alloc(110, 0xA000, 1000);
  b.mark(120, "inner", MarkSource::kTagPush, 7).alloc(130, 0xB000, 500);
  b.range_end(140, "inner", MarkSource::kTagPop, 7);
  auto other = TraceBuilder::ev(150, fmt::Op::kAlloc, fmt::Kind::kDevice, 0xC000, 300, 0, 0, 1);
  other.tid = 8;  // another thread: not inside thread 7's tags
  b.event(other);
  b.range_end(160, "load", MarkSource::kTagPop, 7);
  // A pop and a push at one nanosecond: the pop names "outer", so it closes outer, not step.
  b.mark(200, "outer", MarkSource::kTagPush, 7).alloc(210, 0xD000, 1000);
  b.range_end(300, "outer", MarkSource::kTagPop, 7).mark(300, "step", MarkSource::kTagPush, 7);
  b.alloc(310, 0xE000, 2000).range_end(400, "step", MarkSource::kTagPop, 7).end(500);
  const auto by = ranges_of(b);
  CHECK(by.at("load").kind == "tag");
  CHECK(by.at("load").allocations == 2);
  CHECK(by.at("load").bytes_allocated == 1500);
  CHECK(by.at("load").held_after_bytes == 1500);
  CHECK(by.at("inner").allocations == 1);
  CHECK(by.at("inner").bytes_allocated == 500);
  CHECK(by.at("outer").bytes_allocated == 1000);
  CHECK(by.at("outer").time_ns == 100);
  CHECK(by.at("step").bytes_allocated == 2000);
  CHECK(by.at("step").time_ns == 100);
}

TEST_CASE("memory per range: a capture's graph nodes are no device memory, a physical handle's release is a free") {
  TraceBuilder b;
  b.process().device(0, 1ull << 30);
  b.mark(100, "r", MarkSource::kNvtxPush, 7);
  auto node = TraceBuilder::ev(110, fmt::Op::kAlloc, fmt::Kind::kDevice, 0xA000, 3 << 20, 0, 0, 1);
  node.flags = fmt::kEventCaptured;  // an allocation node of a graph being captured
  b.event(node);
  auto made = TraceBuilder::ev(120, fmt::Op::kAlloc, fmt::Kind::kVmmPhysical, 0, 2 << 20, 0, 0, 1);
  made.handle = 0x55;  // cuMemCreate: a handle, no address
  b.event(made);
  auto released = TraceBuilder::ev(130, fmt::Op::kFree, fmt::Kind::kVmmPhysical, 0, 0, 0, 0, 2);
  released.handle = 0x55;
  b.event(released);
  b.range_end(140, "r", MarkSource::kNvtxPop, 7).end(200);
  const RangeRow r = ranges_of(b).at("r");
  CHECK(r.allocations == 1);  // the handle, not the graph node
  CHECK(r.bytes_allocated == 2u << 20);
  CHECK(r.held_after_bytes == 0);
}

TEST_CASE("memory per range: before trace format 1.10 (no pops recorded) an NVTX push is a mark") {
  TraceBuilder b(9);
  b.process().device(0, 1ull << 30);
  b.mark(100, "it", MarkSource::kNvtxPush, 7).alloc(110, 0xA000, 1000);
  b.mark(200, "it", MarkSource::kNvtxPush, 7).alloc(210, 0xB000, 2000).end(300);
  const RangeRow r = ranges_of(b).at("it");
  CHECK(r.kind == "mark");
  CHECK(r.calls == 2);
  CHECK(r.open_at_end == 1);
  CHECK(r.bytes_allocated == 3000);
}
