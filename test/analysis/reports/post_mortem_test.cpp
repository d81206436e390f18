// Which NVML reading the report combines with tracked figures (analysis/reports/moments.h), and
// the causes that need a moment the simulated driver cannot make (address-space).
#include "catch.h"

#include "reports/report.h"
#include "report_both.h"
#include "trace_builder.h"
#include "sizes.h"

using namespace cumemtrace;
using cumemtrace::test::kSame;
using cumemtrace::test::report_both;
using cumemtrace::test::TraceBuilder;
namespace fmt = cumemtrace::format;
using fmt::SnapshotReason;

namespace {

Report report_of(const TraceBuilder& b) { return report_both(b, "t.trace"); }

// A 1 GiB peak from 10 ms to 15 ms, then nothing.
TraceBuilder brief_peak() {
  TraceBuilder b;
  b.process().device(0, 140 * GiB).alloc(10'000'000, 0x7f0000000000, GiB).free(15'000'000, 0x7f0000000000);
  return b;
}

}  // namespace

TEST_CASE("the split at the peak uses a reading of one moment taken while tracked bytes equalled the peak") {
  TraceBuilder b = brief_peak();
  b.snapshot(10'100'000, SnapshotReason::kSampledPeak, {{0, GiB, GiB, GiB + 512 * MiB, 0, 0, 0, 0, kSame}});
  b.snapshot(20'000'000, SnapshotReason::kExit, {{0, 0, 0, 512 * MiB, 0, 0, 0, 0, kSame}});
  const Report r = report_of(b);
  const auto& n = r.devices.at(0).nvml;
  REQUIRE(n.known);
  CHECK(n.at_peak);
  CHECK(n.same_moment);
  CHECK(n.device_bytes == GiB);
  CHECK(n.footprint == GiB);
  CHECK(n.process_used == GiB + 512 * MiB);
  CHECK(n.untracked == 512 * MiB);  // no context event in this trace: all of it unexplained
}

TEST_CASE("a peak never sampled is said so: the nearest reading of one moment, with its own tracked bytes") {
  TraceBuilder b = brief_peak();
  // Nearer the peak but not of one moment (events came between), then an exact one later.
  b.snapshot(16'000'000, SnapshotReason::kPeak, {{0, 0, 0, GiB + 512 * MiB, 0, 0, 0, 0, 0}});
  b.snapshot(40'000'000, SnapshotReason::kExit, {{0, 0, 0, 512 * MiB, 0, 0, 0, 0, kSame}});
  const Report r = report_of(b);
  const auto& n = r.devices.at(0).nvml;
  REQUIRE(n.known);
  CHECK_FALSE(n.at_peak);
  CHECK(n.same_moment);
  CHECK(n.snapshot_time_ns == TraceBuilder::kStart + 40'000'000);
  CHECK(n.device_bytes == 0);
  CHECK(n.process_used == 512 * MiB);
}

TEST_CASE("a trace without moment flags (before 1.3) gets its split marked as not of one moment") {
  TraceBuilder b(2);
  b.process().device(0, 140 * GiB).alloc(10'000'000, 0x7f0000000000, GiB);
  b.snapshot(50'000'000, SnapshotReason::kPeak, {{0, GiB, GiB, GiB + 512 * MiB}});
  const Report r = report_of(b);
  const auto& n = r.devices.at(0).nvml;
  REQUIRE(n.known);
  CHECK_FALSE(n.same_moment);
  CHECK_FALSE(n.at_peak);
}

