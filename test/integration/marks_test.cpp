// Marks reach the trace from NVTX (through its injection, set up by `cumemtrace run`) and
// from Python's cumemtrace.mark; `dump` shows them, one line each.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <sstream>
#include <tuple>

#include "harness.h"
#include "sizes.h"

using namespace harness;

namespace {

// The "mark ..." (or "range-end ...") lines of `cumemtrace dump`, reduced to "SOURCE NAME".
std::vector<std::string> marks(const std::string& trace, const std::string& what = "mark t=") {
  const Result d = run({cli(), "dump", trace});
  REQUIRE(d.exit_code == 0);
  std::vector<std::string> out;
  std::istringstream lines(d.out);
  for (std::string line; std::getline(lines, line);) {
    const auto at = line.find(what);
    if (at == std::string::npos) continue;
    const auto source = line.find("source=", at);
    const auto size = line.rfind(" (");  // dump's own "(N bytes)"
    out.push_back(line.substr(source + 7, size - source - 7));
  }
  return out;
}

// `program` (one of this folder's) under `cumemtrace run`, which points NVTX at the tracer:
// it must exit 0 having printed `out`. Returns its one trace.
std::string run_nvtx_program(const TempDir& dir, const std::string& program, const std::string& out) {
  const Result r = run({cli(), "run", "-o", dir.path + "/t-%p.trace", "--", here(program)});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == out);
  const auto traces = dir.files("t-");
  REQUIRE(traces.size() == 1);
  return traces[0];
}

}  // namespace

TEST_CASE("NVTX ranges and marks become marks under cumemtrace run") {
  TempDir dir;
  const std::string trace = run_nvtx_program(dir, "nvtx_marks", "5 marked iterations\n");
  const auto m = marks(trace);
  // Source 2: a range push; 3: a mark (trace_format.h: MarkSource).
  CHECK(m == std::vector<std::string>{"2 iter", "2 iter", "2 iter", "2 iter", "2 iter", "3 done"});
  // Each pop ends the range it closes (RangeEnd, source 5: a pop), named after it.
  CHECK(marks(trace, "range-end t=") == std::vector<std::string>(5, "5 iter"));
}

// H200 run AR: under compute-sanitizer, whose libraries push and pop NVTX ranges at exit,
// the process died of SIGSEGV at exit: a thread's NVTX and tag stacks were thread_local
// objects, used after their destructors. The ASan tree reports any such use.
TEST_CASE("NVTX ranges and tags after a thread's thread_local destructors (atexit, a key destructor) do no harm") {
  TempDir dir;
  const Result r = run({cli(), "run", "-o", dir.path + "/t-%p.trace", "--", here("nvtx_at_exit")});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "late ranges done (thread end)\nlate ranges done (atexit)\n");
  CHECK(r.err.find("ERROR: AddressSanitizer") == std::string::npos);
  const auto traces = dir.files("t-");
  REQUIRE(traces.size() == 1);
  // The ranges made while the threads ran, then only late ones, each whole: a late call is
  // recorded while its thread's stack lives (the main thread's to the end; a new one in a
  // key destructor's round) and dropped after, never read from a destroyed stack.
  const auto m = marks(traces[0]);
  REQUIRE(m.size() >= 2);
  CHECK(std::vector<std::string>(m.begin(), m.begin() + 2) == std::vector<std::string>{"2 main", "2 worker"});
  for (size_t i = 2; i < m.size(); ++i) CHECK((m[i] == "2 late" || m[i] == "2 later" || m[i] == "7 late tag"));
}

TEST_CASE("without cumemtrace run (no NVTX_INJECTION64_PATH) NVTX calls cost nothing and leave no mark") {
  TempDir dir;
  const Result t = traced(dir, {here("nvtx_marks")});
  REQUIRE(t.exit_code == 0);
  CHECK(marks(only_trace(dir)).empty());
}

