#include "render/page/page_tables.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace cumemtrace {
namespace {

using Json = nlohmann::ordered_json;

// Keeps the first `rows` of `table`; returns how many went.
size_t keep_first(Json& table, size_t rows) {
  const size_t n = table.size();
  if (n <= rows) return 0;
  table.erase(table.begin() + long(rows), table.end());
  return n - rows;
}

void bound_heaps(Json& pools, size_t rows) {
  Json& heaps = pools["heaps"];
  const size_t n = heaps.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t(0));
  const auto peak = [&](size_t h) { return heaps[h]["peak"]["bytes"].get<uint64_t>(); };
  if (n > rows) {
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return peak(a) > peak(b); });
    order.resize(rows);
    std::sort(order.begin(), order.end());
  }
  Json kept = Json::array();
  for (size_t h : order) {
    Json heap = std::move(heaps[h]);
    heap["sites_omitted"] = keep_first(heap["sites"], rows);
    kept.push_back(std::move(heap));
  }
  heaps = std::move(kept);
  pools["heaps_omitted"] = n - order.size();
}

}  // namespace

void bound_page_tables(Json& report, size_t rows) {
  for (const char* table : {"by_range", "by_function"})
    if (auto it = report.find(table); it != report.end() && it->is_array())
      report[std::string(table) + "_omitted"] = keep_first(*it, rows);
  if (auto it = report.find("pools"); it != report.end() && it->is_object()) bound_heaps(*it, rows);
}

}  // namespace cumemtrace
