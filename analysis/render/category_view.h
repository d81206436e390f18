// Figures by category (reports/by/categories.h) as text and JSON, for `report --by category`;
// report_text and report_json call these so the two cannot disagree.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "reports/report.h"

namespace cumemtrace {

// The section "By category": each device at its peak and at the end, then each failed
// allocation. Nothing unless the report was built with categories.
void write_categories_text(std::ostream& out, const Report& rep);

// {"rules_version", "user_rules"} (docs/report-json.md), or null without categories.
nlohmann::ordered_json category_rules_json(const Report& rep);
nlohmann::ordered_json category_rows_json(const std::vector<CategoryRow>& rows);

}  // namespace cumemtrace
