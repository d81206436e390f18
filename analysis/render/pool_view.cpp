#include "render/pool_view.h"
#include "render/report/sections.h"

#include "base/escape.h"
#include "base/plural.h"
#include "base/units.h"
#include "render/report_parts.h"
#include "stacks/call_site_rule.h"

namespace cumemtrace {
namespace {

using json = nlohmann::ordered_json;

std::string regions(uint64_t n) { return count_of(n, "region"); }

std::string usage_name(uint8_t usage) {
  std::string s;
  if (usage & 1) s += "sub-allocator";
  if (usage & 2) s += s.empty() ? "layout" : ", layout";
  return s;
}

// "43.00 MiB in 7 regions; 21.00 MiB of the heap free, the largest run 8.00 MiB (external
// fragmentation 0.6190)"
void figures(std::ostream& out, const PoolHeap& h, uint64_t bytes, uint64_t count, const FragmentationFigures& f) {
  out << iec_exact(bytes) << " in " << regions(count);
  if (h.size)
    out << "; " << iec_exact(f.gap_bytes) << " of the heap free, the largest run " << iec_exact(f.largest_gap)
        << " (external fragmentation " << fixed(f.external_fragmentation(), 4) << ")";
}

// A name in double quotes, a quote inside it escaped (printable() escapes control characters).
std::string quoted(const std::string& name) {
  std::string out = "\"";
  for (const char c : printable(name)) out += c == '"' ? std::string("\\\"") : std::string(1, c);
  return out + "\"";
}
std::string heap_name(const PoolHeap& h) { return h.name.empty() ? hex(h.handle) : quoted(h.name); }
std::string region_name(const PoolSite& s) { return s.name.empty() ? "unnamed" : quoted(s.name); }

}  // namespace

void write_pools_summary(std::ostream& out, const Report& rep) {
  const Pools& p = rep.pools;
  if (p.heaps.empty()) return;
  size_t leaks = 0;
  out << "  inside pools: ";
  for (const PoolHeap& h : p.heaps)
    for (const PoolSite& s : h.sites) {
      if (s.cls != GrowthSite::Class::kLeak) continue;
      if (leaks++ < 3) {
        const std::string where = user_frame_text(s.frames, s.python_frames, s.caller.text);
        out << (leaks > 1 ? ", " : "leaks ") << "+" << iec(s.growth_per_iteration) << " per iteration of "
            << region_name(s) << " regions in heap " << heap_name(h)
            << (where.empty() ? "" : " from " + printable(where));
      }
    }
  if (leaks > 3) out << ", ...";
  if (!leaks) {
    out << "no leak; at their peaks ";
    for (size_t i = 0; i < p.heaps.size() && i < 3; ++i)
      out << (i ? ", " : "") << heap_name(p.heaps[i]) << " " << iec(p.heaps[i].peak_bytes) << " in "
          << regions(p.heaps[i].peak_count);
    if (p.heaps.size() > 3) out << ", ... (" << p.heaps.size() << " heaps)";
  }
  out << "\n";
}

void write_pools_text(std::ostream& out, const Report& rep) {
  const Pools& p = rep.pools;
  if (p.heaps.empty()) return;
  out << "\nInside pools (what pools said through NVTX's memory extension: the heaps they manage and the\n"
         "regions they handed out; the device memory above counts a heap's allocation once, whole)\n";
  if (rep.events_dropped)
    out << "  (the library dropped " << rep.events_dropped
        << " records, the disk being behind: these figures may lack some of the pools' calls)\n";
  write_not_whole(out, rep.integrity, "pools");
  for (const PoolHeap& h : p.heaps) {
    out << "  heap " << (h.name.empty() ? std::string("(unnamed)") : quoted(h.name));
    if (!h.declared) out << " " << hex(h.handle) << ", not registered when used";
    if (const std::string u = usage_name(h.usage); !u.empty()) out << " (" << u << ")";
    if (h.size) out << ": " << iec_exact(h.size) << " at " << hex(h.address);
    if (h.backing_size)
      out << " on device " << h.device << ", in the " << iec_exact(h.backing_size) << " allocation at "
          << hex(h.backing_address);
    else if (h.size) out << ", in no allocation the trace has";
    if (h.declared) out << "; registered at " << seconds(h.registered_ns - std::min(h.registered_ns, rep.start_ns));
    if (h.gone_ns) out << ", unregistered at " << seconds(*h.gone_ns - std::min(*h.gone_ns, rep.start_ns));
    if (h.resets) out << ", reset " << count_of(h.resets, "time");
    out << "\n    " << regions(h.regions_registered) << " registered (" << iec_exact(h.bytes_registered) << ")";
    if (h.outside) out << ", " << h.outside << " of them not wholly inside the heap";
    out << "\n    peak ";
    figures(out, h, h.peak_bytes, h.peak_count, h.inside_at_peak);
    if (h.peak_bytes) out << ", at " << seconds(h.peak_time_ns - std::min(h.peak_time_ns, rep.start_ns));
    out << "\n    " << (h.gone_ns ? "when unregistered " : "at the end ");
    figures(out, h, h.end_bytes, h.end_count, h.inside_at_end);
    out << "\n";
    for (const PoolSite& s : h.sites) {
      const std::string where = user_frame_text(s.frames, s.python_frames, s.caller.text);
      out << "    " << class_name(s.cls) << ": " << region_name(s) << " regions"
          << (where.empty() ? "" : " from " + printable(where));
      if (s.cls == GrowthSite::Class::kLeak)
        out << ", +" << iec_exact(s.growth_per_iteration) << " per iteration (steps " << iec(s.growth_min) << " to "
            << iec(s.growth_max) << ")";
      out << "; " << iec_exact(s.peak_bytes) << " in " << s.peak_count << " at the peak, " << iec_exact(s.end_bytes)
          << " in " << s.end_count << (h.gone_ns ? " when unregistered" : " at the end") << "; " << s.registered
          << " registered\n";
    }
  }
  if (p.unknown_references)
    out << "  " << p.unknown_references
        << " resizes, unregisters or names of no live region (the pool's calls disagree with each other)\n";
}

json pools_json(const Pools& pools, const BoundaryListing& boundaries) {
  json heaps = json::array();
  for (const PoolHeap& h : pools.heaps) {
    json sites = json::array();
    for (const PoolSite& s : h.sites)
      sites.push_back({{"name", s.name},
                       {"class", class_name(s.cls)},
                       {"site", site_json(s.frames, s.python_frames, s.caller)},
                       {"call_site_id", s.node},
                       {"registered", s.registered},
                       {"peak_bytes", s.peak_bytes},
                       {"peak_count", s.peak_count},
                       {"end_bytes", s.end_bytes},
                       {"end_count", s.end_count},
                       {"bytes_at_boundaries", boundaries.listed(s.bytes_at)},
                       {"registered_within", s.registered_within},
                       {"growth_per_iteration", s.growth_per_iteration},
                       {"growth_min", s.growth_min},
                       {"growth_max", s.growth_max},
                       {"frames", frames_json(s.frames)},
                       {"python_frames", python_frames_json(s.python_frames)}});
    const bool range = h.size != 0;
    heaps.push_back({{"handle", hex(h.handle)},
                     {"name", h.name},
                     {"usage", h.usage},
                     {"declared", h.declared},
                     {"address", range ? json(hex(h.address)) : json(nullptr)},
                     {"size", range ? json(h.size) : json(nullptr)},
                     {"device", h.backing_size ? json(h.device) : json(nullptr)},
                     {"allocation", h.backing_size ? json{{"address", hex(h.backing_address)}, {"size", h.backing_size}}
                                                   : json(nullptr)},
                     {"registered_ns", h.declared ? json(h.registered_ns) : json(nullptr)},
                     {"unregistered_ns", h.gone_ns ? json(*h.gone_ns) : json(nullptr)},
                     {"resets", h.resets},
                     {"regions_registered", h.regions_registered},
                     {"bytes_registered", h.bytes_registered},
                     {"regions_outside", h.outside},
                     {"peak",
                      {{"bytes", h.peak_bytes},
                       {"count", h.peak_count},
                       {"time_ns", h.peak_time_ns},
                       {"inside", range ? fragmentation_json(h.inside_at_peak) : json(nullptr)}}},
                     {"end",
                      {{"bytes", h.end_bytes},
                       {"count", h.end_count},
                       {"inside", range ? fragmentation_json(h.inside_at_end) : json(nullptr)}}},
                     {"sites", std::move(sites)}});
  }
  return {{"heaps", std::move(heaps)}, {"unknown_references", pools.unknown_references}};
}

void pools_section_json(nlohmann::ordered_json& j, const Report& rep, const JsonContext& ctx) {
  if (rep.pools.heaps.empty()) return;
  j["pools"] = pools_json(rep.pools, ctx.boundaries);
  j["pools_complete"] = rep.integrity.bounded_for("pools").empty();
}

}  // namespace cumemtrace
