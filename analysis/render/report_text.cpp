// `report`'s text. Over 600 lines: the sections that share its helpers (site names,
// frames, devices, times) are here; the ones with their own (pools, blocks, ranges) are not.
#include "render/report_text.h"

#include <algorithm>
#include <ctime>
#include <string>

#include "stacks/call_site_rule.h"
#include "base/escape.h"
#include "base/plural.h"
#include "read/result_names.h"
#include "base/units.h"
#include "render/category_view.h"
#include "render/job_view.h"
#include "render/block_view.h"
#include "render/pool_view.h"
#include "render/range_view.h"
#include "render/report_parts.h"

namespace cumemtrace {
namespace {

using format::Kind;
using format::kUnknown64;

std::string since(const Report& r, uint64_t t) { return seconds(t > r.start_ns ? t - r.start_ns : 0); }

std::string device_label(int32_t d) { return d < 0 ? std::string("host") : "device " + std::to_string(d); }

std::string wall_time(uint64_t realtime_ns) {
  const time_t secs = time_t(realtime_ns / 1000000000ull);
  struct tm tm;
  if (!gmtime_r(&secs, &tm)) return "?";
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

std::string command_line(const ProcessInfo& p) {
  std::string s;
  for (const auto& a : p.argv) {
    if (!s.empty()) s += ' ';
    const std::string e = printable(a);
    s += e.find_first_of(" \t'\"") == std::string::npos && !e.empty() ? e : "'" + e + "'";
  }
  return s;
}

std::string reason_name(format::SnapshotReason r) {
  switch (r) {
    case format::SnapshotReason::kPeriodic: return "periodic";
    case format::SnapshotReason::kFailedAllocation: return "after a failed allocation";
    case format::SnapshotReason::kExit: return "at exit";
    case format::SnapshotReason::kPeak: return "after a new peak";
    case format::SnapshotReason::kSampledPeak: return "at a sampled peak";
    case format::SnapshotReason::kLateReading: return "when a late NVML reading came";
  }
  return "reason " + std::to_string(uint32_t(r));
}

// Python frames (trace 1.6), innermost first, before the native ones: the program's own
// lines are what its author can act on. "train.py:88 in forward".
// At most `max` of them (--frames, as for native frames), then how many were left out.
void python_frames(std::ostream& out, const std::vector<Frame>& fs, const char* indent, size_t max) {
  for (size_t i = 0; i < fs.size() && i < max; ++i)
    out << indent << printable(describe(fs[i], FrameStyle::kReport)) << '\n';
  if (fs.size() > max) out << indent << "... " << count_of(fs.size() - max, "more Python frame") << " (--frames)\n";
}

void frames(std::ostream& out, const std::vector<Frame>& fs, const char* indent) {
  // libc's start-up frames end every stack of the main thread and say nothing about it.
  size_t shown = fs.size();
  while (shown > 0 && is_libc_startup(fs[shown - 1])) --shown;
  for (size_t i = 0; i < shown; ++i) {
    out << indent << '#' << i << ' ' << printable(describe(fs[i], FrameStyle::kReport)) << '\n';
  }
  if (fs.empty()) out << indent << "(no stack recorded)\n";
}

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
      python_frames(out,
                    std::vector<Frame>(std::find_if(g.loop_frames.begin(), g.loop_frames.end(),
                                                    [](const Frame& f) { return f.python; }),
                                       g.loop_frames.end()),
                    "     ", max_frames);
      frames(out,
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

std::string block_summary(const BlockTotals& t) {
  return std::to_string(t.allocated_blocks) + " allocated (" + iec_exact(t.allocated_bytes) + "), " +
         std::to_string(t.pending_free_blocks) + " pending free (" + iec_exact(t.pending_free_bytes) + "), " +
         std::to_string(t.free_blocks) + " free (" + iec_exact(t.free_bytes) + ", largest " +
         iec_exact(t.largest_free_block) + ")";
}

// The block-level view inside the allocator's cached segments (allocator_map.h).
void allocator_map(std::ostream& out, const AllocatorMapView& v) {
  const std::string who = v.allocator == "pytorch" ? "PyTorch's" : v.allocator + "'s";
  out << "     " << who << " block map at the failure: " << v.segments << " cached segments ("
      << iec_exact(v.total_bytes) << "), " << v.joined << " joined to a traced allocation, " << v.segments - v.joined
      << " not\n";
  out << "       in the cached segments: " << iec_exact(v.totals.allocated_bytes) << " allocated, "
      << iec_exact(v.totals.pending_free_bytes) << " pending free, " << iec_exact(v.totals.free_bytes) << " free in "
      << v.totals.free_blocks << " blocks\n";
  out << "       largest free block: " << iec_exact(v.totals.largest_free_block);
  if (v.free_block_fits) out << "; a free block is as large as the request (" << v.request << " B)\n";
  else out << "; no free block is as large as the request (" << v.request << " B)\n";
  for (const auto& s : v.largest) {
    out << "       segment " << hex(s.address) << " " << iec_exact(s.total_bytes) << (s.small ? " small" : " large");
    if (s.joined) out << ", " << format::kind_name(s.kind) << " allocation from " << printable(s.library);
    else out << ", no traced allocation at this address";
    out << ": " << s.blocks << " blocks: " << block_summary(s.totals) << "\n";
  }
}

void sites(std::ostream& out, const std::vector<SiteRow>& rows, uint64_t omitted, size_t max_frames) {
  for (size_t i = 0; i < rows.size(); ++i) {
    const SiteRow& r = rows[i];
    out << "    " << i + 1 << ". " << iec_exact(r.bytes) << " in " << count_of(r.count, "allocation") << " from "
        << printable(r.library);
    if (r.device >= 0) out << " (device " << r.device << ")";
    // Which thread allocated: a site without Python frames is often a framework's own
    // thread (autograd's backward, NCCL), whose stack has no Python to show.
    if (r.threads.size() == 1) out << ", thread " << *r.threads.begin();
    else if (r.threads.size() > 1) out << ", " << r.threads.size() << " threads";
    out << '\n';
    python_frames(out, r.python_frames, "         ", max_frames);
    frames(out, r.frames, "         ");
  }
  if (omitted) out << "    ... and " << omitted << " more call sites\n";
}

// "read at 1.200 s, 3 ms after the peak": a reading is a moment of its own, said as such
// unless it is the peak's own moment.
std::string read_at(const Report& rep, const GraphPoolReading& r, uint64_t peak_ns) {
  std::string s = "read at " + since(rep, r.time_ns);
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
    out << iec_exact(g.at_end.reserved) << " at the end (read at " << since(rep, g.at_end.time_ns) << "), highest read "
        << iec_exact(g.highest.reserved) << " (at " << since(rep, g.highest.time_ns) << ")";
    if (g.driver_reserved_high != format::kUnknown64)
      out << "; the driver's high-water mark " << iec_exact(g.driver_reserved_high);
    out << "; " << count_of(g.launches, "graph launch") << ", " << count_of(g.trims, "trim") << "\n";
  }
  if (d.graph_nodes) {
    out << "  graph allocation nodes (virtual addresses of graphs, not live device bytes): "
        << count_of(d.graph_nodes, "node") << " of " << iec_exact(d.graph_node_bytes) << "\n";
    sites(out, d.graph_node_sites, d.graph_node_sites_omitted, rep.frames);
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
      out << " at " << since(rep, d.peak_time_ns) << "; granule-rounded footprint of mapped allocations "
          << iec_exact(d.frag_at_peak.arena_bytes);
    out << "\n";
  }
  if (d.peak_pinned_bytes)
    out << "  peak pinned host memory: " << iec_exact(d.peak_pinned_bytes) << " at "
        << since(rep, d.peak_pinned_time_ns) << "\n";
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
  if (c.anomalies) out << ", " << c.anomalies << " inconsistencies (lost events?)";
  out << "\n";
  if (d.peak_bytes) {
    const auto& f = d.frag_at_peak;
    out << "  fragmentation at peak: " << count_of(f.arena_count, "arena") << " of " << iec_exact(f.arena_bytes)
        << ", gaps " << iec_exact(f.gap_bytes) << ", largest gap " << iec_exact(f.largest_gap) << ", gap ratio "
        << fixed(f.gap_ratio(), 4) << ", external fragmentation " << fixed(f.external_fragmentation(), 4) << "\n";
    out << "  maximum gap ratio over time (footprint at least a tenth of its peak): " << fixed(d.max_gap_ratio, 4)
        << " at " << since(rep, d.max_gap_ratio_time_ns) << "\n";
  }
  if (d.nvml.known) {
    const auto& n = d.nvml;
    if (!n.has_peak) {
      out << "  NVML (nvidia-smi) process usage (no peak: nothing was live) (reading " << reason_name(n.reason)
          << " at " << since(rep, n.snapshot_time_ns) << "): ";
    } else if (n.peak_reading_missed && !n.at_peak) {
      out << "  NVML: the peak's own reading came too late (NVML slower than the tracer waits); reading from another "
             "moment, "
          << reason_name(n.reason) << " at " << since(rep, n.snapshot_time_ns) << ", when requested bytes live were "
          << iec_exact(n.device_bytes) << (n.same_moment ? "" : ", NOT of one moment") << ": ";
    } else if (n.at_peak) {
      out << "  NVML (nvidia-smi) process usage at the peak (read " << reason_name(n.reason) << " at "
          << since(rep, n.snapshot_time_ns) << "): ";
    } else if (n.same_moment) {
      out << "  NVML: the peak itself was not sampled; nearest reading of one moment " << reason_name(n.reason)
          << " at " << since(rep, n.snapshot_time_ns) << ", when requested bytes live were "
          << iec_exact(n.device_bytes) << ": ";
    } else {
      out << "  NVML (snapshot " << reason_name(n.reason) << " at " << since(rep, n.snapshot_time_ns)
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
    sites(out, d.top_sites, d.top_sites_omitted, rep.frames);
  }
  if (!d.by_library.empty()) {
    out << "  bytes by library at peak:\n";
    for (const auto& l : d.by_library)
      out << "    " << printable(l.library) << ": " << iec_exact(l.bytes) << " in " << count_of(l.count, "allocation")
          << "\n";
  }
}

// Everything that makes the figures below less than the whole truth, said before them.
void integrity(std::ostream& out, const Report& rep) {
  const Integrity& in = rep.integrity;
  if (in.sealed) out << "  checksums: " << in.sealed_chunks << " chunks verified\n";
  for (const auto& d : in.damage)
    out << "  DAMAGED: " << iec_exact(d.bytes) << " at byte " << d.byte_offset << " unread: " << printable(d.message)
        << "\n";
  if (in.end_mismatch)
    out << "  END RECORD MISMATCH: it counts " << in.end_mismatch->announced << " events written, "
        << in.end_mismatch->read << " were read\n";
  if (in.events_dropped)
    out << "  " << in.events_dropped << " EVENTS DROPPED by the writer (its buffer was full): replayed figures are"
        << " lower bounds; the library's own figures at exit are shown beside them\n";
  for (const auto& e : in.impossible)
    out << "  IMPOSSIBLE EVENT #" << e.index << ": " << e.why << "; left out of every figure\n";
  for (const auto& b : in.bounded) out << "  BOUNDED BY THE TRACER: " << b.says << "\n";
  if (in.incomplete()) out << "  FIGURES ARE INCOMPLETE: events are missing or were set aside (above)\n";
  if (rep.complete && !in.incomplete()) {
    out << "  the trace ended cleanly"
        << (rep.exec_into ? ": the process exec'd into " + printable(*rep.exec_into) : "")
        << (in.bounded.empty() ? "" : ", but not all it was told was kept (BOUNDED above)") << "\n";
  } else if (!rep.complete) {
    out << "  THE TRACE HAS NO END RECORD: the process died before finishing it (killed, or _exit)"
        << (in.damage.empty() ? "" : ", or the end is damaged") << ".\n";
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

}  // namespace

void write_frames(std::ostream& out, const std::vector<Frame>& fs, const char* indent) { frames(out, fs, indent); }
void write_python_frames(std::ostream& out, const std::vector<Frame>& fs, const char* indent, size_t max) {
  python_frames(out, fs, indent, max);
}

// A native frame also gets its file's name and line, when symbolized: sites of one function
// differ by line.
std::string site_name(const std::vector<Frame>& native, const std::vector<Frame>& python, const std::string& library,
                      const CallerNames::Names& caller) {
  std::string text = user_frame_text(native, python);
  if (text.empty()) return printable(library);
  const bool native_named =
      !native.empty() && !native[0].function.empty() && text == elide_templates(native[0].function);
  if (native_named && !native[0].file.empty()) {
    const std::string& file = native[0].file;
    text += " at " + file.substr(file.rfind('/') + 1) + ":" + std::to_string(native[0].line);
  }
  return printable(text + caller.text);
}

namespace {

// "+2.00 MiB from train.py:12 in step, …": at most three sites and their growth, one line.
void growth_list(std::ostream& out, const std::vector<const GrowthSite*>& sites) {
  for (size_t i = 0; i < sites.size() && i < 3; ++i)
    out << (i ? ", " : "") << "+" << iec(sites[i]->growth_per_iteration) << " from "
        << site_name(sites[i]->frames, sites[i]->python_frames, sites[i]->library, sites[i]->caller);
  out << (sites.size() > 3 ? ", ...\n" : "\n");
}

// "result 800 cudaErrorNotPermitted": a failed free's error, by the layer that gave it.
std::string result_text(const FailedFreeRow& f) {
  return "result " + std::to_string(f.result) + " " +
         std::string(f.runtime_layer ? cuda_error_name(f.result) : cu_result_name(f.result));
}

// How a failure the program recovered from is worded (docs/cli.md, "Recovered or fatal").
std::string recovery(const FailedRow& f) {
  return "failed, then succeeded after " + fixed(double(f.recovered_after_ns) / 1e6, 3) + " ms";
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
    if (d.peak_bytes) out << " at " << since(rep, d.peak_time_ns);
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
        << iec_exact(f.size) << " on " << failure_place(f) << " at " << since(rep, f.last_time_ns) << " from "
        << site_name(f.frames, f.python_frames, f.library, f.caller) << ": " << cause_name(f.diagnosis.cause) << "\n";
  } else {
    const FailedRow& f = rep.failed[0];
    out << "  failed allocations: " << rep.failed_total << ", all recovered; the first " << iec_exact(f.size) << " on "
        << failure_place(f) << " at " << since(rep, f.time_ns) << " from "
        << site_name(f.frames, f.python_frames, f.library, f.caller) << " " << recovery(f) << "\n";
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
        << printable(f.api) << " at " << since(rep, f.time_ns) << " from "
        << site_name(f.frames, f.python_frames, f.library, f.caller) << ": " << result_text(f) << "\n";
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

void write_text(std::ostream& out, const Report& rep) {
  out << "cumemtrace report: " << printable(rep.path) << "\n";
  if (rep.process) {
    const auto& p = *rep.process;
    out << "  command: " << command_line(p) << "\n";
    out << "  pid " << p.pid << " (parent " << p.ppid << ") on " << (p.hostname.empty() ? "?" : printable(p.hostname));
    if (p.rank >= 0) out << ", rank " << p.rank;
    out << "\n  started " << wall_time(p.start_realtime_ns) << ", traced for " << seconds(rep.duration_ns)
        << (rep.complete ? "" : " (until the trace stops)") << "\n";
    if (!p.tool_version.empty()) out << "  traced by cumemtrace " << printable(p.tool_version) << "\n";
  } else {
    out << "  (no process record)\n";
  }
  out << "  " << count_of(rep.events, "event") << ", " << rep.events_dropped << " dropped by the writer";
  if (rep.unknown_records) out << ", " << count_of(rep.unknown_records, "record") << " of unknown type skipped";
  out << ", " << count_of(rep.symbols, "ip") << " symbolized\n";
  integrity(out, rep);
  for (const auto& d : rep.devices) {
    if (d.device < 0) continue;
    out << "  " << device_label(d.device) << ": " << (d.name.empty() ? "?" : printable(d.name)) << ", "
        << iec_exact(d.total_bytes) << "\n";
  }
  summary(out, rep);
  write_categories_text(out, rep);

  for (const auto& d : rep.devices) device(out, rep, d);

  if (!rep.held_by_cache.empty()) {
    out << "\nHeld at exit by design (caching allocators' caches, libraries' handles: kept until the process "
           "ends, not leaks)\n";
    for (const auto& g : rep.held_by_cache) {
      out << "  held by " << printable(g.allocator) << (g.library_handles ? "'s handles" : "'s cache")
          << " at exit: " << iec_exact(g.bytes) << " in " << count_of(g.count, "allocation") << "\n";
      sites(out, g.sites, g.sites_omitted, rep.frames);
    }
  }
  write_exports_still_open(out, rep);
  out << "\nPossible leaks (live at end of trace, unless the process was killed; caches and libraries' handles apart, "
         "except at call sites that leak each iteration)\n";
  if (rep.leaks.empty()) out << "  nothing\n";
  for (const auto& g : rep.leaks) {
    out << "  " << format::kind_name(g.kind) << ": " << iec_exact(g.bytes) << " in " << count_of(g.count, "allocation")
        << "\n";
    sites(out, g.sites, g.sites_omitted, rep.frames);
  }

  out << "\nFailed allocations\n";
  if (rep.failed.empty()) out << "  none\n";
  for (size_t i = 0; i < rep.failed.size(); ++i) {
    const FailedRow& f = rep.failed[i];
    out << "  " << i + 1 << ". " << iec_exact(f.size) << " of " << format::kind_name(f.kind) << " memory on "
        << failure_place(f) << " via " << printable(f.api) << " at " << since(rep, f.time_ns) << " (result " << f.result
        << " " << (f.runtime_layer ? cuda_error_name(f.result) : cu_result_name(f.result)) << ", thread " << f.tid
        << ")\n";
    if (f.count > 1)
      out << "     failed " << f.count << " times alike, the last at " << since(rep, f.last_time_ns) << "\n";
    if (f.recovered)
      out << "     recovered: " << recovery(f) << " (an allocation at least as large, on the same thread)\n";
    out << "     requested bytes live on the device then: " << iec_exact(f.live_device_bytes) << "\n";
    if (f.snapshot_known) {
      out << "     NVML (snapshot " << reason_name(f.snapshot_reason) << " at " << since(rep, f.snapshot_time_ns);
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
    python_frames(out, f.python_frames, "       ", rep.frames);
    frames(out, f.frames, "       ");
    const Diagnosis& dg = f.diagnosis;
    out << "     Why it failed: " << cause_name(dg.cause) << ": " << printable(dg.summary) << "\n";
    for (const auto& [name, value] : dg.figures)
      out << "       " << name << ": "
          << (name.find("allocations") != std::string::npos ? std::to_string(value) : iec_exact(value)) << "\n";
    holders(out, dg, f.size);
    for (const auto& a : dg.advice) out << "       advice: " << a << "\n";
    if (dg.cause == Cause::kDemand && !f.sites_at_failure.empty()) {
      out << "     live on the device at the failure, by call site:\n";
      sites(out, f.sites_at_failure, 0, rep.frames);
    }
    if (f.allocator_map) allocator_map(out, *f.allocator_map);
  }

  if (rep.failed_omitted)
    out << "  ... and " << rep.failed_omitted << " more kinds of failure (" << rep.failed_total
        << " failed allocations in all)\n";

  if (rep.failed_frees_total) out << "\nFailed frees (refused: the memory stayed allocated)\n";
  for (size_t i = 0; i < rep.failed_frees.size(); ++i) {
    const FailedFreeRow& f = rep.failed_frees[i];
    out << "  " << i + 1 << ". " << printable(f.api) << " of " << hex(f.address);
    if (f.size) out << ", " << iec_exact(f.size) << " of " << format::kind_name(f.kind) << " memory";
    out << ", at " << since(rep, f.time_ns) << " (" << result_text(f) << ", thread " << f.tid << ")\n";
    if (f.count > 1)
      out << "     refused " << f.count << " times alike, the last at " << since(rep, f.last_time_ns) << ", on "
          << count_of(f.threads.size(), "thread") << "\n";
    out << "     from " << printable(f.library) << ":\n";
    python_frames(out, f.python_frames, "       ", rep.frames);
    frames(out, f.frames, "       ");
  }
  if (rep.failed_frees_omitted)
    out << "  ... and " << rep.failed_frees_omitted << " more kinds of failed free (" << rep.failed_frees_total
        << " in all)\n";

  out << "\nContexts created (each holds device memory no allocation shows)\n";
  if (rep.contexts.empty()) out << "  none\n";
  for (size_t i = 0; i < rep.contexts.size(); ++i) {
    const ContextRow& c = rep.contexts[i];
    out << "  " << i + 1 << ". " << device_label(c.device) << " at " << since(rep, c.time_ns) << ": "
        << (c.bytes ? iec_exact(c.bytes) : std::string("size unknown")) << " via " << printable(c.api) << " (thread "
        << c.tid << "), from " << printable(c.library) << ":\n";
    python_frames(out, c.python_frames, "       ", rep.frames);
    frames(out, c.frames, "       ");
  }

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

  write_ranges_text(out, rep);
  write_functions_text(out, rep);
  write_pools_text(out, rep);
  write_blocks_text(out, rep);

  if (!rep.reservations.empty()) {
    out << "\nVMM address space reservations (address space only, not device memory)\n";
    for (const auto& r : rep.reservations) {
      out << "  " << (r.device < 0 ? std::string("no device named") : device_label(r.device)) << ": " << r.reserves
          << " reserved, " << r.frees << " freed; peak " << iec_exact(r.peak_bytes) << "; live at end "
          << iec_exact(r.end_bytes) << " in " << r.end_count << "\n";
      sites(out, r.sites, 0, rep.frames);
    }
  }
}

void write_live_text(std::ostream& out, const LiveReport& live, uint64_t start_ns) {
  out << printable(live.path) << " at " << live.at_ns << " ns ("
      << seconds(live.at_ns > start_ns ? live.at_ns - start_ns : 0) << " since start), " << live.events_applied
      << " events applied\n";
  for (const auto& d : live.devices) {
    out << "  " << device_label(d.device) << ": device bytes " << iec_exact(d.device_bytes) << ", "
        << count_of(d.count, "live allocation");
    for (int k = 0; k < format::kKindCount; ++k)
      if (d.live_count[k])
        out << "; " << format::kind_name(Kind(k)) << " " << iec(d.live_bytes[k]) << " in " << d.live_count[k];
    out << "\n";
    if (d.reserved_bytes) out << "    reserved address space " << iec_exact(d.reserved_bytes) << "\n";
    const auto& f = d.frag;
    if (f.arena_count)
      out << "    " << count_of(f.arena_count, "arena") << " of " << iec_exact(f.arena_bytes) << ", gaps "
          << iec_exact(f.gap_bytes) << ", largest gap " << iec_exact(f.largest_gap) << ", gap ratio "
          << fixed(f.gap_ratio(), 4) << ", external fragmentation " << fixed(f.external_fragmentation(), 4) << "\n";
    for (const auto& l : d.by_library)
      out << "    " << printable(l.library) << ": " << iec_exact(l.bytes) << " in " << count_of(l.count, "allocation")
          << "\n";
  }
}

// Where a failed request was: a request for device memory without a device is one the
// driver refused before any was known (no context current on the calling thread: H200 run
// AM, PyTorch's autograd thread under cudaMallocAsync), not a host allocation.
std::string failure_place(const FailedRow& f) {
  return f.device < 0 && format::holds_device_memory(f.kind) ? std::string("no device (none current on its thread)")
                                                             : device_label(f.device);
}

}  // namespace cumemtrace
