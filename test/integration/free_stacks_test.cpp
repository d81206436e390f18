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
