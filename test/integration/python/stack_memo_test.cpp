// Stacks interned from the previous event's of the same thread (issue 26,
// interpose/stacks/stack_memo.h) are the stacks a full intern gives: stack_memo.py's call paths,
// under CUMEMTRACE_CHECK_STACKS=1, which interns each event's stacks both ways and warns
// where the ids differ and where a native walk differs from one of the full length; and
// the kept allocations name their own callers.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "harness.h"

using namespace harness;
using nlohmann::json;

namespace {

const json* memo_site_of(const json& report, uint64_t size) {
  for (const auto& group : report.at("leaks"))
    for (const auto& site : group.at("call_sites"))
      if (site.at("count") == 1 && site.at("bytes") == size) return &site;
  return nullptr;
}

// "file:function" of the innermost `n` Python frames, the script's file as "s".
std::vector<std::string> innermost(const json& site, size_t n, const std::string& script) {
  std::vector<std::string> out;
  for (const auto& f : site.at("python_frames")) {
    if (out.size() == n) break;
    const std::string file = f.at("file");
    out.push_back((file == script ? "s" : file) + ":" + std::string(f.at("function")));
  }
  return out;
}

}  // namespace

// "Python" in the name: the TSan tree runs no Python program (scripts/test.sh), since a
// ThreadSanitizer runtime preloaded into an uninstrumented interpreter crashes it at start.
// Under TSan the same rule is checked by unit:stack memo (random native and Python stacks).
TEST_CASE("Python and native stacks reused from a thread's previous event equal a full intern's, event by event") {
  const std::string script = std::string(CUMEMTRACE_SOURCE_DIR) + "/test/integration/python/stack_memo.py";
  TempDir dir;
  const Result t = traced(dir, {"/usr/bin/python3", script, std::string(CUMEMTRACE_SIM_DIR) + "/libcudart.so.13"},
                          {{"CUMEMTRACE_CHECK_STACKS", "1"}, {"CUMEMTRACE_FREE_STACKS", "1"}});
  INFO(t.err);
  REQUIRE(t.exit_code == 0);
  CHECK(t.err.find("stack check") == std::string::npos);
  CHECK(t.err.empty());
  {
    // Native stacks deeper than asked for: each walk stops short (stack.cpp's guess of
    // our own frames), and is checked against one of the full length.
    TempDir shallow;
    const Result s = traced(shallow, {"/usr/bin/python3", script, std::string(CUMEMTRACE_SIM_DIR) + "/libcudart.so.13"},
                            {{"CUMEMTRACE_CHECK_STACKS", "1"}, {"CUMEMTRACE_DEPTH_WITH_PYTHON", "3"}});
    INFO(s.err);
    REQUIRE(s.exit_code == 0);
    CHECK(s.err.empty());
  }

  const json r = report(only_trace(dir));
  using V = std::vector<std::string>;
  // The innermost three Python frames of the kept allocation of `size` bytes.
  auto sites = [&](uint64_t size) {
    const json* site = memo_site_of(r, size);
    REQUIRE(site);
    return innermost(*site, 3, script);
  };
  CHECK(sites(6 << 20) == V{"s:alloc", "s:inner", "s:caller_a"});
  CHECK(sites(5 << 20) == V{"s:alloc", "s:inner", "s:caller_b"});
  CHECK(sites(8 << 20) == V{"s:alloc", "s:gen", "s:resume_x"});
  CHECK(sites(7 << 20) == V{"s:alloc", "s:gen", "s:resume_y"});
  // exec's code objects, often each at the freed one's address, with names of their own.
  for (int i = 0; i < 8; ++i)
    CHECK(sites((9 << 20) + i * 4096) ==
          V{"s:alloc", "<exec " + std::to_string(9 << 20) + " " + std::to_string(i) + ">:<module>", "s:exec_loop"});
}
