// `report`'s sections, one row each (sections.cpp): its name, its text writer and its JSON
// writer. write_text and report_json are loops over the table, so the text and the JSON
// list the same sections and a new one is a row and its file (docs/architecture.md,
// "Common tasks"). The pieces every section shows alike (sites, frames, times) are in
// report_parts.h.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "render/report_json.h"
#include "render/report_parts.h"
#include "reports/report.h"

namespace cumemtrace {

// What a section's JSON reads besides the report: which growth boundaries lists name.
struct JsonContext {
  BoundaryListing boundaries;
};

using SectionText = void (*)(std::ostream& out, const Report& rep);
// Adds the section's keys (docs/report-json.md) to the report's object.
using SectionJson = void (*)(nlohmann::ordered_json& j, const Report& rep, const JsonContext& ctx);

// A section's text and JSON come from one Report, so the two cannot disagree. Where the text
// and the JSON place a section differently (the text says what holds memory at exit before
// the leaks, the JSON's keys keep the schema's order), it has a row for each place, with the
// other output's writer null.
struct ReportSection {
  std::string_view name;
  SectionText text;  // null: no text here
  SectionJson json;  // null: no JSON here
};

// Every section, in the order both outputs print them.
const std::vector<ReportSection>& report_sections();

// The sections' writers (each in render/report/<section>_section.cpp, or the view file of
// its own: category_view, range_view, pool_view, block_view, job_view).
void trace_text(std::ostream& out, const Report& rep);
void trace_json(nlohmann::ordered_json& j, const Report& rep, const JsonContext& ctx);
void categories_json(nlohmann::ordered_json& j, const Report& rep, const JsonContext& ctx);
void devices_text(std::ostream& out, const Report& rep);
void devices_json(nlohmann::ordered_json& j, const Report& rep, const JsonContext& ctx);
void held_by_cache_text(std::ostream& out, const Report& rep);
void held_by_cache_json(nlohmann::ordered_json& j, const Report& rep, const JsonContext& ctx);
void leaks_text(std::ostream& out, const Report& rep);
void leaks_json(nlohmann::ordered_json& j, const Report& rep, const JsonContext& ctx);
void exported_still_open_json(nlohmann::ordered_json& j, const Report& rep, const JsonContext& ctx);
void exit_json(nlohmann::ordered_json& j, const Report& rep, const JsonContext& ctx);
void failed_text(std::ostream& out, const Report& rep);
void failed_json(nlohmann::ordered_json& j, const Report& rep, const JsonContext& ctx);
void failed_frees_text(std::ostream& out, const Report& rep);
void failed_frees_json(nlohmann::ordered_json& j, const Report& rep, const JsonContext& ctx);
void contexts_text(std::ostream& out, const Report& rep);
void contexts_json(nlohmann::ordered_json& j, const Report& rep, const JsonContext& ctx);
void reservations_text(std::ostream& out, const Report& rep);
void reservations_json(nlohmann::ordered_json& j, const Report& rep, const JsonContext& ctx);
void growth_text(std::ostream& out, const Report& rep);
void growth_json(nlohmann::ordered_json& j, const Report& rep, const JsonContext& ctx);
void ranges_section_json(nlohmann::ordered_json& j, const Report& rep, const JsonContext& ctx);
void functions_section_json(nlohmann::ordered_json& j, const Report& rep, const JsonContext& ctx);
void pools_section_json(nlohmann::ordered_json& j, const Report& rep, const JsonContext& ctx);
void blocks_section_json(nlohmann::ordered_json& j, const Report& rep, const JsonContext& ctx);

// Text pieces the sections share (report_text.cpp).
std::string since_text(const Report& rep, uint64_t t);  // "1.234 s" since the process started
std::string device_label(int32_t d);                    // "device 0", or "host"
std::string snapshot_reason_text(format::SnapshotReason r);
// Call-site rows, numbered, each with its threads and frames; "... and N more call sites".
void write_sites(std::ostream& out, const std::vector<SiteRow>& rows, uint64_t omitted, size_t max_frames);
std::string recovery_text(const FailedRow& f);         // docs/cli.md, "Recovered or fatal"
std::string free_result_text(const FailedFreeRow& f);  // "result 800 cudaErrorNotPermitted"

// JSON pieces the sections share (report_json.cpp; docs/report-json.md's objects).
uint64_t ns_since_start(const Report& rep, uint64_t t);
nlohmann::ordered_json unknown_null(uint64_t v);  // null for format::kUnknown64
nlohmann::ordered_json by_kind_json(const uint64_t (&v)[format::kKindCount], bool skip_zero = true);
nlohmann::ordered_json merged_frames_json(const std::vector<Frame>& fs);
nlohmann::ordered_json site_rows_json(const std::vector<SiteRow>& rows);
nlohmann::ordered_json libraries_json(const std::vector<LibraryRow>& rows);

}  // namespace cumemtrace
