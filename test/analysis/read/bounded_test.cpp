// What the tracer did not keep past its bounds (trace_format.h: BoundedRecord): the reader
// keeps each kind's running total, and the report says it beside the figures it cut, in the
// text and the JSON, and no longer calls the trace's end clean without a word.
#include <sstream>
#include <string>

#include "catch.h"
#include "parse_built.h"
#include "read/damage/integrity.h"
#include "render/report_json.h"
#include "render/report_text.h"
#include "reports/report.h"

using namespace cumemtrace;
using cumemtrace::test::parse;
using cumemtrace::test::TraceBuilder;
namespace fmt = cumemtrace::format;
using fmt::MarkSource;

namespace {

// Two starts of "load" (thread 1), one end recorded: the tracer kept 4,096 open ids and
// said it dropped 1, then 2 in all (a running total: 2 is the count). Kind 9 is one this
// reader does not know (5 dropped, 7 kept at once); kind 2 with 0 dropped is no loss.
TraceBuilder bounded(uint16_t minor = fmt::kVersionMinor) {
  TraceBuilder b(minor);
  b.process().device(0, 1ull << 30);
  b.alloc(10, 0xA000, 1000);
  b.mark(20, "load", MarkSource::kNvtxStart, 1).mark(30, "load", MarkSource::kNvtxStart, 1);
  if (minor >= 14) b.bounded(40, 1, 4096, 1).bounded(45, 2, 64, 0);
  b.range_end(50, "load", MarkSource::kNvtxEnd, 1);
  if (minor >= 14) b.bounded(70, 1, 4096, 2).bounded(80, 9, 7, 5);
  b.end(100);
  return b;
}

std::string text_of(const Report& r) {
  std::ostringstream out;
  write_text(out, r);
  return out.str();
}

}  // namespace

TEST_CASE("bounded by the tracer: each kind's last count, said in the integrity lines, by range and in the JSON") {
  ReportOptions opt;
  opt.by_range = true;
  const Report r = build_report(parse(bounded()), opt);
  REQUIRE(r.integrity.bounded.size() == 2);
  CHECK(r.integrity.bounded[0].key == "open_range_ids");
  CHECK(r.integrity.bounded[0].cap == 4096);
  CHECK(r.integrity.bounded[0].dropped == 2);  // the later total, not 1 + 2
  CHECK(r.integrity.bounded[1].key == "bound_9");
  CHECK(r.integrity.bounded[1].dropped == 5);
  CHECK_FALSE(r.integrity.incomplete());  // the memory figures are whole: no event is missing

  const std::string text = text_of(r);
  const std::string said = "2 nvtxRangeStart ranges began while 4096 were open: their ends were not recorded";
  CHECK(text.find("  BOUNDED BY THE TRACER: " + said + "\n") != std::string::npos);
  CHECK(text.find("  BOUNDED BY THE TRACER: 5 things of kind 9 were not kept past a bound of 7\n") !=
        std::string::npos);
  CHECK(text.find("  the trace ended cleanly, but not all it was told was kept (BOUNDED above)\n") !=
        std::string::npos);
  CHECK(text.find("the trace ended cleanly\n") == std::string::npos);
  // Both kinds cut the ranges (an unknown kind may cut anything).
  CHECK(text.find("  NOT WHOLE: " + said + " (BOUNDED BY THE TRACER)\n") != std::string::npos);
  // One end recorded of the two starts: one reads as open at the end.
  CHECK(text.find("  load (nvtx start): 2 calls (1 open at the end)") != std::string::npos);

  const auto j = to_json(r);
  const auto& b = j.at("integrity").at("bounded");
  REQUIRE(b.size() == 2);
  CHECK(b[0].at("what") == "open_range_ids");
  CHECK(b[0].at("cap") == 4096);
  CHECK(b[0].at("dropped") == 2);
  CHECK(b[0].at("says") == said);
  CHECK(b[0].at("affects") == nlohmann::json::array({"by_range", "growth"}));
  CHECK(b[1].at("what") == "bound_9");
  CHECK(b[1].at("affects") == nlohmann::json::array({"by_range", "growth", "pools"}));
  CHECK(j.at("by_range_complete") == false);
  CHECK(j.at("integrity").at("figures_complete") == true);
}

TEST_CASE("a trace of format 1.13 has no Bounded record: nothing bounded, its end clean as before") {
  ReportOptions opt;
  opt.by_range = true;
  const Trace t = parse(bounded(13));
  CHECK(t.version_minor == 13);
  CHECK(t.bounded.empty());
  const Report r = build_report(t, opt);
  CHECK(r.integrity.bounded.empty());
  const std::string text = text_of(r);
  CHECK(text.find("  the trace ended cleanly\n") != std::string::npos);
  CHECK(text.find("BOUNDED") == std::string::npos);
  CHECK(text.find("NOT WHOLE") == std::string::npos);
  const auto j = to_json(r);
  CHECK(j.at("integrity").at("bounded") == nlohmann::json::array());
  CHECK(j.at("by_range_complete") == true);
}
