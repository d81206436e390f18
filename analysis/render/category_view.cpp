#include "render/category_view.h"
#include "render/report/sections.h"

#include <algorithm>
#include <string>

#include "base/plural.h"
#include "base/units.h"
#include "render/report_text.h"

namespace cumemtrace {
namespace {

std::string device_name(int32_t d) { return d < 0 ? std::string("host") : "device " + std::to_string(d); }

void rows_text(std::ostream& out, const std::vector<CategoryRow>& rows) {
  if (rows.empty()) {
    out << "    nothing\n";
    return;
  }
  size_t width = 0;
  for (const auto& r : rows) width = std::max(width, r.category.size());
  for (const auto& r : rows) {
    out << "    " << r.category << std::string(width - r.category.size() + 2, ' ') << iec_exact(r.bytes);
    if (!r.allocations) {
      out << ", in no allocation\n";
      continue;
    }
    out << " in " << count_of(r.count, "allocation");
    // The driver saw the segment, not the tensors in it: say whose category it carries.
    if (r.segment_count)
      out << " (" << (r.segment_bytes == r.bytes ? std::string() : iec(r.segment_bytes) + " of it in ")
          << count_of(r.segment_count, "segment")
          << (r.segment_count == 1 ? ": category inferred from the stack that grew it)"
                                   : ": category inferred from the stacks that grew them)");
    out << "\n";
  }
}

}  // namespace

void write_categories_text(std::ostream& out, const Report& rep) {
  if (!rep.categories) return;
  out << "\nBy category (rules " << kCategoryRulesVersion;
  if (rep.category_user_rules) out << ", " << count_of(rep.category_user_rules, "rule") << " of the user's first";
  out << "; docs/categories.md)\n";
  for (const auto& d : rep.devices) {
    if (!d.categories_at_peak) continue;
    out << "  " << device_name(d.device) << " at its peak (" << iec(d.peak_bytes) << " tracked):\n";
    rows_text(out, *d.categories_at_peak);
    out << "  " << device_name(d.device) << " at the end (" << iec(d.end_device_bytes) << " tracked):\n";
    rows_text(out, d.categories_at_end ? *d.categories_at_end : std::vector<CategoryRow>{});
  }
  for (size_t i = 0; i < rep.failed.size(); ++i) {
    const FailedRow& f = rep.failed[i];
    if (!f.categories) continue;
    out << "  failed allocation " << i + 1 << " (" << iec(f.size) << " on " << failure_place(f) << ", itself "
        << f.request_category << (f.request_segment ? ", a segment" : "") << "): live then\n";
    rows_text(out, *f.categories);
  }
}

nlohmann::ordered_json category_rules_json(const Report& rep) {
  if (!rep.categories) return nullptr;
  return {{"rules_version", kCategoryRulesVersion}, {"user_rules", rep.category_user_rules}};
}

nlohmann::ordered_json category_rows_json(const std::vector<CategoryRow>& rows) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const auto& r : rows)
    a.push_back({{"category", r.category},
                 {"bytes", r.bytes},
                 {"count", r.allocations ? nlohmann::ordered_json(r.count) : nlohmann::ordered_json(nullptr)},
                 {"in_allocations", r.allocations},
                 {"inferred_from_segment_bytes", r.segment_bytes},
                 {"inferred_from_segment_count", r.segment_count}});
  return a;
}

void categories_json(nlohmann::ordered_json& j, const Report& rep, const JsonContext&) {
  if (rep.categories) j["category_rules"] = category_rules_json(rep);
}

}  // namespace cumemtrace
