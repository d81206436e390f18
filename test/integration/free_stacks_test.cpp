// Frees carry no stack unless CUMEMTRACE_FREE_STACKS=1 (docs/performance.md says why),
// read from the trace's own records (`cumemtrace dump`), not from a report.
#include <catch2/catch.hpp>

#include <regex>
#include <sstream>

#include "harness.h"

using namespace harness;

namespace {

struct StackIds {
  int allocs = 0, allocs_with_stack = 0;
  int frees = 0, frees_with_stack = 0;
};

StackIds stack_ids(const std::string& trace) {
  const Result d = run({cli(), "dump", trace});
  REQUIRE(d.exit_code == 0);
  static const std::regex event(R"( event .* (alloc|free) .* stack=(\d+) )");
  StackIds ids;
  std::istringstream in(d.out);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, event)) continue;
    const bool with_stack = m[2] != "0";
    if (m[1] == "alloc") ++ids.allocs, ids.allocs_with_stack += with_stack;
    else ++ids.frees, ids.frees_with_stack += with_stack;
  }
  return ids;
}

}  // namespace

TEST_CASE("frees have no stack by default, and have one with CUMEMTRACE_FREE_STACKS=1") {
  // prog_runtime basic (test/programs/runtime_basic.cpp): 9 allocations (4 cudaMalloc,
  // pitch, 3D, managed, 2 pinned host) and 7 frees (5 cudaFree, 2 cudaFreeHost).
  for (const bool opt_in : {false, true}) {
    TempDir dir;
    Env env{{"CUMEMTRACE_DEPTH", "8"}};
    if (opt_in) env["CUMEMTRACE_FREE_STACKS"] = "1";
    REQUIRE(traced(dir, {program("prog_runtime"), "basic"}, env).exit_code == 0);
    const StackIds ids = stack_ids(only_trace(dir));
    CHECK(ids.allocs == 9);
    CHECK(ids.allocs_with_stack == 9);
    CHECK(ids.frees == 7);
    CHECK(ids.frees_with_stack == (opt_in ? 7 : 0));
  }
}

TEST_CASE("a free that fails keeps its stack when frees have none") {
  // host_register.c: its second cudaHostUnregister of the same range fails; that free is
  // recorded twice (the free of unknown memory, then the record that it failed: flags 5).
  TempDir dir;
  REQUIRE(
      traced(dir, {std::string(CUMEMTRACE_TEST_LIBS_DIR) + "/host_register"}, {{"CUMEMTRACE_DEPTH", "8"}}).exit_code ==
      0);
  const Result d = run({cli(), "dump", only_trace(dir)});
  REQUIRE(d.exit_code == 0);
  static const std::regex failed_free(R"( event .* free .* stack=(\d+) .* result=(\d+) flags=5 )");
  std::smatch m;
  REQUIRE(std::regex_search(d.out, m, failed_free));
  CHECK(m[1] != "0");
  CHECK(m[2] == "713");  // CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED
}

TEST_CASE("frees refused inside host functions are recorded, with their stacks, and shown as failed frees") {
  // callback_frees.c: 20,000 pinned buffers of 4 KiB; a host function on the legacy stream
  // tries cudaFreeHost on each from release() and is refused on the driver's callback
  // thread (the runtime's cudaErrorNotPermitted, 800, before the driver is reached); the
  // main thread frees them all. So 20,000 failed frees, one row: release, on one thread
  // that is not the main one; the 20,000 frees of the main thread counted; nothing live.
  TempDir dir;
  const Result r = traced(dir, {here("callback_frees")}, {{"CUMEMTRACE_DEPTH", "8"}});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "20000 refused\n");
  const std::string trace = only_trace(dir);
  const nlohmann::json rep = report(trace);
  CHECK(rep.at("failed_frees_total") == 20000);
  REQUIRE(rep.at("failed_frees").size() == 1);
  const nlohmann::json& f = rep.at("failed_frees").at(0);
  CHECK(f.at("count") == 20000);
  CHECK(f.at("api") == "cudaFreeHost");
  CHECK(f.at("result") == 800);
  CHECK(f.at("result_type") == "cudaError_t");
  CHECK(f.at("result_name") == "cudaErrorNotPermitted");
  CHECK(f.at("threads") == 1);
  CHECK(f.at("tid") != rep.at("process").at("pid"));
  CHECK(f.at("site") == "release");
  CHECK(f.at("frames").at(0).at("function") == "release");
  CHECK(f.at("size").is_null());  // the runtime refused before the driver: only the address is known
  CHECK(rep.at("leaks").empty());
  for (const auto& d : rep.at("devices"))
    if (d.at("device") == -1) {
      CHECK(d.at("counts_by_api").at("cudaMallocHost").at("allocs") == 20000);
      CHECK(d.at("counts_by_api").at("cudaFreeHost").at("frees") == 20000);  // the refused ones freed nothing
    }
  const Result text = run({cli(), "report", trace});
  REQUIRE(text.exit_code == 0);
  CHECK(has(text.out, "  failed frees: 20000 (the memory stayed allocated); the first cudaFreeHost at "));
  CHECK(has(text.out, " from release at callback_frees.c:21: result 800 cudaErrorNotPermitted\n"));
  CHECK(has(text.out, "\nFailed frees (refused: the memory stayed allocated)\n  1. cudaFreeHost of 0x"));
  CHECK(has(text.out, "     refused 20000 times alike, the last at "));
}
