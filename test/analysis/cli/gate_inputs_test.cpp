// No verdict without the data (issue 25, 29): every command that reads traces takes files,
// folders (nested) and manifests alike and says what it could not read; `check`, `baseline`
// and `diff` give no verdict on incomplete figures (exit 3, a line saying why) unless asked
// (--allow-incomplete: the verdict says "on incomplete figures"). Expected byte offsets come
// from the builder's own chunk boundaries, not from the reader.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "catch.h"
#include "shell.h"
#include "temp_dir.h"
#include "trace_builder.h"

using cumemtrace::test::kCli;
using cumemtrace::test::read_file;
using cumemtrace::test::shell;
using cumemtrace::test::TempDir;
using cumemtrace::test::TraceBuilder;

namespace {

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Four allocations of 1 MiB on device 0, the first two freed: peak 4 MiB, 2 MiB live at the
// End record. Each record is a sealed chunk; `starts` holds each chunk's first byte.
struct Built {
  std::string bytes;
  std::vector<uint64_t> starts;  // of the records after the header: process, device, 6 events, end
};
Built build() {
  TraceBuilder b;
  Built out;
  auto mark = [&] { out.starts.push_back(b.bytes().size()); };
  mark(), b.process();
  mark(), b.device(0, 80ull << 30);
  for (uint64_t i = 0; i < 4; ++i) mark(), b.alloc(10 + i, 0x7f0000000000 + (i << 20), 1 << 20);
  mark(), b.free(20, 0x7f0000000000);
  mark(), b.free(21, 0x7f0000100000);
  mark(), b.end(30);
  out.bytes = b.bytes();
  return out;
}

}  // namespace

TEST_CASE(
    "check DIR: a trace with a damaged magic and a 0-byte .trace are said, not skipped: exit 2 as for DIR/*.trace") {
  TempDir d;
  const Built t = build();
  REQUIRE(::mkdir((d.path + "/run-1").c_str(), 0700) == 0);
  write_bytes(d.path + "/run-1/good.trace", t.bytes);
  std::string bad = t.bytes;
  bad[0] = 'X';
  write_bytes(d.path + "/bad.trace", bad);
  write_bytes(d.path + "/empty.trace", "");
  const std::string said = "cumemtrace check: " + d.path + "/bad.trace: bad magic at byte 0: not a cumemtrace trace\n" +
                           "cumemtrace check: " + d.path + "/empty.trace: empty file (0 bytes): no trace in it\n";
  for (const std::string& args : {d.path, d.path + "/*.trace " + d.path + "/run-1/good.trace"}) {
    INFO(args);
    const auto r = shell(kCli + " check " + args + " --max-peak 1GiB 2>&1");
    CHECK(r.status == 2);
    CHECK(r.out == said);
  }
}

TEST_CASE("every command that reads traces takes a folder of nested run folders, and a manifest, as report does") {
  TempDir d;
  const Built t = build();
  REQUIRE(::mkdir((d.path + "/out").c_str(), 0700) == 0);
  REQUIRE(::mkdir((d.path + "/out/run-7").c_str(), 0700) == 0);
  write_bytes(d.path + "/out/run-7/t.trace", t.bytes);
  write_bytes(d.path + "/manifest", "# cumemtrace manifest\n" + d.path + "/out/run-7/t.trace\n");
  for (const std::string& in : {d.path + "/out", d.path + "/manifest"}) {
    INFO(in);
    CHECK(shell(kCli + " report " + in + " >/dev/null 2>&1").status == 0);
    CHECK(shell(kCli + " check " + in + " --max-peak 4MiB 2>/dev/null").status == 0);
    CHECK(shell(kCli + " check " + in + " --max-peak 4194303 2>/dev/null").status == 1);
    CHECK(shell(kCli + " baseline " + in + " -o " + d.path + "/b.json 2>/dev/null").status == 0);
    CHECK(read_file(d.path + "/b.json").find("\"peak\": 4194304") != std::string::npos);
    CHECK(shell(kCli + " export --format folded " + in + " 2>/dev/null").out == "cuda:0;[no stack] 4194304\n");
    CHECK(shell(kCli + " symbolize " + in + " 2>/dev/null").status == 0);
    const auto html = shell(kCli + " html " + in + " -o " + d.path + "/p.html 2>&1");
    if (html.out.find("built without") == std::string::npos) CHECK(html.status == 0);
  }
  // A folder with no trace in it is no pass.
  REQUIRE(::mkdir((d.path + "/none").c_str(), 0700) == 0);
  auto r = shell(kCli + " baseline " + d.path + "/none -o " + d.path + "/c.json 2>&1");
  CHECK(r.status == 2);
  CHECK(r.out == "cumemtrace baseline: no trace found in " + d.path + "/none\n");
}

