// Python frames in stacks (issue #9): Debian's python3 reaches the simulated runtime
// through ctypes from known lines of python_frames.py; the report names those lines,
// innermost first, read from the interpreter's memory without its help.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "harness.h"

using namespace harness;
using nlohmann::json;

namespace {

const std::string kScript = std::string(CUMEMTRACE_SOURCE_DIR) + "/test/integration/python/python_frames.py";

// The leak group's call site of the allocations of `size` bytes.
const json& site_of(const json& report, uint64_t size) {
  for (const auto& group : report.at("leaks"))
    for (const auto& site : group.at("call_sites"))
      if (site.at("count") == 1 && site.at("bytes") == size) return site;
  FAIL("no call site of " << size << " bytes");
  static const json none;
  return none;
}

// "file:line:function" of each Python frame, innermost first; the file as a basename when
// it is the script (its directory depends on the checkout).
std::vector<std::string> triples(const json& site) {
  std::vector<std::string> out;
  for (const auto& f : site.at("python_frames")) {
    std::string file = f.at("file");
    if (file == kScript) file = "python_frames.py";
    out.push_back(file + ":" + (f.at("line").is_null() ? "?" : std::to_string(int(f.at("line")))) + ":" +
                  std::string(f.at("function")));
  }
  return out;
}

json traced_report(const TempDir& dir, Env env = {}) {
  const std::string runtime = std::string(CUMEMTRACE_SIM_DIR) + "/libcudart.so.13";
  const Result t = traced(dir, {"/usr/bin/python3", kScript, runtime}, env);
  REQUIRE(t.exit_code == 0);
  INFO(t.err);
  CHECK(t.err.empty());
  return report(only_trace(dir));
}

}  // namespace

TEST_CASE("Python frames: nested functions, a thread, a generator and a lambda name their lines") {
  TempDir dir;
  const json r = traced_report(dir);

  const json& nested = site_of(r, 1 << 20);
  CHECK(triples(nested) == std::vector<std::string>{"python_frames.py:15:alloc", "python_frames.py:20:middle",
                                                    "python_frames.py:24:outer", "python_frames.py:37:main",
                                                    "python_frames.py:45:<module>"});

  // The thread's own frames, then threading's (lines of Python's own threading.py).
  const auto thread = triples(site_of(r, 2 << 20));
  REQUIRE(thread.size() == 6);
  CHECK(std::vector<std::string>(thread.begin(), thread.begin() + 3) ==
        std::vector<std::string>{"python_frames.py:15:alloc", "python_frames.py:20:middle",
                                 "python_frames.py:28:in_thread"});
  const auto& frames = site_of(r, 2 << 20).at("python_frames");
  CHECK(frames[3].at("function") == "run");
  CHECK(frames[4].at("function") == "_bootstrap_inner");
  CHECK(frames[5].at("function") == "_bootstrap");
  for (int i = 3; i < 6; ++i) CHECK(std::string(frames[i].at("file")).ends_with("/threading.py"));

  CHECK(triples(site_of(r, 3 << 20)) ==
        std::vector<std::string>{"python_frames.py:15:alloc", "python_frames.py:33:generator",
                                 "python_frames.py:41:main", "python_frames.py:45:<module>"});
  CHECK(triples(site_of(r, 4 << 20)) ==
        std::vector<std::string>{"python_frames.py:15:alloc", "python_frames.py:42:<lambda>",
                                 "python_frames.py:42:main", "python_frames.py:45:<module>"});
}

