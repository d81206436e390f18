// Failed allocations: each group with NVML's figures at the failure, its stack, why it
// failed (diagnosis.h), who held the memory (holders.h) and the allocator's block map.
#include "render/report/sections.h"

#include "base/escape.h"
#include "base/plural.h"
#include "base/units.h"
#include "read/record_names.h"
#include "read/result_names.h"
#include "render/category_view.h"
#include "render/report_text.h"

namespace cumemtrace {
namespace {

using json = nlohmann::ordered_json;
using format::kUnknown64;

std::string block_summary(const BlockTotals& t) {
  return std::to_string(t.allocated_blocks) + " allocated (" + iec_exact(t.allocated_bytes) + "), " +
         std::to_string(t.pending_free_blocks) + " pending free (" + iec_exact(t.pending_free_bytes) + "), " +
         std::to_string(t.free_blocks) + " free (" + iec_exact(t.free_bytes) + ", largest " +
         iec_exact(t.largest_free_block) + ")";
}

// The block-level view inside the allocator's cached segments (allocator_map.h).
void allocator_map(std::ostream& out, const AllocatorMapView& v) {
  const std::string who = v.allocator == "pytorch" ? "PyTorch's" : v.allocator + "'s";
  out << "     " << who << " block map at the failure: " << count_of(v.segments, "cached segment") << " ("
      << iec_exact(v.total_bytes) << "), " << v.joined << " joined to a traced allocation, " << v.segments - v.joined
      << " not\n";
  out << "       in the cached segments: " << iec_exact(v.totals.allocated_bytes) << " allocated, "
      << iec_exact(v.totals.pending_free_bytes) << " pending free, " << iec_exact(v.totals.free_bytes) << " free in "
      << count_of(v.totals.free_blocks, "block") << "\n";
  out << "       largest free block: " << iec_exact(v.totals.largest_free_block);
  if (v.free_block_fits) out << "; a free block is as large as the request (" << v.request << " B)\n";
  else out << "; no free block is as large as the request (" << v.request << " B)\n";
  for (const auto& s : v.largest) {
    out << "       segment " << hex(s.address) << " " << iec_exact(s.total_bytes) << (s.small ? " small" : " large");
    if (s.joined) out << ", " << format::kind_name(s.kind) << " allocation from " << printable(s.library);
    else out << ", no traced allocation at this address";
    out << ": " << count_of(s.blocks, "block") << ": " << block_summary(s.totals) << "\n";
  }
}

// NVML's figure at a failure split into holders, and the fewest of them that, released,
// would have let the request fit (holders.h), with the sum written out.
void holders(std::ostream& out, const Diagnosis& d, uint64_t request) {
  if (d.holders.empty()) return;
  out << "       held at the failure: free " << iec_exact(d.device_free);
  for (const auto& h : d.holders) out << "; " << holder_name(h) << " " << iec_exact(h.bytes);
  out << "\n";
  for (size_t k = 0; k < d.fits.size(); ++k) {
    out << "       would have fit (" << k + 1 << "): free " << iec(d.device_free);
    for (size_t i : d.fits[k].holders) out << " + " << holder_name(d.holders[i]) << " " << iec(d.holders[i].bytes);
    out << " = " << iec_exact(d.device_free + d.fits[k].released) << " >= request " << iec_exact(request) << "\n";
  }
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

}  // namespace

void failed_text(std::ostream& out, const Report& rep) {
  out << "\nFailed allocations\n";
  if (rep.failed.empty()) out << "  none\n";
  for (size_t i = 0; i < rep.failed.size(); ++i) {
    const FailedRow& f = rep.failed[i];
    out << "  " << i + 1 << ". " << iec_exact(f.size) << " of " << format::kind_name(f.kind) << " memory on "
        << failure_place(f) << " via " << printable(f.api) << " at " << since_text(rep, f.time_ns) << " (result "
        << f.result << " " << (f.runtime_layer ? cuda_error_name(f.result) : cu_result_name(f.result)) << ", thread "
        << f.tid << ")\n";
    if (f.count > 1)
      out << "     failed " << f.count << " times alike, the last at " << since_text(rep, f.last_time_ns) << "\n";
    if (f.recovered)
      out << "     recovered: " << recovery_text(f) << " (an allocation at least as large, on the same thread)\n";
    out << "     requested bytes live on the device then: " << iec_exact(f.live_device_bytes) << "\n";
    if (f.snapshot_known) {
      out << "     NVML (snapshot " << snapshot_reason_text(f.snapshot_reason) << " at "
          << since_text(rep, f.snapshot_time_ns);
      if (f.snapshot_at_failure) out << ", right after the failure";
      else if (f.snapshot_same_moment)
        out << ", not at the failure: tracked device bytes then " << iec_exact(f.snapshot_device_bytes);
      else out << ", not of one moment";
      out << "): free " << (f.device_free == kUnknown64 ? "?" : iec_exact(f.device_free)) << " of "
          << (f.device_total == kUnknown64 ? "?" : iec_exact(f.device_total));
      if (f.process_used != kUnknown64) out << ", this process using " << iec_exact(f.process_used);
      out << "\n";
      for (const auto& p : f.other_processes)
        out << "     another process on this GPU: pid " << p.pid << " using "
            << (p.used_bytes == kUnknown64 ? std::string("?") : iec_exact(p.used_bytes)) << "\n";
    } else if (f.device_total != kUnknown64) {
      out << "     no snapshot; device total " << iec_exact(f.device_total) << "\n";
    }
    out << "     from " << printable(f.library) << ":\n";
    write_python_frames(out, f.python_frames, "       ", rep.frames);
    write_frames(out, f.frames, "       ");
    const Diagnosis& dg = f.diagnosis;
    out << "     Why it failed: " << cause_name(dg.cause) << ": " << printable(dg.summary) << "\n";
    for (const auto& [name, value] : dg.figures)
      out << "       " << name << ": "
          << (name.find("allocations") != std::string::npos ? std::to_string(value) : iec_exact(value)) << "\n";
    holders(out, dg, f.size);
    for (const auto& a : dg.advice) out << "       advice: " << a << "\n";
    if (dg.cause == Cause::kDemand && !f.sites_at_failure.empty()) {
      out << "     live on the device at the failure, by call site:\n";
      write_sites(out, f.sites_at_failure, 0, rep.frames);
    }
    if (f.allocator_map) allocator_map(out, *f.allocator_map);
  }

  if (rep.failed_omitted)
    out << "  ... and " << rep.failed_omitted << " more kinds of failure (" << rep.failed_total
        << " failed allocations in all)\n";
}

void failed_json(json& j, const Report& rep, const JsonContext&) {
  json failed = json::array();
  for (const auto& f : rep.failed) {
    json o = {{"count", f.count},
              {"time_ns", f.time_ns},
              {"last_time_ns", f.last_time_ns},
              {"since_start_ns", ns_since_start(rep, f.time_ns)},
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
              {"frames", frames_json(f.frames)},
              {"python_frames", python_frames_json(f.python_frames)},
              {"requested_live_device_bytes", f.live_device_bytes}};
    if (f.snapshot_known) {
      o["snapshot"] = {{"time_ns", f.snapshot_time_ns},           {"reason", snapshot_reason_name(f.snapshot_reason)},
                       {"at_failure", f.snapshot_at_failure},     {"same_moment", f.snapshot_same_moment},
                       {"device_bytes", f.snapshot_device_bytes}, {"process_used", unknown_null(f.process_used)}};
    } else {
      o["snapshot"] = nullptr;
    }
    o["device_free"] = unknown_null(f.device_free);
    o["device_total"] = unknown_null(f.device_total);
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
    o["call_sites_at_failure"] = site_rows_json(f.sites_at_failure);
    o["allocator_map"] = f.allocator_map ? allocator_map(*f.allocator_map) : json(nullptr);
    if (f.categories)
      o["categories"] = {{"request", f.request_category},
                         {"request_inferred_from_segment", f.request_segment},
                         {"live", category_rows_json(*f.categories)}};
    if (f.processes_known) {
      json others = json::array();
      for (const auto& p : f.other_processes)
        others.push_back({{"pid", p.pid}, {"used_bytes", unknown_null(p.used_bytes)}});
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
}

}  // namespace cumemtrace
