// Memory per range (reports/by/ranges.h) and per function (reports/by/functions.h) as text and
// JSON, for `report --by range` and `--by function`;
// report_text and report_json call these so the two cannot disagree.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "reports/report.h"

namespace cumemtrace {

// The section "Memory per range": one row per NVTX range or mark name, by bytes allocated.
// Nothing unless the report was built with ReportOptions::by_range.
void write_ranges_text(std::ostream& out, const Report& rep);

// The rows (docs/report-json.md, "by_range"), or null without --by range.
nlohmann::ordered_json ranges_json(const Report& rep);

// The section "Memory per function"; nothing unless built with ReportOptions::by_function.
void write_functions_text(std::ostream& out, const Report& rep);
// The rows (docs/report-json.md, "by_function"), or null without --by function.
nlohmann::ordered_json functions_json(const Report& rep);

}  // namespace cumemtrace
