// The data behind `cumemtrace html` (docs/html-report.md), as the page reads it: what
// reports/timeline/page_model.h computed beyond the report (the decimated timelines, the
// moments' address maps and flame graphs, the flame graph over a time range), its stacks
// named and interned, with the trace's marks and NVML readings, the caching allocator's
// figures from the report, and the views of `report --view` (page/allocation_views.h).
#pragma once

#include <nlohmann/json.hpp>

#include "read/reader.h"
#include "reports/report.h"
#include "reports/timeline/page_model.h"
#include "stacks/stacks.h"

namespace cumemtrace {

// One process: the timeline, marks and moments; times in ns since rep.start_ns, sizes and
// addresses in bytes (JSON numbers: exact below 2^53, which a 47-bit address and a
// 104-day nanosecond span both are). `page` was computed from `trace` and `rep`; its
// moments are let go as they are written, so that the page's data and its model are not
// both held whole.
nlohmann::ordered_json html_data(const Trace& trace, const Report& rep, const Stacks& stacks, PageModel&& page,
                                 const HtmlDataOptions& opt = {});

}  // namespace cumemtrace
