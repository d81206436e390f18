// The page's views of `report --view` (docs/cli.md, "Views"; docs/html-report.md,
// "Allocations"): the same figures (reports/views/allocation_stats.h), trees
// (render/views/allocation_tree.h), orders and size ranges as the text views, as the JSON
// the page draws. Each list keeps its first ctx.top rows and says how many it left out.
#pragma once

#include <cstddef>

#include <nlohmann/json.hpp>

#include "render/views/views.h"
#include "reports/views/allocation_stats.h"

namespace cumemtrace {

// Nodes of one tree the page keeps, whatever --top allows: a deep program's tree of ten
// children a level would be millions.
inline constexpr size_t kPageTreeNodes = 2000;

// {allocations, bytes, temporary, top_allocations: {rows, omitted}, temporary_sites: {rows,
// omitted}, sizes: [...], tree, callers} (docs/html-report.md, "Allocations").
nlohmann::ordered_json allocation_views_json(const AllocationStats& st, const ViewContext& ctx,
                                             size_t tree_nodes = kPageTreeNodes);

}  // namespace cumemtrace