namespace {

// `report --by range --json`'s rows by name.
std::map<std::string, nlohmann::json> ranges_of(const std::string& trace) {
  const Result r = run({cli(), "report", "--by", "range", "--json", trace});
  REQUIRE(r.exit_code == 0);
  const nlohmann::json report = nlohmann::json::parse(r.out);
  std::map<std::string, nlohmann::json> out;
  for (const auto& row : report.at("by_range")) out[row.at("name").get<std::string>()] = row;
  return out;
}

// Runs test/integration/python/SCRIPT without the tracer and under it, each printing
// `out`, and returns the traced run's ranges by name.
std::map<std::string, nlohmann::json> python_tag_ranges(const std::string& script, const std::string& out) {
  const std::string path = std::string(CUMEMTRACE_SOURCE_DIR) + "/test/integration/python/" + script;
  const std::string package = std::string(CUMEMTRACE_SOURCE_DIR) + "/python";
  const std::string runtime = std::string(CUMEMTRACE_SIM_DIR) + "/libcudart.so.13";
  const Result plain = run({"/usr/bin/python3", path, runtime, package});
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.out == out);
  TempDir dir;
  const Result t = traced(dir, {"/usr/bin/python3", path, runtime, package});
  REQUIRE(t.exit_code == 0);
  CHECK(t.out == out);
  return ranges_of(only_trace(dir));
}

}  // namespace

TEST_CASE("Python's cumemtrace.mark and tags record from the start, before the first CUDA call too") {
  const std::string script = std::string(CUMEMTRACE_SOURCE_DIR) + "/test/integration/python/python_mark.py";
  const std::string package = std::string(CUMEMTRACE_SOURCE_DIR) + "/python";
  const std::string runtime = std::string(CUMEMTRACE_SIM_DIR) + "/libcudart.so.13";
  const Result plain = run({"/usr/bin/python3", script, runtime, package});
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.out == "early False, steps [False, False, False]\n");  // no tracer: a no-op
  TempDir dir;
  const Result t = traced(dir, {"/usr/bin/python3", script, runtime, package});
  REQUIRE(t.exit_code == 0);
  CHECK(t.out == "early True, steps [True, True, True]\n");
  // Source 1: cumemtrace_mark, 7: a tag's push. What came before the first CUDA call is in
  // the trace, first.
  CHECK(marks(only_trace(dir)) == std::vector<std::string>{"1 before-cuda", "7 loading", "1 step", "1 step", "1 step"});
  // The tag opened before the trace's first event holds its three 1 MiB allocations.
  const auto loading = ranges_of(only_trace(dir)).at("loading");
  CHECK(loading.at("calls") == 1);
  CHECK(loading.at("open_at_end") == 0);
  CHECK(loading.at("allocations") == 3);
  CHECK(loading.at("bytes_allocated") == 3 * MiB);
}

TEST_CASE("growth across NVTX-marked iterations: the kept 1 MiB leaks, 64 MiB is one-time, 8 MiB transient") {
  TempDir dir;
  REQUIRE(run({cli(), "run", "-o", dir.path + "/t-%p.trace", "--", here("nvtx_marks")}).exit_code == 0);
  const std::string trace = dir.files("t-").at(0);
  const auto g = report(trace).at("growth");
  CHECK(g.at("mark") == "iter");
  CHECK(g.at("found_by") == "nvtx-ranges");
  CHECK(g.at("iterations") == 5);
  CHECK(g.at("boundaries_ns").size() == 6);  // the first push, then each pop: not the trace's end
  CHECK(g.at("partial_left_out") == false);
  REQUIRE(g.at("sites").size() == 3);
  const auto& leak = g.at("sites").at(0);
  CHECK(leak.at("class") == "leak");
  CHECK(leak.at("growth_per_iteration") == 1048576);
  CHECK(leak.at("bytes_at_boundaries") == nlohmann::json::array({0, 1048576, 2097152, 3145728, 4194304, 5242880}));
  CHECK(leak.at("live_count_end") == 5);
  const auto& once = g.at("sites").at(1);
  CHECK(once.at("class") == "one-time");
  CHECK(once.at("live_bytes_end") == 67108864);
  const auto& transient = g.at("sites").at(2);
  CHECK(transient.at("class") == "transient");
  CHECK(transient.at("allocations_within") == 5);
  CHECK(transient.at("live_bytes_end") == 0);

  // --max-growth is inclusive, both sides.
  CHECK(run({cli(), "check", trace, "--max-growth", "1MiB"}).exit_code == 0);
  const Result bad = run({cli(), "check", trace, "--max-growth", "1048575"});
  CHECK(bad.exit_code == 1);
  CHECK(bad.out.find("growth per iteration on device 0: 1.00 MiB (1,048,576 B), limit") != std::string::npos);
}