TEST_CASE("free memory at least the request, read right after the failure: address-space") {
  TraceBuilder b;
  b.process().device(0, 16 * GiB).alloc(1'000'000, 0x7f0000000000, 2 * GiB).failed(2'000'000, 3 * GiB, 2);
  b.snapshot(2'100'000, SnapshotReason::kFailedAllocation,
             {{0, 2 * GiB, 2 * GiB, 2 * GiB + 512 * MiB, 3 * GiB + 2 * MiB, 16 * GiB, 0, 0, kSame}});
  const Report r = report_of(b);
  REQUIRE(r.failed.size() == 1);
  const FailedRow& f = r.failed[0];
  CHECK(f.snapshot_at_failure);
  CHECK(f.diagnosis.cause == Cause::kAddressSpace);
  CHECK(f.diagnosis.figures ==
        std::vector<std::pair<std::string, uint64_t>>{{"request", 3 * GiB}, {"device_free", 3 * GiB + 2 * MiB}});
}

TEST_CASE("the same free memory from a reading NOT at the failure never claims address-space") {
  TraceBuilder b;
  b.process().device(0, 16 * GiB).alloc(1'000'000, 0x7f0000000000, 2 * GiB).failed(2'000'000, 3 * GiB, 2);
  b.free(3'000'000, 0x7f0000000000);
  b.snapshot(3'100'000, SnapshotReason::kPeriodic, {{0, 0, 0, 512 * MiB, 15 * GiB, 16 * GiB, 0, 0, kSame}});
  const Report r = report_of(b);
  const FailedRow& f = r.failed.at(0);
  CHECK_FALSE(f.snapshot_at_failure);
  CHECK(f.snapshot_same_moment);
  CHECK(f.diagnosis.cause != Cause::kAddressSpace);
}

TEST_CASE("retries of one request from one call site are one failure, from whichever line of the allocator") {
  TraceBuilder b;
  b.process().device(0, 16 * GiB);
  // PyTorch's retry reaches cudaMalloc from another line of the caching allocator (0x1000,
  // then 0x1010), both called by the program's step (0x500): one call site by the
  // call-site rule, which skips the allocator's frames. A third failure comes from another
  // frame of the program's (0x2000).
  b.stack(1, 0, 0x500).stack(2, 1, 0x1000).stack(4, 1, 0x1010).stack(5, 0, 0x2000);
  const std::string malloc =
      "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, "
      "unsigned long)";
  b.symbol(0x1000, malloc, "CUDACachingAllocator.cpp", 100).symbol(0x1010, malloc, "CUDACachingAllocator.cpp", 120);
  b.symbol(0x500, "step", "train.cpp", 12).symbol(0x2000, "other", "train.cpp", 30);
  b.failed(1'000'000, 9 * GiB, 2, 2).failed(1'500'000, 9 * GiB, 2, 4).failed(900'000'000, 9 * GiB, 2, 5);
  const Report r = report_of(b);
  REQUIRE(r.failed.size() == 2);
  CHECK(r.failed[0].count == 2);
  CHECK(r.failed[0].last_time_ns == TraceBuilder::kStart + 1'500'000);
  CHECK(r.failed[1].count == 1);
}

TEST_CASE("a failure that is no out-of-memory is refused, named by its error, whatever NVML says") {
  // The fabric-handle probe of PyTorch's expandable segments (H200 run L): cuMemCreate of
  // 20 MiB refused with CUDA_ERROR_NOT_PERMITTED (800), free memory plenty at that moment.
  TraceBuilder b;
  b.process().device(0, 16 * GiB).failed(2'000'000, 20 * MiB, 800);
  b.snapshot(2'100'000, SnapshotReason::kFailedAllocation, {{0, 0, 0, 512 * MiB, 15 * GiB, 16 * GiB, 0, 0, kSame}});
  const Report r = report_of(b);
  REQUIRE(r.failed.size() == 1);
  const Diagnosis& d = r.failed[0].diagnosis;
  CHECK(d.cause == Cause::kRefused);
  CHECK(cause_name(d.cause) == "refused");
  CHECK(d.summary == "the call was refused with CUDA_ERROR_NOT_PERMITTED, not for lack of memory");
  CHECK(d.figures == std::vector<std::pair<std::string, uint64_t>>{{"request", 20 * MiB}});
}
