// Causes by what would have let the request fit (analysis/reports/oom/holders.h, diagnosis.h): the
// split of NVML's figure at a failure into holders, and the fewest of them that, released,
// make device_free + released >= request. Figures worked out by hand from each trace.
#include "catch.h"

#include <sstream>

#include "reports/report.h"
#include "report_both.h"
#include "render/report_text.h"
#include "trace_builder.h"
#include "sizes.h"

using namespace cumemtrace;
using cumemtrace::test::kSame;
using cumemtrace::test::report_both;
using cumemtrace::test::text_of;
using cumemtrace::test::TraceBuilder;
namespace fmt = cumemtrace::format;
using fmt::SnapshotReason;
using Figures = std::vector<std::pair<std::string, uint64_t>>;

namespace {

// A 16 GiB device whose process made a 512 MiB context at 1 ms.
TraceBuilder device_with_context() {
  TraceBuilder b;
  b.process().device(0, 16 * GiB);
  b.event(TraceBuilder::ev(1'000'000, fmt::Op::kContextCreate, fmt::Kind::kDevice, 0, 512 * MiB));
  return b;
}

// The holders as (key, bytes), in the report's order.
Figures held(const Diagnosis& d) {
  Figures out;
  for (const auto& h : d.holders) out.emplace_back(holder_key(h), h.bytes);
  return out;
}

}  // namespace

TEST_CASE("two holders needed together: the pool's slack and the graph pool, neither alone with free memory") {
  TraceBuilder b = device_with_context();
  b.failed(2'000'000, 9 * GiB, 2);
  // free 4 GiB; pool 3 GiB reserved, none live; graph pool 3 GiB; process 512 MiB + 3 + 3 GiB.
  TraceBuilder::Dev d{0, 0, 0, 6 * GiB + 512 * MiB, 4 * GiB, 16 * GiB, 3 * GiB, 0, kSame, 3 * GiB};
  b.snapshot(2'100'000, SnapshotReason::kFailedAllocation, {d});
  const Report r = report_both(b, "t.trace");
  REQUIRE(r.failed.size() == 1);
  const Diagnosis& dg = r.failed[0].diagnosis;
  // Before: "context-and-untracked", the two pools lumped with the context.
  CHECK(cause_name(dg.cause) == "several-holders");
  CHECK(held(dg) == Figures{{"pool_slack", 3 * GiB}, {"graph_pool", 3 * GiB}, {"contexts", 512 * MiB}});
  REQUIRE(dg.fits.size() == 1);  // slack + context and graph + context are 3.5 GiB short of 5 GiB
  CHECK(dg.fits[0].released == 6 * GiB);
  CHECK(dg.figures == Figures{{"request", 9 * GiB},
                              {"device_free", 4 * GiB},
                              {"pool_slack", 3 * GiB},
                              {"graph_pool", 3 * GiB},
                              {"released", 6 * GiB},
                              {"free_plus_released", 10 * GiB}});
  CHECK(dg.advice.at(0).find("cudaMemPoolTrimTo") != std::string::npos);
  CHECK(dg.advice.back().find("cudaDeviceGraphMemTrim") != std::string::npos);
  CHECK(text_of(r).find("would have fit (1): free 4.00 GiB + the stream-ordered pool's slack 3.00 GiB + the CUDA "
                        "graph memory pool 3.00 GiB = 10.00 GiB (10,737,418,240 B) >= request 9.00 GiB "
                        "(9,663,676,416 B)") != std::string::npos);
}

TEST_CASE("three holders needed together: pool slack, graph pool and untracked memory") {
  TraceBuilder b = device_with_context();
  b.failed(2'000'000, 9 * GiB + 512 * MiB, 2);
  // process 6.5 GiB = context 0.5 + slack 2 + graph 2 + untracked 2; free 4 GiB; 5.5 GiB missing.
  TraceBuilder::Dev d{0, 0, 0, 6 * GiB + 512 * MiB, 4 * GiB, 16 * GiB, 2 * GiB, 0, kSame, 2 * GiB};
  b.snapshot(2'100'000, SnapshotReason::kFailedAllocation, {d});
  const Report r = report_both(b, "t.trace");
  const Diagnosis& dg = r.failed.at(0).diagnosis;
  CHECK(cause_name(dg.cause) == "several-holders");
  CHECK(held(dg) ==
        Figures{{"pool_slack", 2 * GiB}, {"graph_pool", 2 * GiB}, {"untracked", 2 * GiB}, {"contexts", 512 * MiB}});
  REQUIRE(dg.fits.size() == 1);  // any set with the 512 MiB context instead is 4.5 GiB
  std::vector<std::string> keys;
  for (size_t i : dg.fits[0].holders) keys.push_back(holder_key(dg.holders[i]));
  CHECK(keys == std::vector<std::string>{"pool_slack", "graph_pool", "untracked"});
  CHECK(dg.fits[0].released == 6 * GiB);
  CHECK(dg.figures.back() == std::pair<std::string, uint64_t>{"free_plus_released", 10 * GiB});
}

