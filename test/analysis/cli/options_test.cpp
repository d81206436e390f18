// What `live --at` accepts, and the usage errors of --top, --frames and --depth.
#include <unistd.h>

#include <fstream>
#include <string>

#include "catch.h"
#include "replay/live_time.h"
#include "reports/report.h"
#include "shell.h"
#include "trace_builder.h"
#include "parse_built.h"
#include "sizes.h"

using namespace cumemtrace;
using cumemtrace::test::shell;
using cumemtrace::test::TraceBuilder;

namespace {

// 1 MiB at 10 ns, 3 MiB more at 2 s (the peak, 4 MiB), the first freed at 3 s, End at 4 s.
TraceBuilder moments() {
  TraceBuilder b;
  b.process().device(0, 80ull << 30);
  b.alloc(10, 0x7000000000, MiB).alloc(2 * kSec, 0x7100000000, 3 * MiB).free(3 * kSec, 0x7000000000).end(4 * kSec);
  return b;
}

std::optional<uint64_t> at(const Trace& t, const std::string& s) {
  std::string error;
  return parse_moment(s, t, error);
}

std::string error_of(const Trace& t, const std::string& s) {
  std::string error;
  parse_moment(s, t, error);
  return error;
}

}  // namespace

TEST_CASE("live --at takes the seconds the report prints, peak, end, or nanoseconds") {
  const Trace t = test::parse(moments());
  const uint64_t start = TraceBuilder::kStart;
  CHECK(at(t, "2.000 s") == start + 2 * kSec);
  CHECK(at(t, "2s") == start + 2 * kSec);
  CHECK(at(t, "0.5 s") == start + kSec / 2);
  CHECK(at(t, "peak") == start + 2 * kSec);
  CHECK(at(t, "end") == start + 4 * kSec);
  CHECK(at(t, "123456789") == 123456789u);
  CHECK(build_live(t, *at(t, "peak")).devices.at(0).device_bytes == 4 * MiB);
  CHECK(build_live(t, *at(t, "end")).devices.at(0).device_bytes == 3 * MiB);
}

TEST_CASE("live --at refuses negative, empty and unreadable moments, naming --at") {
  const Trace t = test::parse(moments());
  for (const char* bad : {"-1", "-0.5 s", "", "  ", "abc", "12x", "1.5 ms", "s"}) {
    INFO(bad);
    CHECK_FALSE(at(t, bad));
    CHECK(error_of(t, bad).starts_with("--at"));
  }
  TraceBuilder empty;
  empty.process().end(1);
  CHECK(error_of(test::parse(empty), "peak") == "--at peak: no device memory was ever live in this trace");
}

TEST_CASE("the CLI exits 2 with a message naming the option for bad counts and moments") {
  const std::string trace = "/tmp/cumemtrace-options-" + std::to_string(getpid()) + ".trace";
  moments().write(trace);
  const std::string cli = CUMEMTRACE_CLI;
  auto run = [&](const std::string& args) { return shell(cli + " " + args + " 2>&1 >/dev/null"); };

  auto top = run("report --top -1 " + trace);
  CHECK(top.status == 2);
  CHECK(top.out.find("--top: a count (0 or more), not '-1'") != std::string::npos);
  auto frames = run("report --frames -5 " + trace);
  CHECK(frames.status == 2);
  CHECK(frames.out.find("--frames: a count (0 or more), not '-5'") != std::string::npos);
  auto depth = run("run --depth abc -- true");
  CHECK(depth.status == 2);
  CHECK(depth.out.find("--depth wants a count of frames (0 or more), not 'abc'") != std::string::npos);
  auto neg = run("live " + trace + " --at=-5");
  CHECK(neg.status == 2);
  CHECK(neg.out.find("--at wants a moment at or after the start, not '-5'") != std::string::npos);
  auto empty = run("live " + trace + " --at ''");
  CHECK(empty.status == 2);
  CHECK(empty.out.find("--at wants a moment, not an empty value") != std::string::npos);
  auto comma = run("live " + trace + " --at 5,");
  CHECK(comma.status == 2);

  auto ok = shell(cli + " live " + trace + " --at peak --json");
  CHECK(ok.status == 0);
  CHECK(ok.out.find("\"device_bytes\": 4194304") != std::string::npos);
  std::remove(trace.c_str());
}
