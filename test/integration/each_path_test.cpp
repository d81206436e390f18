// Every way a program reaches the driver is seen, and each allocation is counted once.
// Expected figures are worked out from the programs (test/programs) and the simulated
// driver's documented address rules (docs/simulated-driver.md).
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>

#include "harness.h"

using namespace harness;

namespace {

int lines_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.rfind(prefix, 0) == 0;
  return n;
}

int total(const nlohmann::json& report, const char* count) {
  int n = 0;
  for (const auto& d : report.at("devices")) n += d.at("counts").at(count).get<int>();
  return n;
}

uint64_t peak(const nlohmann::json& report, int dev) { return device(report, dev).at("peak").at("device_bytes"); }

bool any_frame_in(const nlohmann::json& call_site, const std::string& function) {
  for (const auto& f : call_site.at("frames"))
    if (f.value("function", "").find(function) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("a program linked to the runtime: every allocation once, output and exit code unchanged") {
  TempDir dir;
  const Result plain = run({program("prog_runtime"), "basic"});
  const Result traced_run = traced(dir, {program("prog_runtime"), "basic"});
  REQUIRE(traced_run.exit_code == plain.exit_code);
  REQUIRE(traced_run.out == plain.out);
  const auto r = report(only_trace(dir));
  CHECK(r.at("trace").at("complete") == true);
  // 512 B ×3, 3 MiB, pitch, 3D and managed on device 0; two pinned blocks on the host.
  CHECK(device(r, 0).at("counts").at("allocs") == 7);
  CHECK(device(r, 0).at("counts").at("frees") == 5);
  CHECK(device(r, -1).at("counts").at("allocs") == 2);
  CHECK(device(r, -1).at("counts").at("frees") == 2);
  CHECK(total(r, "allocs") == lines_starting(plain.out, "alloc "));
  // Tagged with the runtime API the program called, though counted at the driver.
  const auto& apis = device(r, 0).at("counts_by_api");
  CHECK(apis.at("cudaMalloc").at("allocs") == 4);
  CHECK(apis.at("cudaMallocPitch").at("allocs") == 1);
  CHECK(apis.at("cudaMalloc3D").at("allocs") == 1);
  CHECK(apis.at("cudaMallocManaged").at("allocs") == 1);
  CHECK(apis.at("cudaFree").at("frees") == 5);
  CHECK(device(r, -1).at("counts_by_api").at("cudaFreeHost").at("frees") == 2);
  CHECK(total(r, "frees") == lines_starting(plain.out, "free "));
  // 3 × 512 + 3 MiB + 2 × 100 KiB (pitch 1024 × 100; 3D pitch 512 × 20 × 10)
  CHECK(peak(r, 0) == 3 * 512 + 3145728 + 102400 + 102400);
  CHECK(device(r, 0).at("end").at("device_bytes") == 1024);
  // One context, made by the first cudaMalloc; it costs what the driver says (512 MiB).
  CHECK(device(r, 0).at("counts").at("contexts") == 1);
  CHECK(device(r, 0).at("context_bytes") == 536870912);
  // The two leaked 512 B blocks, from one call site in the program.
  REQUIRE(r.at("leaks").size() == 1);
  CHECK(r.at("leaks")[0].at("kind") == "device");
  CHECK(r.at("leaks")[0].at("bytes") == 1024);
  CHECK(r.at("leaks")[0].at("count") == 2);
  const auto& site = r.at("leaks")[0].at("call_sites")[0];
  CHECK(site.at("library") == "prog_runtime");
  CHECK(any_frame_in(site, "scenario_basic"));
}

TEST_CASE("a static runtime that asks cuGetProcAddress for cuGetProcAddress is seen") {
  TempDir dir;
  const Result plain = run({program("prog_static_like")});
  const Result t = traced(dir, {program("prog_static_like")});
  REQUIRE(t.exit_code == 0);
  REQUIRE(t.out == plain.out);
  const auto r = report(only_trace(dir));
  // cuMemAlloc 1 MiB through the v1 lookup, cuMemAllocAsync_ptsz 2 MiB through the v2 one.
  CHECK(device(r, 0).at("counts").at("allocs") == 2);
  CHECK(device(r, 0).at("counts").at("frees") == 2);
  CHECK(device(r, 0).at("counts_by_api").at("cuMemAllocAsync_ptsz").at("allocs") == 1);
  CHECK(device(r, 0).at("counts_by_api").at("cuMemAlloc_v2").at("allocs") == 1);
  CHECK(peak(r, 0) == 1048576 + 2097152);
  CHECK(r.at("leaks").empty());
}

TEST_CASE("direct dlsym of driver entry points is seen, with RTLD_DEFAULT too") {
  TempDir dir;
  const Result t = traced(dir, {program("prog_dlsym")});
  REQUIRE(t.exit_code == 0);
  const auto r = report(only_trace(dir));
  CHECK(device(r, 0).at("counts").at("allocs") == 2);
  CHECK(device(r, 0).at("counts").at("frees") == 2);
  CHECK(peak(r, 0) == 4194304 + 512);
}

TEST_CASE("a program linked to the driver: VMM physical memory lasts until released and unmapped") {
  TempDir dir;
  const Result t = traced(dir, {program("prog_driver")}, {{"SIMCUDA_DEVICES", "2"}});
  REQUIRE(t.exit_code == 0);
  const auto r = report(only_trace(dir));
  // 512 B + 3 MiB + pitch 1024 × 10 live when the 4 MiB physical chunk is made; the
  // 1 MiB async block was freed before it.
  CHECK(peak(r, 0) == 512 + 3145728 + 10240 + 4194304);
  CHECK(device(r, 0).at("end").at("device_bytes") == 0);
  CHECK(device(r, 0).at("counts").at("maps") == 1);
  CHECK(device(r, 0).at("counts").at("unmaps") == 1);
  // cuMemRetainAllocationHandle took a second reference, so the second cuMemRelease is
  // not a release of something unknown.
  CHECK(device(r, 0).at("counts").at("unknown_frees") == 0);
  CHECK(device(r, 0).at("counts_by_api").at("cuMemRelease").at("frees") == 2);
  // cuCtxCreate_v4 on device 1, then 512 B there.
  CHECK(peak(r, 1) == 512);
  CHECK(device(r, 1).at("counts").at("contexts") == 1);
  CHECK(device(r, 1).at("context_bytes") == 536870912);
  CHECK(r.at("leaks").empty());
}

TEST_CASE("driver entry points from cudaGetDriverEntryPointByVersion (expandable segments) are seen") {
  TempDir dir;
  const Result t = traced(dir, {program("prog_runtime"), "entry-points"});
  REQUIRE(t.exit_code == 0);
  const auto r = report(only_trace(dir));
  // Three 20 MiB chunks mapped into an 8 GiB reservation, the middle one unmapped and released.
  CHECK(peak(r, 0) == 3 * 20971520);
  const auto live = live_at_end(only_trace(dir));
  const auto& d0 = device(live, 0);
  CHECK(d0.at("live_bytes").at("vmm-map") == 2 * 20971520);
  CHECK(d0.at("live_bytes").at("vmm-physical") == 2 * 20971520);
  CHECK(d0.at("device_bytes") == 2 * 20971520);
  CHECK(d0.at("fragmentation").at("arena_count") == 2);
  CHECK(d0.at("fragmentation").at("arena_bytes") == 2 * 20971520);
  CHECK(d0.at("fragmentation").at("gap_bytes") == 0);
  CHECK(device(live, -1).at("reserved_bytes") == 8589934592);
}

TEST_CASE("stream-ordered allocations from the default pool, an own pool and the _ptsz entry points") {
  TempDir dir;
  const Result plain = run({program("prog_runtime"), "async"});
  const Result t = traced(dir, {program("prog_runtime"), "async"});
  REQUIRE(t.exit_code == 0);
  REQUIRE(t.out == plain.out);
  const auto r = report(only_trace(dir));
  CHECK(device(r, 0).at("counts").at("allocs") == 4);
  CHECK(device(r, 0).at("counts").at("frees") == 4);
  CHECK(device(r, 0).at("counts").at("pool_trims") == 2);
  // 1 MiB + 3 MiB live together, later 5 MiB alone.
  CHECK(peak(r, 0) == 5242880);
}

TEST_CASE("threads allocating at once are all counted") {
  TempDir dir;
  const Result t = traced(dir, {program("prog_runtime"), "threads", "8"});
  REQUIRE(t.exit_code == 0);
  const auto r = report(only_trace(dir));
  // Each of 8 threads: 100 malloc/free pairs, then one 4 KiB block left live.
  CHECK(device(r, 0).at("counts").at("allocs") == 8 * 101);
  CHECK(device(r, 0).at("counts").at("frees") == 8 * 100);
  CHECK(device(r, 0).at("end").at("device_bytes") == 8 * 4096);
  CHECK(device(r, 0).at("counts").at("unknown_frees") == 0);
  // Each event is stamped under the tracker's lock, so the file is in time order with 8
  // threads at once (stamped before the lock, six runs of six had an event out of order):
  // an index can be made, and the peak's moment holds the peak's bytes.
  const std::string trace = only_trace(dir);
  const Result index = run({cli(), "index", trace});
  INFO(index.err);
  CHECK(index.exit_code == 0);
  const Result live = run({cli(), "live", trace, "--at", "peak", "--json"});
  REQUIRE(live.exit_code == 0);
  const auto at_peak = nlohmann::json::parse(live.out).at(0).at("devices");
  REQUIRE(at_peak.size() == 1);
  CHECK(at_peak[0].at("device_bytes") == peak(r, 0));
}

TEST_CASE("the first allocation on device 1 shows who created its context") {
  TempDir dir;
  const Result t = traced(dir, {program("prog_runtime"), "context"}, {{"SIMCUDA_DEVICES", "2"}});
  REQUIRE(t.exit_code == 0);
  const auto r = report(only_trace(dir));
  CHECK(device(r, 1).at("counts").at("contexts") == 1);
  CHECK(device(r, 1).at("context_bytes") == 536870912);
  CHECK(device(r, 1).at("counts").at("allocs") == 1);
  CHECK_FALSE(std::any_of(r.at("devices").begin(), r.at("devices").end(),
                          [](const auto& d) { return d.at("device") == 0 && d.at("counts").at("contexts") != 0; }));
  // Who created it: cudaSetDevice(1) in scenario_context, through the primary context.
  REQUIRE(r.at("contexts").size() == 1);
  const auto& c = r.at("contexts")[0];
  CHECK(c.at("device") == 1);
  CHECK(c.at("bytes") == 536870912);
  CHECK(c.at("library") == "prog_runtime");
  CHECK(any_frame_in(c, "scenario_context"));
}
