// What a new user meets first at the command line (issue 27): a mistyped command names
// the one meant, `run --help` reads like every other --help and goes to stdout, `run`
// says at once when its command cannot be run or its -o folder is missing, `dump` of a
// file that is no trace fails on stderr, and `live --at` outside the trace says so.
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "catch.h"
#include "cli/nearest_name.h"
#include "shell.h"
#include "trace_builder.h"

using cumemtrace::nearest_name;
using cumemtrace::test::kCli;
using cumemtrace::test::shell;
using cumemtrace::test::TraceBuilder;

namespace {

const std::string kLib = std::string("CUMEMTRACE_LIBRARY=") + CUMEMTRACE_TEST_PRELOAD + " ";

std::string surface_tmp(const char* tag) {
  return "/tmp/cumemtrace-cli-surface-" + std::string(tag) + "-" + std::to_string(getpid());
}

}  // namespace

TEST_CASE("the nearest command: fewest edits, neighbours swapped, a prefix, or none") {
  const std::vector<std::string> names = {"run",      "report", "live",   "index", "symbolize", "check",
                                          "baseline", "diff",   "export", "html",  "dump"};
  CHECK(nearest_name("reprot", names) == "report");  // two neighbours swapped: one edit
  CHECK(nearest_name("raport", names) == "report");
  CHECK(nearest_name("chek", names) == "check");
  CHECK(nearest_name("symbolise", names) == "symbolize");
  CHECK(nearest_name("exprot", names) == "export");
  CHECK(nearest_name("baselin", names) == "baseline");
  CHECK(nearest_name("sym", names) == "symbolize");  // a prefix
  CHECK(nearest_name("zzz", names).empty());
  CHECK(nearest_name("xy", names).empty());  // 2 edits from "diff"? no: too many for 2 letters
}

TEST_CASE("a mistyped command names the command meant and exits 2, stdout empty") {
  auto r = shell(kCli + " reprot x.trace 2>&1 >/dev/null");
  CHECK(r.status == 2);
  CHECK(r.out.find("cumemtrace: 'reprot' is not a command; did you mean 'report'?") == 0);
  CHECK(r.out.find("(commands: run, report, live, index, symbolize, check, baseline, diff, export, html, dump;") !=
        std::string::npos);
  CHECK(shell(kCli + " reprot x.trace 2>/dev/null").out.empty());
  auto far = shell(kCli + " zzz 2>&1");
  CHECK(far.status == 2);
  CHECK(far.out.find("'zzz' is not a command\n") == 12);
}

TEST_CASE("run --help is on stdout, in the shape of every other command's help") {
  auto run = shell(kCli + " run --help 2>/dev/null");
  CHECK(run.status == 0);
  auto live = shell(kCli + " live --help 2>/dev/null");
  CHECK(live.status == 0);
  for (const auto* r : {&run, &live}) {
    INFO(r->out);
    CHECK(r->out.find("Usage: ") != std::string::npos);
    CHECK(r->out.find("\nOptions:\n  -h,--help                   Print this help message and exit\n") !=
          std::string::npos);
  }
  CHECK(run.out.find("Usage: cumemtrace run [OPTIONS] [--] CMD ARGS...\n") != std::string::npos);
  CHECK(shell(kCli + " run --help 2>&1 >/dev/null").out.empty());
}

TEST_CASE("run refuses a command it cannot run with 127, before starting anything") {
  const std::string marker = surface_tmp("manifest-seen");
  for (const std::string& prog : {std::string("/nonexistent/prog"), std::string("no-such-program-cumemtrace")}) {
    auto r = shell(kLib + kCli + " run -- " + prog + " 2>&1");
    INFO(r.out);
    CHECK(r.status == 127);
    CHECK(r.out.find("cumemtrace run: " + prog + ": ") == 0);
    CHECK(r.out.find("nothing was run") != std::string::npos);
    CHECK(r.out.find("did the command use CUDA") == std::string::npos);
  }
  auto missing = shell(kLib + kCli + " run -- /nonexistent/prog 2>&1");
  CHECK(missing.out.find(": No such file or directory; nothing was run\n") != std::string::npos);
  auto unfound = shell(kLib + kCli + " run -- no-such-program-cumemtrace 2>&1");
  CHECK(unfound.out.find(": command not found; nothing was run\n") != std::string::npos);
  auto folder = shell(kLib + kCli + " run -- /tmp 2>&1");
  CHECK(folder.status == 127);
  CHECK(folder.out.find("cumemtrace run: /tmp: is a directory; nothing was run\n") == 0);
  // A program on PATH still runs, with its own status.
  CHECK(shell(kLib + kCli + " run -- sh -c 'exit 5' 2>/dev/null").status == 5);
}

TEST_CASE("run -o into a missing folder creates it (parents too), and one it cannot create exits 2") {
  const std::string top = surface_tmp("out");
  const std::string folder = top + "/a/b";
  auto r =
      shell(kLib + kCli + " run -o '" + folder + "/t-%p.trace' -- sh -c 'echo \"$CUMEMTRACE_OUTPUT\"' 2>/dev/null");
  CHECK(r.status == 0);
  CHECK(r.out == folder + "/t-%p.trace\n");
  struct stat st {};
  CHECK(::stat(folder.c_str(), &st) == 0);
  CHECK(S_ISDIR(st.st_mode));
  // A regular file where the folder should be: nothing is run.
  const std::string file = top + "/file";
  shell("touch " + file);
  auto blocked = shell(kLib + kCli + " run -o '" + file + "/t.trace' -- sh -c 'echo ran' 2>&1");
  CHECK(blocked.status == 2);
  CHECK(blocked.out.find("cumemtrace run: -o " + file + "/t.trace: cannot create the folder " + file) == 0);
  CHECK(blocked.out.find("ran\n") == std::string::npos);
  shell("rm -rf " + top);
}

