// The analyzer at scale: many `live --at` moments in one replay, the event log's blocks,
// multi-trace commands in parallel, progress on stderr only.
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "catch.h"
#include "base/parallel.h"
#include "reports/report.h"
#include "shell.h"
#include "trace_builder.h"
#include "parse_built.h"
#include "sizes.h"

using namespace cumemtrace;
using cumemtrace::test::shell;
using cumemtrace::test::TraceBuilder;

namespace {

constexpr uint64_t kStart = TraceBuilder::kStart;

uint64_t bytes_on(const LiveReport& lr, int32_t device) {
  for (const auto& d : lr.devices)
    if (d.device == device) return d.device_bytes;
  return 0;
}

}  // namespace

TEST_CASE("live at many moments answers each in the order asked, repeats included") {
  // 1 MiB at 10 ns, 3 MiB at 2 s (4 MiB live), the first freed at 3 s (3 MiB live).
  TraceBuilder b;
  b.process().device(0, 80ull << 30);
  b.alloc(10, 0x7000000000, MiB).alloc(2 * kSec, 0x7100000000, 3 * MiB).free(3 * kSec, 0x7000000000).end(4 * kSec);
  const Trace t = test::parse(b);
  const std::vector<uint64_t> ats{kStart + 3 * kSec, kStart, kStart + 2 * kSec, kStart + 2 * kSec, kStart + 10};
  const auto lives = build_live(t, ats);
  REQUIRE(lives.size() == 5);
  CHECK(lives[0].at_ns == kStart + 3 * kSec);
  CHECK(lives[0].events_applied == 3);
  CHECK(bytes_on(lives[0], 0) == 3 * MiB);
  CHECK(lives[1].events_applied == 0);
  CHECK(lives[1].devices.empty());
  CHECK(lives[2].events_applied == 2);
  CHECK(bytes_on(lives[2], 0) == 4 * MiB);
  CHECK(lives[3].events_applied == 2);
  CHECK(bytes_on(lives[3], 0) == 4 * MiB);
  CHECK(lives[4].events_applied == 1);
  CHECK(bytes_on(lives[4], 0) == 1 * MiB);
  CHECK(lives[4].devices.at(0).count == 1);
}

TEST_CASE("live at many moments of a trace whose times go back applies each moment's own events") {
  // In file order: A (2 MiB) at 5 s, B (1 MiB) at 1 s, A freed at 6 s. At 1 s only B is
  // applied (a later line of the file, an earlier time), at 5 s both, at 6 s all three.
  TraceBuilder b;
  b.process().device(0, 80ull << 30);
  b.alloc(5 * kSec, 0x7000000000, 2 * MiB).alloc(1 * kSec, 0x7100000000, MiB).free(6 * kSec, 0x7000000000);
  const Trace t = test::parse(b);
  const auto lives = build_live(t, {kStart + 6 * kSec, kStart + 1 * kSec, kStart + 5 * kSec});
  REQUIRE(lives.size() == 3);
  CHECK(lives[0].events_applied == 3);
  CHECK(bytes_on(lives[0], 0) == MiB);
  CHECK(lives[1].events_applied == 1);
  CHECK(bytes_on(lives[1], 0) == MiB);
  CHECK(lives[2].events_applied == 2);
  CHECK(bytes_on(lives[2], 0) == 3 * MiB);
}

TEST_CASE("the event log indexes across its blocks") {
  EventLog log;
  CHECK(log.empty());
  const size_t n = 2 * EventLog::kBlock + 5;
  for (size_t i = 0; i < n; ++i) {
    Event e;
    e.time_ns = i * 3;
    log.push_back(e);
  }
  log.push_back(Event{});
  CHECK(log.size() == n + 1);
  CHECK(log[EventLog::kBlock].time_ns == EventLog::kBlock * 3);
  CHECK(log[n - 1].time_ns == (n - 1) * 3);
  uint64_t sum = 0, count = 0;
  for (const auto& e : log) {
    sum += e.time_ns;
    ++count;
  }
  CHECK(count == n + 1);
  CHECK(sum == 3 * (n - 1) * n / 2);  // 0 + 3 + ... + 3(n-1), and the last one's 0
  CHECK(log.end() - log.begin() == std::ptrdiff_t(n + 1));
  // The last event's time (0) is before its group's base (3n - 3 rounded to a group), so
  // it alone is kept whole.
  CHECK(log.whole_count() == 1);
}

