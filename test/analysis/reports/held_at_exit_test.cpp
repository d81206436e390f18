// Held at exit is not leaked (issue 25, item 4): device memory a caching allocator holds at
// a clean end is "held by <allocator>'s cache at exit", apart from possible leaks; the
// report, check --max-leaked, baseline/diff and the job's figures use that split.
#include "catch.h"

#include <unistd.h>

#include <cstdio>
#include <sstream>

#include "gate/check.h"
#include "read/event_source.h"
#include "reports/job/job.h"
#include "render/job_view.h"
#include "reports/report.h"
#include "report_both.h"
#include "render/report_json.h"
#include "render/report_text.h"
#include "shell.h"
#include "trace_builder.h"
#include "sizes.h"

using namespace cumemtrace;
using cumemtrace::test::report_both;
using cumemtrace::test::TraceBuilder;
namespace fmt = cumemtrace::format;

namespace {

// A program (trainer) that keeps `cached` bytes in PyTorch's cache (allocated through
// libc10_cuda.so) and leaks `leaked` bytes of its own cudaMalloc, then ends cleanly.
TraceBuilder job(uint64_t cached, uint64_t leaked) {
  TraceBuilder b;
  b.process().device(0, 16 * GiB);
  b.module(0, 0x400000, 0x500000, "/opt/app/trainer");
  b.module(0, 0x700000, 0x800000, "/usr/lib/python3/dist-packages/torch/lib/libc10_cuda.so");
  b.stack(1, 0, 0x401000).stack(2, 1, 0x701000);  // trainer -> libc10_cuda -> cudaMalloc
  b.stack(3, 0, 0x402000);                        // trainer -> cudaMalloc
  if (cached) b.alloc(1'000'000, 0x7f0000000000, cached, 2);
  if (leaked) b.alloc(2'000'000, 0x7f8000000000, leaked, 3);
  return b.end(9'000'000);
}

std::string held_path(const std::string& name) {
  return "/tmp/cumemtrace-held-" + std::to_string(getpid()) + "-" + name;
}

std::string leaked_check(const TraceBuilder& b, const char* limit, bool* ok) {
  const Trace t = parse_trace(b.vec(), "t.trace");
  const Report rep = build_report(t, ReportOptions{});
  std::string error;
  const auto l = parse_limit(Limit::What::kLeaked, limit, &error);
  REQUIRE(l);
  const TraceCheck c = check_trace(t, MemoryEvents(t.events), rep, {*l});
  REQUIRE(c.results.size() == 1);
  *ok = c.results[0].ok;
  return c.results[0].message;
}

}  // namespace

TEST_CASE("a caching allocator's segments at exit are held by its cache, the program's own are a possible leak") {
  const Report r = report_both(job(GiB, 2 * MiB), "t.trace");
  const DeviceReport& d = r.devices.at(0);
  CHECK(d.end_device_bytes == GiB + 2 * MiB);
  CHECK(d.end_held_by_cache_bytes == GiB);
  CHECK(d.end_possible_leak_bytes == 2 * MiB);
  REQUIRE(r.held_by_cache.size() == 1);
  CHECK(r.held_by_cache[0].allocator == "PyTorch");
  CHECK(r.held_by_cache[0].bytes == GiB);
  CHECK(r.held_by_cache[0].count == 1);
  REQUIRE(r.leaks.size() == 1);  // before: 1 GiB + 2 MiB in two allocations, all "leaks"
  CHECK(r.leaks[0].bytes == 2 * MiB);
  CHECK(r.leaks[0].count == 1);
  CHECK(r.leaks[0].sites.at(0).library == "trainer");

  const auto j = to_json(r);
  CHECK(j.at("held_by_cache_at_exit").at(0).at("allocator") == "PyTorch");
  CHECK(j.at("held_by_cache_at_exit").at(0).at("bytes") == GiB);
  CHECK(j.at("devices").at(0).at("end").at("held_by_cache_at_exit_bytes") == GiB);
  CHECK(j.at("devices").at(0).at("end").at("possible_leak_bytes") == 2 * MiB);
  std::ostringstream text;
  write_text(text, r);
  CHECK(text.str().find("held by PyTorch's cache at exit: 1.00 GiB (1,073,741,824 B) in 1 allocation") !=
        std::string::npos);
  CHECK(text.str().find("Possible leaks (live at end of trace, unless the process was killed; caches and libraries' "
                        "handles apart") != std::string::npos);
}

TEST_CASE("check --max-leaked reads possible leaks: the cache's gigabyte passes, the program's 2 MiB is measured") {
  bool ok = false;
  // Only the cache at exit: nothing leaked (before: 1 GiB "leaked", over the limit).
  CHECK(leaked_check(job(GiB, 0), "0", &ok) ==
        "leaked on device 0: 0 B, limit 0 B (not counting 1.00 GiB (1,073,741,824 B) held at exit by caches and "
        "libraries' handles)");
  CHECK(ok);
  leaked_check(job(GiB, 2 * MiB), "2MiB", &ok);
  CHECK(ok);
  const std::string m = leaked_check(job(GiB, 2 * MiB), "2097151", &ok);
  CHECK_FALSE(ok);
  CHECK(m.starts_with("leaked on device 0: 2.00 MiB (2,097,152 B), limit"));
}

