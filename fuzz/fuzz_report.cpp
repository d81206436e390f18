// libFuzzer target: the report builder and both renderers, on any bytes the reader
// accepts. The JSON must always be valid (dump() throws on invalid UTF-8), and the report
// and `live` made from the events read again from the bytes (event_source.h, as the
// commands read a large file) must be the ones made from the trace read whole.
#include <cstdint>
#include <sstream>

#include "read/event_source.h"
#include "replay/live_time.h"
#include "reports/report.h"
#include "render/report_json.h"
#include "render/report_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const cumemtrace::Trace t = cumemtrace::parse_trace({data, size}, "fuzz.trace");
  if (!t.header_ok) return 0;
  cumemtrace::ReportOptions opt;
  opt.top = 3;
  opt.by_range = true;  // the range scan too (reports/by/ranges.h): the seeds hold ranges, tags and marks
  const cumemtrace::Report rep = cumemtrace::build_report(t, opt);
  std::ostringstream text;
  cumemtrace::write_text(text, rep);
  const std::string json = cumemtrace::to_json(rep).dump();
  const uint64_t at = t.events.empty() ? 0 : t.events.back().time_ns;
  const std::string live = cumemtrace::to_json(cumemtrace::build_live(t, at)).dump();
  if (json.empty() || live.empty()) __builtin_trap();
  const cumemtrace::TraceFile file({data, size}, "fuzz.trace", /*hold_bytes=*/0);
  if (cumemtrace::to_json(cumemtrace::build_report(file.trace(), file.events(), opt)).dump() != json) __builtin_trap();
  const cumemtrace::EventFacts facts = cumemtrace::event_facts(file.trace(), file.events(), false);
  const auto streamed = cumemtrace::build_live(file.trace(), file.events(), {at}, facts.in_time_order);
  if (cumemtrace::to_json(streamed.at(0)).dump() != live) __builtin_trap();
  return 0;
}
