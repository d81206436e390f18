// Pieces every section of `report` renders alike, so that a section written in its own
// file (pool_view.cpp, report/*_section.cpp) shows frames and fragmentation as the others do. Defined in
// report_text.cpp and report_json.cpp, beside their other uses, and range_view.cpp.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include <string_view>

#include "cumemtrace/rules/fragmentation.h"
#include "read/damage/integrity.h"
#include "stacks/call_site_rule.h"
#include "stacks/stacks.h"

namespace cumemtrace {

// Native frames, "#0 function at file:line (module)" a line, or "(no stack recorded)".
void write_frames(std::ostream& out, const std::vector<Frame>& fs, const char* indent);
// Python frames, "file:line in function" a line, at most `max` (--frames), then how many more.
void write_python_frames(std::ostream& out, const std::vector<Frame>& fs, const char* indent, size_t max);

// "  NOT WHOLE: ..." for each bound the tracer met that cuts `part` (Integrity::bounded_for),
// at the head of that part's section.
void write_not_whole(std::ostream& out, const Integrity& in, std::string_view part);
// A site in one line, as every table names it: its user frame (call_site_rule.h), a native
// one with its file and line when symbolized, or, unnamed, its library.
std::string site_name(const std::vector<Frame>& native, const std::vector<Frame>& python, const std::string& library,
                      const CallerNames::Names& caller);

// docs/report-json.md's frame, Python frame and fragmentation objects.
nlohmann::ordered_json frames_json(const std::vector<Frame>& fs);
nlohmann::ordered_json python_frames_json(const std::vector<Frame>& fs);
nlohmann::ordered_json fragmentation_json(const FragmentationFigures& f);
// A site's `site`: its name by the call-site rule with the caller that tells it apart
// (call_site_rule.h); null when the rule names no frame.
nlohmann::ordered_json site_json(const std::vector<Frame>& native, const std::vector<Frame>& python,
                                 const CallerNames::Names& caller);

// Which of growth's boundaries every JSON list of them names (docs/report-json.md, "Growth
// across iterations"): a loop found from the allocations has one boundary per iteration,
// and a list per site of them all would make the JSON grow as boundaries × sites. All of
// them when asked (`--all-boundaries`) or when they are few; else the first kHead and the
// last kTail, which are what the classes are read from by eye (the start and the steady end).
struct BoundaryListing {
  static constexpr size_t kHead = 8, kTail = 8;
  size_t total = 0;  // growth.boundaries_ns.size()
  bool all = false;
  size_t omitted() const { return all || total <= kHead + kTail ? 0 : total - kHead - kTail; }
  // `at`, one value per boundary, less the boundaries left out.
  nlohmann::ordered_json listed(const std::vector<uint64_t>& at) const;
};

}  // namespace cumemtrace
