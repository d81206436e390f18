#include "render/report_json.h"

#include "render/block_view.h"
#include "render/pool_view.h"
#include "render/report_parts.h"

#include "base/json_text.h"
#include "read/record_names.h"
#include "read/result_names.h"
#include "base/units.h"
#include "render/category_view.h"
#include "render/range_view.h"

namespace cumemtrace {
namespace {

using json = nlohmann::ordered_json;
using format::Kind;

json maybe(uint64_t v) { return v == format::kUnknown64 ? json(nullptr) : json(v); }

json frag(const FragmentationFigures& f) {
  return {{"live_bytes", f.live_bytes},   {"live_count", f.live_count},
          {"arena_bytes", f.arena_bytes}, {"arena_count", f.arena_count},
          {"gap_bytes", f.gap_bytes},     {"largest_gap", f.largest_gap},
          {"gap_ratio", f.gap_ratio()},   {"external_fragmentation", f.external_fragmentation()}};
}

json by_kind(const uint64_t (&v)[format::kKindCount], bool skip_zero = true) {
  json o = json::object();
  for (int k = 0; k < format::kKindCount; ++k)
    if (v[k] || !skip_zero) o[std::string(format::kind_name(Kind(k)))] = v[k];
  return o;
}

json frames(const std::vector<Frame>& fs) {
  json a = json::array();
  for (const auto& f : fs) {
    a.push_back({{"ip", hex(f.ip)},
                 {"module", f.module.empty() ? json(nullptr) : json(f.module)},
                 {"offset", f.module.empty() ? json(nullptr) : json(hex(f.offset))},
                 {"function", f.function.empty() ? json(nullptr) : json(f.function)},
                 {"file", f.file.empty() ? json(nullptr) : json(f.file)},
                 {"line", f.line ? json(f.line) : json(nullptr)}});
  }
  return a;
}

// Python frames (trace 1.6), innermost first: where in the program's own code.
json python_frames(const std::vector<Frame>& fs) {
  json a = json::array();
  for (const auto& f : fs)
    a.push_back({{"file", f.file}, {"function", f.function}, {"line", f.line ? json(f.line) : json(nullptr)}});
  return a;
}

// Native and Python frames in one stack (python_stacks.h, merge_stacks).
json merged_frames(const std::vector<Frame>& fs) {
  json a = json::array();
  for (const auto& f : fs) {
    json o = f.python ? python_frames({f})[0] : frames({f})[0];
    o["python"] = f.python;
    a.push_back(std::move(o));
  }
  return a;
}

json block_totals(const BlockTotals& t) {
  return {{"allocated_bytes", t.allocated_bytes},
          {"allocated_blocks", t.allocated_blocks},
          {"pending_free_bytes", t.pending_free_bytes},
          {"pending_free_blocks", t.pending_free_blocks},
          {"free_bytes", t.free_bytes},
          {"free_blocks", t.free_blocks},
          {"largest_free_block", t.largest_free_block}};
}

// docs/report-json.md, "allocator_map".
json allocator_map(const AllocatorMapView& v) {
  json segs = json::array();
  for (const auto& s : v.largest) {
    json o = block_totals(s.totals);
    o["address"] = s.address;
    o["total_bytes"] = s.total_bytes;
    o["stream"] = s.stream;
    o["segment_type"] = s.small ? "small" : "large";
    o["blocks"] = s.blocks;
    o["allocation"] =
        s.joined ? json{{"library", s.library}, {"kind", format::kind_name(s.kind)}, {"size", s.allocation_bytes}}
                 : json(nullptr);
    segs.push_back(std::move(o));
  }
  json o = block_totals(v.totals);
  o["allocator"] = v.allocator;
  o["time_ns"] = v.time_ns;
  o["request"] = v.request;
  o["segments"] = v.segments;
  o["segments_joined"] = v.joined;
  o["segments_unjoined"] = v.segments - v.joined;
  o["total_bytes"] = v.total_bytes;
  o["free_block_fits"] = v.free_block_fits;
  o["largest_segments"] = std::move(segs);
  return o;
}

json sites(const std::vector<SiteRow>& rows) {
  json a = json::array();
  for (const auto& r : rows) {
    a.push_back({{"call_site_id", r.node},
                 {"site", site_json(r.frames, r.python_frames, r.caller)},
                 {"library", r.library},
                 {"device", r.device},
                 {"kind", format::kind_name(r.kind)},
                 {"bytes", r.bytes},
                 {"count", r.count},
                 {"threads", r.threads},
                 {"frames", frames(r.frames)},
                 {"python_frames", python_frames(r.python_frames)},
                 {"merged_frames", merged_frames(r.merged_frames)}});
  }
  return a;
}

json libraries(const std::vector<LibraryRow>& rows) {
  json a = json::array();
  for (const auto& l : rows)
    a.push_back(
        {{"library", l.library}, {"bytes", l.bytes}, {"count", l.count}, {"bytes_by_kind", by_kind(l.bytes_by_kind)}});
  return a;
}

json counts(const DeviceCounts& c) {
  return {{"allocs", c.allocs},
          {"frees", c.frees},
          {"failed", c.failed},
          {"unknown_frees", c.unknown_frees},
          {"maps", c.maps},
          {"unmaps", c.unmaps},
          {"reserves", c.reserves},
          {"reserve_frees", c.reserve_frees},
          {"pool_trims", c.pool_trims},
          {"contexts", c.contexts},
          {"anomalies", c.anomalies},
          {"graph_allocs", c.graph_allocs},
          {"shares", c.shares}};
}

json integrity(const Integrity& in) {
  json damage = json::array();
  for (const auto& d : in.damage)
    damage.push_back({{"byte_offset", d.byte_offset}, {"bytes", d.bytes}, {"message", d.message}});
  json impossible = json::array();
  for (const auto& e : in.impossible)
    impossible.push_back({{"event_index", e.index},
                          {"time_ns", e.event.time_ns},
                          {"device", e.event.device},
                          {"size", e.event.size},
                          {"why", e.why}});
  json bounded = json::array();
  for (const auto& b : in.bounded)
    bounded.push_back(
        {{"what", b.key}, {"cap", b.cap}, {"dropped", b.dropped}, {"says", b.says}, {"affects", b.affects}});
  return {{"checksummed", in.sealed},
          {"checksummed_chunks", in.sealed_chunks},
          {"damaged_ranges", std::move(damage)},
          {"end_record_mismatch", in.end_mismatch ? json{{"events_announced", in.end_mismatch->announced},
                                                         {"events_read", in.end_mismatch->read}}
                                                  : json(nullptr)},
          {"events_dropped", in.events_dropped},
          {"impossible_events", std::move(impossible)},
          {"bounded", std::move(bounded)},
          {"figures_complete", !in.incomplete()}};
}

json exit_snapshot(const std::optional<DeviceSnapshot>& x) {
  if (!x) return nullptr;
  uint64_t live = 0;
  for (uint64_t b : x->live_bytes) live += b;
  return {{"device_bytes", x->device_bytes},
          {"peak_device_bytes", x->peak_device_bytes},
          {"live_bytes", by_kind(x->live_bytes)},
          {"live_count", x->live_count}};
}

}  // namespace

json site_json(const std::vector<Frame>& native, const std::vector<Frame>& python, const CallerNames::Names& caller) {
  const std::string text = user_frame_text(native, python, caller.text);
  return text.empty() ? json(nullptr) : json(text);
}

json frames_json(const std::vector<Frame>& fs) { return frames(fs); }
json python_frames_json(const std::vector<Frame>& fs) { return python_frames(fs); }
json fragmentation_json(const FragmentationFigures& f) { return frag(f); }

json BoundaryListing::listed(const std::vector<uint64_t>& at) const {
  if (omitted() == 0 || at.size() != total) return at;
  json out = json::array();
  for (size_t k = 0; k < kHead; ++k) out.push_back(at[k]);
  for (size_t k = total - kTail; k < total; ++k) out.push_back(at[k]);
  return out;
}

json to_json(const Report& rep, const JsonOptions& opt) { return json_escaped(report_json(rep, opt)); }
json to_json(const LiveReport& live) { return json_escaped(live_json(live)); }

json report_json(const Report& rep, const JsonOptions& opt) {
  const BoundaryListing boundaries{rep.growth.boundaries_ns.size(), opt.all_boundaries};
  const auto since = [&](uint64_t t) { return t > rep.start_ns ? t - rep.start_ns : 0; };
  json j;
  j["format"] = "cumemtrace-report";
  j["schema_version"] = 3;
  j["trace"] = {{"path", rep.path},
                {"complete", rep.complete},
                {"exec_into", rep.exec_into ? json(*rep.exec_into) : json(nullptr)},
                {"error", rep.error ? json{{"byte_offset", rep.error->byte_offset},
                                           {"message", rep.error->message},
                                           {"truncated", rep.error->truncated}}
                                    : json(nullptr)},
                {"events", rep.events},
                {"events_dropped", rep.events_dropped},
                {"unknown_records", rep.unknown_records},
                {"symbolized_ips", rep.symbols}};
  j["integrity"] = integrity(rep.integrity);
  if (rep.process) {
    const auto& p = *rep.process;
    j["process"] = {{"pid", p.pid},
                    {"ppid", p.ppid},
                    {"hostname", p.hostname},
                    {"rank", p.rank},
                    {"command_line", p.argv},
                    {"tool_version", p.tool_version},
                    {"start_monotonic_ns", p.start_monotonic_ns},
                    {"start_realtime_ns", p.start_realtime_ns},
                    {"granule_bytes", p.granule_bytes},
                    {"stack_depth", p.stack_depth}};
    // Trace 1.8: what the launcher said (-1 and {} in older traces).
    j["process"]["local_rank"] = p.local_rank;
    j["process"]["world_size"] = p.world_size;
    nlohmann::ordered_json launcher = nlohmann::ordered_json::object();
    for (const auto& [k, v] : p.launcher) launcher[k] = v;
    j["process"]["launcher"] = std::move(launcher);
    nlohmann::ordered_json environment = nlohmann::ordered_json::object();
    for (const auto& [k, v] : p.environment) environment[k] = v;
    j["process"]["environment"] = std::move(environment);
  } else {
    j["process"] = nullptr;
  }
  j["duration_ns"] = rep.duration_ns;
  if (rep.categories) j["category_rules"] = category_rules_json(rep);

  json devices = json::array();
  for (const auto& d : rep.devices) {
    json o;
    o["device"] = d.device;
    o["name"] = d.name;
    o["total_bytes"] = d.total_bytes;
    o["peak"] = {{"device_bytes", d.peak_bytes},
                 {"time_ns", d.peak_bytes ? json(d.peak_time_ns) : json(nullptr)},
                 {"since_start_ns", d.peak_bytes ? json(since(d.peak_time_ns)) : json(nullptr)},
                 {"arena_bytes", d.frag_at_peak.arena_bytes},
                 {"lower_bound", rep.integrity.incomplete()}};
    o["fragmentation_at_peak"] = frag(d.frag_at_peak);
    o["max_gap_ratio"] = {{"gap_ratio", d.max_gap_ratio},
                          {"time_ns", d.max_gap_ratio > 0 ? json(d.max_gap_ratio_time_ns) : json(nullptr)}};
    o["end"] = {{"device_bytes", d.end_device_bytes},
                {"live_bytes", by_kind(d.end_live_bytes)},
                {"live_count", by_kind(d.end_live_count)},
                {"fragmentation", frag(d.frag_at_end)},
                {"held_by_cache_at_exit_bytes", d.end_held_by_cache_bytes},
                {"possible_leak_bytes", d.end_possible_leak_bytes},
                {"exported_still_open_bytes", d.end_exported_open_bytes}};
    o["peak_pinned"] = {{"bytes", d.peak_pinned_bytes},
                        {"time_ns", d.peak_pinned_bytes ? json(d.peak_pinned_time_ns) : json(nullptr)}};
    o["counts"] = counts(d.counts);
    // 1.9: another process's memory mapped here: listed, never in device_bytes or the peak.
    const int imp = int(format::Kind::kIpcImport);
    o["imports"] = {{"count", d.counts.imports},
                    {"peak_bytes", d.peak_import_bytes},
                    {"live_bytes_end", d.end_live_bytes[imp]},
                    {"live_count_end", d.end_live_count[imp]},
                    {"exporter_pids", d.import_pids}};
    json apis = json::object();
    for (const auto& [api, c] : d.by_api) apis[api] = {{"allocs", c.allocs}, {"frees", c.frees}, {"failed", c.failed}};
    o["counts_by_api"] = std::move(apis);
    o["context_bytes"] = d.context_bytes;
    if (d.nvml.known) {
      o["nvml_at_peak"] = {{"has_peak", d.nvml.has_peak},
                           {"snapshot_time_ns", d.nvml.snapshot_time_ns},
                           {"snapshot_reason", snapshot_reason_name(d.nvml.reason)},
                           {"at_peak", d.nvml.at_peak},
                           {"same_moment", d.nvml.same_moment},
                           {"device_bytes", d.nvml.device_bytes},
                           {"process_used", d.nvml.process_used},
                           {"footprint", d.nvml.footprint},
                           {"context", d.nvml.context},
                           {"pool_slack", d.nvml.pool_slack},
                           {"graph_pool", d.nvml.graph_pool},
                           {"untracked", d.nvml.untracked},
                           {"peak_reading_missed", d.nvml.peak_reading_missed}};
    } else {
      o["nvml_at_peak"] = nullptr;
    }
    o["nvml_readings_missed"] = d.nvml.readings_missed;
    const auto reading = [&](const GraphPoolReading& r) -> json {
      if (!r.known) return nullptr;
      return {{"reserved_bytes", r.reserved}, {"time_ns", r.time_ns}, {"since_start_ns", since(r.time_ns)}};
    };
    const GraphPoolFigures& g = d.graph_pool;
    const auto unknown_null = [](uint64_t v) { return v == format::kUnknown64 ? json(nullptr) : json(v); };
    o["graph_pool"] = {{"at_peak", reading(g.at_peak)},
                       {"at_end", reading(g.at_end)},
                       {"highest", reading(g.highest)},
                       {"driver_reserved_high", unknown_null(g.driver_reserved_high)},
                       {"used_at_end", unknown_null(g.used_at_end)},
                       {"launches", g.launches},
                       {"exec_destroys", g.exec_destroys},
                       {"trims", g.trims}};
    o["graph_nodes"] = {{"count", d.graph_nodes},
                        {"bytes", d.graph_node_bytes},
                        {"call_sites", sites(d.graph_node_sites)},
                        {"call_sites_omitted", d.graph_node_sites_omitted}};
    o["top_call_sites"] = sites(d.top_sites);
    o["top_call_sites_omitted"] = d.top_sites_omitted;
    o["bytes_by_library"] = libraries(d.by_library);
    o["exit_snapshot"] = exit_snapshot(d.exit_snapshot);
    if (d.categories_at_peak)
      o["categories"] = {
          {"at_peak", category_rows_json(*d.categories_at_peak)},
          {"at_end", category_rows_json(d.categories_at_end ? *d.categories_at_end : std::vector<CategoryRow>{})}};
    devices.push_back(std::move(o));
  }
  j["devices"] = std::move(devices);

  json leaks = json::array();
  for (const auto& g : rep.leaks) {
    leaks.push_back({{"kind", format::kind_name(g.kind)},
                     {"bytes", g.bytes},
                     {"count", g.count},
                     {"call_sites", sites(g.sites)},
                     {"call_sites_omitted", g.sites_omitted}});
  }
  j["leaks"] = std::move(leaks);
  json held = json::array();
  for (const auto& g : rep.held_by_cache)
    held.push_back({{"allocator", g.allocator},
                    {"holder", g.library_handles ? "library-handles" : "cache"},
                    {"bytes", g.bytes},
                    {"count", g.count},
                    {"call_sites", sites(g.sites)},
                    {"call_sites_omitted", g.sites_omitted}});
  j["held_by_cache_at_exit"] = std::move(held);

  json failed = json::array();
  for (const auto& f : rep.failed) {
    json o = {{"count", f.count},
              {"time_ns", f.time_ns},
              {"last_time_ns", f.last_time_ns},
              {"since_start_ns", since(f.time_ns)},
              {"device", f.device},
              {"size", f.size},
              {"kind", format::kind_name(f.kind)},
              {"api", f.api},
              {"result", f.result},
              {"result_type", f.runtime_layer ? "cudaError_t" : "CUresult"},
              {"result_name", f.runtime_layer ? cuda_error_name(f.result) : cu_result_name(f.result)},
              {"tid", f.tid},
              {"recovered", f.recovered},
              {"recovered_after_ns", f.recovered ? json(f.recovered_after_ns) : json(nullptr)},
              {"site", site_json(f.frames, f.python_frames, f.caller)},
              {"library", f.library},
              {"frames", frames(f.frames)},
              {"python_frames", python_frames(f.python_frames)},
              {"requested_live_device_bytes", f.live_device_bytes}};
    if (f.snapshot_known) {
      o["snapshot"] = {{"time_ns", f.snapshot_time_ns},           {"reason", snapshot_reason_name(f.snapshot_reason)},
                       {"at_failure", f.snapshot_at_failure},     {"same_moment", f.snapshot_same_moment},
                       {"device_bytes", f.snapshot_device_bytes}, {"process_used", maybe(f.process_used)}};
    } else {
      o["snapshot"] = nullptr;
    }
    o["device_free"] = maybe(f.device_free);
    o["device_total"] = maybe(f.device_total);
    json figures = json::object();
    for (const auto& [name, value] : f.diagnosis.figures) figures[name] = value;
    o["diagnosis"] = {{"cause", cause_name(f.diagnosis.cause)},
                      {"summary", f.diagnosis.summary},
                      {"figures", std::move(figures)},
                      {"advice", f.diagnosis.advice}};
    {
      // The split at the failure and the holder sets that would have let it fit (holders.h).
      const Diagnosis& dg = f.diagnosis;
      json held = json::array(), fits = json::array();
      for (const auto& h : dg.holders)
        held.push_back({{"holder", holder_key(h)},
                        {"name", holder_name(h)},
                        {"bytes", h.bytes},
                        {"count", h.count},
                        {"releasable", releasable(h.kind)}});
      for (const auto& r : dg.fits) {
        json keys = json::array();
        for (size_t i : r.holders) keys.push_back(holder_key(dg.holders[i]));
        fits.push_back({{"holders", std::move(keys)},
                        {"released", r.released},
                        {"free_plus_released", dg.device_free + r.released}});
      }
      o["diagnosis"]["holders"] = std::move(held);
      o["diagnosis"]["would_have_fit"] = std::move(fits);
    }
    o["call_sites_at_failure"] = sites(f.sites_at_failure);
    o["allocator_map"] = f.allocator_map ? allocator_map(*f.allocator_map) : json(nullptr);
    if (f.categories)
      o["categories"] = {{"request", f.request_category},
                         {"request_inferred_from_segment", f.request_segment},
                         {"live", category_rows_json(*f.categories)}};
    if (f.processes_known) {
      json others = json::array();
      for (const auto& p : f.other_processes) others.push_back({{"pid", p.pid}, {"used_bytes", maybe(p.used_bytes)}});
      o["other_processes"] = std::move(others);
    } else {
      o["other_processes"] = nullptr;
    }
    failed.push_back(std::move(o));
  }
  j["failed_allocations"] = std::move(failed);
  j["failed_allocations_total"] = rep.failed_total;
  j["failed_allocations_recovered"] = rep.failed_recovered;
  j["failed_allocations_omitted"] = rep.failed_omitted;
  json still_open = json::array();
  for (const IpcExport& x : rep.ipc.exports)
    if (x.still_open_in)
      still_open.push_back({{"pid", x.still_open_in}, {"device", x.device}, {"address", x.address}, {"bytes", x.size}});
  j["exported_still_open"] = std::move(still_open);
  j["exit_status"] = rep.exit_status >= 0 ? json(rep.exit_status) : json(nullptr);
  if (const auto& l = rep.framework_limit)
    j["framework_limit"] = {{"framework", l->framework},     {"device", l->device},
                            {"peak_bytes", l->peak_bytes},   {"limit_bytes", l->limit_bytes},
                            {"total_bytes", l->total_bytes}, {"fraction", l->fraction},
                            {"setting", l->setting},         {"preallocated", l->preallocated},
                            {"trace_ended", l->trace_ended}, {"message", l->message}};
  else j["framework_limit"] = nullptr;
  json frees = json::array();
  for (const auto& f : rep.failed_frees)
    frees.push_back({{"count", f.count},
                     {"time_ns", f.time_ns},
                     {"last_time_ns", f.last_time_ns},
                     {"since_start_ns", since(f.time_ns)},
                     {"device", f.device},
                     {"address", hex(f.address)},
                     {"size", f.size ? json(f.size) : json(nullptr)},
                     {"kind", f.size ? json(format::kind_name(f.kind)) : json(nullptr)},
                     {"api", f.api},
                     {"result", f.result},
                     {"result_type", f.runtime_layer ? "cudaError_t" : "CUresult"},
                     {"result_name", f.runtime_layer ? cuda_error_name(f.result) : cu_result_name(f.result)},
                     {"tid", f.tid},
                     {"threads", f.threads.size()},
                     {"site", site_json(f.frames, f.python_frames, f.caller)},
                     {"library", f.library},
                     {"frames", frames(f.frames)},
                     {"python_frames", python_frames(f.python_frames)}});
  j["failed_frees"] = std::move(frees);
  j["failed_frees_total"] = rep.failed_frees_total;
  j["failed_frees_omitted"] = rep.failed_frees_omitted;

  json contexts = json::array();
  for (const auto& c : rep.contexts)
    contexts.push_back({{"time_ns", c.time_ns},
                        {"since_start_ns", since(c.time_ns)},
                        {"device", c.device},
                        {"bytes", c.bytes},
                        {"api", c.api},
                        {"tid", c.tid},
                        {"library", c.library},
                        {"frames", frames(c.frames)},
                        {"python_frames", python_frames(c.python_frames)}});
  j["contexts"] = std::move(contexts);

  json res = json::array();
  for (const auto& r : rep.reservations) {
    res.push_back({{"device", r.device},
                   {"reserves", r.reserves},
                   {"frees", r.frees},
                   {"peak_bytes", r.peak_bytes},
                   {"end_bytes", r.end_bytes},
                   {"end_count", r.end_count},
                   {"call_sites", sites(r.sites)}});
  }
  j["reservations"] = std::move(res);

  json growth_sites = json::array();
  for (const auto& s : rep.growth.sites)
    growth_sites.push_back({{"class", class_name(s.cls)},
                            {"call_site_id", s.node},
                            {"site", site_json(s.frames, s.python_frames, s.caller)},
                            {"library", s.library},
                            {"device", s.device},
                            {"kind", format::kind_name(s.kind)},
                            {"inside", s.inside.empty() ? json(nullptr) : json(s.inside)},
                            {"bytes_at_boundaries", boundaries.listed(s.bytes_at)},
                            {"growth_per_iteration", s.growth_per_iteration},
                            {"growth_min", s.growth_min},
                            {"growth_max", s.growth_max},
                            {"live_bytes_end", s.bytes_at.empty() ? 0 : s.bytes_at.back()},
                            {"live_count_end", s.count_at_end},
                            {"allocations_within", s.allocations_within},
                            {"frames", frames(s.frames)},
                            {"python_frames", python_frames(s.python_frames)}});
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
                          {"frames", merged_frames(rep.growth.loop_frames)}}},
      {"loop_search_skipped",
       rep.growth.loop_search_skipped.empty() ? json(nullptr) : json(rep.growth.loop_search_skipped)},
      {"boundaries_ns", boundaries.listed(rep.growth.boundaries_ns)},
      {"boundaries_total", boundaries.total},
      {"boundaries_omitted", boundaries.omitted()},
      {"iterations_complete", (rep.growth.by != IterationsBy::kRanges && rep.growth.by != IterationsBy::kMarks) ||
                                  rep.integrity.bounded_for("growth").empty()},
      {"sites", std::move(growth_sites)}};
  if (rep.ranges) {
    j["by_range"] = ranges_json(rep);
    j["by_range_complete"] = rep.integrity.bounded_for("by_range").empty();
  }
  if (rep.functions) j["by_function"] = functions_json(rep);
  if (!rep.pools.heaps.empty()) {
    j["pools"] = pools_json(rep.pools, boundaries);
    j["pools_complete"] = rep.integrity.bounded_for("pools").empty();
  }
  if (rep.blocks.recorded || !rep.blocks.not_visible.empty()) j["blocks"] = blocks_json(rep.blocks, boundaries);
  return j;
}

json live_json(const LiveReport& live) {
  json devices = json::array();
  for (const auto& d : live.devices) {
    devices.push_back({{"device", d.device},
                       {"device_bytes", d.device_bytes},
                       {"count", d.count},
                       {"live_bytes", by_kind(d.live_bytes, false)},
                       {"live_count", by_kind(d.live_count, false)},
                       {"reserved_bytes", d.reserved_bytes},
                       {"fragmentation", frag(d.frag)},
                       {"bytes_by_library", libraries(d.by_library)}});
  }
  return {{"trace", live.path}, {"at_ns", live.at_ns}, {"events_applied", live.events_applied}, {"devices", devices}};
}

}  // namespace cumemtrace