// Issue 25, §3: this test said "no iterations" and let `--max-growth 0` pass on a loop that
// keeps 1 MiB per iteration; unmarked loops are now found from the stack that recurs.
TEST_CASE("without marks the loop is found from its stacks, and the kept 1 MiB per iteration is a leak") {
  TempDir dir;
  REQUIRE(traced(dir, {here("iterations")}).exit_code == 0);
  const auto g = report(only_trace(dir)).at("growth");
  CHECK(g.at("mark").is_null());
  CHECK(g.at("found_by") == "call-site");
  CHECK(g.at("iterations") == 5);
  CHECK(g.at("loop").at("stretches") == 4);
  CHECK(g.at("loop").at("agreeing") == 4);
  CHECK(g.at("loop").at("exact") == true);
  REQUIRE(g.at("sites").size() == 3);
  const auto& leak = g.at("sites").at(0);
  CHECK(leak.at("class") == "leak");
  CHECK(leak.at("growth_per_iteration") == 1048576);
  CHECK(leak.at("bytes_at_boundaries") == nlohmann::json::array({0, 1048576, 2097152, 3145728, 4194304, 5242880}));
  CHECK(g.at("sites").at(1).at("class") == "one-time");
  CHECK(g.at("sites").at(1).at("live_bytes_end") == 67108864);
  CHECK(g.at("sites").at(2).at("class") == "transient");
  const Result r = run({cli(), "check", only_trace(dir), "--max-growth", "0"});
  CHECK(r.exit_code == 1);
  CHECK(run({cli(), "check", only_trace(dir), "--max-growth", "1MiB"}).exit_code == 0);
}

TEST_CASE(
    "a profiler's NVTX injection set before cumemtrace run is chained: it sees every call, marks reach the trace") {
  TempDir dir;
  const Env tool{{"NVTX_INJECTION64_PATH", here("libnvtx_tool.so")}};
  const Result r = run({cli(), "run", "-o", dir.path + "/t-%p.trace", "--", here("nvtx_marks")}, tool);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "5 marked iterations\n");
  // One NVTX instance (the program's), 5 ranges of depth 0 and a mark, all seen by the tool.
  CHECK(r.err.find("tool: 1 initializations, 5 pushes, 5 pops, 1 marks, last push returned 100\n") !=
        std::string::npos);
  const auto traces = dir.files("t-");
  REQUIRE(traces.size() == 1);
  CHECK(marks(traces[0]) == std::vector<std::string>{"2 iter", "2 iter", "2 iter", "2 iter", "2 iter", "3 done"});
}

TEST_CASE("a profiler's NVTX injection set after cumemtrace run keeps NVTX, and the tracer says it sees none") {
  TempDir dir;
  const Result r = run({cli(), "run", "-o", dir.path + "/t-%p.trace", "--", "/usr/bin/env",
                        "NVTX_INJECTION64_PATH=" + here("libnvtx_tool.so"), here("nvtx_marks")});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "5 marked iterations\n");
  CHECK(r.err.find("tool: 1 initializations, 5 pushes, 5 pops, 1 marks, last push returned 100\n") !=
        std::string::npos);
  CHECK(r.err.find("NVTX_INJECTION64_PATH names another tool (" + here("libnvtx_tool.so") +
                   "): NVTX ranges and marks do not reach the trace") != std::string::npos);
  const auto traces = dir.files("t-");
  REQUIRE(traces.size() == 1);
  CHECK(marks(traces[0]).empty());
}

