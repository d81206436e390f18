#include <sstream>

#include "catch.h"
#include "reports/report.h"
#include "report_both.h"
#include "render/report_json.h"
#include "render/report_text.h"
#include "stacks/stacks.h"
#include "parse_built.h"
#include "sizes.h"

using namespace cumemtrace;
using cumemtrace::test::parse;
using cumemtrace::test::report_both;
using cumemtrace::test::TraceBuilder;
namespace fmt = cumemtrace::format;
using fmt::Kind;
using fmt::Op;

namespace {

// Module layout and stacks shared by the tests below (stacks are root-outermost):
//   stack 4: main (prog) -> c10 alloc (libc10_cuda.so) -> cudart -> our hook
//   stack 7: main (prog) -> cublasLt -> cudart -> our hook
TraceBuilder with_stacks() {
  TraceBuilder b;
  b.process()
      .device(0, 80 * GiB)
      .api(1, "cudaMalloc")
      .api(2, "cudaFree")
      .api(3, "cudaMallocHost")
      .module(0, 0x1000, 0x2000, "/build/lib/libcumemtrace.so")
      .module(0, 0x2000, 0x3000, "/usr/local/cuda/lib64/libcudart.so.13")
      .module(0, 0x3000, 0x4000, "/site-packages/torch/lib/libc10_cuda.so")
      .module(0, 0x4000, 0x5000, "/work/prog")
      .module(0, 0x5000, 0x6000, "/usr/local/cuda/lib64/libcublasLt.so.13")
      .stack(1, 0, 0x4100)
      .stack(2, 1, 0x3100)
      .stack(3, 2, 0x2100)
      .stack(4, 3, 0x1100)
      .stack(5, 1, 0x5100)
      .stack(6, 5, 0x2200)
      .stack(7, 6, 0x1200)
      .symbol(0x3100, "c10::cuda::alloc(unsigned long)", "CUDACachingAllocator.cpp", 10)
      .symbol(0x4100, "main", "prog.cpp", 5);
  return b;
}

TraceBuilder scenario() {
  TraceBuilder b = with_stacks();
  auto ctx = TraceBuilder::ev(50, Op::kContextCreate, Kind::kContext, 0, 500 * MiB);
  b.event(ctx)
      .alloc(100, 0x100000000, GiB, 4)
      .alloc(200, 0x200000000, 512 * MiB, 7)
      .alloc(300, 0x300000000, 256 * MiB, 4)  // peak: 1.75 GiB
      .snapshot(310, fmt::SnapshotReason::kPeriodic, {{0, 1792 * MiB, 1792 * MiB, 3 * GiB, 70 * GiB, 80 * GiB}})
      .free(400, 0x200000000)
      .failed(450, 80 * GiB, 2, 4)
      .snapshot(460, fmt::SnapshotReason::kFailedAllocation, {{0, 1280 * MiB, 1280 * MiB, 2 * GiB, GiB, 80 * GiB}})
      .alloc(500, 0x7000, 4096, 4, -1, Kind::kHostPinned, 3)
      .end(600);
  return b;
}

}  // namespace

TEST_CASE("the call site skips our hook and the CUDA runtime, the library is its module") {
  const Trace t = parse(with_stacks());
  Stacks s(t);
  CHECK(s.call_site(4).node == 2);
  CHECK(s.call_site(4).library == "libc10_cuda.so");
  CHECK(s.call_site(7).node == 5);
  CHECK(s.call_site(7).library == "libcublasLt.so.13");
  CHECK(s.call_site(0).library == "?");
  CHECK(s.ips(4) == std::vector<uint64_t>{0x1100, 0x2100, 0x3100, 0x4100});
  const auto frames = s.frames(2, 6);
  REQUIRE(frames.size() == 2);
  CHECK(frames[0].function == "c10::cuda::alloc(unsigned long)");
  CHECK(frames[1].module == "prog");
}

TEST_CASE("a module reported again supersedes the older record") {
  TraceBuilder b;
  b.process().module(0, 0x1000, 0x2000, "/old/liba.so").module(0, 0x1800, 0x2800, "/new/libb.so");
  const Trace t = parse(b);
  Stacks s(t);
  CHECK(s.module_basename(0x1100) == "liba.so");
  CHECK(s.module_basename(0x1900) == "libb.so");
  CHECK(s.module_basename(0x3000).empty());
}

