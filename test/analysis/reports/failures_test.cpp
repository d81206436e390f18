// Failed allocations: identical ones grouped with a count, --top applied to the groups,
// each group with the snapshot that saw its first failure.
#include <sstream>

#include "catch.h"
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

}  // namespace

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
  CHECK(text.find("failed allocations: 2; the first 32.00 MiB (33,554,432 B) on no device (none current on its "
                  "thread) at ") != std::string::npos);
  CHECK(text.find("1. 32.00 MiB (33,554,432 B) of async-pool memory on no device (none current on its thread) via ") !=
        std::string::npos);
  CHECK(text.find("result 201 CUDA_ERROR_INVALID_CONTEXT") != std::string::npos);
  CHECK(text.find(" on host ") == std::string::npos);  // (the process header says "on host1,")
}