TEST_CASE("Python frames are merged into the native stack in place of the evaluation loop's frames") {
  TempDir dir;
  const json r = traced_report(dir);
  for (uint64_t size : {1ull << 20, 3ull << 20}) {
    INFO("size " << size);
    const json& site = site_of(r, size);
    std::vector<json> python_in_merged;
    int eval_frames_left = 0;
    for (const auto& f : site.at("merged_frames")) {
      if (f.at("python"))
        python_in_merged.push_back({{"file", f.at("file")}, {"function", f.at("function")}, {"line", f.at("line")}});
      else if (f.at("function").is_string() &&
               std::string(f.at("function")).find("_PyEval_EvalFrameDefault") != std::string::npos)
        ++eval_frames_left;
    }
    CHECK(json(python_in_merged) == site.at("python_frames"));
    CHECK(eval_frames_left == 0);                           // each one was replaced by the Python frames it ran
    CHECK_FALSE(site.at("merged_frames")[0].at("python"));  // the runtime's caller: ctypes
  }
  // The generator runs in an evaluation loop of its own, called from C (list()): native
  // frames stand between its group (alloc, generator) and the outer one (main, <module>).
  const json& merged = site_of(r, 3 << 20).at("merged_frames");
  size_t generator = 0;
  while (generator < merged.size() && merged[generator].value("function", json()) != "generator") ++generator;
  REQUIRE(generator + 1 < merged.size());
  CHECK(merged[generator].at("python"));
  CHECK_FALSE(merged[generator + 1].at("python"));
}

TEST_CASE("CUMEMTRACE_PYTHON=0 records no Python frames") {
  TempDir dir;
  const json r = traced_report(dir, {{"CUMEMTRACE_PYTHON", "0"}});
  uint64_t bytes = 0;
  for (const auto& group : r.at("leaks"))
    for (const auto& site : group.at("call_sites")) {
      bytes += uint64_t(site.at("bytes"));
      CHECK(site.at("python_frames").empty());
      CHECK(site.at("merged_frames").empty());
    }
  CHECK(bytes == (1 + 2 + 3 + 4) << 20);  // the same four allocations, native stacks only
}

TEST_CASE("a native program's trace has no Python records") {
  TempDir dir;
  const Result t = traced(dir, {program("prog_runtime"), "basic"});
  REQUIRE(t.exit_code == 0);
  const Result d = run({cli(), "dump", only_trace(dir)});
  REQUIRE(d.exit_code == 0);
  CHECK(d.out.find("py-string") == std::string::npos);
  CHECK(d.out.find("py-frame") == std::string::npos);
  CHECK(d.out.find(" python=") == std::string::npos);
  const auto r = report(only_trace(dir));  // a range-for over a temporary's member outlives it
  for (const auto& group : r.at("leaks"))
    for (const auto& site : group.at("call_sites")) CHECK(site.at("python_frames").empty());
}

TEST_CASE("Python frames from 80 threads, 8 at a time, each event naming its own thread's lines") {
  const std::string script = std::string(CUMEMTRACE_SOURCE_DIR) + "/test/integration/python/python_threads.py";
  const std::string runtime = std::string(CUMEMTRACE_SIM_DIR) + "/libcudart.so.13";
  TempDir dir;
  const Result t = traced(dir, {"/usr/bin/python3", script, runtime});
  INFO(t.err);
  REQUIRE(t.exit_code == 0);
  const json r = report(only_trace(dir));
  REQUIRE(r.at("leaks").size() == 1);
  const json& group = r.at("leaks")[0];
  CHECK(group.at("count") == 80);  // each thread's last allocation
  CHECK(group.at("bytes") == 80 * 4096);
  uint64_t count = 0;
  for (const auto& site : group.at("call_sites")) {
    count += uint64_t(site.at("count"));
    const auto& frames = site.at("python_frames");
    REQUIRE(frames.size() == 5);  // alloc_free, worker, then threading's run, _bootstrap_inner, _bootstrap
    CHECK(frames[0].at("file") == script);
    CHECK(frames[0].at("line") == 17);
    CHECK(frames[0].at("function") == "alloc_free");
    CHECK(frames[1].at("line") == 25);
    CHECK(frames[1].at("function") == "worker");
    CHECK(frames[4].at("function") == "_bootstrap");
  }
  CHECK(count == 80);  // no kept allocation without its Python frames
}

