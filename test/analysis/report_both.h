// Test-only: a report made both ways a command can read a trace, which must agree: from
// the trace read whole (parse_trace), and from its records with the events read again
// from the bytes at each pass (TraceFile, as `report` and `check` read a file).
#pragma once

#include <cstdint>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "catch.h"
#include "read/event_source.h"
#include "replay/live_time.h"
#include "reports/report.h"
#include "render/report_json.h"
#include "render/report_text.h"
#include "trace_builder.h"

namespace cumemtrace::test {

inline Report report_both(std::span<const uint8_t> bytes, const std::string& path = {},
                          const ReportOptions& opt = ReportOptions{}) {
  const Trace whole = parse_trace(bytes, path);
  Report rep = build_report(whole, opt);
  const TraceFile file(bytes, path, /*hold_bytes=*/0);
  CHECK(file.trace().events.empty());  // none held: they are read again from the bytes
  CHECK(file.events().size() == whole.events.size());
  const Report streamed = build_report(file.trace(), file.events(), opt);
  CHECK(to_json(streamed).dump(1) == to_json(rep).dump(1));
  std::ostringstream a, b;
  write_text(a, streamed);
  write_text(b, rep);
  CHECK(a.str() == b.str());
  return rep;
}

// `live` at `ats` both ways (the whole trace; its events read again from the bytes, with
// "end", "peak" and their order from event_facts), compared as JSON; the first returned.
inline std::vector<LiveReport> live_both(std::span<const uint8_t> bytes, const std::vector<uint64_t>& ats) {
  const Trace whole = parse_trace(bytes);
  std::vector<LiveReport> lives = build_live(whole, ats);
  const TraceFile file(bytes, {}, /*hold_bytes=*/0);
  REQUIRE_FALSE(file.holds_events());
  const EventFacts facts = event_facts(file.trace(), file.events(), true);
  CHECK(facts.known.end_ns == last_moment(whole));
  CHECK(facts.known.peak_ns == peak_moment_of(replay(whole)));
  const auto streamed = build_live(file.trace(), file.events(), ats, facts.in_time_order);
  REQUIRE(streamed.size() == lives.size());
  for (size_t k = 0; k < lives.size(); ++k) CHECK(to_json(streamed[k]).dump() == to_json(lives[k]).dump());
  return lives;
}

inline Report report_both(const TraceBuilder& b, const std::string& path = {},
                          const ReportOptions& opt = ReportOptions{}) {
  const auto& s = b.bytes();
  return report_both({reinterpret_cast<const uint8_t*>(s.data()), s.size()}, path, opt);
}

// A report as `cumemtrace report` writes it as text.
inline std::string text_of(const Report& r) {
  std::ostringstream out;
  write_text(out, r);
  return out.str();
}

}  // namespace cumemtrace::test