TEST_CASE("free memory plus the pool's slack, neither alone: pool-reserve, the slack not called untracked") {
  TraceBuilder b = device_with_context();
  b.failed(2'000'000, 12 * GiB, 2);
  // free 9.5 GiB, slack 6 GiB: 15.5 GiB >= 12 GiB.
  TraceBuilder::Dev d{0, 0, 0, 6 * GiB + 512 * MiB, 9 * GiB + 512 * MiB, 16 * GiB, 6 * GiB, 0, kSame};
  b.snapshot(2'100'000, SnapshotReason::kFailedAllocation, {d});
  const Report r = report_both(b, "t.trace");
  const Diagnosis& dg = r.failed.at(0).diagnosis;
  CHECK(cause_name(dg.cause) == "pool-reserve");
  // The split at the failure: the slack in its own holder, nothing untracked.
  CHECK(held(dg) == Figures{{"pool_slack", 6 * GiB}, {"contexts", 512 * MiB}});
  CHECK(dg.figures == Figures{{"request", 12 * GiB},
                              {"device_free", 9 * GiB + 512 * MiB},
                              {"pool_slack", 6 * GiB},
                              {"released", 6 * GiB},
                              {"free_plus_released", 15 * GiB + 512 * MiB},
                              {"pool_reserved", 6 * GiB},
                              {"pool_live", 0}});
}

TEST_CASE("untracked memory alone: context-and-untracked, the context apart") {
  TraceBuilder b = device_with_context();
  b.failed(2'000'000, 14 * GiB, 2);
  // process 4.5 GiB = context 0.5 + untracked 4; free 11.5 GiB: untracked fits, the context does not.
  b.snapshot(2'100'000, SnapshotReason::kFailedAllocation,
             {{0, 0, 0, 4 * GiB + 512 * MiB, 11 * GiB + 512 * MiB, 16 * GiB, 0, 0, kSame}});
  const Report r = report_both(b, "t.trace");
  const Diagnosis& dg = r.failed.at(0).diagnosis;
  CHECK(cause_name(dg.cause) == "context-and-untracked");
  CHECK(held(dg) == Figures{{"untracked", 4 * GiB}, {"contexts", 512 * MiB}});
  CHECK(dg.figures == Figures{{"request", 14 * GiB},
                              {"device_free", 11 * GiB + 512 * MiB},
                              {"untracked", 4 * GiB},
                              {"released", 4 * GiB},
                              {"free_plus_released", 15 * GiB + 512 * MiB},
                              {"process_used", 4 * GiB + 512 * MiB},
                              {"tracked_footprint", 0}});
}

TEST_CASE("a request larger than the device's total has its own cause") {
  TraceBuilder b;
  b.process().device(0, 16 * GiB).failed(2'000'000, 16 * GiB + 1, 2);
  b.snapshot(2'100'000, SnapshotReason::kFailedAllocation, {{0, 0, 0, 0, 16 * GiB, 16 * GiB, 0, 0, kSame}});
  const Report r = report_both(b, "t.trace");
  const Diagnosis& dg = r.failed.at(0).diagnosis;
  // Before: `demand` with tracked_live_bytes 0 and advice to shrink call sites it did not list.
  CHECK(cause_name(dg.cause) == "exceeds-device");
  CHECK(dg.figures == Figures{{"request", 16 * GiB + 1}, {"device_total", 16 * GiB}});
  CHECK(dg.holders.empty());
}