TEST_CASE("the report has the peak, its call sites, the leaks and the failed allocation") {
  const Trace t = parse(scenario());
  ReportOptions opt;
  const Report rep = build_report(t, opt);
  CHECK(rep.complete);
  CHECK(rep.duration_ns == 600);
  REQUIRE(rep.devices.size() == 2);  // host (-1) then device 0
  const DeviceReport& d = rep.devices[1];
  CHECK(d.device == 0);
  CHECK(d.peak_bytes == 1792 * MiB);
  CHECK(d.peak_time_ns == TraceBuilder::kStart + 300);
  CHECK(d.frag_at_peak.arena_bytes == 1792 * MiB);
  CHECK(d.frag_at_peak.arena_count == 3);
  CHECK(d.end_device_bytes == 1280 * MiB);
  CHECK(d.counts.failed == 1);
  REQUIRE(d.top_sites.size() == 2);
  CHECK(d.top_sites[0].library == "libc10_cuda.so");
  CHECK(d.top_sites[0].bytes == 1280 * MiB);
  CHECK(d.top_sites[0].count == 2);
  CHECK(d.top_sites[1].library == "libcublasLt.so.13");
  CHECK(d.top_sites[1].bytes == 512 * MiB);
  REQUIRE(d.by_library.size() == 2);
  CHECK(d.by_library[0].library == "libc10_cuda.so");

  // NVML at the peak: the snapshot at 310 is nearest to 300.
  REQUIRE(d.nvml.known);
  CHECK(d.nvml.snapshot_time_ns == TraceBuilder::kStart + 310);
  CHECK(d.nvml.footprint == 1792 * MiB);
  CHECK(d.nvml.context == 500 * MiB);
  CHECK(d.nvml.untracked == 3 * GiB - 1792 * MiB - 500 * MiB);

  // Live at the end: PyTorch's cache (libc10_cuda.so) keeps its 1280 MiB until exit by
  // design, so it is held by the cache, not leaked (issue 25: it was the first "leak");
  // the host-pinned buffer is the possible leak.
  REQUIRE(rep.held_by_cache.size() == 1);
  CHECK(rep.held_by_cache[0].allocator == "PyTorch");
  CHECK(rep.held_by_cache[0].bytes == 1280 * MiB);
  REQUIRE(rep.held_by_cache[0].sites.size() == 1);
  CHECK(rep.held_by_cache[0].sites[0].count == 2);
  CHECK(rep.held_by_cache[0].sites[0].library == "libc10_cuda.so");
  CHECK(d.end_held_by_cache_bytes == 1280 * MiB);
  CHECK(d.end_possible_leak_bytes == 0);
  REQUIRE(rep.leaks.size() == 1);
  CHECK(rep.leaks[0].kind == Kind::kHostPinned);
  CHECK(rep.leaks[0].bytes == 4096);

  // The failed allocation, with free/total from the snapshot taken right after it.
  REQUIRE(rep.failed.size() == 1);
  const FailedRow& f = rep.failed[0];
  CHECK(f.size == 80 * GiB);
  CHECK(f.api == "cudaMalloc");
  CHECK(f.result == 2);
  CHECK(f.live_device_bytes == 1280 * MiB);
  CHECK(f.snapshot_reason == fmt::SnapshotReason::kFailedAllocation);
  CHECK(f.device_free == GiB);
  CHECK(f.device_total == 80 * GiB);
  CHECK(f.library == "libc10_cuda.so");
  // Its frames from the user's frame as the call-site rule chooses it, past c10's (as the
  // top call sites'): main, the outermost.
  REQUIRE(f.frames.size() == 1);
  CHECK(f.frames[0].function == "main");
}

TEST_CASE("the JSON report carries exact bytes and nanoseconds") {
  const Trace t = parse(scenario());
  const auto j = to_json(build_report(t, ReportOptions{}));
  CHECK(j["trace"]["complete"] == true);
  CHECK(j["trace"]["error"].is_null());
  CHECK(j["process"]["command_line"] == nlohmann::ordered_json::array({"prog", "--flag"}));
  const auto& d = j["devices"][1];
  CHECK(d["device"] == 0);
  CHECK(d["total_bytes"] == 85899345920ull);
  CHECK(d["peak"]["device_bytes"] == 1879048192ull);
  CHECK(d["peak"]["time_ns"] == TraceBuilder::kStart + 300);
  CHECK(d["peak"]["since_start_ns"] == 300);
  CHECK(d["peak"]["arena_bytes"] == 1879048192ull);
  CHECK(d["fragmentation_at_peak"]["gap_bytes"] == 0);
  CHECK(d["nvml_at_peak"]["untracked"] == 817889280ull);
  CHECK(d["nvml_at_peak"]["snapshot_reason"] == "periodic");
  CHECK(d["top_call_sites"][0]["bytes"] == 1342177280ull);
  // Issue 25 §5: the call site is the program's own frame, past c10's (framework) frames.
  CHECK(d["top_call_sites"][0]["frames"][0]["function"] == "main");
  CHECK(d["top_call_sites"][0]["frames"][0]["ip"] == "0x4100");
  CHECK(d["end"]["live_bytes"]["device"] == 1342177280ull);
  CHECK(j["leaks"][0]["kind"] == "host-pinned");  // PyTorch's cache at exit is no leak (issue 25)
  CHECK(j["held_by_cache_at_exit"][0]["bytes"] == 1342177280ull);
  const auto& f = j["failed_allocations"][0];
  CHECK(f["size"] == 85899345920ull);
  CHECK(f["device_free"] == 1073741824ull);
  CHECK(f["device_total"] == 85899345920ull);
  CHECK(f["requested_live_device_bytes"] == 1342177280ull);
  CHECK(f["snapshot"]["reason"] == "failed-allocation");
  CHECK(f["result_type"] == "CUresult");
}