namespace {

// The native frames of the call site of `size` bytes, all of them (report --frames 100).
size_t native_frames(const std::string& trace, uint64_t size) {
  const Result r = run({cli(), "report", "--json", "--top", "50", "--frames", "100", trace});
  REQUIRE(r.exit_code == 0);
  return site_of(json::parse(r.out), size).at("frames").size();
}

}  // namespace

TEST_CASE("CUMEMTRACE_DEPTH_WITH_PYTHON sets the native frames of events with Python frames, by default DEPTH's") {
  // The report leaves out the innermost frame captured: the simulated runtime's
  // cudaMalloc, inside which the hooked driver call was made.
  auto frames_with = [](const Env& env) {
    TempDir dir;
    const json r = traced_report(dir, env);
    CHECK(triples(site_of(r, 1 << 20)).size() == 5);  // Python frames as ever
    return native_frames(only_trace(dir), 1 << 20) + 1;
  };
  // ctypes' own frames, the interpreter's and python3's main: well over 8 below cudaMalloc.
  const size_t all = frames_with({{"CUMEMTRACE_DEPTH", "32"}});
  CHECK(all > 8);
  CHECK(frames_with({}) == all);
  CHECK(frames_with({{"CUMEMTRACE_DEPTH_WITH_PYTHON", "3"}}) == 3);
  CHECK(frames_with({{"CUMEMTRACE_DEPTH_WITH_PYTHON", "8"}}) == 8);
  CHECK(frames_with({{"CUMEMTRACE_DEPTH", "5"}}) == 5);
  CHECK(frames_with({{"CUMEMTRACE_DEPTH", "2"}, {"CUMEMTRACE_DEPTH_WITH_PYTHON", "6"}}) == 6);
}

TEST_CASE("a thread Python did not start: each callback's fresh thread state is found, none outlives it") {
  const std::string script = std::string(CUMEMTRACE_SOURCE_DIR) + "/test/integration/python/python_foreign_thread.py";
  const std::string runtime = std::string(CUMEMTRACE_SIM_DIR) + "/libcudart.so.13";
  const std::string helper = std::string(CUMEMTRACE_PROGRAMS_DIR) + "/libpy_foreign_thread.so";
  TempDir dir;
  const Result t = traced(dir, {"/usr/bin/python3", script, runtime, helper});
  INFO(t.err);
  REQUIRE(t.exit_code == 0);
  const json r = report(only_trace(dir));
  uint64_t with_python = 0, without = 0;
  for (const auto& group : r.at("leaks"))
    for (const auto& site : group.at("call_sites")) {
      const auto& frames = site.at("python_frames");
      if (site.at("bytes") == uint64_t(site.at("count")) * 65536) {
        with_python += uint64_t(site.at("count"));
        REQUIRE(frames.size() == 1);  // the callback, alone on that thread
        CHECK(frames[0].at("file") == script);
        CHECK(frames[0].at("function") == "callback");
        CHECK(frames[0].at("line") == 17);
      } else {
        CHECK(site.at("bytes") == uint64_t(site.at("count")) * 131072);
        without += uint64_t(site.at("count"));
        CHECK(frames.empty());  // between callbacks: no thread state, no Python frames
      }
    }
  CHECK(with_python == 5);
  CHECK(without == 5);
}

TEST_CASE("Python 3.11: a thread's cached state is checked through the gilstate key, not a system call per event") {
  const std::string runtime = std::string(CUMEMTRACE_SIM_DIR) + "/libcudart.so.13";
  TempDir dir;
  const Result t = traced(dir, {"/usr/bin/python3", kScript, runtime}, {{"CUMEMTRACE_LOG", "debug"}});
  REQUIRE(t.exit_code == 0);
  INFO(t.err);
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = t.err.find(what); at != std::string::npos; at = t.err.find(what, at + 1)) ++n;
    return n;
  };
  // The main thread and the script's one other thread, each found once.
  CHECK(count("Python thread state found, checked from now on through the gilstate key") == 2);
  CHECK(count("by process_vm_readv on every event") == 0);
}
