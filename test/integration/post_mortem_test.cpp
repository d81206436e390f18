// Post-mortem on the simulated driver: NVML readings of one moment, and the cause of each
// kind of out-of-memory failure with the exact figures it rests on (analysis/reports/oom/diagnosis.h).
#include <catch2/catch.hpp>

#include <fstream>

#include "harness.h"
#include "../sizes.h"

using namespace harness;

namespace {

// Runs oom_causes SCENARIO traced on a 16 GiB device and returns its one failure.
nlohmann::json failure(const std::string& scenario, Env env = {}) {
  env["SIMCUDA_CAPACITY"] = std::to_string(16 * GiB);
  TempDir dir;
  const Result t = traced(dir, {here("oom_causes"), scenario}, env);
  REQUIRE(t.exit_code == 0);
  const auto r = report(only_trace(dir));
  REQUIRE(r.at("failed_allocations").size() == 1);
  const auto f = r.at("failed_allocations").at(0);
  CHECK(f.at("snapshot").at("at_failure") == true);
  return f;
}

}  // namespace

TEST_CASE("a 1 GiB peak freed 5 ms later is split at the peak, from one moment") {
  TempDir dir;
  const Result t = traced(dir, {here("oom_causes"), "brief"});
  REQUIRE(t.exit_code == 0);
  const auto r = report(only_trace(dir));
  const auto& n = device(r, 0).at("nvml_at_peak");
  REQUIRE(n.is_object());
  CHECK(n.at("at_peak") == true);
  CHECK(n.at("same_moment") == true);
  CHECK(n.at("snapshot_reason") == "sampled-peak");
  CHECK(n.at("device_bytes") == GiB);
  CHECK(n.at("footprint") == GiB);
  CHECK(n.at("context") == 512 * MiB);
  CHECK(n.at("process_used") == GiB + 512 * MiB);
  CHECK(n.at("untracked") == 0);
}

// The program's own 9 GiB buffer is no cache (issue 25: holders by owner; it was
// `cached-by-allocator` for coming from the failing call's library): releasing it is demand.
TEST_CASE("out of memory because the program's own buffer holds as much: demand, not a cache") {
  const auto f = failure("cached");
  const auto& d = f.at("diagnosis");
  CHECK(d.at("cause") == "demand");
  CHECK(d.at("figures") == nlohmann::json{{"request", 9 * GiB},
                                          {"device_free", 16 * GiB - 9 * GiB - 512 * MiB},
                                          {"live:oom_causes", 9 * GiB},
                                          {"released", 9 * GiB},
                                          {"free_plus_released", 16 * GiB - 512 * MiB},
                                          {"shortfall", 2 * GiB + 512 * MiB},
                                          {"tracked_live_bytes", 9 * GiB}});
  CHECK(f.at("device_free") == 16 * GiB - 9 * GiB - 512 * MiB);
}

TEST_CASE("out of memory because the stream-ordered pool keeps freed memory: pool-reserve") {
  const auto d = failure("pool").at("diagnosis");
  CHECK(d.at("cause") == "pool-reserve");
  // The arithmetic (free + slack >= request) added to the pool's figures (issue 25).
  CHECK(d.at("figures") == nlohmann::json{{"request", 8 * GiB},
                                          {"device_free", 16 * GiB - 10 * GiB - 512 * MiB},
                                          {"pool_slack", 10 * GiB},
                                          {"released", 10 * GiB},
                                          {"free_plus_released", 16 * GiB - 512 * MiB},
                                          {"pool_reserved", 10 * GiB},
                                          {"pool_live", 0}});
}

TEST_CASE("neither free memory nor the pool's slack alone, the two together: pool-reserve, and the split says so") {
  const auto d = failure("pool_free").at("diagnosis");
  // Before: context-and-untracked, the 6 GiB slack counted as "context and untracked".
  CHECK(d.at("cause") == "pool-reserve");
  CHECK(d.at("figures") == nlohmann::json{{"request", 12 * GiB},
                                          {"device_free", 16 * GiB - 6 * GiB - 512 * MiB},
                                          {"pool_slack", 6 * GiB},
                                          {"released", 6 * GiB},
                                          {"free_plus_released", 16 * GiB - 512 * MiB},
                                          {"pool_reserved", 6 * GiB},
                                          {"pool_live", 0}});
  const nlohmann::json holders = {
      {{"holder", "pool_slack"},
       {"name", "the stream-ordered pool's slack"},
       {"bytes", 6 * GiB},
       {"count", 0},
       {"releasable", true}},
      {{"holder", "contexts"}, {"name", "contexts"}, {"bytes", 512 * MiB}, {"count", 0}, {"releasable", true}}};
  CHECK(d.at("holders") == holders);
  CHECK(d.at("would_have_fit") ==
        nlohmann::json::array(
            {{{"holders", {"pool_slack"}}, {"released", 6 * GiB}, {"free_plus_released", 16 * GiB - 512 * MiB}}}));
}

