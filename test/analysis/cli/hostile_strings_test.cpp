// One trace whose every string a program controls (argv, host name, device name, module
// path, function and file names, API name, NVTX range, tag and mark names, heap and
// region names) is hostile, fed to every command and output format; each output is read
// back by its own reader (docs/cli.md, "Strings from a trace"): text has no control byte
// but newline and tab and is valid UTF-8, JSON parses, the JUnit XML parses, pprof is read
// by Go's pprof, memviz by Python's pickle, and no name starts a CI workflow command.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "base/escape.h"
#include "catch.h"
#include "memviz_python.h"
#include "shell.h"
#include "temp_dir.h"
#include "trace_builder.h"

using cumemtrace::printable;
using cumemtrace::utf8_escaped;
using cumemtrace::format::MarkSource;
using cumemtrace::format::NvtxMemOp;
using cumemtrace::test::kCli;
using cumemtrace::test::read_file;
using cumemtrace::test::shell;
using cumemtrace::test::TempDir;
using cumemtrace::test::TraceBuilder;

namespace {

// A newline and a GitHub workflow command after it, an OSC title sequence ended by BEL, a
// CR, the byte 0xFF, a cut two-byte sequence (0xC3 then '('), XML's CDATA end and markup
// characters, GitHub's '%' and folded stacks' ';'.
const std::string kEvil = "\n::error::pwned\x1b]0;t\x07\r\xff\xc3(]]><&'%;";
// printable(kEvil), written out by hand: each control byte and each byte that is not
// UTF-8 as \xNN, the rest as it is.
const std::string kShown = "\\x0a::error::pwned\\x1b]0;t\\x07\\x0d\\xff\\xc3(]]><&'%;";
// utf8_escaped(kEvil), for JSON: only the bytes that are not UTF-8 escaped; JSON itself
// escapes the control characters.
const std::string kJson = "\n::error::pwned\x1b]0;t\x07\r\\xff\\xc3(]]><&'%;";

constexpr uint64_t kA = 0x7000000000, kB = 0x7000400000;

// Device 0 of 1 GiB: 4 MiB at A from f<evil> in src<evil>.cpp:7 of /lib/m<evil>.so, never
// freed (a leak of 4 MiB; `leak_mib` in the second trace); 2 MiB at B freed; one failed
// 1 GiB; a heap of A's first 4096 B with a 256 B region named; an NVTX range, a tag and a
// mark around it all.
TraceBuilder hostile(uint64_t leak_mib) {
  TraceBuilder b;
  b.process(2ull << 20, {"p" + kEvil, kEvil}, 0, "h" + kEvil)
      .device(0, 1ull << 30, "GPU" + kEvil)
      .api(1, "alloc" + kEvil)
      .module(0, 0x4000, 0x5000, "/lib/m" + kEvil + ".so")
      .stack(1, 0, 0x4100)
      .symbol(0x4100, "f" + kEvil, "src" + kEvil + ".cpp", 7);
  b.mark(10, "r" + kEvil, MarkSource::kNvtxPush, 7).mark(11, "t" + kEvil, MarkSource::kTagPush, 7);
  b.mark(12, "m" + kEvil, MarkSource::kApi, 7);
  b.alloc(20, kA, leak_mib << 20, 1).alloc(21, kB, 2ull << 20, 1).failed(25, 1ull << 30, 2, 1).free(30, kB);
  b.nvtx_mem(40, NvtxMemOp::kHeapRegister, 0x10, kA, 4096, 1, "heap" + kEvil, 1)
      .nvtx_mem(41, NvtxMemOp::kRegionRegister, 0x10, kA, 256, 1)
      .nvtx_mem(42, NvtxMemOp::kRegionName, 0, kA, 0, 0, "reg" + kEvil);
  b.range_end(50, "t" + kEvil, MarkSource::kTagPop, 7).range_end(51, "r" + kEvil, MarkSource::kNvtxPop, 7);
  return b.end(100);
}

// Every byte is part of valid UTF-8 and no control character is left but newline and tab.
bool clean(const std::string& s) {
  std::string no_breaks = s;
  for (char& c : no_breaks)
    if (c == '\n' || c == '\t') c = ' ';
  return printable(no_breaks) == no_breaks;
}

// Lines of `s` that a CI runner would read as a workflow command.
std::vector<std::string> workflow_lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("::", 0) == 0) out.push_back(line);
  return out;
}

