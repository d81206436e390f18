// `report`'s largest allocations at the peak (docs/cli.md, "Largest allocations at the
// peak"; docs/report-json.md, `largest_at_peak`): the writers of its row in sections.cpp.
#pragma once

#include "render/report/sections.h"

namespace cumemtrace {

void largest_at_peak_text(std::ostream& out, const Report& rep);
void largest_at_peak_json(nlohmann::ordered_json& j, const Report& rep, const JsonContext& ctx);

}  // namespace cumemtrace