namespace {
bool same_event(const Event& a, const Event& b) {
  return a.time_ns == b.time_ns && a.address == b.address && a.size == b.size && a.stream == b.stream &&
         a.handle == b.handle && a.tid == b.tid && a.device == b.device && a.stack_id == b.stack_id &&
         a.result == b.result && a.api == b.api && a.op == b.op && a.kind == b.kind && a.flags == b.flags &&
         a.python_stack_id == b.python_stack_id;
}
}  // namespace

TEST_CASE("the packed event log gives back extreme values exactly") {
  Event a;  // everything at its largest
  a.time_ns = UINT64_MAX;
  a.address = UINT64_MAX;
  a.size = (1ull << 40) + 7;
  a.stream = UINT64_MAX - 1;
  a.tid = UINT32_MAX;
  a.device = -1;
  a.stack_id = UINT32_MAX;
  a.result = INT32_MIN;
  a.api = UINT16_MAX;
  a.op = format::Op(255);
  a.kind = format::Kind(255);
  a.flags = UINT32_MAX;
  a.python_stack_id = UINT32_MAX;
  Event b;  // the smallest, at time 0: the first group's base
  b.device = INT32_MIN;
  b.result = INT32_MAX;
  Event e = a;  // the last ns a 32-bit delta from the base holds: packs
  e.time_ns = (1ull << 32) - 1;
  e.address = 0x7f00'0000'0000ull;
  e.size = 1ull << 62;
  Event d = a;  // one ns later: kept whole
  d.time_ns = 1ull << 32;
  Event c = b;  // a VMM handle: kept whole
  c.handle = 0xFFFF'FFFF'FFFF'0001ull;
  std::vector<Event> in{b, e, d, c, a};  // a: 2^64 - 1 ns after the base, whole
  while (in.size() < EventLog::kGroup) in.push_back(b);
  // A second group whose base is far from the first's, and events near it: all pack.
  for (uint64_t k = 0; k < 10; ++k) {
    Event f = a;
    f.time_ns = (1ull << 63) + k * 1000;
    f.device = int32_t(k) - 1;
    f.tid = uint32_t(k);
    in.push_back(f);
  }
  EventLog log;
  for (const auto& x : in) log.push_back(x);
  REQUIRE(log.size() == in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    INFO("event " << i);
    CHECK(same_event(log[i], in[i]));
  }
  CHECK(log.whole_count() == 3);  // d, c and a
  CHECK(same_event(log.back(), in.back()));
  CHECK(same_event(log.front(), b));
}

TEST_CASE("parallel jobs come back in their order and the first failure is rethrown") {
  const auto squares = parallel_map(100, [](size_t i) { return i * i; });
  REQUIRE(squares.size() == 100);
  for (size_t i = 0; i < 100; ++i) CHECK(squares[i] == i * i);
  CHECK(parallel_map(0, [](size_t i) { return i; }).empty());
  CHECK_THROWS_WITH(parallel_map(20,
                                 [](size_t i) -> int {
                                   if (i == 7 || i == 13) throw std::runtime_error("job " + std::to_string(i));
                                   return 0;
                                 }),
                    "job 7");
}

TEST_CASE("report of several traces prints the job view, then each once as alone in the order given") {
  const std::string cli = CUMEMTRACE_CLI;
  const std::string dir = "/tmp/cumemtrace-scale-" + std::to_string(getpid());
  const std::string a = dir + "-a.trace", bb = dir + "-b.trace";
  TraceBuilder ta, tb;
  ta.process().device(0, 80ull << 30);
  ta.alloc(10, 0x7000000000, 5 * MiB).end(kSec);
  tb.process().device(0, 80ull << 30);
  tb.alloc(10, 0x7000000000, 7 * MiB).free(20, 0x7000000000).end(2 * kSec);
  ta.write(a);
  tb.write(bb);
  const auto one_a = shell(cli + " report " + a), one_b = shell(cli + " report " + bb);
  REQUIRE(one_a.status == 0);
  REQUIRE(one_b.status == 0);
  REQUIRE(one_a.out != one_b.out);
  const std::string rule = "\n" + std::string(78, '=') + "\n\n";
  const auto both = shell(cli + " report " + a + " " + bb + " " + a);
  CHECK(both.status == 0);
  // The job view (job_view.h) first, then the reports as each prints alone.
  CHECK(both.out.rfind("Job: ", 0) == 0);
  const size_t job_end = both.out.find(rule);
  REQUIRE(job_end != std::string::npos);
  // A trace named twice is reported once (trace_inputs.h: each path once, in order).
  CHECK(both.out.substr(job_end + rule.size()) == one_a.out + rule + one_b.out);
  const auto json = shell(cli + " report --json " + bb + " " + a);
  CHECK(json.status == 0);
  const auto j = nlohmann::json::parse(json.out);  // several traces: {"job": ..., "traces": [...]}
  REQUIRE(j.at("traces").size() == 2);
  CHECK(j.at("traces").at(0).at("devices").at(0).at("peak").at("device_bytes") == 7340032);  // in the order given
  CHECK(j.at("traces").at(1).at("devices").at(0).at("peak").at("device_bytes") == 5242880);
  // One file named two ways is one trace (trace_inputs.h): else one process would count twice.
  const auto renamed = shell(cli + " report " + a + " " + bb + " /tmp/../" + a.substr(1));
  CHECK(renamed.out == shell(cli + " report " + a + " " + bb).out);
  // A missing trace in the middle: said on stderr, the others still reported.
  const auto missing = shell(cli + " report " + a + " " + dir + "-none.trace " + bb + " 2>/dev/null");
  CHECK(missing.status == 1);
  CHECK(missing.out.rfind("Job: ", 0) == 0);
  const size_t missing_job_end = missing.out.find(rule);
  REQUIRE(missing_job_end != std::string::npos);
  CHECK(missing.out.substr(missing_job_end + rule.size()) == one_a.out + rule + one_b.out);
  std::remove(a.c_str());
  std::remove(bb.c_str());
}

