// Renders a Report / LiveReport as JSON for programs (docs/report-json.md is the schema):
// exact byte counts as integers, times in nanoseconds on the trace's CLOCK_MONOTONIC,
// instruction pointers as hex strings (they exceed a double's exact range), and null
// where a figure was not measured.
#pragma once

#include <nlohmann/json.hpp>

#include "reports/report.h"

namespace cumemtrace {

struct JsonOptions {
  bool all_boundaries = false;  // `--all-boundaries`: every iteration boundary (report_parts.h, BoundaryListing)
};

// ordered_json: keys stay in the documented order, which a person reading the output
// appreciates; programs do not care.
nlohmann::ordered_json to_json(const Report& rep, const JsonOptions& opt = {});
nlohmann::ordered_json to_json(const LiveReport& live);

// The same before escaping (escape.h): strings exactly as the trace holds them.
nlohmann::ordered_json report_json(const Report& rep, const JsonOptions& opt = {});
nlohmann::ordered_json live_json(const LiveReport& live);

}  // namespace cumemtrace
