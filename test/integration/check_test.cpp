// `cumemtrace check` against a reference job with figures worked out by hand
// (iterations.c): both sides of every limit, since a limit is inclusive.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <signal.h>

#include "harness.h"

using namespace harness;

namespace {

struct TracedCommand {
  TempDir dir;
  std::string trace;
  explicit TracedCommand(const std::vector<std::string>& argv, const Env& env = {}) {
    const Result t = traced(dir, argv, env);
    REQUIRE(t.exit_code == 0);
    trace = only_trace(dir);
  }
};

Result check(const std::string& trace, std::vector<std::string> args) {
  std::vector<std::string> argv{cli(), "check", trace};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

}  // namespace

TEST_CASE("check: every limit holds at the measured figure and fails one unit below") {
  TracedCommand t({here("iterations")});
  struct Case {
    std::string option, holds, fails;
  };
  const Case cases[] = {
      {"--max-leaked", "69MiB", "68MiB"},  // 72,351,744 B live at the end
      {"--max-leaked", "72351744", "72351743"},
      {"--max-peak", "77MiB", "80740351"},  // 80,740,352 B
      {"--max-peak", "d0:80.740352MB", "d0:76MiB"},
      {"--max-single", "64MiB", "67108863"},  // 67,108,864 B
      {"--max-single", "0.045%", "0.044%"},   // of the sim's 150,754,820,096 B: 0.0445 %
      {"--max-failed", "0", "0"},             // no failure: holds both ways
  };
  for (const auto& c : cases) {
    INFO(c.option << " " << c.holds << " / " << c.fails);
    const Result ok = check(t.trace, {c.option, c.holds});
    CHECK(ok.exit_code == 0);
    CHECK(ok.out.empty());
    if (c.holds == c.fails) continue;
    const Result bad = check(t.trace, {c.option, c.fails});
    CHECK(bad.exit_code == 1);
    CHECK(bad.out.find("FAIL ") == 0);
  }
}

TEST_CASE("check: a failed limit is one line naming the figure, the limit and the call site") {
  TracedCommand t({here("iterations")});
  const Result r = check(t.trace, {"--max-leaked", "68MiB", "--max-peak", "1GiB"});
  CHECK(r.exit_code == 1);
  CHECK(r.out == "FAIL " + t.trace +
                     ": max-leaked d0: leaked on device 0: 69.00 MiB (72,351,744 B), limit 68.00 MiB (71,303,168 B); "
                     "top call sites: 64.00 MiB from iterations (main), 5.00 MiB from iterations (main)\n");
}

TEST_CASE("check: failed allocations counted with retries folded, both sides") {
  TempDir dir;
  REQUIRE(traced(dir, {here("oom_causes"), "demand"}, {{"SIMCUDA_CAPACITY", "17179869184"}}).exit_code == 0);
  const std::string trace = only_trace(dir);
  CHECK(check(trace, {"--max-failed", "1"}).exit_code == 0);
  const Result bad = check(trace, {"--max-failed", "0"});
  CHECK(bad.exit_code == 1);
  // Named by its library and its site by the call-site rule: main's line 47 (oom_causes.c).
  CHECK(bad.out.find("failed allocations on device 0: 1, limit 0; first: 4.00 GiB (4,294,967,296 B) from "
                     "oom_causes (main), demand") != std::string::npos);
}

TEST_CASE("check: the gap ratio at the peak, both sides") {
  TracedCommand t({here("iterations")});
  const auto r = report(t.trace);
  const double g = device(r, 0).at("fragmentation_at_peak").at("gap_ratio");
  char holds[32], fails[32];
  std::snprintf(holds, sizeof holds, "%.6f", g + 5e-7);
  std::snprintf(fails, sizeof fails, "%.6f", g - 5e-7);
  CHECK(check(t.trace, {"--max-gap-ratio", holds}).exit_code == 0);
  CHECK(check(t.trace, {"--max-gap-ratio", fails}).exit_code == 1);
}

TEST_CASE("check: usage errors and unreadable traces exit 2, naming the option") {
  TracedCommand t({here("iterations")});
  for (const auto& [opt, value] : std::vector<std::pair<std::string, std::string>>{{"--max-peak", "lots"},
                                                                                   {"--max-peak", "1.3B"},
                                                                                   {"--max-leaked", "5 XB"},
                                                                                   {"--max-failed", "-1"},
                                                                                   {"--max-gap-ratio", "1.5"},
                                                                                   {"--max-single", "120%"}}) {
    const Result r = check(t.trace, {opt, value});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("check: " + opt + ": ") != std::string::npos);
  }
  CHECK(check(t.trace, {}).exit_code == 2);  // no limit at all
  TempDir dir;
  const std::string junk = dir.path + "/junk.trace";
  std::ofstream(junk) << "not a trace";
  CHECK(check(junk, {"--max-peak", "1GiB"}).exit_code == 2);
  // Arguments that name no trace: a gate that checked nothing must not pass.
  TempDir empty;
  const Result none = check(empty.path, {"--max-peak", "1GiB"});
  CHECK(none.exit_code == 2);
  CHECK(none.err.find("no trace found") != std::string::npos);
}

TEST_CASE("check: a trace path on a FAIL line cannot forge a line or a workflow command") {
  TracedCommand t({here("iterations")});
  const std::string odd = t.dir.path + "/nl\n::warning::forged\x1b[31m.trace";
  REQUIRE(std::rename(t.trace.c_str(), odd.c_str()) == 0);
  const Result r = check(odd, {"--max-peak", "1MiB", "--github"});
  CHECK(r.exit_code == 1);
  CHECK(r.out.rfind("FAIL " + t.dir.path + "/nl\\x0a::warning::forged\\x1b[31m.trace: max-peak d0: ", 0) == 0);
  CHECK(r.out.find("\n::warning::") == std::string::npos);
}