TEST_CASE("the text report uses IEC units with exact bytes and says how the trace ended") {
  Trace t = parse(scenario());
  std::ostringstream out;
  write_text(out, build_report(t, ReportOptions{}));
  const std::string s = out.str();
  CHECK(s.find("peak requested device bytes: 1.75 GiB (1,879,048,192 B) at 0.000 s") != std::string::npos);
  CHECK(s.find("the trace ended cleanly") != std::string::npos);
  CHECK(s.find("libc10_cuda.so") != std::string::npos);
  CHECK(s.find("via cudaMalloc") != std::string::npos);

  // Cut before the end record: the report says so.
  const std::string full = scenario().bytes();
  const std::string cut = full.substr(0, full.size() - 5);
  Trace c = parse_trace({reinterpret_cast<const uint8_t*>(cut.data()), cut.size()});
  std::ostringstream out2;
  write_text(out2, build_report(c, ReportOptions{}));
  CHECK(out2.str().find("not sealed by a checksum") != std::string::npos);
}

TEST_CASE("live at a moment: bytes by kind, fragmentation and libraries") {
  const Trace t = parse(scenario());
  const LiveReport lr = build_live(t, TraceBuilder::kStart + 300);
  REQUIRE(lr.devices.size() == 1);
  const LiveDevice& d = lr.devices[0];
  CHECK(d.device_bytes == 1792 * MiB);
  CHECK(d.count == 3);
  CHECK(d.live_bytes[int(Kind::kDevice)] == 1792 * MiB);
  CHECK(d.frag.arena_count == 3);
  REQUIRE(d.by_library.size() == 2);
  CHECK(d.by_library[0].library == "libc10_cuda.so");
  CHECK(d.by_library[0].bytes == 1280 * MiB);
  const auto j = to_json(lr);
  CHECK(j["devices"][0]["live_bytes"]["device"] == 1879048192ull);
  CHECK(j["at_ns"] == TraceBuilder::kStart + 300);
}

TEST_CASE("what an async pool keeps for reuse is named in the NVML split, not left untracked") {
  // Context 500 MiB; 256 MiB of async allocations live inside a pool holding 1 GiB; NVML
  // says 1588 MiB: 256 tracked + 500 context + 768 pool reserve + 64 nobody explains.
  TraceBuilder b = with_stacks();
  b.event(TraceBuilder::ev(50, Op::kContextCreate, Kind::kContext, 0, 500 * MiB))
      .event(TraceBuilder::ev(100, Op::kAlloc, Kind::kAsyncPool, 0x100000000, 256 * MiB, 0, 4))
      .snapshot(110, fmt::SnapshotReason::kPeriodic,
                {{.device = 0,
                  .device_bytes = 256 * MiB,
                  .arena_bytes = 256 * MiB,
                  .nvml_used = 1588 * MiB,
                  .nvml_free = 70 * GiB,
                  .nvml_total = 80 * GiB,
                  .pool_reserved = GiB,
                  .async_live = 256 * MiB}})
      .end(200);
  const Report rep = report_both(b);
  const DeviceReport& d = rep.devices.back();
  REQUIRE(d.nvml.known);
  CHECK(d.nvml.footprint == 256 * MiB);
  CHECK(d.nvml.context == 500 * MiB);
  CHECK(d.nvml.pool_slack == 768 * MiB);
  CHECK(d.nvml.untracked == 64 * MiB);
}