TEST_CASE("out of memory because another process holds the GPU: other-processes, and who") {
  const auto f = failure(
      "other", {{"SIMCUDA_OTHER_PROCESS_BYTES", std::to_string(10 * GiB)}, {"SIMCUDA_OTHER_PROCESS_PID", "31337"}});
  const auto& d = f.at("diagnosis");
  CHECK(d.at("cause") == "other-processes");
  CHECK(d.at("figures") == nlohmann::json{{"request", 8 * GiB},
                                          {"device_free", 16 * GiB - 10 * GiB - 512 * MiB},
                                          {"other_processes", 10 * GiB},
                                          {"released", 10 * GiB},
                                          {"free_plus_released", 16 * GiB - 512 * MiB}});
  CHECK(f.at("other_processes") == nlohmann::json::array({{{"pid", 31337}, {"used_bytes", 10 * GiB}}}));
}

// The simulated driver's hidden bytes come with the context, and the tracer measures a context
// as NVML's growth across its creation: 6.5 GiB. 12 GiB is more than the 9.5 GiB the device
// can give beside it, so no release helps (it was `context-and-untracked`, free + "context and
// untracked" >= request, as if the context could be released; issue 25). Untracked memory
// alone is tested in test/analysis/reports/holders_test.cpp.
TEST_CASE("out of memory above the device's total less the context's 6.5 GiB: exceeds-device-less-contexts") {
  const auto d = failure("hidden", {{"SIMCUDA_HIDDEN_BYTES", std::to_string(6 * GiB)}}).at("diagnosis");
  CHECK(d.at("cause") == "exceeds-device-less-contexts");
  CHECK(d.at("figures") == nlohmann::json{{"request", 12 * GiB},
                                          {"device_total", 16 * GiB},
                                          {"contexts", 6 * GiB + 512 * MiB},
                                          {"total_less_contexts", 16 * GiB - 6 * GiB - 512 * MiB}});
}

TEST_CASE("out of memory because the live allocations need it: demand, by how much, and who") {
  const auto f = failure("demand");
  const auto& d = f.at("diagnosis");
  CHECK(d.at("cause") == "demand");
  CHECK(d.at("figures") == nlohmann::json{{"request", 4 * GiB},
                                          {"device_free", 16 * GiB - 14 * GiB - 512 * MiB},
                                          {"live:oom_causes", 14 * GiB},
                                          {"released", 14 * GiB},
                                          {"free_plus_released", 16 * GiB - 512 * MiB},
                                          {"shortfall", 4 * GiB - (16 * GiB - 14 * GiB - 512 * MiB)},
                                          {"tracked_live_bytes", 14 * GiB}});
  REQUIRE(f.at("call_sites_at_failure").size() == 1);
  CHECK(f.at("call_sites_at_failure").at(0).at("bytes") == 14 * GiB);
  CHECK(f.at("call_sites_at_failure").at(0).at("count") == 7);
}

TEST_CASE("`run` puts the post-mortem beside the trace while the failing job is still running") {
  TempDir dir;
  const std::string pattern = dir.path + "/t-%p.trace";
  const Result r = run({cli(), "run", "-o", pattern, "--", here("oom_causes"), "hang"},
                       {{"SIMCUDA_CAPACITY", std::to_string(16 * GiB)}});
  CHECK(r.out == "hang: cudaErrorMemoryAllocation, post-mortem appeared while running\n");
  CHECK(r.exit_code == 0);
  const auto pm = dir.files("t-");
  REQUIRE(pm.size() == 2);  // the trace and its post-mortem
  const std::string text = [&] {
    std::ifstream in(pm[0].ends_with(".oom.txt") ? pm[0] : pm[1]);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }();
  CHECK(text.find("written by `cumemtrace run` while the job was running") != std::string::npos);
  // 32 GiB on a 16 GiB device: no release helps (it was called `demand`, issue 25).
  CHECK(text.find("Why it failed: exceeds-device") != std::string::npos);
  CHECK(text.find("request: 32.00 GiB (34,359,738,368 B)") != std::string::npos);
  CHECK(r.err.find(".oom.txt") != std::string::npos);
}