TEST_CASE("check on a half trace and on a trace with 4 bytes overwritten: exit 3 and the line that says why") {
  TempDir d;
  const Built t = build();
  // Half: cut inside a chunk; the bytes from that chunk's start on are unread, the End is gone.
  const uint64_t half = t.bytes.size() / 2;
  uint64_t cut_chunk = 0;
  for (uint64_t s : t.starts)
    if (s <= half) cut_chunk = s;
  REQUIRE(cut_chunk < half);  // inside a chunk, not at its boundary
  write_bytes(d.path + "/half.trace", t.bytes.substr(0, half));
  auto r = shell(kCli + " check " + d.path + "/half.trace --max-peak 4MiB --max-leaked 1MiB 2>/dev/null");
  CHECK(r.status == 3);
  CHECK(r.out == "INCOMPLETE " + d.path +
                     "/half.trace: figures-complete: figures are incomplete (1 damaged or unread "
                     "byte range, the first at byte " +
                     std::to_string(cut_chunk) +
                     "; no End record (the process was killed, or the trace was cut short)): no limit judged "
                     "(--allow-incomplete judges them on incomplete figures)\n");

  // 4 bytes of the third allocation's record overwritten: its chunk fails its checksum, and
  // the End record counts 6 events where 5 were read.
  std::string hit = t.bytes;
  const uint64_t third = t.starts[4];
  hit.replace(third + 12, 4, "\xff\xff\xff\xff");
  write_bytes(d.path + "/hit.trace", hit);
  const std::string why = "1 damaged or unread byte range, the first at byte " + std::to_string(third) +
                          "; its End record counts 6 events written, 5 were read";
  r = shell(kCli + " check " + d.path + "/hit.trace --max-peak 4MiB --github 2>&1");
  CHECK(r.status == 3);
  CHECK(r.out == "INCOMPLETE " + d.path + "/hit.trace: figures-complete: figures are incomplete (" + why +
                     "): no limit judged (--allow-incomplete judges them on incomplete figures)\n"
                     "::error title=cumemtrace figures-complete::figures are incomplete (" +
                     why +
                     "): no limit judged (--allow-incomplete judges them on incomplete figures)\n"
                     "cumemtrace check: figures incomplete: no verdict on those traces (exit 3)\n");

  // --allow-incomplete: a verdict, saying on what. The replayed peak without the lost 1 MiB
  // allocation is 3 MiB.
  r = shell(kCli + " check " + d.path + "/hit.trace --max-peak 3MiB --allow-incomplete 2>&1");
  CHECK(r.status == 0);
  CHECK(r.out == "cumemtrace check: 1 limit check holds on incomplete figures\n");
  r = shell(kCli + " check " + d.path + "/hit.trace --max-peak 3145727 --allow-incomplete 2>/dev/null");
  CHECK(r.status == 1);
  CHECK(r.out.ends_with(" on incomplete figures (" + why + ")\n"));

  // JUnit says the same.
  const std::string xml = d.path + "/j.xml";
  r = shell(kCli + " check " + d.path + "/hit.trace --max-peak 4MiB --junit " + xml + " 2>/dev/null");
  CHECK(r.status == 3);
  const std::string msg = "figures are incomplete (" + why +
                          "): no limit judged (--allow-incomplete judges them on "
                          "incomplete figures)";
  CHECK(read_file(xml) ==
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<testsuites name=\"cumemtrace check\" tests=\"1\" failures=\"1\">\n"
        "  <testsuite name=\"" +
            d.path +
            "/hit.trace\" tests=\"1\" failures=\"1\" errors=\"0\" "
            "skipped=\"0\">\n"
            "    <testcase classname=\"cumemtrace.check\" name=\"figures-complete\">\n"
            "      <failure message=\"" +
            msg + "\" type=\"incomplete\">" + msg +
            "</failure>\n"
            "    </testcase>\n"
            "  </testsuite>\n"
            "</testsuites>\n");
  r = shell(kCli + " check " + d.path + "/hit.trace --max-peak 4MiB --allow-incomplete --junit " + xml +
            " 2>/dev/null");
  CHECK(r.status == 0);
  CHECK(read_file(xml).find("    <testcase classname=\"cumemtrace.check\" name=\"max-peak d0\">\n"
                            "      <system-out>on incomplete figures (" +
                            why +
                            ")</system-out>\n"
                            "    </testcase>\n") != std::string::npos);

  // The whole trace, untouched, still passes: the gate is not simply closed.
  write_bytes(d.path + "/whole.trace", t.bytes);
  CHECK(shell(kCli + " check " + d.path + "/whole.trace --max-peak 4MiB --max-leaked 2MiB 2>/dev/null").status == 0);
}