TEST_CASE("progress goes to stderr only and leaves stdout as it was") {
  const std::string cli = CUMEMTRACE_CLI;
  const std::string trace = "/tmp/cumemtrace-scale-progress-" + std::to_string(getpid()) + ".trace";
  TraceBuilder b;
  b.process().device(0, 80ull << 30);
  b.alloc(10, 0x7000000000, MiB).alloc(2 * kSec, 0x7100000000, 3 * MiB).end(4 * kSec);
  b.write(trace);
  const auto quiet = shell(cli + " report " + trace + " 2>/dev/null");
  const auto told = shell("CUMEMTRACE_PROGRESS_AFTER_MS=0 " + cli + " report " + trace + " 2>/dev/null");
  const auto said = shell("CUMEMTRACE_PROGRESS_AFTER_MS=0 " + cli + " report " + trace + " 2>&1 >/dev/null");
  CHECK(told.status == 0);
  CHECK(told.out == quiet.out);
  CHECK(said.out.find("cumemtrace report: replaying 0%\n") != std::string::npos);
  const auto live_quiet = shell(cli + " live " + trace + " --at end --at peak 2>/dev/null");
  const auto live_told =
      shell("CUMEMTRACE_PROGRESS_AFTER_MS=0 " + cli + " live " + trace + " --at end --at peak 2>/dev/null");
  CHECK(live_told.out == live_quiet.out);
  CHECK(live_told.out.find("device bytes 4.00 MiB (4,194,304 B)") != std::string::npos);  // 1 MiB + 3 MiB
  std::remove(trace.c_str());
}

TEST_CASE("a FIFO given as a trace is refused rather than waited on and a moment of nan seconds is no moment") {
  const std::string cli = CUMEMTRACE_CLI;
  const std::string fifo = "/tmp/cumemtrace-scale-fifo-" + std::to_string(getpid());
  REQUIRE(shell("mkfifo " + fifo).status == 0);
  // timeout: the hang this guards against would otherwise stop the suite.
  for (const std::string cmd : {" report ", " live --at end ", " export --format folded "}) {
    const auto r = shell("timeout 60 " + cli + cmd + fifo + " 2>&1");
    CHECK(r.status == 1);
    CHECK(r.out.find("not a regular file") != std::string::npos);
  }
  std::remove(fifo.c_str());

  const std::string trace = "/tmp/cumemtrace-scale-nan-" + std::to_string(getpid()) + ".trace";
  TraceBuilder b;
  b.process().device(0, 80ull << 30);
  b.alloc(10, 0x7000000000, MiB).end(kSec);
  b.write(trace);
  CHECK(shell(cli + " live " + trace + " --at 'nan s' 2>/dev/null").status == 2);
  CHECK(shell(cli + " live " + trace + " --at '0.5 s' >/dev/null 2>&1").status == 0);
  CHECK(shell(cli + " check " + trace + " " + trace + " --max-rank-imbalance nan 2>/dev/null").status == 2);
  CHECK(shell(cli + " report " + trace + " --rank-tolerance nan >/dev/null 2>&1").status == 2);
  std::remove(trace.c_str());
}
