#include "render/report/sections.h"

#include "render/block_view.h"
#include "render/category_view.h"
#include "render/job_view.h"
#include "render/pool_view.h"
#include "render/range_view.h"
#include "render/report/largest_at_peak_section.h"
#include "render/report_text.h"

namespace cumemtrace {

// The text's order is docs/cli.md's; the JSON's keys keep the order they have always had
// (programs do not care, people comparing two outputs do). A section both place alike is one
// row. Three are placed apart, so have a row for each place: the text says what is held at
// exit and the exports still open before the leaks, the JSON after them (the exports after
// the failed allocations); the text puts the reservations last, the JSON before growth. The
// summary is the text's only; the exit status and a framework's limit are the JSON's keys
// (the text says them in the summary).
const std::vector<ReportSection>& report_sections() {
  static const std::vector<ReportSection> sections = {
      {"trace", trace_text, trace_json},
      {"summary", summary, nullptr},
      {"categories", write_categories_text, categories_json},
      {"devices", devices_text, devices_json},
      {"largest_at_peak", largest_at_peak_text, largest_at_peak_json},
      {"held_by_cache_at_exit", held_by_cache_text, nullptr},
      {"exported_still_open", write_exports_still_open, nullptr},
      {"leaks", leaks_text, leaks_json},
      {"held_by_cache_at_exit", nullptr, held_by_cache_json},
      {"failed_allocations", failed_text, failed_json},
      {"exported_still_open", nullptr, exported_still_open_json},
      {"exit", nullptr, exit_json},
      {"failed_frees", failed_frees_text, failed_frees_json},
      {"contexts", contexts_text, contexts_json},
      {"reservations", nullptr, reservations_json},
      {"growth", growth_text, growth_json},
      {"by_range", write_ranges_text, ranges_section_json},
      {"by_function", write_functions_text, functions_section_json},
      {"pools", write_pools_text, pools_section_json},
      {"blocks", write_blocks_text, blocks_section_json},
      {"reservations", reservations_text, nullptr},
  };
  return sections;
}

}  // namespace cumemtrace