TEST_CASE("tags from C nest per thread and count their own thread's allocations (report --by range)") {
  TempDir dir;
  const Result t = traced(dir, {here("tags")});
  REQUIRE(t.exit_code == 0);
  CHECK(t.out == "5\n");  // 2 pushes and 2 pops recorded, a pop with nothing open not
  const auto by = ranges_of(only_trace(dir));
  REQUIRE(by.size() == 3);
  const auto& load = by.at("load");
  CHECK(load.at("kind") == "tag");
  CHECK(load.at("calls") == 1);
  CHECK(load.at("allocations") == 2);  // 2 MiB and inner's 4 MiB; not the worker thread's 3 MiB
  CHECK(load.at("bytes_allocated") == 6 * MiB);
  CHECK(load.at("held_after_bytes") == 2 * MiB);
  CHECK(by.at("inner").at("bytes_allocated") == 4 * MiB);
  CHECK(by.at("inner").at("held_after_bytes") == 0);
  CHECK(by.at("worker").at("allocations") == 1);
  CHECK(by.at("worker").at("bytes_allocated") == 3 * MiB);
  CHECK(by.at("worker").at("held_after_bytes") == 3 * MiB);
}

TEST_CASE("Python's cumemtrace.tag, as a context manager and a decorator, tags what it allocates") {
  const std::string script = std::string(CUMEMTRACE_SOURCE_DIR) + "/test/integration/python/python_tag.py";
  const std::string package = std::string(CUMEMTRACE_SOURCE_DIR) + "/python";
  const std::string runtime = std::string(CUMEMTRACE_SIM_DIR) + "/libcudart.so.13";
  const Result plain = run({"/usr/bin/python3", script, runtime, package});
  REQUIRE(plain.exit_code == 0);  // no tracer: the tags do nothing
  CHECK(plain.out == "ok\n");
  TempDir dir;
  const Result t = traced(dir, {"/usr/bin/python3", script, runtime, package});
  REQUIRE(t.exit_code == 0);
  const auto by = ranges_of(only_trace(dir));
  const auto& load = by.at("load");
  CHECK(load.at("kind") == "tag");
  CHECK(load.at("calls") == 1);
  CHECK(load.at("allocations") == 2);  // 4 MiB and the first step's 2 MiB
  CHECK(load.at("bytes_allocated") == 6 * MiB);
  const auto& step = by.at("step");
  CHECK(step.at("calls") == 2);
  CHECK(step.at("allocations") == 2);
  CHECK(step.at("bytes_allocated") == 4 * MiB);
  CHECK(step.at("held_after_bytes") == 4 * MiB);
}

TEST_CASE("Python's cumemtrace.tag on a generator and on async defs tags each step they run, not their suspensions") {
  // Printed: what the generator yielded, what the tasks returned.
  const auto by = python_tag_ranges("python_tag_steps.py", "[1, 2] ['a', 'b']\n");
  REQUIRE(by.size() == 3);
  // Calls are steps: gen runs to each of its 2 yields and to its end; a and b to the await and on.
  const std::vector<std::tuple<std::string, int, uint64_t>> want = {
      {"gen", 3, 3 * MiB}, {"a", 2, 2 * MiB}, {"b", 2, 16 * MiB}};
  for (const auto& [name, calls, bytes] : want) {
    CHECK(by.at(name).at("calls") == calls);
    CHECK(by.at(name).at("open_at_end") == 0);
    CHECK(by.at(name).at("allocations") == 2);
    CHECK(by.at(name).at("bytes_allocated") == bytes);
  }
}

