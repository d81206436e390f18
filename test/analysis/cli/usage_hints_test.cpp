// What a user who mistypes meets: a mistyped option or word names the one meant (the rule a
// mistyped command is answered with), a size split by the shell says how to write it,
// `check` without a limit lists every limit it has, a file that cannot be read says why,
// `html` says what it wrote, counts are in the singular for one, and libc's start-up frames
// stay out of printed stacks.
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "catch.h"
#include "reports/report.h"
#include "shell.h"
#include "stacks/call_site_rule.h"
#include "temp_dir.h"
#include "trace_builder.h"
#include "base/plural.h"

using namespace cumemtrace;
using cumemtrace::test::kCli;
using cumemtrace::test::shell;
using cumemtrace::test::TempDir;
using cumemtrace::test::TraceBuilder;

namespace {

const std::string kHintsTrace = std::string(CUMEMTRACE_FAILING_TRACES) + "/huge-alloc-min.trace";

void put_bytes(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

// One 1 MiB allocation from alloc_buffers, called by main, under libc's three start-up
// frames (the stack's nodes from the outermost, _start, to the innermost), live at the End.
// Without `named_start` the program is stripped: its _start has no symbol. Without
// `named_call_main` libc has no symbol table (Ubuntu 24.04's): __libc_start_call_main, a static
// function, has no name.
void startup_trace(const std::string& path, bool named_start = true, bool named_call_main = true) {
  TraceBuilder b;
  b.process().device(0, 1ull << 30);
  b.module(0, 0x400000, 0x500000, "/usr/bin/prog");
  b.module(0, 0x7f0000000000, 0x7f0000100000, "/usr/lib/x86_64-linux-gnu/libc.so.6");
  b.stack(1, 0, 0x400010).stack(2, 1, 0x7f0000000100).stack(3, 2, 0x7f0000000200);
  b.stack(4, 3, 0x400100).stack(5, 4, 0x400200);
  if (named_start) b.symbol(0x400010, "_start", "", 0);
  b.symbol(0x7f0000000100, "__libc_start_main@@GLIBC_2.34", "", 0);
  if (named_call_main) b.symbol(0x7f0000000200, "__libc_start_call_main", "", 0);
  b.symbol(0x400100, "main", "prog.c", 30).symbol(0x400200, "alloc_buffers", "prog.c", 12);
  b.alloc(10, 0x7000000000, 1 << 20, 5).end(20);
  b.write(path);
}

// The call site's stack in startup_trace's text report: alloc_buffers, main, and nothing after
// main (the frames after it are libc's start-up).
const std::string kUserFramesOnly =
    "         #0 alloc_buffers at prog.c:12 (prog)\n         #1 main at prog.c:30 (prog)\n  bytes by library at "
    "peak:\n";

// `report` of startup_trace(named_start), which exits 0.
std::string startup_report(const TempDir& d, bool named_start) {
  startup_trace(d.path + "/t.trace", named_start);
  auto r = shell(kCli + " report " + d.path + "/t.trace 2>/dev/null");
  CHECK(r.status == 0);
  return r.out;
}

}  // namespace

TEST_CASE("a mistyped option names the option meant, exit 2, before what CLI11 would say") {
  // Before: "The following argument was not expected: --max-peek" and no suggestion.
  auto peek = shell(kCli + " check " + kHintsTrace + " --max-peek 40GiB 2>&1 >/dev/null");
  CHECK(peek.status == 2);
  CHECK(peek.out ==
        "cumemtrace check: '--max-peek' is not an option of check; did you mean '--max-peak'?\n"
        "(`cumemtrace check --help` lists its options)\n");
  // The typo before the traces: CLI11 took the trace for its value and missed the traces.
  auto jsn = shell(kCli + " report --jsn " + kHintsTrace + " 2>&1");
  CHECK(jsn.status == 2);
  CHECK(jsn.out ==
        "cumemtrace report: '--jsn' is not an option of report; did you mean '--json'?\n"
        "(`cumemtrace report --help` lists its options)\n");
  auto with_value = shell(kCli + " check " + kHintsTrace + " --max-leakd=0 2>&1");
  CHECK(with_value.status == 2);
  CHECK(with_value.out.starts_with(
      "cumemtrace check: '--max-leakd' is not an option of check; did you mean '--max-leaked'?\n"));
  auto far = shell(kCli + " report " + kHintsTrace + " --zebra 2>&1");
  CHECK(far.status == 2);
  CHECK(far.out ==
        "cumemtrace report: '--zebra' is not an option of report\n(`cumemtrace report --help` lists its options)\n");
  // The command's own options and the shared ones are no typo.
  TempDir d;
  startup_trace(d.path + "/t.trace");
  CHECK(shell(kCli + " report --frames 2 --call-site user " + d.path + "/t.trace >/dev/null 2>&1").status == 0);
}

TEST_CASE("a mistyped word of --by or --format names the word meant") {
  auto by = shell(kCli + " report --by categry " + kHintsTrace + " 2>&1");
  CHECK(by.status == 2);
  CHECK(by.out == "cumemtrace report: --by categry: not one of category, range, function; did you mean 'category'?\n");
  auto format = shell(kCli + " export --format chrom " + kHintsTrace + " 2>&1");
  CHECK(format.status == 2);
  CHECK(format.out ==
        "cumemtrace export: --format wants memviz, chrome, folded, jsonl, pprof or speedscope, not 'chrom'; did "
        "you mean 'chrome'?\n");
}

TEST_CASE("a size the shell split at its space says to write it whole") {
  // `--max-peak 40 GiB` unquoted reaches the option as "40" and "GiB".
  auto split = shell(kCli + " check " + kHintsTrace + " --max-peak 40 GiB 2>&1");
  CHECK(split.status == 2);
  CHECK(split.out ==
        "cumemtrace check: --max-peak: '40 GiB' is one size split by a space: write 40GiB (or quote "
        "it: '40 GiB')\n");
  auto device = shell(kCli + " check " + kHintsTrace + " --max-peak d0:1.5 gb 2>&1");
  CHECK(device.out ==
        "cumemtrace check: --max-peak: 'd0:1.5 gb' is one size split by a space: write d0:1.5gb (or "
        "quote it: 'd0:1.5 gb')\n");
  // A count takes no unit: no such hint, the limit's own message.
  auto count = shell(kCli + " check " + kHintsTrace + " --max-failed 2 GiB 2>&1");
  CHECK(count.status == 2);
  CHECK(count.out.find("split by a space") == std::string::npos);
}

TEST_CASE("check without a limit lists every limit it has, the ones --help groups as Limits") {
  auto none = shell(kCli + " check " + kHintsTrace + " 2>&1");
  CHECK(none.status == 2);
  CHECK(none.out ==
        "cumemtrace check: no limit given (--max-peak, --max-leaked, --max-failed, --max-single, --max-gap-ratio, "
        "--max-growth, --max-pool-growth, --max-rank-imbalance, --baseline)\n");
  auto help = shell(kCli + " check --help 2>&1");
  const size_t limits = help.out.find("\nLimits:\n");
  REQUIRE(limits != std::string::npos);
  CHECK(help.out.find("--max-pool-growth", limits) != std::string::npos);
  CHECK(help.out.find("--baseline", limits) != std::string::npos);
  CHECK(help.out.find("--junit", limits) == std::string::npos);  // an output, not a limit
}

TEST_CASE("a file that is no trace says which: empty, a header cut short, another kind of file") {
  TempDir d;
  put_bytes(d.path + "/empty.trace", "");
  put_bytes(d.path + "/short.trace", "CUMEM");  // 5 of the magic's 8 bytes
  put_bytes(d.path + "/text.trace", "not a trace at all, longer than a header is: 32 bytes");
  CHECK(shell(kCli + " dump " + d.path + "/empty.trace 2>&1").out ==
        "cumemtrace dump: " + d.path + "/empty.trace: empty file (0 bytes): no trace in it\n");
  CHECK(shell(kCli + " dump " + d.path + "/short.trace 2>&1").out ==
        "cumemtrace dump: " + d.path + "/short.trace: truncated file header at byte 0: 32 bytes needed, 5 present\n");
  CHECK(shell(kCli + " dump " + d.path + "/text.trace 2>&1").out ==
        "cumemtrace dump: " + d.path + "/text.trace: bad magic at byte 0: not a cumemtrace trace\n");
  auto report = shell(kCli + " report " + d.path + "/empty.trace 2>&1");
  CHECK(report.status == 1);
  CHECK(report.out == "cumemtrace: " + d.path + "/empty.trace: empty file (0 bytes): no trace in it\n");
}

TEST_CASE("diff says why an input cannot be read, as report says it") {
  // Before: "PATH: cannot be read", whatever the reason.
  TempDir d;
  put_bytes(d.path + "/empty.trace", "");
  auto missing = shell(kCli + " diff " + d.path + "/gone.trace " + kHintsTrace + " 2>&1");
  CHECK(missing.status == 2);
  CHECK(missing.out == "cumemtrace diff: " + d.path + "/gone.trace: cannot read " + d.path +
                           "/gone.trace: No such file or directory\n");
  startup_trace(d.path + "/t.trace");
  auto folder = shell(kCli + " diff " + d.path + "/t.trace " + d.path + " 2>&1");
  CHECK(folder.status == 2);
  CHECK(folder.out == "cumemtrace diff: " + d.path + ": cannot read " + d.path + ": not a regular file\n");
  auto empty = shell(kCli + " diff " + d.path + "/t.trace " + d.path + "/empty.trace 2>&1");
  CHECK(empty.status == 2);
  CHECK(empty.out == "cumemtrace diff: " + d.path + "/empty.trace: empty file (0 bytes): no trace in it\n");
}

TEST_CASE("html says on stderr what it wrote, stdout empty") {
  TempDir d;
  const std::string t = d.path + "/t.trace", t2 = d.path + "/t2.trace";
  startup_trace(t);
  startup_trace(t2);
  auto r = shell(kCli + " html " + t + " -o " + d.path + "/p.html 2>&1 >/dev/null");
  if (r.out.find("built without") != std::string::npos) return;  // no page without its libraries
  CHECK(r.status == 0);
  CHECK(r.out == "cumemtrace html: 1 process written to " + d.path + "/p.html\n");
  CHECK(shell(kCli + " html " + t + " " + t2 + " -o " + d.path + "/q.html 2>&1 >/dev/null").out ==
        "cumemtrace html: 2 processes written to " + d.path + "/q.html\n");
  CHECK(shell(kCli + " html " + t + " -o " + d.path + "/p.html 2>/dev/null").out.empty());
}

TEST_CASE("a count is in the singular for one: the plural rule, check's last line, live") {
  CHECK(count_of(1, "limit check") == "1 limit check");
  CHECK(count_of(0, "allocation") == "0 allocations");
  CHECK(count_of(1, "process") == "1 process");
  CHECK(count_of(2, "process") == "2 processes");
  CHECK(count_of(3, "graph launch") == "3 graph launches");
  TempDir d;
  const std::string t = d.path + "/t.trace";
  startup_trace(t);  // its peak: 1 MiB
  // Before: "all 1 limit checks hold".
  auto one = shell(kCli + " check " + t + " --max-peak 1TiB 2>&1 >/dev/null");
  CHECK(one.status == 0);
  CHECK(one.out == "cumemtrace check: 1 limit check holds\n");
  auto two = shell(kCli + " check " + t + " --max-peak 1TiB --max-failed 100 2>&1 >/dev/null");
  CHECK(two.out == "cumemtrace check: all 2 limit checks hold\n");
  auto failed = shell(kCli + " check " + t + " --max-peak 0 2>&1 >/dev/null");
  CHECK(failed.status == 1);
  CHECK(failed.out == "cumemtrace check: 1 limit check failed\n");
  // The report's header and device lines: before, "1 events" and "calls: 1 allocations".
  auto report = shell(kCli + " report " + t + " 2>/dev/null");
  CHECK(report.out.find("\n  1 event, 0 dropped by the writer, 5 ips symbolized\n") != std::string::npos);
  CHECK(report.out.find("\n  calls: 1 allocation, 0 frees, 0 failed, 0 frees of unknown memory") != std::string::npos);
  // At 15 ns the one allocation (1 MiB) is live: "1 live allocation", before "1 live allocations".
  auto live = shell(kCli + " live " + d.path + "/t.trace --at " + std::to_string(TraceBuilder::kStart + 15) + " 2>&1");
  INFO(live.out);
  CHECK(live.status == 0);
  CHECK(live.out.find("device 0: device bytes 1.00 MiB (1,048,576 B), 1 live allocation; device 1.00 MiB in 1\n") !=
        std::string::npos);
}

TEST_CASE(
    "a noun in -y after a consonant counts in -ies, and the report's checksums and inconsistencies in the singular") {
  CHECK(count_of(1, "inconsistency") == "1 inconsistency");
  CHECK(count_of(2, "inconsistency") == "2 inconsistencies");
  CHECK(count_of(2, "key") == "2 keys");  // a vowel before the y
  TempDir d;
  const std::string t = d.path + "/t.trace";
  // Every record in one chunk (batch, then one seal); 1 MiB at one address allocated twice
  // with no free between: one inconsistency.
  TraceBuilder b;
  b.batch().process().device(0, 1ull << 30);
  b.alloc(10, 0x7000000000, 1 << 20).alloc(11, 0x7000000000, 1 << 20).end(20).seal();
  b.write(t);
  auto report = shell(kCli + " report " + t + " 2>/dev/null");
  INFO(report.out);
  // Before: "1 chunks verified" and "1 inconsistencies (lost events?)".
  CHECK(report.out.find("\n  checksums: 1 chunk verified\n") != std::string::npos);
  CHECK(report.out.find(", 1 inconsistency (lost events?)\n") != std::string::npos);
}

TEST_CASE("libc's start-up frames are left out of printed stacks and folded on the page") {
  Frame f;
  for (const char* name : {"_start", "__libc_start_main", "__libc_start_main@@GLIBC_2.34", "__libc_start_main_impl",
                           "__libc_start_call_main"}) {
    f.function = name;
    CHECK(is_libc_startup(f));
    CHECK(is_foreign_native(f));
  }
  f.function = "main";
  CHECK_FALSE(is_libc_startup(f));
  CHECK_FALSE(is_foreign_native(f));
  TempDir d;
  const std::string report = startup_report(d, true);
  INFO(report);
  // Frames #2-#4 were libc's.
  CHECK(report.find(kUserFramesOnly) != std::string::npos);
  CHECK(report.find("_start") == std::string::npos);
  // JSON keeps every frame.
  auto j = shell(kCli + " report --json " + d.path + "/t.trace 2>/dev/null");
  CHECK(j.out.find("\"__libc_start_call_main\"") != std::string::npos);
}

TEST_CASE("report --json marks libc's start-up frames, named or not, so that the page folds them too") {
  for (const bool named_start : {true, false}) {
    INFO("_start named: " << named_start);
    TempDir d;
    startup_trace(d.path + "/t.trace", named_start);
    auto r = shell(kCli + " report --json " + d.path + "/t.trace 2>/dev/null");
    REQUIRE(r.status == 0);
    const auto site = nlohmann::json::parse(r.out)["devices"][0]["top_call_sites"][0];
    std::vector<std::string> marked;
    for (const auto& f : site["frames"])
      marked.push_back((f["function"].is_null() ? "?" : f["function"].get<std::string>()) +
                       (f["startup"].get<bool>() ? " startup" : ""));
    // Innermost first: the program's two frames, then libc's three (a stripped _start has no name).
    CHECK(marked == std::vector<std::string>{"alloc_buffers", "main", "__libc_start_call_main startup",
                                             "__libc_start_main@@GLIBC_2.34 startup",
                                             named_start ? "_start startup" : "? startup"});
  }
}

TEST_CASE("an unnamed frame in libc right inside __libc_start_main is start-up too (libc without a symbol table)") {
  TempDir d;
  startup_trace(d.path + "/t.trace", true, false);
  auto text = shell(kCli + " report " + d.path + "/t.trace 2>/dev/null");
  INFO(text.out);
  // Before: libc's unnamed frame was printed after main, as on Ubuntu 24.04's glibc.
  CHECK(text.out.find(kUserFramesOnly) != std::string::npos);
  auto j = shell(kCli + " report --json " + d.path + "/t.trace 2>/dev/null");
  const auto frames = nlohmann::json::parse(j.out)["devices"][0]["top_call_sites"][0]["frames"];
  REQUIRE(frames.size() == 5);
  CHECK(frames[1]["function"] == "main");
  CHECK_FALSE(frames[1]["startup"].get<bool>());
  CHECK(frames[2]["function"].is_null());
  CHECK(frames[2]["startup"].get<bool>());
  // An unnamed frame of another library there is the program's own: not folded.
  Frame start, start_main, unnamed, prog_main;
  start.function = "_start";
  start_main.function = "__libc_start_main";
  unnamed.module = "libfoo.so.1";  // a basename, as Frame keeps it
  prog_main.function = "main";
  CHECK(libc_startup_frames({prog_main, unnamed, start_main, start}) == 2);
  unnamed.module = "libc.so.6";
  CHECK(libc_startup_frames({prog_main, unnamed, start_main, start}) == 3);
  CHECK(libc_startup_frames({unnamed, start_main, start}) == 3);
}

TEST_CASE("live's help says it queries a written trace, which memray's users would take for its live mode") {
  // Before: "What was live at given moments", in both.
  const std::string says = "What was live at given moments of a written trace (not memray's live mode)";
  auto help = shell(kCli + " live --help 2>/dev/null");
  CHECK(help.status == 0);
  CHECK(help.out.substr(0, help.out.find('\n')) == says);
  auto all = shell(kCli + " --help 2>/dev/null");
  CHECK(all.out.find("\n  live                        " + says + "\n") != std::string::npos);
}

TEST_CASE("check --junit says on stderr what it wrote, before its verdict") {
  TempDir d;
  const std::string t = d.path + "/t.trace", xml = d.path + "/j.xml";
  startup_trace(t);  // its peak: 1 MiB
  // Before: the verdict line alone.
  auto r = shell(kCli + " check " + t + " --max-peak 1TiB --junit " + xml + " 2>&1 >/dev/null");
  CHECK(r.status == 0);
  CHECK(r.out == "cumemtrace check: JUnit XML written to " + xml + "\ncumemtrace check: 1 limit check holds\n");
}

TEST_CASE("a stripped program's _start, unnamed outside __libc_start_main, is left out with libc's start-up frames") {
  const auto frame = [](const char* function) {
    Frame f;
    f.function = function;
    return f;
  };
  const Frame main = frame("main"), call_main = frame("__libc_start_call_main"),
              start_main = frame("__libc_start_main@@GLIBC_2.34"), unnamed = frame(""), start = frame("_start");
  CHECK(libc_startup_frames({main, call_main, start_main, start}) == 3);
  CHECK(libc_startup_frames({main, call_main, start_main, unnamed}) == 3);
  // An unnamed outermost frame that __libc_start_main did not call is no _start: kept.
  CHECK(libc_startup_frames({main, unnamed}) == 0);
  CHECK(libc_startup_frames({unnamed, main}) == 0);
  CHECK(libc_startup_frames({}) == 0);
  TempDir d;
  const std::string report = startup_report(d, false);
  INFO(report);
  // Before: "#2 __libc_start_call_main (libc.so.6)", "#3 __libc_start_main@@GLIBC_2.34 (libc.so.6)"
  // and "#4 prog+0x10 (prog)" after main.
  CHECK(report.find(kUserFramesOnly) != std::string::npos);
  CHECK(report.find("__libc_start") == std::string::npos);
}
