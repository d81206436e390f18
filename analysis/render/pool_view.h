// Inside pools (reports/pools.h) as text and JSON; report_text and report_json call these
// so that the two cannot disagree.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "render/report_parts.h"
#include "reports/report.h"

namespace cumemtrace {

// The section "Inside pools": nothing when no pool told NVTX about its heaps.
void write_pools_text(std::ostream& out, const Report& rep);

// The summary's line on pools: their leaks, or their peak when none leaks; nothing without pools.
void write_pools_summary(std::ostream& out, const Report& rep);

// docs/report-json.md, "pools".
nlohmann::ordered_json pools_json(const Pools& pools, const BoundaryListing& boundaries);

}  // namespace cumemtrace
