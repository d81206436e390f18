// The answer first (docs/cli.md, `report`'s Summary), read from the sections below it.
#include "render/report/sections.h"

#include "base/escape.h"
#include "base/plural.h"
#include "base/units.h"
#include "render/block_view.h"
#include "render/pool_view.h"
#include "render/report_text.h"

namespace cumemtrace {
namespace {

// "+2.00 MiB from train.py:12 in step, …": at most three sites and their growth, one line.
void growth_list(std::ostream& out, const std::vector<const GrowthSite*>& sites) {
  for (size_t i = 0; i < sites.size() && i < 3; ++i)
    out << (i ? ", " : "") << "+" << iec(sites[i]->growth_per_iteration) << " from "
        << site_name(sites[i]->frames, sites[i]->python_frames, sites[i]->library, sites[i]->caller);
  out << (sites.size() > 3 ? ", ...\n" : "\n");
}

// The failure the summary leads with: the last one the program did not recover from
// (docs/cli.md, "Recovered or fatal"); null when it recovered from every one shown.
const FailedRow* last_unrecovered(const Report& rep) {
  const FailedRow* last = nullptr;
  for (const auto& f : rep.failed)
    if (!f.recovered && (!last || f.last_time_ns >= last->last_time_ns)) last = &f;
  return last;
}

}  // namespace

// The answer first (docs/cli.md, `report`'s Summary): each device's peak with what held it,
// what failed and why, what grew each iteration, what was live at exit; the sections below
// give the details.
void summary(std::ostream& out, const Report& rep) {
  out << "\nSummary\n";
  for (const auto& d : rep.devices) {
    if (d.device < 0) continue;
    out << "  peak on " << device_label(d.device) << ": " << iec_exact(d.peak_bytes);
    if (d.peak_bytes) out << " at " << since_text(rep, d.peak_time_ns);
    for (size_t i = 0; i < d.top_sites.size() && i < 3; ++i) {
      const SiteRow& r = d.top_sites[i];
      out << (i ? ", " : "; held by ") << iec(r.bytes) << " from "
          << site_name(r.frames, r.python_frames, r.library, r.caller);
    }
    if (d.top_sites.size() > 3 || d.top_sites_omitted) out << ", ...";
    out << "\n";
  }
  if (rep.failed.empty()) {
    out << "  failed allocations: none\n";
    if (const auto& l = rep.framework_limit)
      out << "  framework limit reached on " << device_label(l->device) << ": " << l->message
          << (l->trace_ended ? "; exit status " + std::to_string(l->exit_status)
                             : std::string("; the trace has no end (the process was killed or died of a signal): "
                                           "whether the limit ended it is not known"))
          << (l->preallocated ? ", the limit preallocated at start" : "") << "\n";
  } else if (const FailedRow* fatal = last_unrecovered(rep)) {
    // The failure the program did not get past is the answer; those it recovered from are not.
    const FailedRow& f = *fatal;
    out << "  failed allocations: " << rep.failed_total;
    if (rep.failed_recovered) out << " (" << rep.failed_recovered << " recovered)";
    out << "; the "
        << (rep.failed_recovered    ? "last unrecovered "
            : rep.failed_total == 1 ? "first "
                                    : "last ")
        << iec_exact(f.size) << " on " << failure_place(f) << " at " << since_text(rep, f.last_time_ns) << " from "
        << site_name(f.frames, f.python_frames, f.library, f.caller) << ": " << cause_name(f.diagnosis.cause) << "\n";
  } else {
    const FailedRow& f = rep.failed[0];
    out << "  failed allocations: " << rep.failed_total << ", all recovered; the first " << iec_exact(f.size) << " on "
        << failure_place(f) << " at " << since_text(rep, f.time_ns) << " from "
        << site_name(f.frames, f.python_frames, f.library, f.caller) << " " << recovery_text(f) << "\n";
  }
  const Growth& g = rep.growth;
  std::vector<const GrowthSite*> leaking;
  for (const auto& site : g.sites)
    if (site.cls == GrowthSite::Class::kLeak) leaking.push_back(&site);
  if (g.by == IterationsBy::kNone) {
    out << "  growth per iteration: no iterations found\n";
  } else if (leaking.empty()) {
    out << "  growth per iteration: none over " << count_of(g.iterations, "iteration") << "\n";
  } else {
    out << "  growth per iteration over " << count_of(g.iterations, "iteration") << ": ";
    growth_list(out, leaking);
  }
  std::vector<const GrowthSite*> growing;
  for (const auto& site : g.sites)
    if (site.cls == GrowthSite::Class::kGrowing) growing.push_back(&site);
  if (!growing.empty()) {
    out << "  growing need per iteration (each buffer replaced by a larger one, not a leak): ";
    growth_list(out, growing);
  }
  if (rep.failed_frees_total) {
    const FailedFreeRow& f = rep.failed_frees[0];
    out << "  failed frees: " << rep.failed_frees_total << " (the memory stayed allocated); the first "
        << printable(f.api) << " at " << since_text(rep, f.time_ns) << " from "
        << site_name(f.frames, f.python_frames, f.library, f.caller) << ": " << free_result_text(f) << "\n";
  }
  write_pools_summary(out, rep);
  write_blocks_summary(out, rep);
  for (const auto& d : rep.devices) {
    if (d.device < 0) continue;
    out << "  at exit on " << device_label(d.device) << ": ";
    if (!rep.complete) {
      out << "unknown (the trace did not end cleanly); live when it stops " << iec_exact(d.end_device_bytes) << "\n";
      continue;
    }
    out << "possible leaks " << iec_exact(d.end_possible_leak_bytes);
    if (d.end_held_by_cache_bytes)
      out << ", held by caches and libraries' handles " << iec_exact(d.end_held_by_cache_bytes);
    if (d.end_exported_open_bytes)
      out << ", exported and still open elsewhere " << iec_exact(d.end_exported_open_bytes);
    out << "\n";
  }
}

}  // namespace cumemtrace
