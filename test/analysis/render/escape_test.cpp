#include "base/escape.h"

#include <sstream>

#include "catch.h"
#include "reports/report.h"
#include "render/report_json.h"
#include "render/report_text.h"
#include "trace_builder.h"

using namespace cumemtrace;
using cumemtrace::test::TraceBuilder;

TEST_CASE("valid UTF-8 passes unchanged, every other byte becomes a backslash-x-NN escape") {
  CHECK(utf8_escaped("plain") == "plain");
  CHECK(utf8_escaped("caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80") == "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80");
  CHECK(utf8_escaped("\xff") == "\\xff");
  CHECK(utf8_escaped("a\xc3") == "a\\xc3");                           // a sequence cut short
  CHECK(utf8_escaped("\xc0\xaf") == "\\xc0\\xaf");                    // overlong '/'
  CHECK(utf8_escaped("\xed\xa0\x80") == "\\xed\\xa0\\x80");           // a UTF-16 surrogate
  CHECK(utf8_escaped("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  CHECK(utf8_escaped("line\nbreak") == "line\nbreak");                // JSON escapes controls itself
}

TEST_CASE("printable also escapes C0, DEL and C1 control characters") {
  CHECK(printable("\x1b[2J") == "\\x1b[2J");
  CHECK(printable("a\nb\rc\td") == "a\\x0ab\\x0dc\\x09d");
  CHECK(printable("\x7f") == "\\x7f");
  CHECK(printable("\xc2\x9b"
                  "31m") == "\\xc2\\x9b31m");  // CSI as U+009B
  CHECK(printable("\xc2\xa0") == "\xc2\xa0");  // U+00A0 is no control
}

TEST_CASE("report --json stays valid whatever bytes argv, names, paths and the file name hold") {
  TraceBuilder b;
  b.process(2ull << 20, {"prog\xff", "--x=\xc3"})
      .device(0, 80ull << 30, "GPU\xfe")
      .alloc(10, 0x7000000000, 4096)
      .end(20);
  const Trace t =
      parse_trace({reinterpret_cast<const uint8_t*>(b.bytes().data()), b.bytes().size()}, "/tmp/tr\xe9.trace");
  const Report rep = build_report(t, ReportOptions{});
  const auto j = nlohmann::json::parse(to_json(rep).dump());  // dump() throws on invalid UTF-8
  CHECK(j["trace"]["path"] == "/tmp/tr\\xe9.trace");
  CHECK(j["process"]["command_line"][0] == "prog\\xff");
  CHECK(j["process"]["command_line"][1] == "--x=\\xc3");
  CHECK(j["devices"][0]["name"] == "GPU\\xfe");
  std::ostringstream out;
  write_text(out, rep);
  CHECK(out.str().find("cumemtrace report: /tmp/tr\\xe9.trace\n") != std::string::npos);
  CHECK(out.str().find("command: prog\\xff --x=\\xc3\n") != std::string::npos);
}
