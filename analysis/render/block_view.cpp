#include "render/block_view.h"
#include "render/report/sections.h"

#include <algorithm>

#include "base/escape.h"
#include "base/plural.h"
#include "base/units.h"
#include "render/report_parts.h"
#include "stacks/call_site_rule.h"

namespace cumemtrace {
namespace {

using json = nlohmann::ordered_json;

std::string tensors(uint64_t n) { return std::to_string(n) + (n == 1 ? " block" : " blocks"); }
std::string at(const Report& rep, uint64_t t) { return seconds(t > rep.start_ns ? t - rep.start_ns : 0); }
std::string where(const BlockSite& s) {
  const std::string text = user_frame_text(s.frames, s.python_frames, s.caller.text);
  if (!text.empty()) return printable(text);
  // PyTorch's own threads (the autograd engine's backward) carry no frame of the program's.
  return s.frames.empty() && s.python_frames.empty()
             ? std::string("(no stack recorded)")
             : std::string(
                   "(the framework's frames only, no frame of the program's: its own thread, such as the "
                   "autograd engine's)");
}

json sites_json(const std::vector<BlockSite>& sites, const BoundaryListing& boundaries) {
  json out = json::array();
  for (const BlockSite& s : sites)
    out.push_back({{"class", class_name(s.cls)},
                   {"site", site_json(s.frames, s.python_frames, s.caller)},
                   {"call_site_id", s.node},
                   {"allocations", s.allocations},
                   {"peak_bytes", s.peak_bytes},
                   {"peak_count", s.peak_count},
                   {"end_bytes", s.end_bytes},
                   {"end_count", s.end_count},
                   {"bytes_at_boundaries", boundaries.listed(s.bytes_at)},
                   {"allocations_within", s.allocations_within},
                   {"growth_per_iteration", s.growth_per_iteration},
                   {"growth_min", s.growth_min},
                   {"growth_max", s.growth_max},
                   {"frames", frames_json(s.frames)},
                   {"python_frames", python_frames_json(s.python_frames)}});
  return out;
}

// "free inside 20 MiB in 2 free blocks, the largest 12 MiB (gap ratio 0.357)": the cache's
// own fragmentation, in fragmentation.md's terms.
std::string inside(const CacheFigures& f) {
  if (!f.segments) return "no segment with blocks seen";
  std::string s = "free inside " + iec_exact(f.free) + " in " + count_of(f.free_blocks, "free block");
  if (f.free_blocks) s += ", the largest " + iec_exact(f.largest_free);
  if (f.pending) s += "; " + iec_exact(f.pending) + " freed and waiting on other streams";
  return s + " (" + count_of(f.segments, "segment") + ", gap ratio " + fixed(f.gap_ratio(), 3) + ")";
}

json figures_json(const CacheFigures& f) {
  return {{"time_ns", f.time_ns},         {"segments", f.segments},
          {"segment_bytes", f.reserved},  {"block_bytes", f.allocated},
          {"pending", f.pending},         {"free", f.free},
          {"free_blocks", f.free_blocks}, {"largest_free", f.largest_free},
          {"gap_ratio", f.gap_ratio()},   {"external_fragmentation", f.external_fragmentation()}};
}

// The timeline as columns (a page draws it): times, the allocator's allocated and reserved,
// the largest free block and the bytes pending free at each of its moments.
json timeline_json(const BlockDevice& d) {
  json t = json::array(), a = json::array(), r = json::array(), l = json::array(), p = json::array();
  for (const BlockDevice::Moment& m : d.timeline) {
    t.push_back(m.inside.time_ns);
    a.push_back(m.allocated);
    r.push_back(m.reserved);
    l.push_back(m.inside.largest_free);
    p.push_back(m.inside.pending);
  }
  return {{"time_ns", std::move(t)},
          {"allocated", std::move(a)},
          {"reserved", std::move(r)},
          {"largest_free", std::move(l)},
          {"pending", std::move(p)}};
}

}  // namespace

void write_blocks_summary(std::ostream& out, const Report& rep) {
  const Blocks& b = rep.blocks;
  for (const BlockDevice& d : b.devices) {
    out << "  inside " << b.allocator << "'s cache on device " << d.device << ": peak allocated "
        << iec_exact(d.peak_allocated);
    if (d.peak_allocated) out << " at " << at(rep, d.peak_time_ns);
    size_t shown = 0;
    for (const BlockSite& s : d.sites)
      if (s.peak_bytes && shown < 3)
        out << (shown++ ? ", " : "; held by ") << iec(s.peak_bytes) << " from " << where(s);
    if (rep.complete)
      out << "; at exit " << iec(d.end_allocated) << " in tensors, "
          << iec(d.end_reserved > d.end_allocated ? d.end_reserved - d.end_allocated : 0) << " free in the cache";
    out << "\n";
  }
  for (const std::string& note : not_visible_notes(b)) out << "  " << note << "\n";
}

void write_blocks_text(std::ostream& out, const Report& rep) {
  const Blocks& b = rep.blocks;
  if (!b.recorded && b.not_visible.empty()) return;
  out << "\nInside " << (b.recorded ? b.allocator : b.not_visible.front())
      << "'s cache (the blocks its caching allocator handed out of the segments above, as it reported them)\n";
  for (const std::string& note : not_visible_notes(b))
    out << "  " << note << ": growth, leaks and out-of-memory causes above see its segments, not the tensors in them\n";
  if (!b.recorded) return;
  out << "  " << b.allocator << (b.version.empty() ? "" : " " + printable(b.version))
      << (b.settings.empty() ? "" : ", " + printable(b.settings)) << "\n";
  if (b.off_time_ns)
    out << "  block records turned off at " << at(rep, *b.off_time_ns) << ": " << printable(b.off_reason)
        << "; the figures below stop there\n";
  if (!b.entries_off_reason.empty())
    out << "  its trace entries were not read (" << printable(b.entries_off_reason)
        << "): requested bytes, streams, pools and frees waiting on other streams are not known; a block is free "
           "when the program frees it\n";
  else if (!b.trace_entries)
    out << "  no trace entries: requested bytes, streams, pools and frees waiting on other streams are not known\n";
  if (rep.events_dropped)
    out << "  (the library dropped records, the disk being behind: these figures may lack some blocks)\n";
  for (const BlockDevice& d : b.devices) {
    const uint64_t free_end = d.end_reserved > d.end_allocated ? d.end_reserved - d.end_allocated : 0;
    out << "  device " << d.device << ": " << count_of(d.allocations, "block") << " allocated, " << d.frees
        << " freed\n"
        << "    peak allocated " << iec_exact(d.peak_allocated);
    if (d.peak_allocated)
      out << " at " << at(rep, d.peak_time_ns) << ", reserved then " << iec_exact(d.reserved_at_peak) << "; "
          << inside(d.at_peak);
    out << "\n    peak reserved " << iec_exact(d.peak_reserved) << "; " << inside(d.at_peak_reserved) << "\n"
        << "    at the end: allocated " << iec_exact(d.end_allocated) << " in " << tensors(d.end_count)
        << " (the program's tensors), free inside the cache " << iec_exact(free_end) << ", reserved "
        << iec_exact(d.end_reserved) << "; " << inside(d.at_end) << "\n";
    if (d.unknown_frees)
      out << "    " << count_of(d.unknown_frees, "free") << " of blocks allocated before the records began\n";
    for (const BlockSite& s : d.sites) {
      out << "    " << class_name(s.cls) << ": " << where(s);
      if (s.cls == GrowthSite::Class::kLeak)
        out << ", +" << iec_exact(s.growth_per_iteration) << " per iteration (steps " << iec(s.growth_min) << " to "
            << iec(s.growth_max) << ")";
      out << "; " << iec_exact(s.peak_bytes) << " in " << tensors(s.peak_count) << " at the peak, "
          << iec_exact(s.end_bytes) << " in " << tensors(s.end_count) << " at the end; " << s.allocations
          << " allocated\n";
    }
  }
  for (const BlockOom& o : b.ooms) {
    out << "  out of memory in the allocator on device " << o.device << " at " << at(rep, o.time_ns) << ": "
        << iec_exact(o.request) << " asked for; " << cause_name(o.diagnosis.cause) << ": "
        << printable(o.diagnosis.summary) << "\n";
    out << "    inside the cache then: " << inside(o.cache) << "\n";
    for (const std::string& a : o.diagnosis.advice) out << "    advice: " << printable(a) << "\n";
    for (const BlockSite& s : o.live_sites)
      out << "    live then: " << iec_exact(s.end_bytes) << " in " << tensors(s.end_count) << " from " << where(s)
          << "\n";
  }
}

json blocks_json(const Blocks& b, const BoundaryListing& boundaries) {
  json devices = json::array();
  for (const BlockDevice& d : b.devices)
    devices.push_back({{"device", d.device},
                       {"allocations", d.allocations},
                       {"frees", d.frees},
                       {"unknown_frees", d.unknown_frees},
                       {"peak_allocated",
                        {{"bytes", d.peak_allocated}, {"time_ns", d.peak_time_ns}, {"reserved", d.reserved_at_peak}}},
                       {"peak_reserved", {{"bytes", d.peak_reserved}, {"time_ns", d.peak_reserved_time_ns}}},
                       {"end",
                        {{"allocated", d.end_allocated},
                         {"count", d.end_count},
                         {"reserved", d.end_reserved},
                         {"free_in_cache", d.end_reserved > d.end_allocated ? d.end_reserved - d.end_allocated : 0}}},
                       {"inside",
                        {{"at_peak_allocated", figures_json(d.at_peak)},
                         {"at_peak_reserved", figures_json(d.at_peak_reserved)},
                         {"at_end", figures_json(d.at_end)}}},
                       {"timeline", timeline_json(d)},
                       {"sites", sites_json(d.sites, boundaries)}});
  json ooms = json::array();
  for (const BlockOom& o : b.ooms)
    ooms.push_back({{"time_ns", o.time_ns},
                    {"device", o.device},
                    {"tid", o.tid},
                    {"request", o.request},
                    {"allocated", o.allocated},
                    {"reserved", o.reserved},
                    {"driver_refused", o.driver_refused},
                    {"inside", figures_json(o.cache)},
                    {"cause", cause_name(o.diagnosis.cause)},
                    {"summary", o.diagnosis.summary},
                    {"advice", o.diagnosis.advice},
                    {"frames", frames_json(o.frames)},
                    {"python_frames", python_frames_json(o.python_frames)},
                    {"live_sites", sites_json(o.live_sites, boundaries)}});
  return {{"recorded", b.recorded},
          {"allocator", b.recorded ? json(b.allocator) : json(nullptr)},
          {"version", b.recorded ? json(b.version) : json(nullptr)},
          {"settings", b.recorded ? json(b.settings) : json(nullptr)},
          {"off", b.off_time_ns ? json{{"time_ns", *b.off_time_ns}, {"reason", b.off_reason}} : json(nullptr)},
          {"trace_entries", b.trace_entries},
          {"trace_entries_off", b.entries_off_reason.empty() ? json(nullptr) : json(b.entries_off_reason)},
          {"not_visible", b.not_visible},
          {"notes", not_visible_notes(b)},
          {"devices", std::move(devices)},
          {"out_of_memory", std::move(ooms)}};
}

void blocks_section_json(nlohmann::ordered_json& j, const Report& rep, const JsonContext& ctx) {
  if (rep.blocks.recorded || !rep.blocks.not_visible.empty()) j["blocks"] = blocks_json(rep.blocks, ctx.boundaries);
}

}  // namespace cumemtrace