// python_tag_tasks.py works out the bytes; a tag's calls are the stretches its task ran
// with it open (a1 and a2), "run" one: the tasks' contexts are entered from its own.
TEST_CASE("Python's cumemtrace.tag around an await follows its asyncio task, not the thread") {
  const auto by = python_tag_ranges("python_tag_tasks.py", "['a', 'b', 'c']\n");
  REQUIRE(by.size() == 3);
  const std::vector<std::tuple<std::string, int, int, uint64_t>> want = {
      {"a", 2, 2, 3 * MiB}, {"b", 2, 2, 24 * MiB}, {"run", 1, 6, 123 * MiB}};
  for (const auto& [name, calls, allocations, bytes] : want) {
    INFO(name);
    CHECK(by.at(name).at("kind") == "tag");
    CHECK(by.at(name).at("calls") == calls);
    CHECK(by.at(name).at("open_at_end") == 0);
    CHECK(by.at(name).at("allocations") == allocations);
    CHECK(by.at(name).at("bytes_allocated") == bytes);
  }
}

// Past each bound the tracer keeps (bounds.c): the trace counts what it did not keep, and
// the report says so where the ranges are, not that all is well.
TEST_CASE("past the tracer's bounds: open start ids, push and tag names, registered strings counted and said") {
  TempDir dir;
  const std::string trace = run_nvtx_program(dir, "bounds", "2 tag pops named no tag\n");
  const Result rep = run({cli(), "report", "--by", "range", "--json", trace});
  REQUIRE(rep.exit_code == 0);
  const auto j = nlohmann::json::parse(rep.out);
  const auto& b = j.at("integrity").at("bounded");
  REQUIRE(b.size() == 5);
  // 4,100 starts, 4,096 ids kept; pushes 70 deep, 64 names kept; tags 66 deep, 64 kept;
  // 4,100 strings, 4,096 kept; 4,100 domains, 4,096 kept apart.
  const std::vector<std::tuple<std::string, int, int>> want = {{"open_range_ids", 4096, 4},
                                                               {"push_names", 64, 6},
                                                               {"tag_names", 64, 2},
                                                               {"registered_strings", 4096, 4},
                                                               {"push_domains", 4096, 4}};
  for (size_t i = 0; i < want.size(); ++i) {
    CHECK(b[i].at("what") == std::get<0>(want[i]));
    CHECK(b[i].at("cap") == std::get<1>(want[i]));
    CHECK(b[i].at("dropped") == std::get<2>(want[i]));
  }
  CHECK(j.at("by_range_complete") == false);
  std::map<std::string, nlohmann::json> by;
  for (const auto& row : j.at("by_range")) by[row.at("name").get<std::string>()] = row;
  // Each range was ended; the ones whose end could not be recorded read as open.
  CHECK(by.at("open").at("calls") == 4100);
  CHECK(by.at("open").at("open_at_end") == 4);
  CHECK(by.at("deep").at("calls") == 70);
  CHECK(by.at("deep").at("open_at_end") == 6);
  CHECK(by.at("tagged").at("calls") == 66);
  CHECK(by.at("tagged").at("open_at_end") == 2);
  const Result text = run({cli(), "report", "--by", "range", trace});
  CHECK(text.out.find("  BOUNDED BY THE TRACER: 4 nvtxRangeStart ranges began while 4096 were open: their ends "
                      "were not recorded\n") != std::string::npos);
  CHECK(text.out.find("the trace ended cleanly, but not all it was told was kept (BOUNDED above)") !=
        std::string::npos);
}