struct Run {
  int status;
  std::string out, err;
};

Run cli(const TempDir& d, const std::string& args) {
  const auto r = shell(kCli + " " + args + " 2>" + d.path + "/err");
  return {r.status, r.out, read_file(d.path + "/err")};
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("hostile strings: the hand-written escapes are those of escape.h") {
  CHECK(printable(kEvil) == kShown);
  CHECK(utf8_escaped(kEvil) == kJson);
  CHECK(cumemtrace::xml_text("]]><&'\"\x1b\xff") == "]]&gt;&lt;&amp;&apos;&quot;\\x1b\\xff");
  CHECK(cumemtrace::github_message("50%\n::error::x") == "50%25\\x0a::error::x");
}

TEST_CASE("hostile strings: every text output is one record per line, printable, valid UTF-8") {
  TempDir d;
  const std::string t = d.path + "/t.trace";
  hostile(4).write(t);
  hostile(6).write(d.path + "/t2.trace");
  for (const std::string& args :
       {"report " + t, "report --by range " + t, "report --by function " + t, "report --by category " + t,
        "report --frames 3 --top 5 " + t, "report " + t + " " + d.path + "/t2.trace", "live " + t + " --at end",
        "dump " + t, "diff " + t + " " + d.path + "/t2.trace", "export --format folded " + t,
        "html -o " + d.path + "/page.html " + t}) {
    INFO(args);
    const Run r = cli(d, args);
    // A CLI built without the page's libraries refuses every page (html_command.cpp).
    if (!has(r.err, "built without")) CHECK(r.status == 0);
    CHECK(clean(r.out));
    CHECK(clean(r.err));
    CHECK(workflow_lines(r.out).empty());
    CHECK(workflow_lines(r.err).empty());
  }
  // Where the names land, in the escaped form by hand above.
  const Run dump = cli(d, "dump " + t);
  CHECK(has(dump.out, " host=h" + kShown + " "));
  CHECK(has(dump.out, "symbol ip=0x4100 f" + kShown + " src" + kShown + ".cpp:7 "));
  const Run report = cli(d, "report " + t);
  CHECK(has(report.out, "p" + kShown));
  CHECK(has(report.out, "f" + kShown));
  const Run diff = cli(d, "diff " + t + " " + d.path + "/t2.trace");
  CHECK(has(diff.out, "m" + kShown + ".so f" + kShown + " src" + kShown + ".cpp:7: at peak "));
  // Folded at the peak (t=21: 4 + 2 MiB live, one stack): one line, the frame's ';' as ','
  // (the separator), the module in brackets, the bytes at the end.
  const std::string folded_name = "\\x0a::error::pwned\\x1b]0,t\\x07\\x0d\\xff\\xc3(]]><&'%,";
  CHECK(cli(d, "export --format folded " + t).out == "cuda:0;f" + folded_name + " [m" + folded_name + ".so] 6291456\n");
}

TEST_CASE("hostile strings: check's FAIL lines, its GitHub lines and its JUnit XML") {
  TempDir d;
  const std::string t = d.path + "/t.trace", xml = d.path + "/check.xml";
  hostile(4).write(t);
  const Run r = cli(d, "check " + t + " --max-leaked 0 --max-failed 0 --github --junit " + xml);
  CHECK(r.status == 1);
  CHECK(clean(r.out));
  CHECK(clean(r.err));
  // Two limits fail: two FAIL lines, each with its one ::error line, and no other.
  const auto commands = workflow_lines(r.out);
  REQUIRE(commands.size() == 2);
  for (const auto& c : commands) CHECK(c.rfind("::error title=cumemtrace max-", 0) == 0);
  CHECK(has(commands[0] + commands[1], "f\\x0a::error::pwned\\x1b]0;t\\x07\\x0d\\xff\\xc3(]]><&'%25;"));
  CHECK(has(r.out, "FAIL " + t + ": max-leaked d0: leaked on device 0: 4.00 MiB (4,194,304 B), limit 0 B"));
  CHECK(has(r.out, "f" + kShown));
  // The XML parses, and each failure's message is the FAIL line's, as the parser reads it.
  const auto parsed = shell(
      "/usr/bin/python3 -c \"import sys, xml.etree.ElementTree as E; "
      "[print(f.get('message')) for f in E.parse(sys.argv[1]).iter('failure')]\" " +
      xml);
  REQUIRE(parsed.status == 0);
  std::istringstream fails(r.out), messages(parsed.out);
  size_t n = 0;
  for (std::string line, message; std::getline(fails, line);) {
    if (line.rfind("FAIL ", 0) != 0) continue;
    REQUIRE(std::getline(messages, message));
    CHECK(line == "FAIL " + t + ": " + (n++ ? "max-failed d0" : "max-leaked d0") + ": " + message);
  }
  CHECK(n == 2);
  CHECK_FALSE(has(read_file(xml), "]]>"));
}

TEST_CASE("hostile strings: every JSON output parses and holds the names as utf8_escaped") {
  TempDir d;
  const std::string t = d.path + "/t.trace", t2 = d.path + "/t2.trace";
  hostile(4).write(t);
  hostile(6).write(t2);
  const Run report = cli(d, "report --json " + t);
  REQUIRE(report.status == 0);
  const auto j = nlohmann::json::parse(report.out);
  CHECK(j["process"]["hostname"] == "h" + kJson);
  CHECK(j["process"]["command_line"][1] == kJson);
  CHECK(clean(report.err));

  // Two traces: the job's processes name their host too.
  const Run job = cli(d, "report --json " + t + " " + t2);
  REQUIRE(job.status == 0);
  const auto jj = nlohmann::json::parse(job.out);
  REQUIRE(jj["job"]["processes"].size() == 2);
  CHECK(jj["job"]["processes"][0]["host"] == "h" + kJson);

  const Run live = cli(d, "live --json " + t + " --at end");
  REQUIRE(live.status == 0);
  CHECK_NOTHROW(nlohmann::json::parse(live.out));

  // A baseline's key is escaped when made, so the file, a later trace and diff agree.
  REQUIRE(cli(d, "baseline -o " + d.path + "/b.json " + t).status == 0);
  const auto b = nlohmann::json::parse(read_file(d.path + "/b.json"));
  REQUIRE(b["call_sites"].size() == 1);
  const std::string key = "m" + kJson + ".so f" + kJson + " src" + kJson + ".cpp:7";
  CHECK(b["call_sites"][0]["key"] == key);
  const Run diff = cli(d, "diff --json " + d.path + "/b.json " + t2);
  REQUIRE(diff.status == 0);
  const auto dj = nlohmann::json::parse(diff.out);
  REQUIRE(dj["call_sites"].size() == 1);
  CHECK(dj["call_sites"][0]["change"] == "grew");  // the same key both sides: 4 MiB -> 6 MiB
  CHECK(dj["call_sites"][0]["key"] == key);

  const Run chrome = cli(d, "export --format chrome " + t);
  REQUIRE(chrome.status == 0);
  const auto cj = nlohmann::json::parse(chrome.out);
  bool mark = false;
  for (const auto& e : cj) mark |= e["name"] == "m" + kJson;
  CHECK(mark);

  REQUIRE(cli(d, "export --format jsonl -o " + d.path + "/tables " + t).status == 0);
  size_t rows = 0;
  for (const auto& f : std::filesystem::directory_iterator(d.path + "/tables")) {
    std::istringstream in(read_file(f.path()));
    for (std::string line; std::getline(in, line); ++rows) CHECK_NOTHROW(nlohmann::json::parse(line));
  }
  CHECK(rows > 0);
}

TEST_CASE("hostile strings: memviz loads in Python, pprof in Go's pprof, each with the names escaped") {
  TempDir d;
  const std::string t = d.path + "/t.trace";
  hostile(4).write(t);
  REQUIRE(cli(d, "export --format memviz -o " + d.path + "/s.pickle " + t).status == 0);
  const std::string snapshot = cumemtrace::test::load_with_python(d.path + "/s.pickle").dump();
  CHECK(has(snapshot, nlohmann::json("f" + kJson).dump()));

  REQUIRE(cli(d, "export --format pprof -o " + d.path + "/p.pb.gz " + t).status == 0);
  if (shell("command -v go >/dev/null").status != 0) {
    WARN("go is not installed (scripts/setup.sh): pprof not read back");
    return;
  }
  const auto raw =
      shell("GOCACHE=" + d.path + "/go HOME=" + d.path + " go tool pprof -raw " + d.path + "/p.pb.gz 2>/dev/null");
  REQUIRE(raw.status == 0);
  CHECK(clean(raw.out));
  CHECK(has(raw.out, "f" + kShown));
}