TEST_CASE("one rule for output folders: run -o and export -o DIR go through ordinary links, never a magic one") {
  // Before, run -o followed every link (std::filesystem) and export -o DIR refused every one.
  const std::string top = surface_tmp("links");
  shell("mkdir -p " + top + "/real && ln -s " + top + "/real " + top + "/link && ln -s /proc/self/root" + top + " " +
        top + "/magic");
  const std::string trace = std::string(CUMEMTRACE_FAILING_TRACES) + "/huge-alloc-min.trace";
  auto r = shell(kLib + kCli + " run -o '" + top + "/link/r/t-%p.trace' -- true 2>/dev/null");
  CHECK(r.status == 0);
  struct stat st {};
  CHECK(::stat((top + "/real/r").c_str(), &st) == 0);
  auto e = shell(kCli + " export --format jsonl -o " + top + "/link/j " + trace + " 2>&1");
  CHECK(e.status == 0);
  CHECK(::stat((top + "/real/j").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  auto magic_run = shell(kLib + kCli + " run -o '" + top + "/magic/m/t.trace' -- sh -c 'echo ran' 2>&1");
  CHECK(magic_run.status == 2);
  CHECK(magic_run.out.find("a symbolic link on the way") != std::string::npos);
  CHECK(magic_run.out.find("ran\n") == std::string::npos);
  auto magic_export = shell(kCli + " export --format jsonl -o " + top + "/magic/j " + trace + " 2>&1");
  CHECK(magic_export.status == 1);
  CHECK(magic_export.out.find("a symbolic link on the way") != std::string::npos);
  // The folder itself a link: a file's folder may be one, export's own folder may not.
  CHECK(shell(kLib + kCli + " run -o '" + top + "/link/t-%p.trace' -- true 2>/dev/null").status == 0);
  CHECK(shell(kCli + " export --format jsonl -o " + top + "/link " + trace + " 2>/dev/null").status == 1);
  shell("rm -rf " + top);
}

TEST_CASE("dump of a file that is no trace says why on stderr and exits 1") {
  auto r = shell(kCli + " dump /etc/passwd 2>/dev/null");
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  auto err = shell(kCli + " dump /etc/passwd 2>&1 >/dev/null");
  CHECK(err.out == "cumemtrace dump: /etc/passwd: bad magic at byte 0: not a cumemtrace trace\n");
  const std::string trace = surface_tmp("dump") + ".trace";
  TraceBuilder b;
  b.process().device(0, 1ull << 30).alloc(10, 0x7000000000, 4096).end(20);
  b.write(trace);
  auto ok = shell(kCli + " dump " + trace + " 2>&1");
  CHECK(ok.status == 0);
  CHECK(ok.out.find("@0 header version ") == 0);
  std::remove(trace.c_str());
}

TEST_CASE("live --at outside the trace answers with a warning that says which side") {
  const std::string trace = surface_tmp("live") + ".trace";
  TraceBuilder b;
  b.process().device(0, 1ull << 30);
  b.alloc(10, 0x7000000000, 1 << 20).end(6'000'000);  // a 6 ms trace
  b.write(trace);
  const uint64_t start = TraceBuilder::kStart;
  const std::string early = std::to_string(start - 500'000'000);
  auto before = shell(kCli + " live " + trace + " --at " + early + " 2>&1 >/dev/null");
  CHECK(before.status == 0);
  CHECK(before.out == "cumemtrace live: warning: --at " + early +
                          " is before the trace started (0.500 s before it): nothing was live yet\n");
  auto after = shell(kCli + " live " + trace + " --at 99s 2>&1 >/dev/null");
  CHECK(after.status == 0);
  CHECK(after.out ==
        "cumemtrace live: warning: --at 99s is after the trace's last moment (0.006 s after its start): what was "
        "live at its end\n");
  auto inside = shell(kCli + " live " + trace + " --at 0.001s 2>&1 >/dev/null");
  CHECK(inside.status == 0);
  CHECK(inside.out.empty());
  std::remove(trace.c_str());
}

TEST_CASE("report --by takes one word a time: the traces after it stay traces, and a word it lacks is exit 2") {
  const std::string trace = std::string(CUMEMTRACE_FAILING_TRACES) + "/huge-alloc-min.trace";
  // --by was a list that swallowed the trace after it ("--by: TRACE not in {category,range}").
  auto one = shell(kCli + " report --by range " + trace + " --json 2>&1");
  CHECK(one.status == 0);
  CHECK(one.out.find("\"by_range\"") != std::string::npos);
  auto two = shell(kCli + " report --by range,category " + trace + " " + trace + " 2>&1");
  CHECK(two.status == 0);
  CHECK(two.out.find("Memory per range") != std::string::npos);
  CHECK(two.out.find("By category") != std::string::npos);
  auto twice = shell(kCli + " report --by range --by category " + trace + " 2>&1");
  CHECK(twice.status == 0);
  CHECK(twice.out.find("Memory per range") != std::string::npos);
  CHECK(twice.out.find("By category") != std::string::npos);
  auto bad = shell(kCli + " report --by rnage " + trace + " 2>&1");
  CHECK(bad.status == 2);
  CHECK(bad.out == "cumemtrace report: --by rnage: not one of category, range, function; did you mean 'range'?\n");
}
