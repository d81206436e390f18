// The data behind `cumemtrace html` (docs/html-report.md): what a page needs beyond the
// report itself, computed from one more replay of the trace.
//
// A 10-million-event trace cannot go into a page event by event, nor can its address map
// at every moment. So:
//   - the timeline is decimated per device into time buckets (a screen's width of them);
//     each bucket keeps its minimum, maximum and last sample of tracked device bytes, so
//     every peak and trough that a pixel can show survives, with its exact figures;
//   - the address map and the flame graph are kept for a bounded set of moments: each
//     device's peak, the end, the first failed allocations, and moments evenly spaced in
//     event order, the latter only while a budget of allocations lasts.
#pragma once

#include <cstddef>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "read/reader.h"
#include "read/event_source.h"
#include "reports/report.h"
#include "stacks/stacks.h"

namespace cumemtrace {

struct HtmlDataOptions {
  size_t buckets = 2000;         // timeline buckets per device (about a screen's width, twice)
  size_t spaced_moments = 48;    // evenly spaced moments, beyond the peaks, end and failures
  size_t failed_moments = 16;    // the first failed allocations get a moment each
  size_t alloc_budget = 300000;  // allocations drawn over all spaced moments together
  size_t max_marks = 5000;       // marks (steps) drawn as rules; the rest are counted
};

// One process: the timeline, marks and moments; times in ns since rep.start_ns, sizes and
// addresses in bytes (JSON numbers: exact below 2^53, which a 47-bit address and a
// 104-day nanosecond span both are).
nlohmann::ordered_json html_data(const Trace& trace, const Report& rep, const Stacks& stacks,
                                 const HtmlDataOptions& opt = {});
// The same with the events read from `events` (event_source.h: a trace read in passes),
// in two scans; `trace` gives every other record.
nlohmann::ordered_json html_data(const Trace& trace, const EventSource& events, const Report& rep, const Stacks& stacks,
                                 const HtmlDataOptions& opt = {});

}  // namespace cumemtrace