// nvToolsExt.h: a push returns its 0-based level and a pop the level of the range it ended,
// each per domain (-1 with none open); pushes nest per domain (nvtx/nvtx_domains.c works out
// the bytes).
TEST_CASE(
    "NVTX pushes nest per domain, a wide-named domain included, and pushes and pops return the levels nvToolsExt.h "
    "specifies") {
  TempDir dir;
  const auto by = ranges_of(run_nvtx_program(dir, "nvtx_domains",
                                             "default: push 0 1, pop 1 0 -1\ndomains: push 0 0, pop 0 0\n"
                                             "wide: same 1, push 0 0, pop 0 0\n"));
  CHECK(by.at("a-range").at("calls") == 1);
  CHECK(by.at("a-range").at("open_at_end") == 0);
  CHECK(by.at("a-range").at("bytes_allocated") == 1 * MiB);
  CHECK(by.at("b-range").at("bytes_allocated") == 8 * MiB);
  CHECK(by.at("b-range").at("open_at_end") == 0);
  // nvtxDomainCreateW's domain is its own: w-range 2 MiB, d-range (the default domain) 6 MiB.
  CHECK(by.at("w-range").at("bytes_allocated") == 2 * MiB);
  CHECK(by.at("w-range").at("open_at_end") == 0);
  CHECK(by.at("d-range").at("bytes_allocated") == 6 * MiB);
  CHECK(by.at("d-range").at("open_at_end") == 0);
}

// NVTX's wide entry points and wide messages reach the trace in UTF-8 (nvtx/nvtx_wide.c
// works out each range's bytes; 4 KiB are live before the first range). The rows of
// `report --by range`, as the text report writes them.
TEST_CASE(
    "NVTX's wide names (W entry points, wide messages, wide registered strings) are recorded in UTF-8, U+FFFD for "
    "no character, cut before the character that would pass 4,096 bytes") {
  TempDir dir;
  const std::string trace = run_nvtx_program(dir, "nvtx_wide", "wide: push 0, pop 0; domain push 0, pop 0\n");
  const Result r = run({cli(), "report", "--by", "range", trace});
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> rows;
  std::istringstream lines(r.out.substr(r.out.find("Memory per range")));
  for (std::string line; std::getline(lines, line) && line != "";)
    if (line.rfind("  ", 0) == 0) rows.push_back(line);
  // é is c3 a9 in UTF-8: 2,047 of them are 4,094 bytes, and € (e2 82 ac) would end at 4,097.
  std::string long_name;
  for (int i = 0; i < 2047; ++i) long_name += "\xc3\xa9";
  // U+FFFD is ef bf bd; ß c3 9f; ü c3 bc; Ω ce a9; U+1F600 f0 9f 98 80.
  const std::string fffd = "\xef\xbf\xbd";
  const std::vector<std::string> want = {
      "  \xc3\xbc"
      "bung-\xce\xa9 (nvtx push): 1 call, 1 allocation of 8.00 MiB (8,388,608 B); peak inside 11.00 MiB "
      "(11,538,432 B) on device 0; held after 8.00 MiB (8,388,608 B)",
      "  registriert-\xc3\x9f (mark): 1 call (1 open at the end), 1 allocation of 4.00 MiB (4,194,304 B); peak inside "
      "18.00 MiB (18,878,464 B) on device 0; held after 4.00 MiB (4,194,304 B)",
      "  bad-" + fffd + fffd +
          " (mark): 2 calls (1 open at the end), 1 allocation of 4.00 MiB (4,194,304 B); peak inside 18.00 MiB "
          "(18,878,464 B) on device 0; held after 4.00 MiB (4,194,304 B)",
      "  " + long_name +
          " (nvtx push): 1 call, 1 allocation of 3.00 MiB (3,145,728 B); peak inside 14.00 MiB (14,684,160 B) on "
          "device 0; held after 3.00 MiB (3,145,728 B)",
      "  emoji-\xf0\x9f\x98\x80 (nvtx start): 1 call, 1 allocation of 2.00 MiB (2,097,152 B); peak inside 3.00 MiB "
      "(3,149,824 B) on device 0; held after 2.00 MiB (2,097,152 B)",
      "  \xc3\xa9tape-\xc3\xbc (nvtx push): 1 call, 1 allocation of 1.00 MiB (1,048,576 B); peak inside 1.00 MiB "
      "(1,052,672 B) on device 0; held after 1.00 MiB (1,048,576 B)"};
  CHECK(rows.size() == want.size());
  for (const std::string& w : want) CHECK(std::count(rows.begin(), rows.end(), w) == 1);
}