namespace {

// A graph whose one 1 GiB allocation node is freed inside it, launched at 1 ms (the pool
// read right after: 1 GiB), a 256 MiB peak of ordinary memory at 6 ms, a snapshot just
// after it (NVML 1844 MiB = 256 tracked + 500 context + 1024 graph pool + 64 nobody
// explains), a trim at 8 ms (pool read 0).
TraceBuilder graph_scenario() {
  TraceBuilder b = with_stacks();
  auto node = TraceBuilder::ev(60, Op::kAlloc, Kind::kAsyncPool, 0x6f0000000000, GiB, 0, 4);
  node.flags = fmt::kEventCaptured;
  auto node_free = TraceBuilder::ev(61, Op::kFree, Kind::kUnknown, 0x6f0000000000, 0, -1);
  node_free.flags = fmt::kEventCaptured;
  auto launch = TraceBuilder::ev(1'000'000, Op::kGraphLaunch, Kind::kUnknown, 0, GiB);
  auto trim = TraceBuilder::ev(8'000'000, Op::kGraphMemTrim, Kind::kUnknown, 0, 0);
  b.event(TraceBuilder::ev(50, Op::kContextCreate, Kind::kContext, 0, 500 * MiB))
      .event(node)
      .event(node_free)
      .event(launch)
      .alloc(6'000'000, 0x100000000, 256 * MiB, 7)
      .snapshot(6'000'100, fmt::SnapshotReason::kSampledPeak,
                {{.device = 0,
                  .device_bytes = 256 * MiB,
                  .arena_bytes = 256 * MiB,
                  .nvml_used = 1844 * MiB,
                  .nvml_free = 70 * GiB,
                  .nvml_total = 80 * GiB,
                  .moment = fmt::kMomentSame,
                  .graph_reserved = GiB}})
      .event(trim)
      .end(9'000'000);
  return b;
}

}  // namespace

TEST_CASE("the graph memory pool: readings with their moments, its own part of NVML, nodes not live") {
  const Report rep = report_both(graph_scenario());
  const DeviceReport& d = rep.devices.back();
  REQUIRE(d.device == 0);
  CHECK(d.peak_bytes == 256 * MiB);  // the node is no live byte
  CHECK(d.graph_nodes == 1);
  CHECK(d.graph_node_bytes == GiB);
  REQUIRE(d.graph_node_sites.size() == 1);
  CHECK(d.graph_node_sites[0].bytes == GiB);
  const GraphPoolFigures& g = d.graph_pool;
  CHECK(g.launches == 1);
  CHECK(g.trims == 1);
  // At the peak: the launch's reading 5 ms before it (the snapshot's came 100 ns after).
  CHECK(g.at_peak.reserved == GiB);
  CHECK(g.at_peak.time_ns == TraceBuilder::kStart + 1'000'000);
  CHECK(g.at_end.reserved == 0);
  CHECK(g.at_end.time_ns == TraceBuilder::kStart + 8'000'000);
  CHECK(g.highest.reserved == GiB);
  CHECK(d.nvml.graph_pool == GiB);
  CHECK(d.nvml.untracked == 64 * MiB);

  std::ostringstream out;
  write_text(out, rep);
  const std::string s = out.str();
  CHECK(
      s.find("graph memory pool (held in no allocation; read from the driver): reserved 1.00 GiB (1,073,741,824 B) "
             "at the peak (read at 0.001 s, 5.000 ms before the peak), 0 B at the end (read at 0.008 s), highest read "
             "1.00 GiB (1,073,741,824 B) (at 0.001 s); 1 graph launch, 1 trim") != std::string::npos);
  CHECK(s.find("+ graph memory pool 1.00 GiB + untracked 64.00 MiB") != std::string::npos);
  CHECK(s.find("graph allocation nodes (virtual addresses of graphs, not live device bytes): 1 node of 1.00 GiB") !=
        std::string::npos);

  const auto j = to_json(rep);
  const auto& jd = j["devices"].back();
  CHECK(jd["graph_pool"]["at_peak"]["reserved_bytes"] == GiB);
  CHECK(jd["graph_pool"]["at_peak"]["since_start_ns"] == 1'000'000);
  CHECK(jd["graph_pool"]["at_end"]["reserved_bytes"] == 0);
  CHECK(jd["graph_pool"]["driver_reserved_high"].is_null());
  CHECK(jd["graph_nodes"]["count"] == 1);
  CHECK(jd["nvml_at_peak"]["graph_pool"] == GiB);
}

TEST_CASE("no graph pool figure is reported when none was read") {
  // A 1.8 trace: snapshots without the 1.9 fields, no graph events.
  const Report rep = report_both(scenario());
  const DeviceReport& d = rep.devices.back();
  CHECK_FALSE(d.graph_pool.at_end.known);
  CHECK_FALSE(d.graph_pool.shown());
  CHECK(d.nvml.graph_pool == 0);
  std::ostringstream out;
  write_text(out, rep);
  CHECK(out.str().find("graph memory pool") == std::string::npos);
}
