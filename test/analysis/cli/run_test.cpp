// `cumemtrace run` end to end, with a do-nothing library preloaded in place of
// libcumemtrace.so and a shell standing in for the traced program: it checks the
// environment the program sees, the manifest hand-over, the exit status and that
// nothing but the program's own output reaches stdout.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "catch.h"
#include "shell.h"
#include "trace_builder.h"

using cumemtrace::test::Result;
using cumemtrace::test::shell;
using cumemtrace::test::TraceBuilder;

namespace {

std::string run_tmp(const char* tag) {
  return std::string("/tmp/cumemtrace-run-test-") + tag + "-" + std::to_string(getpid());
}

}  // namespace

TEST_CASE("run preloads the library, reads the manifest, and exits with the program's status") {
  const std::string trace = run_tmp("trace") + ".trace";
  TraceBuilder b;
  b.process().alloc(1, 0x1000, 64).end(2);
  b.write(trace);
  const std::string err = run_tmp("stderr");
  // The program records its trace in the manifest (as libcumemtrace.so does), prints the
  // environment it saw to stdout, and exits 3.
  const std::string prog = "echo '" + trace +
                           "' >> \"$CUMEMTRACE_MANIFEST\"; "
                           "echo \"preload=$LD_PRELOAD depth=$CUMEMTRACE_DEPTH out=$CUMEMTRACE_OUTPUT\"; exit 3";
  const std::string cmd = std::string("CUMEMTRACE_LIBRARY=") + CUMEMTRACE_TEST_PRELOAD +
                          " LD_PRELOAD= " + CUMEMTRACE_CLI + " run --depth 12 -o 'x-%p.trace' -- /bin/sh -c '" +
                          [&] {
                            std::string q;
                            for (char c : prog) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
                            return q;
                          }() +
                          "' 2>" + err;
  Result r = shell(cmd);
  CHECK(r.status == 3);
  CHECK(r.out == std::string("preload=") + CUMEMTRACE_TEST_PRELOAD + " depth=12 out=x-%p.trace\n");
  std::string e;
  {
    FILE* f = fopen(err.c_str(), "r");
    REQUIRE(f);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) e.append(buf, n);
    fclose(f);
  }
  CHECK(e.find("cumemtrace: trace written to " + trace + " (1 event)") != std::string::npos);
  std::remove(trace.c_str());
  std::remove(err.c_str());
}

TEST_CASE("run reports death by signal as 128+signal") {
  const std::string cmd = std::string("CUMEMTRACE_LIBRARY=") + CUMEMTRACE_TEST_PRELOAD + " " + CUMEMTRACE_CLI +
                          " run /bin/sh -c 'kill -TERM $$' 2>/dev/null";
  CHECK(shell(cmd).status == 128 + 15);
}

TEST_CASE("report on a truncated trace warns with the offset and still exits 0, and garbage exits 1") {
  const std::string trace = run_tmp("cut") + ".trace";
  TraceBuilder b;
  b.process().alloc(1, 0x1000, 64);
  const uint64_t end_chunk = b.bytes().size();  // the End record's chunk loses its seal's last bytes
  b.end(2);
  const std::string full = b.bytes();
  { std::ofstream(trace, std::ios::binary) << full.substr(0, full.size() - 3); }
  Result r = shell(std::string(CUMEMTRACE_CLI) + " report " + trace + " 2>&1 >/dev/null");
  CHECK(r.status == 0);
  CHECK(r.out.find("warning: 1 damaged or unread byte range, the first at byte " + std::to_string(end_chunk) +
                   "; figures from this trace are incomplete") != std::string::npos);
  { std::ofstream(trace, std::ios::binary) << "not a trace at all"; }
  Result g = shell(std::string(CUMEMTRACE_CLI) + " report " + trace + " 2>&1 >/dev/null");
  CHECK(g.status == 1);
  CHECK(g.out.find("bad magic") != std::string::npos);
  std::remove(trace.c_str());
}
