// Inside a caching allocator (reports/cache/blocks.h) as text and JSON; report_text and
// report_json call these so that the two cannot disagree.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "render/report_parts.h"
#include "reports/report.h"

namespace cumemtrace {

// The section "Inside PyTorch's cache": the blocks, or that they are not visible.
void write_blocks_text(std::ostream& out, const Report& rep);

// The summary's lines: per device its peak of allocated with who held it and what is live
// at exit, or where a cache is not visible; nothing when no cache held device memory.
void write_blocks_summary(std::ostream& out, const Report& rep);

// docs/report-json.md, "blocks".
nlohmann::ordered_json blocks_json(const Blocks& blocks, const BoundaryListing& boundaries);

}  // namespace cumemtrace