TEST_CASE("check: a trace cut at a chunk boundary (no End record) and one with no device are incomplete too") {
  TempDir d;
  const Built t = build();
  write_bytes(d.path + "/cut.trace", t.bytes.substr(0, t.starts.back()));  // all but the End record
  auto r = shell(kCli + " check " + d.path + "/cut.trace --max-peak 4MiB 2>/dev/null");
  CHECK(r.status == 3);
  CHECK(r.out.find("(no End record (the process was killed, or the trace was cut short))") != std::string::npos);
  TraceBuilder none;
  none.process().end(5);
  none.write(d.path + "/none.trace");
  r = shell(kCli + " check " + d.path + "/none.trace --max-peak 4MiB 2>/dev/null");
  CHECK(r.status == 3);
  CHECK(r.out.find("figures are incomplete (no device seen)") != std::string::npos);
}

TEST_CASE("check: a gate that measured nothing says so and exits 4, never 0, whatever was allowed") {
  TempDir d;
  // A trace cut before its first device: --allow-incomplete judges it, but no limit applies.
  TraceBuilder none;
  none.process();
  none.write(d.path + "/none.trace");
  auto r = shell(kCli + " check " + d.path + "/none.trace --max-peak 4MiB --allow-incomplete 2>&1");
  CHECK(r.status == 4);
  CHECK(r.out == "NOT JUDGED " + d.path +
                     "/none.trace: judged: nothing measured: no limit applies (no device seen, or none a limit "
                     "names)\n"
                     "cumemtrace check: a trace measured nothing: no verdict on it (exit 4)\n");
  // A limit on a device the whole trace never used measures nothing either.
  const Built t = build();
  write_bytes(d.path + "/whole.trace", t.bytes);
  r = shell(kCli + " check " + d.path + "/whole.trace --max-peak d5:4MiB 2>/dev/null");
  CHECK(r.status == 4);
  CHECK(r.out.starts_with("NOT JUDGED " + d.path + "/whole.trace: judged: nothing measured"));
  // Beside a trace that breaks a limit the failure wins: exit 1, both said.
  r = shell(kCli + " check " + d.path + "/whole.trace " + d.path +
            "/none.trace --max-peak 1MiB --allow-incomplete 2>/dev/null");
  CHECK(r.status == 1);
  CHECK(r.out.find("FAIL " + d.path + "/whole.trace: max-peak d0: ") != std::string::npos);
  CHECK(r.out.find("NOT JUDGED " + d.path + "/none.trace: judged: ") != std::string::npos);
}

