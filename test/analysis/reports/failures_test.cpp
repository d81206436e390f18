// Failed allocations: identical ones grouped with a count, --top applied to the groups,
// each group with the snapshot that saw its first failure.
#include <sstream>

#include "catch.h"
#include "gate/check.h"
#include "read/event_source.h"
#include "reports/report.h"
#include "report_both.h"
#include "render/report_json.h"
#include "render/report_text.h"
#include "trace_builder.h"
#include "sizes.h"

using namespace cumemtrace;
using cumemtrace::test::report_both;
using cumemtrace::test::TraceBuilder;
namespace fmt = cumemtrace::format;

namespace {

constexpr int32_t kOom = 2;  // CUDA_ERROR_OUT_OF_MEMORY

Report report_of(const TraceBuilder& b, size_t top) {
  ReportOptions opt;
  opt.top = top;
  return report_both(b, {}, opt);
}

// A failure or success on thread `tid` (the builder's own events are all on thread 7).
void on_thread(TraceBuilder& b, uint32_t tid, uint64_t t, uint64_t address, uint64_t size, int32_t result,
               uint32_t stack) {
  auto e = TraceBuilder::ev(t, fmt::Op::kAlloc, fmt::Kind::kDevice, address, size, 0, stack, 1);
  e.result = result;
  e.tid = tid;
  b.event(e);
}

// Thread 7 fails four times; by the rule (docs/cli.md, "Recovered or fatal"):
//   1 ms  4 GiB fails; 2 ms 2 GiB succeeds (smaller), 3 ms 4 GiB succeeds on thread 8
//         (another thread), 4 ms 4 GiB succeeds on 7: recovered after 3 ms;
//   5 ms  8 GiB fails; 6 ms the thread fails again first: unrecovered;
//   6 ms  16 GiB fails; 7 ms 16 GiB succeeds: recovered after 1 ms;
//   8 ms  1 GiB fails; nothing succeeds on 7 before the end: unrecovered.
TraceBuilder recovered_then_fatal() {
  TraceBuilder b;
  b.process().device(0, 80 * GiB).stack(1, 0, 0x1000).stack(2, 0, 0x2000);
  on_thread(b, 7, 1 * ms, 0, 4 * GiB, kOom, 1);
  on_thread(b, 7, 2 * ms, 0x100000000, 2 * GiB, 0, 2);
  on_thread(b, 8, 3 * ms, 0x200000000, 4 * GiB, 0, 2);
  on_thread(b, 7, 4 * ms, 0x300000000, 4 * GiB, 0, 1);
  on_thread(b, 7, 5 * ms, 0, 8 * GiB, kOom, 1);
  on_thread(b, 7, 6 * ms, 0, 16 * GiB, kOom, 2);
  on_thread(b, 7, 7 * ms, 0x400000000, 16 * GiB, 0, 2);
  on_thread(b, 7, 8 * ms, 0, 1 * GiB, kOom, 2);
  b.end(10 * ms);
  return b;
}

std::string failed_message(const TraceBuilder& b, const char* limit, bool count_recovered) {
  const Trace t = parse_trace(b.vec(), "t.trace");
  const Report rep = build_report(t, ReportOptions{});
  std::string error;
  auto l = parse_limit(Limit::What::kFailed, limit, &error);
  REQUIRE(l);
  l->count_recovered = count_recovered;
  const TraceCheck c = check_trace(t, MemoryEvents(t.events), rep, {*l});
  REQUIRE(c.results.size() == 1);
  return (c.results[0].ok ? "ok: " : "FAIL: ") + c.results[0].message;
}

}  // namespace

TEST_CASE(
    "a failure followed on its thread by a success at least as large is recovered, and the summary leads with "
    "the last unrecovered one") {
  const TraceBuilder b = recovered_then_fatal();
  const Report rep = report_of(b, 10);
  CHECK(rep.failed_total == 4);
  CHECK(rep.failed_recovered == 2);
  REQUIRE(rep.failed.size() == 4);
  CHECK(rep.failed[0].size == 4 * GiB);
  CHECK(rep.failed[0].recovered);
  CHECK(rep.failed[0].recovered_after_ns == 3 * ms);
  CHECK(rep.failed[1].size == 8 * GiB);
  CHECK_FALSE(rep.failed[1].recovered);
  CHECK(rep.failed[2].size == 16 * GiB);
  CHECK(rep.failed[2].recovered);
  CHECK(rep.failed[2].recovered_after_ns == 1 * ms);
  CHECK(rep.failed[3].size == 1 * GiB);
  CHECK_FALSE(rep.failed[3].recovered);

  const auto j = to_json(rep);
  CHECK(j["failed_allocations_recovered"] == 2);
  CHECK(j["failed_allocations"][0]["recovered"] == true);
  CHECK(j["failed_allocations"][0]["recovered_after_ns"] == 3 * ms);
  CHECK(j["failed_allocations"][1]["recovered"] == false);
  CHECK(j["failed_allocations"][1]["recovered_after_ns"].is_null());

  std::ostringstream out;
  write_text(out, rep);
  const std::string text = out.str();
  // The last unrecovered failure is the 1 GiB one at 8 ms.
  CHECK(text.find("  failed allocations: 4 (2 recovered); the last unrecovered 1.00 GiB (1,073,741,824 B) on ") !=
        std::string::npos);
  CHECK(text.find("     recovered: failed, then succeeded after 3.000 ms") != std::string::npos);
  CHECK(text.find("     recovered: failed, then succeeded after 1.000 ms") != std::string::npos);

  // --max-failed counts the two unrecovered; --count-recovered all four.
  CHECK(failed_message(b, "2", false) ==
        "ok: failed allocations on device 0: 2, limit 2 (not counting 2 recovered from)");
  CHECK(failed_message(b, "1", false)
            .starts_with(
                "FAIL: failed allocations on device 0: 2, limit 1 (not counting 2 recovered from); first: 8.00 GiB"));
  CHECK(failed_message(b, "3", true)
            .starts_with("FAIL: failed allocations on device 0: 4 (recovered ones counted), limit 3; first: 4.00 GiB"));
}

