// Growth across iterations (growth.h): how the iterations were found and each site's class.
#include "render/report/sections.h"

#include <algorithm>

#include "base/escape.h"
#include "base/plural.h"
#include "base/units.h"
#include "read/record_names.h"
#include "stacks/call_site_rule.h"

namespace cumemtrace {
namespace {

using json = nlohmann::ordered_json;

// A growth site's user frame (call_site_rule.h): " (train.py:88 in step)", or the native
// function with its template arguments elided; "" when unnamed.
std::string user_frame_label(const GrowthSite& site) {
  const std::string text = user_frame_text(site.frames, site.python_frames, site.caller.text);
  return text.empty() ? "" : " (" + printable(text) + ")";
}

// How the growth analysis found its iterations, and how sure that is (iterations.h).
void growth_iterations(std::ostream& out, const Growth& g, size_t max_frames) {
  const std::string partial = g.partial_left_out ? "; a partial last iteration left out" : "";
  switch (g.by) {
    case IterationsBy::kRanges:
      out << " (" << g.iterations << " iterations: NVTX ranges \"" << printable(g.mark) << "\"" << partial << ")\n";
      return;
    case IterationsBy::kMarks:
      out << " (" << g.iterations << " iterations marked \"" << printable(g.mark) << "\"" << partial << ")\n";
      return;
    case IterationsBy::kCallSite:
      out << " (" << g.iterations << " iterations found: one allocation per iteration from the stack below"
          << (g.loop_inside.empty() ? "" : ", a block inside " + g.loop_inside + "'s cache") << "; " << g.agreeing
          << " of " << g.stretches << " stretches between them allocate and free alike"
          << (g.agreeing == g.stretches ? " (exact)" : " (the others differ: iterations approximate)") << partial
          << ")\n";
      write_python_frames(out,
                          std::vector<Frame>(std::find_if(g.loop_frames.begin(), g.loop_frames.end(),
                                                          [](const Frame& f) { return f.python; }),
                                             g.loop_frames.end()),
                          "     ", max_frames);
      write_frames(out,
                   std::vector<Frame>(g.loop_frames.begin(), std::find_if(g.loop_frames.begin(), g.loop_frames.end(),
                                                                          [](const Frame& f) { return f.python; })),
                   "     ");
      return;
    case IterationsBy::kNone: break;
  }
  out << " (no iterations found: no NVTX range or mark name twice, and no stack that recurs once per loop";
  if (!g.loop_search_skipped.empty()) out << " looked for (" << g.loop_search_skipped << ")";
  out << "; the only boundary is the end)\n";
}

}  // namespace

void growth_text(std::ostream& out, const Report& rep) {
  const Growth& g = rep.growth;
  out << "\nGrowth across iterations";
  growth_iterations(out, g, rep.frames);
  if (g.by == IterationsBy::kRanges || g.by == IterationsBy::kMarks) write_not_whole(out, rep.integrity, "growth");
  if (g.sites.empty()) out << "  nothing was allocated\n";
  for (const auto& site : g.sites) {
    out << "  " << class_name(site.cls) << ": "
        << (site.inside.empty() ? std::string(format::kind_name(site.kind))
                                : "tensors inside " + site.inside + "'s cache")
        << " from " << printable(site.library) << user_frame_label(site) << " on " << device_label(site.device);
    if (site.cls == GrowthSite::Class::kLeak || site.cls == GrowthSite::Class::kGrowing)
      out << ", +" << iec_exact(site.growth_per_iteration) << " per iteration (steps " << iec(site.growth_min) << " to "
          << iec(site.growth_max) << ")";
    out << ", " << iec_exact(site.bytes_at.back()) << " in " << site.count_at_end << " live at the end";
    if (site.cls == GrowthSite::Class::kTransient) out << " (" << site.allocations_within << " made and freed)";
    out << "\n";
  }
}

void growth_json(json& j, const Report& rep, const JsonContext& ctx) {
  json growth_sites = json::array();
  for (const auto& s : rep.growth.sites)
    growth_sites.push_back({{"class", class_name(s.cls)},
                            {"call_site_id", s.node},
                            {"site", site_json(s.frames, s.python_frames, s.caller)},
                            {"library", s.library},
                            {"device", s.device},
                            {"kind", format::kind_name(s.kind)},
                            {"inside", s.inside.empty() ? json(nullptr) : json(s.inside)},
                            {"bytes_at_boundaries", ctx.boundaries.listed(s.bytes_at)},
                            {"growth_per_iteration", s.growth_per_iteration},
                            {"growth_min", s.growth_min},
                            {"growth_max", s.growth_max},
                            {"live_bytes_end", s.bytes_at.empty() ? 0 : s.bytes_at.back()},
                            {"live_count_end", s.count_at_end},
                            {"allocations_within", s.allocations_within},
                            {"frames", frames_json(s.frames)},
                            {"python_frames", python_frames_json(s.python_frames)}});
  j["growth"] = {
      {"mark", rep.growth.mark.empty() ? json(nullptr) : json(rep.growth.mark)},
      {"iterations", rep.growth.iterations},
      {"found_by", iterations_by_name(rep.growth.by)},
      {"partial_left_out", rep.growth.partial_left_out},
      {"loop", rep.growth.by != IterationsBy::kCallSite
                   ? json(nullptr)
                   : json{{"stretches", rep.growth.stretches},
                          {"agreeing", rep.growth.agreeing},
                          {"exact", rep.growth.agreeing == rep.growth.stretches},
                          {"inside", rep.growth.loop_inside.empty() ? json(nullptr) : json(rep.growth.loop_inside)},
                          {"frames", merged_frames_json(rep.growth.loop_frames)}}},
      {"loop_search_skipped",
       rep.growth.loop_search_skipped.empty() ? json(nullptr) : json(rep.growth.loop_search_skipped)},
      {"boundaries_ns", ctx.boundaries.listed(rep.growth.boundaries_ns)},
      {"boundaries_total", ctx.boundaries.total},
      {"boundaries_omitted", ctx.boundaries.omitted()},
      {"iterations_complete", (rep.growth.by != IterationsBy::kRanges && rep.growth.by != IterationsBy::kMarks) ||
                                  rep.integrity.bounded_for("growth").empty()},
      {"sites", std::move(growth_sites)}};
}

}  // namespace cumemtrace
