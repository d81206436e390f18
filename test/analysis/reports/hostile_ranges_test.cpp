// The hostile traces (hostile_traces.h): 20,000 NVTX pushes never popped, 10,000 distinct
// mark names, 100,000 nested tags each with a live allocation, 20,000 pool heaps. Each
// must give its exact figures (worked out below from the trace) and a page whose tables
// keep kPageTableRows rows and count the rest (render/page/page_tables.h). How long they take
// is bench/run_hostile.sh's (docs/performance.md, "Analysis of hostile traces").
#include <string>

#include "catch.h"
#include "hostile_traces.h"
#include "parse_built.h"
#include "render/page/page_tables.h"
#include "render/report_json.h"
#include "reports/report.h"

using namespace cumemtrace;
using namespace cumemtrace::test;

namespace {

Report by_range(const TraceBuilder& b) {
  ReportOptions opt;
  opt.by_range = true;
  return build_report(parse(b), opt);
}

}  // namespace

TEST_CASE("hostile: 20,000 NVTX pushes never popped are 20,000 open rows, and the page keeps 500 of them") {
  // Push "r<i>" at t = i + 1, then one allocation of 1000 B at t = 30,000 inside all of
  // them, the end at 40,000 (open_pushes). Every row: 1 call, open at the end, 1 allocation of
  // 1000 B, peak 1000 B on device 0, held after 1000 B; all equal, so the rows stay in the
  // order the pushes came.
  const Report r = by_range(open_pushes(20000));
  REQUIRE(r.ranges);
  REQUIRE(r.ranges->size() == 20000);
  uint64_t calls = 0, open = 0, allocations = 0, bytes = 0, held = 0, peaks = 0;
  for (const RangeRow& row : *r.ranges) {
    calls += row.calls, open += row.open_at_end, allocations += row.allocations, bytes += row.bytes_allocated;
    held += row.held_after_bytes, peaks += row.peak_bytes == 1000 && row.peak_device == 0;
  }
  CHECK(calls == 20000);
  CHECK(open == 20000);
  CHECK(allocations == 20000);
  CHECK(bytes == 20000ull * 1000);
  CHECK(held == 20000ull * 1000);
  CHECK(peaks == 20000);
  CHECK((*r.ranges)[0].name == "r0");
  CHECK((*r.ranges)[0].time_ns == 40000 - 1);  // open from t = 1 to the end at 40,000
  CHECK(r.ranges->back().name == "r19999");

  nlohmann::ordered_json page = to_json(r);
  bound_page_tables(page);
  CHECK(page["by_range"].size() == kPageTableRows);
  CHECK(page["by_range_omitted"] == 20000 - kPageTableRows);
  CHECK(page["by_range"].back()["name"] == "r499");
}

TEST_CASE("hostile: 10,000 distinct mark names are 10,000 stretches each open at the end") {
  // Mark "m<i>" at t = i + 1, then 3000 B allocated at t = 20,000 and freed at 20,001
  // (distinct_marks): each stretch runs from its mark to the end, sees the allocation and
  // its free.
  const Report r = by_range(distinct_marks(10000));
  REQUIRE(r.ranges);
  REQUIRE(r.ranges->size() == 10000);
  uint64_t open = 0, bytes = 0, held = 0, peaks = 0;
  for (const RangeRow& row : *r.ranges) {
    open += row.open_at_end, bytes += row.bytes_allocated, held += row.held_after_bytes;
    peaks += row.peak_bytes == 3000;
  }
  CHECK(open == 10000);
  CHECK(bytes == 10000ull * 3000);
  CHECK(held == 0);  // freed inside every stretch
  CHECK(peaks == 10000);
}

TEST_CASE("hostile: 100,000 nested tags each with a live allocation count every allocation inside") {
  // Tag "t<i>" pushed at t = 2i + 1, 1 B allocated (live to the end) at t = 2i + 2, no pop
  // (nested_tags): tag i holds the allocations i .. 99,999, so 100,000 - i of them,
  // of as many bytes, all held after; the peak inside tag i is the 100,000 B at the end.
  constexpr uint64_t kTags = 100000;
  const Report r = by_range(nested_tags(kTags));
  REQUIRE(r.ranges);
  REQUIRE(r.ranges->size() == kTags);
  uint64_t allocations = 0, held = 0;
  for (const RangeRow& row : *r.ranges) allocations += row.allocations, held += row.held_after_bytes;
  CHECK(allocations == kTags * (kTags + 1) / 2);  // 100,000 + 99,999 + ... + 1
  CHECK(held == kTags * (kTags + 1) / 2);
  CHECK((*r.ranges)[0].name == "t0");  // the most bytes allocated inside
  CHECK((*r.ranges)[0].allocations == kTags);
  CHECK((*r.ranges)[0].peak_bytes == kTags);
  CHECK(r.ranges->back().name == "t99999");
  CHECK(r.ranges->back().allocations == 1);
  CHECK(r.ranges->back().peak_bytes == kTags);
}

TEST_CASE("hostile: 20,000 pool heaps make a page of the 500 with the most bytes at their peak") {
  // Heap "h<i>" has one region of i + 1 bytes (pool_heaps): the 500 largest peaks are heaps 19,500 ..
  // 19,999, kept in the order they were registered.
  constexpr uint64_t kHeaps = 20000;
  const Report r = build_report(parse(pool_heaps(kHeaps)), ReportOptions{});
  REQUIRE(r.pools.heaps.size() == kHeaps);
  CHECK(r.pools.heaps.back().peak_bytes == kHeaps);

  nlohmann::ordered_json page = to_json(r);
  bound_page_tables(page);
  const auto& heaps = page["pools"]["heaps"];
  REQUIRE(heaps.size() == kPageTableRows);
  CHECK(page["pools"]["heaps_omitted"] == kHeaps - kPageTableRows);
  CHECK(heaps[0]["name"] == "h19500");
  CHECK(heaps[0]["peak"]["bytes"] == 19501);
  CHECK(heaps.back()["name"] == "h19999");
  CHECK(heaps.back()["sites_omitted"] == 0);
}

TEST_CASE("page tables: a short table is kept whole and says it left out 0") {
  nlohmann::ordered_json report{{"by_range", {1, 2, 3}}, {"pools", {{"heaps", nlohmann::ordered_json::array()}}}};
  bound_page_tables(report, 3);
  CHECK(report["by_range"].size() == 3);
  CHECK(report["by_range_omitted"] == 0);
  CHECK(report["pools"]["heaps_omitted"] == 0);
  CHECK(report.find("by_function_omitted") == report.end());  // no table, no count
}
