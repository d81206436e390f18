// Every table names a site by the one call-site rule (docs/cli.md, "Call sites in the
// user's terms"): the failed allocations and the regions inside pools as the top call
// sites do, a helper's sites told apart by the caller.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "catch.h"
#include "base/text.h"
#include "gate/check.h"
#include "read/event_source.h"
#include "reports/report.h"
#include "report_both.h"
#include "shell.h"
#include "render/report_json.h"
#include "render/report_text.h"
#include "trace_builder.h"
#include "sizes.h"

using namespace cumemtrace;
using cumemtrace::test::report_both;
using cumemtrace::test::text_of;
using cumemtrace::test::TraceBuilder;
namespace fmt = cumemtrace::format;

namespace site_names {

constexpr int32_t kOom = 2;  // CUDA_ERROR_OUT_OF_MEMORY
constexpr uint64_t kSlab = 0x7f0000000000;

// A program on a 1 GiB device whose helper alloc() (train.cpp:11) makes every cudaMalloc,
// called from load_weights (train.cpp:20) and grow (train.cpp:30), both called from main;
// a pool's helper region() (pool.cpp:8) called from two lines of step() (pool.cpp:50, 51).
//   1 ms  alloc <- load_weights: 64 MiB, the slab (succeeds)
//   2 ms  alloc <- grow: 2 GiB fails;  3 ms  the same again
//   4 ms  alloc <- load_weights: 2 GiB fails
//   5 ms  heap "slab" registered over the 64 MiB; region <- step:50 registers 8 MiB,
//   6 ms  region <- step:51 2 MiB
// Nothing succeeds after a failure, so all three failures are fatal. By the rule, the
// failures are two sites (alloc <- grow twice, alloc <- load_weights once), where the
// frame alone (alloc's instruction) made them one row of three.
TraceBuilder helper_program() {
  TraceBuilder b;
  b.process().device(0, 1 * GiB);
  b.stack(1, 0, 0x403000).stack(2, 1, 0x404000).stack(3, 2, 0x401000);  // main <- load_weights <- alloc
  b.stack(4, 1, 0x405000).stack(5, 4, 0x401000);                        // main <- grow <- alloc
  b.stack(6, 1, 0x407000).stack(7, 6, 0x406000);                        // main <- step:50 <- region
  b.stack(8, 1, 0x407100).stack(9, 8, 0x406000);                        // main <- step:51 <- region
  b.symbol(0x401000, "alloc", "/src/train.cpp", 11).symbol(0x404000, "load_weights", "/src/train.cpp", 20);
  b.symbol(0x405000, "grow", "/src/train.cpp", 30).symbol(0x403000, "main", "/src/train.cpp", 40);
  b.symbol(0x406000, "region", "/src/pool.cpp", 8).symbol(0x407000, "step", "/src/pool.cpp", 50);
  b.symbol(0x407100, "step", "/src/pool.cpp", 51);
  b.alloc(1 * ms, kSlab, 64 * MiB, 3);
  b.failed(2 * ms, 2 * GiB, kOom, 5);
  b.failed(3 * ms, 2 * GiB, kOom, 5);
  b.failed(4 * ms, 2 * GiB, kOom, 3);
  b.nvtx_mem(5 * ms, fmt::NvtxMemOp::kHeapRegister, 0x10, kSlab, 64 * MiB, 0, "slab", 1);
  b.nvtx_mem(5 * ms, fmt::NvtxMemOp::kRegionRegister, 0x10, kSlab, 8 * MiB, 7);
  b.nvtx_mem(6 * ms, fmt::NvtxMemOp::kRegionRegister, 0x10, kSlab + 8 * MiB, 2 * MiB, 9);
  b.end(10 * ms, 4);
  return b;
}

}  // namespace site_names

TEST_CASE("failed allocations are grouped and named by the call-site rule: a helper's callers are two sites") {
  const TraceBuilder b = site_names::helper_program();
  const Report r = report_both(b, "t.trace");
  CHECK(r.failed_total == 3);
  REQUIRE(r.failed.size() == 2);
  // In the order of their first failure: grow's at 2 ms (twice), load_weights' at 4 ms.
  CHECK(r.failed[0].count == 2);
  CHECK(r.failed[0].size == 2 * GiB);
  CHECK(user_frame_text(r.failed[0].frames, r.failed[0].python_frames, r.failed[0].caller.text) == "alloc ← grow");
  CHECK(r.failed[1].count == 1);
  CHECK(user_frame_text(r.failed[1].frames, r.failed[1].python_frames, r.failed[1].caller.text) ==
        "alloc ← load_weights");
  const auto j = to_json(r);
  CHECK(j.at("failed_allocations").at(0).at("site") == "alloc ← grow");
  CHECK(j.at("failed_allocations").at(1).at("site") == "alloc ← load_weights");
  // The top call site at the peak (the slab) is named by the same rule.
  CHECK(j.at("devices").at(0).at("top_call_sites").at(0).at("site") == "alloc ← load_weights");
  // The summary leads with the last fatal failure, load_weights' at 4 ms.
  const std::string text = text_of(r);
  CHECK(has(text,
            "  failed allocations: 3; the last 2.00 GiB (2,147,483,648 B) on device 0 at 0.004 s from alloc at "
            "train.cpp:11 ← load_weights: "));
}

