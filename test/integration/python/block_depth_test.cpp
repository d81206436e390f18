// How many native frames a tensor's block event keeps when Python frames name its line
// (CUMEMTRACE_BLOCK_DEPTH_WITH_PYTHON, README "Environment variables"): the innermost
// four by default, however deep the native stack below the interpreter is.
#include <catch2/catch.hpp>

#include <map>
#include <regex>
#include <string>

#include "harness.h"

using namespace harness;

namespace {

const std::string kBlockScript = std::string(CUMEMTRACE_SOURCE_DIR) + "/test/integration/python/block_depth.py";
const std::string kBlockC10 = std::string(CUMEMTRACE_SIM_DIR) + "/torch/lib/libc10_cuda.so";

// The native frames of each block allocation that has Python frames, from `cumemtrace dump`:
// its stack id's chain of parents.
std::vector<size_t> block_depths(const std::string& trace) {
  const Result d = run({cli(), "dump", trace});
  REQUIRE(d.exit_code == 0);
  std::map<uint64_t, uint64_t> parent;
  const std::regex node(R"(stack id=(\d+) parent=(\d+))");
  for (auto it = std::sregex_iterator(d.out.begin(), d.out.end(), node); it != std::sregex_iterator(); ++it)
    parent[std::stoull((*it)[1])] = std::stoull((*it)[2]);
  std::vector<size_t> out;
  const std::regex block(R"(block-event .* op=1 .* stack=(\d+) .* python=\d+)");
  for (auto it = std::sregex_iterator(d.out.begin(), d.out.end(), block); it != std::sregex_iterator(); ++it) {
    size_t n = 0;
    for (uint64_t id = std::stoull((*it)[1]); id; id = parent.count(id) ? parent[id] : 0) ++n;
    out.push_back(n);
  }
  return out;
}

}  // namespace

TEST_CASE("a tensor's block event with Python frames keeps 4 native frames, or as many as asked") {
  SECTION("the default: 4") {
    TempDir dir;
    const Result r = traced(dir, {"/usr/bin/python3", kBlockScript, kBlockC10}, {{"CUMEMTRACE_COMPRESS", "0"}});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == "kept\n");
    // Two allocations; ctypes and the interpreter put far more than 4 frames under them.
    CHECK(block_depths(only_trace(dir)) == std::vector<size_t>{4, 4});
  }
  SECTION("CUMEMTRACE_BLOCK_DEPTH_WITH_PYTHON=32: the walk goes on into ctypes and the interpreter") {
    TempDir dir;
    const Result r = traced(dir, {"/usr/bin/python3", kBlockScript, kBlockC10},
                            {{"CUMEMTRACE_BLOCK_DEPTH_WITH_PYTHON", "32"}, {"CUMEMTRACE_COMPRESS", "0"}});
    REQUIRE(r.exit_code == 0);
    const std::vector<size_t> depths = block_depths(only_trace(dir));
    REQUIRE(depths.size() == 2);
    CHECK(depths[0] > 10);
    CHECK(depths[1] > 10);
  }
}

TEST_CASE("CUMEMTRACE_STACK_STATS=1 counts the walks and a block event's parts on stderr at exit") {
  TempDir dir;
  const Result r = traced(dir, {"/usr/bin/python3", kBlockScript, kBlockC10}, {{"CUMEMTRACE_STACK_STATS", "1"}});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "kept\n");
  // Events with stacks: the context's creation, the stand-in's two segments (cudaMalloc)
  // and its two tensors, 5 walks of each kind. Block events: the two tensors' allocations,
  // the second segment's trace entry and the freed tensor's free (the first segment came
  // before the allocator's trace entries were read: block_depth.py's dump).
  CHECK(r.err.find("stack stats: 5 Python walks: ") != std::string::npos);
  CHECK(r.err.find("stack stats: 5 native walks (all): ") != std::string::npos);
  CHECK(r.err.find("stack stats: 4 block events, whole (stacks, lock, record): ") != std::string::npos);
  // Each of the four passes the driver check, and is interned and encoded once.
  CHECK(r.err.find("stack stats: 4 block events, checked against the driver's memory: ") != std::string::npos);
  CHECK(r.err.find("stack stats: 4 block events, interning the stacks: ") != std::string::npos);
  CHECK(r.err.find("stack stats: 4 block events, encoding the record: ") != std::string::npos);
  // The stand-in's stacks have no frame the fast trace cannot step over.
  CHECK(r.err.find("again by DWARF steps") == std::string::npos);
  const std::regex walks(R"(stack stats: (\d+) walks by the fast trace)");
  int total = 0;
  for (auto it = std::sregex_iterator(r.err.begin(), r.err.end(), walks); it != std::sregex_iterator(); ++it)
    total += std::stoi((*it)[1]);
  CHECK(total == 5);
}

TEST_CASE("without CUMEMTRACE_STACK_STATS nothing about the walks is said") {
  TempDir dir;
  const Result r = traced(dir, {"/usr/bin/python3", kBlockScript, kBlockC10});
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("stack stats") == std::string::npos);
}
