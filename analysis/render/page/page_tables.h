// The page's long tables keep their largest rows (docs/html-report.md, "Long tables"):
// a trace with 20,000 range names or pool heaps makes a page of a few hundred rows per
// table and a count of the rest, not one row each. `report --json` keeps every row.
#pragma once

#include <cstddef>

#include <nlohmann/json.hpp>

namespace cumemtrace {

// Rows a page's table keeps: ranges, functions, pool heaps, and each heap's sites.
inline constexpr size_t kPageTableRows = 500;

// Cuts `report` (to_json's, docs/report-json.md) to the page's tables:
//   - by_range and by_function keep their first `rows` (already largest first) and say
//     how many they left out in by_range_omitted / by_function_omitted;
//   - pools.heaps keeps the `rows` heaps with the most bytes at their peak (the first
//     registered among equals), in their order, and pools.heaps_omitted; each kept heap's
//     sites keep their first `rows` (leaks first, then by bytes) and sites_omitted.
// A count is present, 0 or more, wherever its table is.
void bound_page_tables(nlohmann::ordered_json& report, size_t rows = kPageTableRows);

}  // namespace cumemtrace
