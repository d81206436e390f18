// Marks reach the trace from NVTX (through its injection, set up by `cumemtrace run`) and
// from Python's cumemtrace.mark; `dump` shows them, one line each.
#include <catch2/catch.hpp>

#include <sstream>

#include "harness.h"

using namespace harness;

namespace {

std::string here(const std::string& name) { return std::string(CUMEMTRACE_TEST_LIBS_DIR) + "/" + name; }

// The "mark ..." lines of `cumemtrace dump`, reduced to "SOURCE NAME".
std::vector<std::string> marks(const std::string& trace) {
  const Result d = run({cli(), "dump", trace});
  REQUIRE(d.exit_code == 0);
  std::vector<std::string> out;
  std::istringstream lines(d.out);
  for (std::string line; std::getline(lines, line);) {
    const auto at = line.find("mark t=");
    if (at == std::string::npos) continue;
    const auto source = line.find("source=", at);
    const auto size = line.rfind(" (");  // dump's own "(N bytes)"
    out.push_back(line.substr(source + 7, size - source - 7));
  }
  return out;
}

}  // namespace

TEST_CASE("NVTX ranges and marks become marks under cumemtrace run") {
  TempDir dir;
  const Result r = run({cli(), "run", "-o", dir.path + "/t-%p.trace", "--", here("nvtx_marks")});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "5 marked iterations\n");
  const auto traces = dir.files("t-");
  REQUIRE(traces.size() == 1);
  const auto m = marks(traces[0]);
  // Source 2: a range push; 3: a mark (trace_format.h: MarkSource).
  CHECK(m == std::vector<std::string>{"2 iter", "2 iter", "2 iter", "2 iter", "2 iter", "3 done"});
}

TEST_CASE("without cumemtrace run (no NVTX_INJECTION64_PATH) NVTX calls cost nothing and leave no mark") {
  TempDir dir;
  const Result t = traced(dir, {here("nvtx_marks")});
  REQUIRE(t.exit_code == 0);
  CHECK(marks(only_trace(dir)).empty());
}

TEST_CASE("Python's cumemtrace.mark records marks once the trace has begun") {
  const std::string script = std::string(CUMEMTRACE_SOURCE_DIR) + "/test/integration/python_mark.py";
  const std::string package = std::string(CUMEMTRACE_SOURCE_DIR) + "/python";
  const std::string runtime = std::string(CUMEMTRACE_SIM_DIR) + "/libcudart.so.13";
  const Result plain = run({"/usr/bin/python3", script, runtime, package});
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.out == "early False, steps [False, False, False]\n");  // no tracer: a no-op
  TempDir dir;
  const Result t = traced(dir, {"/usr/bin/python3", script, runtime, package});
  REQUIRE(t.exit_code == 0);
  CHECK(t.out == "early False, steps [True, True, True]\n");
  CHECK(marks(only_trace(dir)) == std::vector<std::string>{"1 step", "1 step", "1 step"});
}