TEST_CASE("check: a process that did not end cleanly gets no verdict (exit 3), and allowed, --max-leaked fails it") {
  TempDir dir;
  // Killed with SIGKILL while it still holds what it made: no EndRecord. It waits up to
  // 10 s for a post-mortem no one writes here; the kill comes once its failed allocation
  // is flushed (a fixed delay was once too short for an ASan build on two loaded cores).
  run_until(
      {here("oom_causes"), "hang"},
      {{"SIMCUDA_CAPACITY", "17179869184"},
       {"LD_PRELOAD", preload_library()},
       {"CUMEMTRACE_OUTPUT", dir.path + "/trace-%p.trace"}},
      [&](const std::string&) { return flushed_events(dir, "trace-", " result=2 ") == 1; }, SIGKILL);
  const Result r = check(only_trace(dir), {"--max-leaked", "1TiB"});
  CHECK(r.exit_code == 3);
  CHECK(r.out.find("no End record (the process was killed, or the trace was cut short)): no limit judged") !=
        std::string::npos);
  const Result a = check(only_trace(dir), {"--max-leaked", "1TiB", "--allow-incomplete"});
  CHECK(a.exit_code == 1);
  CHECK(a.out.find("unknown, the process did not end its trace cleanly") != std::string::npos);
}

TEST_CASE("check --junit writes one testsuite per trace, one testcase per limit, a failure element") {
  TracedCommand t({here("iterations")});
  const std::string junit = t.dir.path + "/check.xml";
  const Result r = check(t.trace, {"--max-leaked", "68MiB", "--max-peak", "1GiB", "--junit", junit, "--github"});
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("::error title=cumemtrace max-leaked d0::leaked on device 0: 69.00 MiB") != std::string::npos);
  std::stringstream xml;
  xml << std::ifstream(junit).rdbuf();
  CHECK(
      xml.str() ==
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites name=\"cumemtrace check\" tests=\"2\" failures=\"1\">\n"
      "  <testsuite name=\"" +
          t.trace +
          "\" tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"0\">\n"
          "    <testcase classname=\"cumemtrace.check\" name=\"max-peak d0\"/>\n"
          "    <testcase classname=\"cumemtrace.check\" name=\"max-leaked d0\">\n"
          "      <failure message=\"leaked on device 0: 69.00 MiB (72,351,744 B), limit 68.00 MiB (71,303,168 B); top "
          "call "
          "sites: 64.00 MiB from iterations (main), 5.00 MiB from iterations (main)\" type=\"limit\">leaked on device "
          "0: "
          "69.00 MiB (72,351,744 B), limit 68.00 MiB (71,303,168 B); top call sites: 64.00 MiB from iterations (main), "
          "5.00 MiB from iterations (main)</failure>\n"
          "    </testcase>\n"
          "  </testsuite>\n"
          "</testsuites>\n");
}

TEST_CASE("baseline: a second run keeping 2 MiB more per iteration fails check --baseline and diff names it") {
  TracedCommand before({here("iterations")});
  TracedCommand after({here("iterations"), "grown"});
  const std::string file = before.dir.path + "/baseline.json";
  REQUIRE(run({cli(), "baseline", before.trace, "-o", file}).exit_code == 0);
  const auto b = nlohmann::json::parse(std::ifstream(file));
  CHECK(b.at("format") == "cumemtrace-baseline");
  // held_by_cache_at_exit added (issue 25): this program's own buffers are no cache.
  CHECK(b.at("devices").at("0") ==
        nlohmann::json{{"peak", 80740352}, {"leaked", 72351744}, {"failed", 0}, {"held_by_cache_at_exit", 0}});

  // The same job again is within a zero tolerance; the grown one is 10 MiB over on both figures.
  CHECK(check(before.trace, {"--baseline", file}).exit_code == 0);
  const Result r = check(after.trace, {"--baseline", file, "--tolerance", "5%"});
  CHECK(r.exit_code == 1);
  // The line names the trace that failed and the baseline it was held to.
  CHECK(r.out.find("FAIL " + after.trace + " (against baseline " + file +
                   "): baseline-leaked d0: leaked on device 0: 79.00 MiB (82,837,504 B), baseline "
                   "69.00 MiB (72,351,744 B), allowed up to 72.45 MiB (75,969,331 B); call sites that grew: "
                   "iterations keep_more") != std::string::npos);
  CHECK(check(after.trace, {"--baseline", file, "--tolerance", "10MiB"}).exit_code == 0);

  const Result d = run({cli(), "diff", file, after.trace, "--json"});
  REQUIRE(d.exit_code == 0);
  const auto j = nlohmann::json::parse(d.out);
  REQUIRE(j.at("call_sites").size() == 1);
  CHECK(j.at("call_sites").at(0).at("change") == "new");
  CHECK(j.at("call_sites").at(0).at("key").get<std::string>().rfind("iterations keep_more ", 0) == 0);
  CHECK(j.at("call_sites").at(0).at("leaked") == nlohmann::json{{"before", 0}, {"after", 10485760}});
  CHECK(j.at("call_sites").at(0).at("bytes_at_peak") == nlohmann::json{{"before", 0}, {"after", 10485760}});
  CHECK(j.at("devices").at(0).at("peak") == nlohmann::json{{"before", 80740352}, {"after", 91226112}});
}
