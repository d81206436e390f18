// The pytest plugin (python/cumemtrace/pytest_plugin.py) with Debian's pytest, on the tests
// in pytest_cases/ that reach the simulated libcudart through ctypes: under the preload
// each marked test passes or fails on its limits, with the figures worked out in the test
// file; without it every marked test is skipped with a reason.
#include <catch2/catch.hpp>

#include <map>
#include <sstream>

#include "harness.h"

using namespace harness;

namespace {

const std::string kDir = std::string(CUMEMTRACE_SOURCE_DIR) + "/test/integration/python/pytest_cases";

std::vector<std::string> pytest_argv() {
  return {"/usr/bin/python3", "-m", "pytest", "-p",          "cumemtrace.pytest_plugin", "-p",
          "no:cacheprovider", "-q", "-rA",    "--no-header", "--rootdir=" + kDir,        kDir + "/test_cuda_memory.py"};
}

Env env() {
  return {{"PYTHONPATH", std::string(CUMEMTRACE_SOURCE_DIR) + "/python"},
          {"CUDART", std::string(CUMEMTRACE_SIM_DIR) + "/libcudart.so.13"},
          {"COLUMNS", "1000"}};  // pytest wraps its summary at the terminal's width
}

// The first word of pytest's -rA summary line for one test ("PASSED", "FAILED"...), or "".
// Those lines name the file relative to the working directory.
std::string outcome(const std::string& out, const std::string& test, const std::string& file = "test_cuda_memory.py") {
  std::istringstream lines(out);
  const std::string tail = file + "::" + test;
  for (std::string line; std::getline(lines, line);)
    if (line.size() > tail.size() && line.compare(line.size() - tail.size(), tail.size(), tail) == 0 &&
        line.find(' ') != std::string::npos)
      return line.substr(0, line.find(' '));
  return "";
}

}  // namespace

TEST_CASE("pytest plugin: each cuda_memory limit passes at the limit and fails past it, naming the figures") {
  TempDir dir;
  const Result r = traced(dir, pytest_argv(), env());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);  // pytest: some tests failed
  CHECK(outcome(r.out, "test_warm_up") == "PASSED");
  CHECK(outcome(r.out, "test_within_limits") == "PASSED");
  CHECK(outcome(r.out, "test_growth_within") == "PASSED");
  CHECK(outcome(r.out, "test_peak_over") == "FAILED");
  CHECK(outcome(r.out, "test_leaks") == "FAILED");
  CHECK(outcome(r.out, "test_growth_over") == "FAILED");
  CHECK(has(r.out, "3 failed, 3 passed"));
  CHECK(has(r.out, "peak on device 0: 8.00 MiB (8,389,120 B), limit 8.00 MiB (8,388,608 B)"));
  // What held it, though freed by the test's end: both allocations of line 37 (4 MiB, and
  // 4 MiB + 512 B), one stack. No other site of the failure shares malloc's line: by the
  // call-site rule the frame alone names it (docs/cli.md, "Call sites in the user's terms").
  CHECK(has(r.out,
            "\nat the test's peak, allocated during the test (top call sites):\n"
            "  8.00 MiB (8,389,120 B) in 2 held at the peak on device 0 from test_cuda_memory.py:17 in malloc\n"));
  CHECK(has(r.out, "leaked on device 0: 3.00 MiB (3,145,728 B) in 2 allocations, limit 1.00 MiB (1,048,576 B)"));
  CHECK(has(r.out, "growth per iteration (marks 'iter') on device 0: 2.00 MiB (2,097,152 B), limit 1.00 MiB"));
  // The leak's call sites in the user's terms (issue 25 §5): it was "libcudart.so.13!cudaMalloc+0x..
  // <- libffi.so.8+0x..", frames no user acts on, then "Python code run by ..."; now the test
  // file's lines from cumemtrace_live_sites_python: the helper's line 17 that called
  // cudaMalloc, then, the two sites sharing it, the caller that tells them apart: lines 43
  // and 44 of test_leaks, one name, so each with its line (pytest's and pluggy's frames
  // outside them are installed packages', never the user's), largest first.
  CHECK(has(r.out,
            "  2.00 MiB (2,097,152 B) in 1 live on device 0 from test_cuda_memory.py:17 in malloc ← "
            "test_cuda_memory.py:44 in test_leaks\n"
            "  1.00 MiB (1,048,576 B) in 1 live on device 0 from test_cuda_memory.py:17 in malloc ← "
            "test_cuda_memory.py:43 in test_leaks\n"));
  CHECK_FALSE(has(r.out, "libffi"));
  CHECK_FALSE(has(r.out, "pluggy"));
  // Each test is a tag from its start to its end, the first test's too (its push comes
  // before the first CUDA call, and is kept for the trace's start). `report --by range`
  // charges each test with its own allocations alone (test_cuda_memory.py): warm_up 3 MiB,
  // kept; within_limits 4 + 4 MiB,
  // freed; peak_over 4 MiB + 4 MiB + 512 B, freed; leaks 1 + 2 MiB, kept; growth_over
  // 4 × (2 + 8) MiB, 4 × 2 kept; growth_within 4 × 2 MiB, kept. As marks, each test's row
  // ran to the trace's end and took every later test's allocations too.
  const Result ranges = run({cli(), "report", "--by", "range", "--json", only_trace(dir)});
  REQUIRE(ranges.exit_code == 0);
  std::map<std::string, std::vector<uint64_t>> rows;  // name: allocations, bytes allocated, held after, calls
  const nlohmann::json by_range = nlohmann::json::parse(ranges.out).at("by_range");
  for (const auto& row : by_range)
    if (row.at("kind") == "tag")
      rows[row.at("name")] = {row.at("allocations"), row.at("bytes_allocated"), row.at("held_after_bytes"),
                              row.at("calls")};
  const std::string t = "pytest test_cuda_memory.py::";
  const std::map<std::string, std::vector<uint64_t>> expected = {
      {t + "test_warm_up", {1, 3145728, 3145728, 1}},      {t + "test_within_limits", {2, 8388608, 0, 1}},
      {t + "test_peak_over", {2, 8389120, 0, 1}},          {t + "test_leaks", {2, 3145728, 3145728, 1}},
      {t + "test_growth_over", {8, 41943040, 8388608, 1}}, {t + "test_growth_within", {4, 8388608, 8388608, 1}}};
  CHECK(rows == expected);
}