TEST_CASE("failures all recovered: the summary says so, and a failure alike but not recovered is a row of its own") {
  const auto built = [](bool again) {
    TraceBuilder b;
    b.process().device(0, 80 * GiB).stack(1, 0, 0x1000);
    on_thread(b, 7, 1 * ms, 0, 4 * GiB, kOom, 1);
    on_thread(b, 7, 3 * ms, 0x100000000, 6 * GiB, 0, 1);  // larger than asked: recovered after 2 ms
    // The same request again at 5 ms, never followed by a success: fatal.
    if (again) on_thread(b, 7, 5 * ms, 0, 4 * GiB, kOom, 1);
    b.end(10 * ms);
    return b;
  };
  const TraceBuilder b = built(false);
  const Report rep = report_of(b, 10);
  std::ostringstream out;
  write_text(out, rep);
  CHECK(out.str().find("  failed allocations: 1, all recovered; the first 4.00 GiB (4,294,967,296 B) on ") !=
        std::string::npos);
  CHECK(out.str().find(" failed, then succeeded after 2.000 ms\n") != std::string::npos);
  CHECK(failed_message(b, "0", false) ==
        "ok: failed allocations on device 0: 0, limit 0 (not counting 1 recovered from)");

  // Alike but fatal: not grouped with the recovered one.
  const Report again = report_of(built(true), 10);
  REQUIRE(again.failed.size() == 2);
  CHECK(again.failed[0].recovered);
  CHECK(again.failed[0].count == 1);
  CHECK_FALSE(again.failed[1].recovered);
  CHECK(again.failed[1].count == 1);
}

TEST_CASE("identical failed allocations are one row with a count, --top limits the rows") {
  TraceBuilder b;
  b.process().device(0, 80 * GiB).stack(1, 0, 0x1000).stack(2, 0, 0x2000);
  // 20,000 alike (a retry loop), each followed by its snapshot, then two others.
  for (uint64_t i = 0; i < 20000; ++i) {
    b.failed(100 + 10 * i, 90 * GiB, kOom, 1);
    b.snapshot(105 + 10 * i, fmt::SnapshotReason::kFailedAllocation, {{0, 0, 0, 0, i, 80 * GiB}});
  }
  b.failed(300000, 90 * GiB, kOom, 2);  // another call site
  b.failed(300010, 85 * GiB, kOom, 1);  // another size
  b.end(400000);

  const Report all = report_of(b, 10);
  CHECK(all.failed_total == 20002);
  CHECK(all.failed_omitted == 0);
  REQUIRE(all.failed.size() == 3);
  CHECK(all.failed[0].count == 20000);
  CHECK(all.failed[0].time_ns == TraceBuilder::kStart + 100);
  CHECK(all.failed[0].last_time_ns == TraceBuilder::kStart + 100 + 10 * 19999);
  CHECK(all.failed[0].device_free == 0);  // the snapshot right after the first failure
  CHECK(all.failed[1].count == 1);
  CHECK(all.failed[1].size == 90 * GiB);
  CHECK(all.failed[2].size == 85 * GiB);
  // Nearest snapshot for the later ones: the last one, taken at 105 + 10 * 19999.
  CHECK(all.failed[2].device_free == 19999);

  const Report top = report_of(b, 1);
  REQUIRE(top.failed.size() == 1);
  CHECK(top.failed_omitted == 2);
  std::ostringstream out;
  write_text(out, top);
  CHECK(out.str().find("failed 20000 times alike, the last at") != std::string::npos);
  CHECK(out.str().find("... and 2 more kinds of failure (20002 failed allocations in all)") != std::string::npos);
  const auto j = to_json(top);
  CHECK(j["failed_allocations"][0]["count"] == 20000);
  CHECK(j["failed_allocations_total"] == 20002);
  CHECK(j["failed_allocations_omitted"] == 2);
}

TEST_CASE("a request for device memory refused before any device was known is on no device, not on the host") {
  // H200 run AM: PyTorch's autograd thread asked cudaMallocAsync for 32 MiB with no context
  // current; the driver said CUDA_ERROR_INVALID_CONTEXT (201) and named no device.
  TraceBuilder b;
  b.process().device(0, 80 * GiB).stack(1, 0, 0x1000);
  auto e = TraceBuilder::ev(100, fmt::Op::kAlloc, fmt::Kind::kAsyncPool, 0, 32 * MiB, -1, 1, 1);
  e.result = 201;
  b.event(e);
  b.failed(200, 4 * MiB, 2, 1, -1);  // a failed device allocation with no device, too
  b.end(300);
  const Report r = report_of(b, 10);
  REQUIRE(r.failed.size() == 2);
  std::ostringstream out;
  write_text(out, r);
  const std::string text = out.str();
  INFO(text);
  // The summary leads with the last failure not recovered from (docs/cli.md), the 4 MiB one.
  CHECK(text.find("failed allocations: 2; the last 4.00 MiB (4,194,304 B) on no device (none current on its "
                  "thread) at ") != std::string::npos);
  CHECK(text.find("1. 32.00 MiB (33,554,432 B) of async-pool memory on no device (none current on its thread) via ") !=
        std::string::npos);
  CHECK(text.find("result 201 CUDA_ERROR_INVALID_CONTEXT") != std::string::npos);
  CHECK(text.find(" on host ") == std::string::npos);  // (the process header says "on host1,")
}