TEST_CASE("check --max-failed names the first counted failure's site by the call-site rule") {
  const TraceBuilder b = site_names::helper_program();
  const Trace t = parse_trace(b.vec(), "t.trace");
  const Report rep = build_report(t, ReportOptions{});
  std::string error;
  const auto l = parse_limit(Limit::What::kFailed, "0", &error);
  REQUIRE(l);
  const TraceCheck c = check_trace(t, MemoryEvents(t.events), rep, {*l});
  REQUIRE(c.results.size() == 1);
  INFO(c.results[0].message);
  CHECK(!c.results[0].ok);
  // Counted as rows, retries folded (docs/cli.md, "check"): the two sites' rows. The frames
  // have no module (library "?"); 2 GiB cannot fit the 1 GiB device.
  CHECK(c.results[0].message ==
        "failed allocations on device 0: 2, limit 0; first: 2.00 GiB (2,147,483,648 B) from ? (alloc ← grow), "
        "exceeds-device");
}

TEST_CASE("a pool's regions are named by the call-site rule: one helper from two lines of one function") {
  const TraceBuilder b = site_names::helper_program();
  const Report r = report_both(b, "t.trace");
  REQUIRE(r.pools.heaps.size() == 1);
  const PoolHeap& h = r.pools.heaps[0];
  REQUIRE(h.sites.size() == 2);
  // By bytes at the peak (10 MiB in two regions at 6 ms): step:50's 8 MiB, then step:51's 2 MiB.
  // Two callers named step: each is told apart by its line.
  CHECK(h.sites[0].peak_bytes == 8 * MiB);
  CHECK(h.sites[0].caller.text == " ← step at pool.cpp:50");
  CHECK(h.sites[1].peak_bytes == 2 * MiB);
  CHECK(h.sites[1].caller.text == " ← step at pool.cpp:51");
  const auto j = to_json(r);
  CHECK(j.at("pools").at("heaps").at(0).at("sites").at(0).at("site") == "region ← step at pool.cpp:50");
  CHECK(j.at("pools").at("heaps").at(0).at("sites").at(1).at("site") == "region ← step at pool.cpp:51");
  const std::string text = text_of(r);
  CHECK(has(text, " regions from region ← step at pool.cpp:50; 8.00 MiB (8,388,608 B) in 1 at the peak"));
  CHECK(has(text, " regions from region ← step at pool.cpp:51; 2.00 MiB (2,097,152 B) in 1 at the peak"));
}

namespace site_names {

Frame frame_at(const std::string& function, const std::string& file, uint32_t line, bool python = false) {
  return Frame{python ? 0 : 0x400000 + line, python ? "" : "train", function, file, line, python};
}

}  // namespace site_names

TEST_CASE("the pytest plugin names sites as the analyzer does: the same callers give the same names") {
  // Sites' user parts, nearest first. alloc (train.cpp:11) from load_weights, from
  // keep_history, and from fill through two lines of main (the first caller where they
  // differ is main, a name two callers share: so with its line); a frame of its own
  // (other), named alone; a Python helper from two lines of one test function.
  const Frame alloc = site_names::frame_at("alloc", "/src/train.cpp", 11),
              main40 = site_names::frame_at("main", "/src/train.cpp", 40);
  const Frame malloc = site_names::frame_at("malloc", "/w/tests/test_mem.py", 17, true);
  const std::vector<std::vector<Frame>> sites = {
      {alloc, site_names::frame_at("load_weights", "/src/train.cpp", 20), main40},
      {alloc, site_names::frame_at("keep_history", "/src/train.cpp", 25),
       site_names::frame_at("step", "/src/train.cpp", 31), main40},
      {alloc, site_names::frame_at("fill", "/src/train.cpp", 50), site_names::frame_at("main", "/src/train.cpp", 43)},
      {alloc, site_names::frame_at("fill", "/src/train.cpp", 50), site_names::frame_at("main", "/src/train.cpp", 44)},
      {site_names::frame_at("other", "/src/train.cpp", 60), site_names::frame_at("main", "/src/train.cpp", 45)},
      {malloc, site_names::frame_at("test_leaks", "/w/tests/test_mem.py", 43, true)},
      {malloc, site_names::frame_at("test_leaks", "/w/tests/test_mem.py", 44, true)}};
  const std::vector<std::string> expected = {" ← load_weights",
                                             " ← keep_history",
                                             " ← … ← main at train.cpp:43",
                                             " ← … ← main at train.cpp:44",
                                             "",
                                             " ← test_mem.py:43 in test_leaks",
                                             " ← test_mem.py:44 in test_leaks"};
  CallerNames names;
  for (const auto& part : sites) names.add(part);
  std::vector<std::string> ours;
  for (const auto& part : sites) ours.push_back(names.of(part).text);
  CHECK(ours == expected);

  // The same sites through the plugin's names (test/analysis/caller_names.py).
  nlohmann::json input = {{"sites", nlohmann::json::array()}};
  for (const auto& part : sites) {
    nlohmann::json frames = nlohmann::json::array();
    for (const Frame& f : part)
      frames.push_back({{"function", f.function}, {"file", f.file}, {"line", f.line}, {"python", f.python}});
    input["sites"].push_back(std::move(frames));
  }
  const std::string path = "/tmp/cumemtrace_site_names_test_" + std::to_string(getpid()) + ".json";
  std::ofstream(path) << input.dump();
  const std::string here = __FILE__;
  const std::string script = here.substr(0, here.rfind("/reports/")) + "/caller_names.py";
  const auto r = test::shell("/usr/bin/python3 " + script + " " + path);
  std::remove(path.c_str());
  REQUIRE(r.status == 0);
  CHECK(nlohmann::json::parse(r.out).get<std::vector<std::string>>() == expected);
}