TEST_CASE("a request larger than the device's total less its contexts has its own cause") {
  TraceBuilder b = device_with_context();
  b.failed(2'000'000, 15 * GiB + 768 * MiB, 2);
  b.snapshot(2'100'000, SnapshotReason::kFailedAllocation,
             {{0, 0, 0, 512 * MiB, 15 * GiB + 512 * MiB, 16 * GiB, 0, 0, kSame}});
  const Report r = report_both(b, "t.trace");
  const Diagnosis& dg = r.failed.at(0).diagnosis;
  // Before: context-and-untracked (free + the context's 512 MiB >= request).
  CHECK(cause_name(dg.cause) == "exceeds-device-less-contexts");
  CHECK(dg.figures == Figures{{"request", 15 * GiB + 768 * MiB},
                              {"device_total", 16 * GiB},
                              {"contexts", 512 * MiB},
                              {"total_less_contexts", 15 * GiB + 512 * MiB}});
}

TEST_CASE("demand: the live allocations are what is missing, listed by owner and call site") {
  TraceBuilder b = device_with_context();
  b.module(0, 0x400000, 0x500000, "/opt/app/trainer");
  b.stack(1, 0, 0x401000).stack(2, 0, 0x402000);
  b.alloc(1'500'000, 0x7f0000000000, 6 * GiB, 1).alloc(1'600'000, 0x7f0200000000, 4 * GiB, 2);
  b.failed(2'000'000, 8 * GiB, 2, 2);
  // free 16 - 0.5 - 10 = 5.5 GiB; the context is 512 MiB: only the live allocations fit.
  b.snapshot(2'100'000, SnapshotReason::kFailedAllocation,
             {{0, 10 * GiB, 10 * GiB, 10 * GiB + 512 * MiB, 5 * GiB + 512 * MiB, 16 * GiB, 0, 0, kSame}});
  const Report r = report_both(b, "t.trace");
  const FailedRow& f = r.failed.at(0);
  const Diagnosis& dg = f.diagnosis;
  CHECK(cause_name(dg.cause) == "demand");
  CHECK(held(dg) == Figures{{"live:trainer", 10 * GiB}, {"contexts", 512 * MiB}});
  CHECK(dg.figures == Figures{{"request", 8 * GiB},
                              {"device_free", 5 * GiB + 512 * MiB},
                              {"live:trainer", 10 * GiB},
                              {"released", 10 * GiB},
                              {"free_plus_released", 15 * GiB + 512 * MiB},
                              {"shortfall", 2 * GiB + 512 * MiB},
                              {"tracked_live_bytes", 10 * GiB}});
  REQUIRE(f.sites_at_failure.size() == 2);
  CHECK(f.sites_at_failure[0].bytes == 6 * GiB);
  CHECK(f.sites_at_failure[1].bytes == 4 * GiB);
  CHECK(dg.advice.at(0).find("live allocations from trainer") != std::string::npos);
}

TEST_CASE("a caching allocator's segments are their own holder, with its remedy, and the program's are demand") {
  TraceBuilder b = device_with_context();
  b.module(0, 0x400000, 0x500000, "/opt/app/trainer");
  b.module(0, 0x700000, 0x800000, "/usr/lib/python3/dist-packages/torch/lib/libc10_cuda.so");
  b.stack(1, 0, 0x401000).stack(2, 1, 0x701000);  // trainer -> libc10_cuda -> cudaMalloc
  b.stack(3, 0, 0x402000);
  b.alloc(1'500'000, 0x7f0000000000, 6 * GiB, 2).alloc(1'600'000, 0x7f0200000000, 2 * GiB, 3);
  b.failed(2'000'000, 8 * GiB, 2, 2);
  // free 7.5 GiB: PyTorch's 6 GiB fit with it, so do the program's 2 GiB; the cache ranks first.
  b.snapshot(2'100'000, SnapshotReason::kFailedAllocation,
             {{0, 8 * GiB, 8 * GiB, 8 * GiB + 512 * MiB, 7 * GiB + 512 * MiB, 16 * GiB, 0, 0, kSame}});
  const Report r = report_both(b, "t.trace");
  const Diagnosis& dg = r.failed.at(0).diagnosis;
  CHECK(cause_name(dg.cause) == "cached-by-allocator");
  CHECK(held(dg) == Figures{{"cache:PyTorch", 6 * GiB}, {"live:trainer", 2 * GiB}, {"contexts", 512 * MiB}});
  REQUIRE(dg.fits.size() == 3);  // each of the three alone: 7.5 GiB + 512 MiB is 8 GiB
  CHECK(holder_key(dg.holders[dg.fits[0].holders.at(0)]) == "cache:PyTorch");
  CHECK(dg.advice.at(0).find("torch.cuda.empty_cache()") != std::string::npos);
  CHECK(dg.advice.at(1).find("--torch-oom") != std::string::npos);
}
