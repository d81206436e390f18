// Each device's section: its peak and what held it, what was live at the end, its calls,
// fragmentation, NVML's figure split, the graph memory pool.
#include "render/report/sections.h"

#include "base/escape.h"
#include "base/plural.h"
#include "base/units.h"
#include "read/record_names.h"
#include "render/category_view.h"

namespace cumemtrace {
namespace {

using json = nlohmann::ordered_json;
using format::Kind;

// "read at 1.200 s, 3 ms after the peak": a reading is a moment of its own, said as such
// unless it is the peak's own moment.
std::string read_at(const Report& rep, const GraphPoolReading& r, uint64_t peak_ns) {
  std::string s = "read at " + since_text(rep, r.time_ns);
  if (r.time_ns == peak_ns) return s;
  const uint64_t gap = r.time_ns > peak_ns ? r.time_ns - peak_ns : peak_ns - r.time_ns;
  return s + ", " + fixed(double(gap) / 1e6, 3) + " ms " + (r.time_ns > peak_ns ? "after" : "before") + " the peak";
}

// The CUDA graph memory pool (graph_pool.h) and the graph allocation nodes.
void graph_pool(std::ostream& out, const Report& rep, const DeviceReport& d) {
  const GraphPoolFigures& g = d.graph_pool;
  if (g.shown()) {
    out << "  graph memory pool (held in no allocation; read from the driver): reserved ";
    if (g.at_peak.known)
      out << iec_exact(g.at_peak.reserved) << " at the peak (" << read_at(rep, g.at_peak, d.peak_time_ns) << "), ";
    else if (d.peak_bytes) out << "not read at or before the peak, ";
    out << iec_exact(g.at_end.reserved) << " at the end (read at " << since_text(rep, g.at_end.time_ns)
        << "), highest read " << iec_exact(g.highest.reserved) << " (at " << since_text(rep, g.highest.time_ns) << ")";
    if (g.driver_reserved_high != format::kUnknown64)
      out << "; the driver's high-water mark " << iec_exact(g.driver_reserved_high);
    out << "; " << count_of(g.launches, "graph launch") << ", " << count_of(g.trims, "trim") << "\n";
  }
  if (d.graph_nodes) {
    out << "  graph allocation nodes (virtual addresses of graphs, not live device bytes): "
        << count_of(d.graph_nodes, "node") << " of " << iec_exact(d.graph_node_bytes) << "\n";
    write_sites(out, d.graph_node_sites, d.graph_node_sites_omitted, rep.frames);
  }
}

void device(std::ostream& out, const Report& rep, const DeviceReport& d) {
  out << "\n" << (d.device < 0 ? std::string("Host memory") : "Device " + std::to_string(d.device));
  if (d.device >= 0 && !d.name.empty()) out << " (" << printable(d.name) << ", " << iec(d.total_bytes) << ")";
  out << "\n";
  if (d.device >= 0) {
    out << "  peak requested device bytes" << (rep.integrity.incomplete() ? " (at least)" : "") << ": "
        << iec_exact(d.peak_bytes);
    if (d.peak_bytes)
      out << " at " << since_text(rep, d.peak_time_ns) << "; granule-rounded footprint of mapped allocations "
          << iec_exact(d.frag_at_peak.arena_bytes);
    out << "\n";
  }
  if (d.peak_pinned_bytes)
    out << "  peak pinned host memory: " << iec_exact(d.peak_pinned_bytes) << " at "
        << since_text(rep, d.peak_pinned_time_ns) << "\n";
  // Live at end, by kind (a mapping is the same memory as its physical handle: left out).
  std::string live;
  for (int k = 0; k < format::kKindCount; ++k)
    if (d.end_live_count[k] && k != int(Kind::kVmmMap))
      live += (live.empty() ? "" : ", ") + std::string(format::kind_name(Kind(k))) + " " +
              iec_exact(d.end_live_bytes[k]) + " in " + count_of(d.end_live_count[k], "allocation");
  out << "  live at end" << (rep.integrity.incomplete() ? " (replayed, incomplete)" : "") << ": "
      << (live.empty() ? std::string("nothing") : live) << "\n";
  if (rep.integrity.incomplete() && d.exit_snapshot) {
    const DeviceSnapshot& x = *d.exit_snapshot;
    uint64_t live_bytes = 0;
    for (uint64_t b : x.live_bytes) live_bytes += b;
    out << "  the library's own count at exit: " << iec_exact(live_bytes) << " live in "
        << count_of(x.live_count, "allocation") << ", requested device bytes " << iec_exact(x.device_bytes) << ", peak "
        << iec_exact(x.peak_device_bytes) << "\n";
  }
  // 1.9: memory of other processes mapped here (CUDA IPC): theirs, not in this device's bytes.
  if (d.counts.imports) {
    const int imp = int(Kind::kIpcImport);
    out << "  imports (other processes' memory, not counted here): " << count_of(d.counts.imports, "import")
        << ", at most " << iec_exact(d.peak_import_bytes) << " mapped at once, " << iec_exact(d.end_live_bytes[imp])
        << " in " << count_of(d.end_live_count[imp], "import") << " open at end; exporter pid";
    if (d.import_pids.empty()) out << " unknown";
    for (size_t i = 0; i < d.import_pids.size(); ++i) out << (i ? ", " : " ") << d.import_pids[i];
    out << "\n";
  }
  const DeviceCounts& c = d.counts;
  out << "  calls: " << count_of(c.allocs, "allocation") << ", " << count_of(c.frees, "free") << ", " << c.failed
      << " failed, " << count_of(c.unknown_frees, "free") << " of unknown memory";
  if (c.maps || c.unmaps) out << ", " << count_of(c.maps, "map") << ", " << count_of(c.unmaps, "unmap");
  if (c.pool_trims) out << ", " << count_of(c.pool_trims, "pool trim");
  if (c.contexts) out << ", " << count_of(c.contexts, "context") << " (" << iec(d.context_bytes) << ")";
  if (c.shares) out << ", " << c.shares << " exported to other processes";
  if (c.anomalies) out << ", " << count_of(c.anomalies, "inconsistency") << " (lost events?)";
  out << "\n";
  if (d.peak_bytes) {
    const auto& f = d.frag_at_peak;
    out << "  fragmentation at peak: " << count_of(f.arena_count, "arena") << " of " << iec_exact(f.arena_bytes)
        << ", gaps " << iec_exact(f.gap_bytes) << ", largest gap " << iec_exact(f.largest_gap) << ", gap ratio "
        << fixed(f.gap_ratio(), 4) << ", external fragmentation " << fixed(f.external_fragmentation(), 4) << "\n";
    out << "  maximum gap ratio over time (footprint at least a tenth of its peak): " << fixed(d.max_gap_ratio, 4)
        << " at " << since_text(rep, d.max_gap_ratio_time_ns) << "\n";
  }
  if (d.nvml.known) {
    const auto& n = d.nvml;
    if (!n.has_peak) {
      out << "  NVML (nvidia-smi) process usage (no peak: nothing was live) (reading " << snapshot_reason_text(n.reason)
          << " at " << since_text(rep, n.snapshot_time_ns) << "): ";
    } else if (n.peak_reading_missed && !n.at_peak) {
      out << "  NVML: the peak's own reading came too late (NVML slower than the tracer waits); reading from another "
             "moment, "
          << snapshot_reason_text(n.reason) << " at " << since_text(rep, n.snapshot_time_ns)
          << ", when requested bytes live were " << iec_exact(n.device_bytes)
          << (n.same_moment ? "" : ", NOT of one moment") << ": ";
    } else if (n.at_peak) {
      out << "  NVML (nvidia-smi) process usage at the peak (read " << snapshot_reason_text(n.reason) << " at "
          << since_text(rep, n.snapshot_time_ns) << "): ";
    } else if (n.same_moment) {
      out << "  NVML: the peak itself was not sampled; nearest reading of one moment " << snapshot_reason_text(n.reason)
          << " at " << since_text(rep, n.snapshot_time_ns) << ", when requested bytes live were "
          << iec_exact(n.device_bytes) << ": ";
    } else {
      out << "  NVML (snapshot " << snapshot_reason_text(n.reason) << " at " << since_text(rep, n.snapshot_time_ns)
          << "; NOT of one moment: events may have come between NVML's reading and the tracked figures): ";
    }
    out << iec_exact(n.process_used) << " = footprint " << iec(n.footprint) << " + context " << iec(n.context);
    if (n.pool_slack) out << " + async pool reserve " << iec(n.pool_slack);
    if (n.graph_pool) out << " + graph memory pool " << iec(n.graph_pool);
    out << " + untracked " << iec(n.untracked) << "\n";
  } else if (d.device >= 0 && d.nvml.readings_missed) {
    out << "  NVML: no figures: asked " << count_of(d.nvml.readings_missed, "time")
        << ", it never answered in time (slow or hung; the job did not wait for it)\n";
  } else if (d.device >= 0) {
    out << "  NVML: no figures in this trace (libnvidia-ml.so.1 was not found where the job ran)\n";
  }
  graph_pool(out, rep, d);
  if (!d.top_sites.empty()) {
    out << "  top call sites at peak:\n";
    write_sites(out, d.top_sites, d.top_sites_omitted, rep.frames);
  }
  if (!d.by_library.empty()) {
    out << "  bytes by library at peak:\n";
    for (const auto& l : d.by_library)
      out << "    " << printable(l.library) << ": " << iec_exact(l.bytes) << " in " << count_of(l.count, "allocation")
          << "\n";
  }
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

json exit_snapshot(const std::optional<DeviceSnapshot>& x) {
  if (!x) return nullptr;
  uint64_t live = 0;
  for (uint64_t b : x->live_bytes) live += b;
  return {{"device_bytes", x->device_bytes},
          {"peak_device_bytes", x->peak_device_bytes},
          {"live_bytes", by_kind_json(x->live_bytes)},
          {"live_count", x->live_count}};
}

}  // namespace

void devices_text(std::ostream& out, const Report& rep) {
  for (const auto& d : rep.devices) device(out, rep, d);
}

void devices_json(json& j, const Report& rep, const JsonContext&) {
  json devices = json::array();
  for (const auto& d : rep.devices) {
    json o;
    o["device"] = d.device;
    o["name"] = d.name;
    o["total_bytes"] = d.total_bytes;
    o["peak"] = {{"device_bytes", d.peak_bytes},
                 {"time_ns", d.peak_bytes ? json(d.peak_time_ns) : json(nullptr)},
                 {"since_start_ns", d.peak_bytes ? json(ns_since_start(rep, d.peak_time_ns)) : json(nullptr)},
                 {"arena_bytes", d.frag_at_peak.arena_bytes},
                 {"lower_bound", rep.integrity.incomplete()}};
    o["fragmentation_at_peak"] = fragmentation_json(d.frag_at_peak);
    o["max_gap_ratio"] = {{"gap_ratio", d.max_gap_ratio},
                          {"time_ns", d.max_gap_ratio > 0 ? json(d.max_gap_ratio_time_ns) : json(nullptr)}};
    o["end"] = {{"device_bytes", d.end_device_bytes},
                {"live_bytes", by_kind_json(d.end_live_bytes)},
                {"live_count", by_kind_json(d.end_live_count)},
                {"fragmentation", fragmentation_json(d.frag_at_end)},
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
      return {
          {"reserved_bytes", r.reserved}, {"time_ns", r.time_ns}, {"since_start_ns", ns_since_start(rep, r.time_ns)}};
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
                        {"call_sites", site_rows_json(d.graph_node_sites)},
                        {"call_sites_omitted", d.graph_node_sites_omitted}};
    o["top_call_sites"] = site_rows_json(d.top_sites);
    o["top_call_sites_omitted"] = d.top_sites_omitted;
    o["bytes_by_library"] = libraries_json(d.by_library);
    o["exit_snapshot"] = exit_snapshot(d.exit_snapshot);
    if (d.categories_at_peak)
      o["categories"] = {
          {"at_peak", category_rows_json(*d.categories_at_peak)},
          {"at_end", category_rows_json(d.categories_at_end ? *d.categories_at_end : std::vector<CategoryRow>{})}};
    devices.push_back(std::move(o));
  }
  j["devices"] = std::move(devices);
}

}  // namespace cumemtrace