TEST_CASE(
    "baseline on a cut trace and diff on a damaged one: exit 3 and why, and --allow-incomplete goes on, saying so") {
  TempDir d;
  const Built t = build();
  const uint64_t cut = t.starts[5] + 7;  // inside the fourth allocation's chunk
  write_bytes(d.path + "/cut.trace", t.bytes.substr(0, cut));
  write_bytes(d.path + "/whole.trace", t.bytes);
  const std::string why = "figures are incomplete (1 damaged or unread byte range, the first at byte " +
                          std::to_string(t.starts[5]) +
                          "; no End record (the process was killed, or the trace was cut short))";
  auto r = shell(kCli + " baseline " + d.path + "/cut.trace -o " + d.path + "/b.json 2>&1");
  CHECK(r.status == 3);
  CHECK(r.out == "cumemtrace baseline: " + d.path + "/cut.trace: " + why +
                     "; no verdict on them (--allow-incomplete gives one on incomplete figures)\n");
  CHECK(::access((d.path + "/b.json").c_str(), F_OK) != 0);  // no baseline written
  r = shell(kCli + " baseline " + d.path + "/cut.trace -o " + d.path + "/b.json --allow-incomplete 2>&1");
  CHECK(r.status == 0);
  CHECK(r.out.starts_with("cumemtrace baseline: " + d.path + "/cut.trace: " + why +
                          "; the baseline is of incomplete figures\n"));

  r = shell(kCli + " diff " + d.path + "/whole.trace " + d.path + "/cut.trace 2>&1 >/dev/null");
  CHECK(r.status == 3);
  CHECK(r.out == "cumemtrace diff: " + d.path + "/cut.trace: " + why +
                     "; no verdict on them (--allow-incomplete gives one on incomplete figures)\n");
  r = shell(kCli + " diff " + d.path + "/whole.trace " + d.path + "/cut.trace --allow-incomplete 2>&1 >/dev/null");
  CHECK(r.status == 0);
  CHECK(r.out == "cumemtrace diff: " + d.path + "/cut.trace: " + why + "; the differences are on incomplete figures\n");
  // check --baseline FILE on a cut trace: the same refusal, the same status.
  REQUIRE(shell(kCli + " baseline " + d.path + "/whole.trace -o " + d.path + "/w.json 2>/dev/null").status == 0);
  r = shell(kCli + " check " + d.path + "/cut.trace --baseline " + d.path + "/w.json 2>&1");
  CHECK(r.status == 3);
  CHECK(r.out == "cumemtrace check: " + d.path + "/cut.trace: " + why +
                     "; no verdict on them (--allow-incomplete gives one on incomplete figures)\n");
}

TEST_CASE("check --max-failed counts failures not recovered from, and --count-recovered counts them all") {
  TempDir d;
  // 4 GiB fails at 1 ms and succeeds at 2 ms on the same thread: recovered (docs/cli.md).
  TraceBuilder b;
  b.process().device(0, 80ull << 30).stack(1, 0, 0x1000);
  b.failed(1000000, 4ull << 30, 2, 1).alloc(2000000, 0x7f0000000000, 4ull << 30, 1).end(3000000);
  b.write(d.path + "/retry.trace");
  auto r = shell(kCli + " check " + d.path + "/retry.trace --max-failed 0 2>/dev/null");
  CHECK(r.status == 0);
  r = shell(kCli + " check " + d.path + "/retry.trace --max-failed 0 --count-recovered 2>/dev/null");
  CHECK(r.status == 1);
  CHECK(r.out.starts_with("FAIL " + d.path +
                          "/retry.trace: max-failed d0: failed allocations on device 0: 1 (recovered ones counted), "
                          "limit 0; first: 4.00 GiB"));
}