TEST_CASE("pytest plugin: without the preload a marked test is skipped with the reason, never passed") {
  const Result r = run(pytest_argv(), env());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(has(r.out, "1 passed, 5 skipped"));
  CHECK(outcome(r.out, "test_warm_up") == "PASSED");
  CHECK(has(r.out, "cuda_memory: libcumemtrace.so is not preloaded"));
}

TEST_CASE("pytest plugin: no device seen is no pass, unless the marker allows incomplete figures") {
  TempDir dir;
  std::vector<std::string> argv = pytest_argv();
  argv.back() = kDir + "/test_no_device.py";
  const Result r = traced(dir, argv, env());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(has(r.out, "1 failed, 1 passed"));
  CHECK(outcome(r.out, "test_no_device_allowed", "test_no_device.py") == "PASSED");
  CHECK(outcome(r.out, "test_no_device", "test_no_device.py") == "FAILED");
  CHECK(has(r.out,
            "cuda_memory: figures are incomplete (no device seen): no limit judged "
            "(allow_incomplete=True judges them on incomplete figures)"));
}

TEST_CASE("pytest plugin: a marker's mistake is a usage error of one line, no traceback, before any test runs") {
  // Before: under the tracer each became its test's failure under pytest's traceback;
  // without it, the marked tests were skipped and the mistake never said.
  const std::string said =
      "ERROR: test_usage.py::test_typo: cuda_memory: unknown argument max_peek (it takes max_peak, max_leaked, "
      "max_growth, allow_incomplete)\n\n"
      "ERROR: test_usage.py::test_bad_size: cuda_memory: max_peak: not a size: '2 GiBs' (bytes, or a number with "
      "KiB/MiB/GiB/TiB or kB/MB/GB/TB)\n\n";
  std::vector<std::string> argv = pytest_argv();
  argv.back() = kDir + "/test_usage.py";
  TempDir dir;
  for (const Result& r : {run(argv, env()), traced(dir, argv, env())}) {
    INFO(r.out << r.err);
    CHECK(r.exit_code == 4);  // pytest's ExitCode.USAGE_ERROR
    CHECK(r.err == said);
    CHECK_FALSE(has(r.out + r.err, "Traceback"));
    CHECK(has(r.out, "no tests ran"));
  }
}

TEST_CASE("pytest plugin: a max_peak failure names what held the memory at the test's peak, freed since or not") {
  // Before: the peak and its limit only, what held it being freed by the test's end.
  // test_peak_sites.py: 6 MiB made and freed (a lower peak), then a = 4 MiB (line 23) and
  // b = 4 MiB + 512 B (line 24) make the peak, 8 MiB + 512 B; a freed, 1 MiB made (line 26,
  // after the peak, kept), b freed. Held at the peak: b, then a; live at the end: the 1 MiB.
  // The two lists named together: three sites of malloc's line 16, each named by its
  // caller's line in test_peak_held (docs/cli.md, "Call sites in the user's terms").
  TempDir dir;
  std::vector<std::string> argv = pytest_argv();
  argv.back() = kDir + "/test_peak_sites.py";
  const Result r = traced(dir, argv, env());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(has(r.out,
            "CUDA memory over the cuda_memory limits:\n"
            "  peak on device 0: 8.00 MiB (8,389,120 B), limit 8.00 MiB (8,388,608 B)\n"
            "at the test's peak, allocated during the test (top call sites):\n"
            "  4.00 MiB (4,194,816 B) in 1 held at the peak on device 0 from test_peak_sites.py:16 in malloc ← "
            "test_peak_sites.py:24 in test_peak_held\n"
            "  4.00 MiB (4,194,304 B) in 1 held at the peak on device 0 from test_peak_sites.py:16 in malloc ← "
            "test_peak_sites.py:23 in test_peak_held\n"
            "live now, allocated during the test (top call sites):\n"
            "  1.00 MiB (1,048,576 B) in 1 live on device 0 from test_peak_sites.py:16 in malloc ← "
            "test_peak_sites.py:26 in test_peak_held\n"));
}