TEST_CASE("diff: a larger cache at exit is no larger leak") {
  const std::string before = held_path("before.trace"), after = held_path("after.trace");
  job(3 * GiB, 2 * MiB).write(before);
  job(10 * GiB, 2 * MiB).write(after);
  const auto d = test::shell(std::string(CUMEMTRACE_CLI) + " diff " + before + " " + after + " 2>&1");
  CHECK(d.status == 0);
  CHECK(d.out.find("possible leaks 2.00 MiB (2,097,152 B) -> 2.00 MiB (2,097,152 B) (+0 B); held by caching "
                   "allocators at exit (not leaks) 3.00 GiB (3,221,225,472 B) -> 10.00 GiB (10,737,418,240 B)") !=
        std::string::npos);
  CHECK(d.out.find("leaked 3.00 GiB") == std::string::npos);
  std::remove(before.c_str());
  std::remove(after.c_str());
}

TEST_CASE("a cache's bytes at a call site growth classifies `leak` stay possible leaks") {
  constexpr uint64_t ms = 1'000'000;
  TraceBuilder b;
  b.process().device(0, 16 * GiB);
  b.module(0, 0x400000, 0x500000, "/opt/app/trainer");
  b.module(0, 0x700000, 0x800000, "/usr/lib/python3/dist-packages/torch/lib/libc10_cuda.so");
  b.stack(1, 0, 0x401000).stack(2, 1, 0x701000);  // the weights, through PyTorch's cache
  b.stack(3, 0, 0x402000).stack(4, 3, 0x702000);  // a step's kept tensor, through PyTorch's cache
  b.alloc(1 * ms, 0x7f0000000000, GiB, 2);
  uint64_t a = 0x7f8000000000;
  for (uint64_t i = 0; i < 8; ++i) {
    b.mark((10 + 10 * i) * ms, "step");
    b.alloc((15 + 10 * i) * ms, a += 64 * MiB, 2 * MiB, 4);
  }
  b.end(90 * ms);  // the last iteration keeps its 2 MiB too
  const Report r = report_both(b, "t.trace");
  bool classified = false;
  for (const auto& s : r.growth.sites)
    if (s.cls == GrowthSite::Class::kLeak)
      classified = s.library == "libc10_cuda.so" && s.growth_per_iteration == 2 * MiB;
  REQUIRE(classified);
  const DeviceReport& d = r.devices.at(0);
  CHECK(d.end_held_by_cache_bytes == GiB);
  CHECK(d.end_possible_leak_bytes == 16 * MiB);
  REQUIRE(r.leaks.size() == 1);
  CHECK(r.leaks[0].bytes == 16 * MiB);
  CHECK(r.leaks[0].count == 8);
}

TEST_CASE("the job view's leaked column counts possible leaks, the cache's bytes apart") {
  const Report r = report_both(job(GiB, 2 * MiB), "t.trace");
  const Job j = build_job({r}, std::vector<std::vector<DeviceInfo>>(1), 10.0);
  REQUIRE(j.processes.size() == 1);
  CHECK(j.processes[0].leaked_bytes == 2 * MiB);  // before: 1 GiB + 2 MiB
  CHECK(j.processes[0].held_by_cache_bytes == GiB);
  const auto json = job_to_json(j);
  CHECK(json.dump().find("\"leaked_bytes\":2097152,\"held_by_cache_at_exit_bytes\":1073741824") != std::string::npos);
}

TEST_CASE("a library's handles at exit (cuBLAS, cuBLASLt workspaces) are held by design, not possible leaks") {
  TraceBuilder b;
  b.process().device(0, 16 * GiB);
  b.module(0, 0x400000, 0x500000, "/opt/app/trainer");
  b.module(0, 0x600000, 0x680000, "/usr/local/cuda/lib64/libcublas.so.13");
  b.module(0, 0x680000, 0x700000, "/usr/local/cuda/lib64/libcublasLt.so.13");
  b.stack(1, 0, 0x401000).stack(2, 1, 0x601000);  // trainer -> libcublas -> cudaMalloc
  b.stack(3, 0, 0x403000).stack(4, 3, 0x681000);  // trainer -> libcublasLt -> cudaMalloc
  b.stack(5, 0, 0x402000);                        // trainer -> cudaMalloc: its own
  b.alloc(1'000'000, 0x7f0000000000, 64 * MiB, 2).alloc(1'500'000, 0x7f0010000000, 64 * MiB, 2);
  b.alloc(1'600'000, 0x7f0020000000, 4 * MiB, 4);
  b.alloc(2'000'000, 0x7f8000000000, 3 * MiB, 5);
  b.end(9'000'000);
  const Report r = report_both(b, "t.trace");
  const DeviceReport& d = r.devices.at(0);
  CHECK(d.end_held_by_cache_bytes == 132 * MiB);
  CHECK(d.end_possible_leak_bytes == 3 * MiB);
  REQUIRE(r.held_by_cache.size() == 2);
  CHECK(r.held_by_cache[0].allocator == "cuBLAS");
  CHECK(r.held_by_cache[0].bytes == 128 * MiB);
  CHECK(r.held_by_cache[0].count == 2);
  CHECK(r.held_by_cache[0].library_handles);
  CHECK(r.held_by_cache[1].allocator == "cuBLASLt");
  CHECK(r.held_by_cache[1].bytes == 4 * MiB);
  REQUIRE(r.leaks.size() == 1);
  CHECK(r.leaks[0].bytes == 3 * MiB);
  std::ostringstream text;
  write_text(text, r);
  CHECK(text.str().find("held by cuBLAS's handles at exit: 128.00 MiB (134,217,728 B) in 2 allocations") !=
        std::string::npos);
  const auto j = report_json(r);
  CHECK(j["held_by_cache_at_exit"][0]["holder"] == "library-handles");
  bool ok = false;
  CHECK(leaked_check(b, "3MiB", &ok) ==
        "leaked on device 0: 3.00 MiB (3,145,728 B), limit 3.00 MiB (3,145,728 B) (not counting 132.00 MiB "
        "(138,412,032 B) held at exit by caches and libraries' handles)");
  CHECK(ok);
}