TEST_CASE("`run` writes the post-mortem of a job that exits right after its out-of-memory") {
  // The failure and the exit wake the writer together: three runs, each must have one.
  for (int i = 0; i < 3; ++i) {
    TempDir dir;
    const Result r = run({cli(), "run", "-o", dir.path + "/t-%p.trace", "--", here("oom_causes"), "exit"},
                         {{"SIMCUDA_CAPACITY", std::to_string(16 * GiB)}});
    CHECK(r.exit_code == 0);
    const auto files = dir.files("t-");
    CHECK(files.size() == 2);  // the trace and its post-mortem
    CHECK(r.err.find(".oom.txt") != std::string::npos);
  }
}

// scripts/demo.sh's failure (test/programs/demo_oom.cpp, which sets its own 8 GiB device):
// free = 8 - 0.5 (context) - 2 (pid 4242) - 1 (weights) - 3 (PyTorch's six free 512 MiB
// segments) = 1.5 GiB, so 3.5 of the 5 GiB asked for are missing. No holder alone has them
// (3, 2, 1, 0.5); of the pairs that do, cache + other process (5 GiB) ranks first, before
// cache + weights (4) and cache + context (3.5), since a cache is the cheapest to release
// and another process the next; weights + process (3) and the rest fall short.
TEST_CASE("the demo's out-of-memory error: PyTorch's cache and another process together, with both remedies") {
  TempDir dir;
  const Result t = traced(dir, {program("demo_oom")});
  REQUIRE(t.exit_code == 0);
  CHECK(t.out ==
        "workspace of 5 GiB: cudaErrorMemoryAllocation; PyTorch's cache reserved 3221225472 B, allocated 0 B\n");
  const auto r = report(only_trace(dir));
  REQUIRE(r.at("failed_allocations").size() == 1);
  const auto& f = r.at("failed_allocations").at(0);
  CHECK(f.at("snapshot").at("at_failure") == true);
  const auto& d = f.at("diagnosis");
  CHECK(d.at("cause") == "several-holders");
  CHECK(d.at("summary") ==
        "no one holder holds what is missing: PyTorch's cache and other processes (pid 4242) together do");
  CHECK(d.at("figures") == nlohmann::json{{"request", 5 * GiB},
                                          {"device_free", GiB + 512 * MiB},
                                          {"cache:PyTorch", 3 * GiB},
                                          {"other_processes", 2 * GiB},
                                          {"released", 5 * GiB},
                                          {"free_plus_released", 6 * GiB + 512 * MiB}});
  const nlohmann::json holders = {
      {{"holder", "cache:PyTorch"},
       {"name", "PyTorch's cache"},
       {"bytes", 3 * GiB},
       {"count", 6},
       {"releasable", true}},
      {{"holder", "other_processes"},
       {"name", "other processes (pid 4242)"},
       {"bytes", 2 * GiB},
       {"count", 1},
       {"releasable", true}},
      {{"holder", "live:demo_oom"},
       {"name", "live allocations from demo_oom"},
       {"bytes", GiB},
       {"count", 1},
       {"releasable", true}},
      {{"holder", "contexts"}, {"name", "contexts"}, {"bytes", 512 * MiB}, {"count", 0}, {"releasable", true}}};
  CHECK(d.at("holders") == holders);
  const auto& fits = d.at("would_have_fit");
  REQUIRE(fits.size() == 3);
  CHECK(fits.at(0) == nlohmann::json{{"holders", {"cache:PyTorch", "other_processes"}},
                                     {"released", 5 * GiB},
                                     {"free_plus_released", 6 * GiB + 512 * MiB}});
  CHECK(fits.at(1).at("holders") == nlohmann::json{"cache:PyTorch", "live:demo_oom"});
  CHECK(fits.at(2).at("holders") == nlohmann::json{"cache:PyTorch", "contexts"});
  // The remedy of each holder of the first pair: PyTorch's, then the process's. The trace's
  // own blocks show the 3 GiB segments hold no tensor (allocated 0 B), so empty_cache()
  // gives them back, and nothing says how many can be is unknown.
  const auto& advice = d.at("advice");
  REQUIRE(advice.size() == 2);
  CHECK(advice.at(0).get<std::string>().starts_with(
      "PyTorch's caching allocator holds this memory: call torch.cuda.empty_cache()"));
  CHECK(advice.at(1).get<std::string>().starts_with("find the processes listed (nvidia-smi shows them too)"));
  CHECK(f.at("other_processes") == nlohmann::json::array({{{"pid", 4242}, {"used_bytes", 2 * GiB}}}));
}
