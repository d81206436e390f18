// Post-mortem on the simulated driver: NVML readings of one moment, and the cause of each
// kind of out-of-memory failure with the exact figures it rests on (analysis/diagnosis.h).
#include <catch2/catch.hpp>

#include <fstream>

#include "harness.h"

using namespace harness;

namespace {

std::string here(const std::string& name) { return std::string(CUMEMTRACE_TEST_LIBS_DIR) + "/" + name; }

constexpr int64_t MiB = 1 << 20, GiB = int64_t(1) << 30;

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

TEST_CASE("out of memory because the failing library holds as much: cached-by-allocator") {
  const auto f = failure("cached");
  const auto& d = f.at("diagnosis");
  CHECK(d.at("cause") == "cached-by-allocator");
  CHECK(d.at("figures") == nlohmann::json{{"request", 9 * GiB},
                                          {"largest_same_library_allocation", 9 * GiB},
                                          {"same_library_allocations_at_least_request", 1},
                                          {"same_library_live_bytes", 9 * GiB}});
  CHECK(f.at("device_free") == 16 * GiB - 9 * GiB - 512 * MiB);
}

TEST_CASE("out of memory because the stream-ordered pool keeps freed memory: pool-reserve") {
  const auto d = failure("pool").at("diagnosis");
  CHECK(d.at("cause") == "pool-reserve");
  CHECK(d.at("figures") == nlohmann::json{{"request", 8 * GiB},
                                          {"pool_reserved", 10 * GiB},
                                          {"pool_live", 0},
                                          {"pool_slack", 10 * GiB}});
}

TEST_CASE("out of memory because another process holds the GPU: other-processes, and who") {
  const auto f = failure("other", {{"SIMCUDA_OTHER_PROCESS_BYTES", std::to_string(10 * GiB)},
                                   {"SIMCUDA_OTHER_PROCESS_PID", "31337"}});
  const auto& d = f.at("diagnosis");
  CHECK(d.at("cause") == "other-processes");
  CHECK(d.at("figures") == nlohmann::json{{"request", 8 * GiB},
                                          {"device_free", 16 * GiB - 10 * GiB - 512 * MiB},
                                          {"other_processes_bytes", 10 * GiB}});
  CHECK(f.at("other_processes") == nlohmann::json::array({{{"pid", 31337}, {"used_bytes", 10 * GiB}}}));
}

TEST_CASE("out of memory because memory no allocation explains is missing: context-and-untracked") {
  const auto d = failure("hidden", {{"SIMCUDA_HIDDEN_BYTES", std::to_string(6 * GiB)}}).at("diagnosis");
  CHECK(d.at("cause") == "context-and-untracked");
  CHECK(d.at("figures") == nlohmann::json{{"request", 12 * GiB},
                                          {"device_free", 16 * GiB - 6 * GiB - 512 * MiB},
                                          {"process_used", 6 * GiB + 512 * MiB},
                                          {"tracked_footprint", 0},
                                          {"context_and_untracked", 6 * GiB + 512 * MiB}});
}

TEST_CASE("out of memory because the live allocations need it: demand, by how much, and who") {
  const auto f = failure("demand");
  const auto& d = f.at("diagnosis");
  CHECK(d.at("cause") == "demand");
  CHECK(d.at("figures") == nlohmann::json{{"request", 4 * GiB},
                                          {"device_free", 16 * GiB - 14 * GiB - 512 * MiB},
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
  CHECK(text.find("Why it failed: demand") != std::string::npos);
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
