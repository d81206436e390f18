#include "reports/job/job.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "base/plural.h"
#include "base/units.h"
#include "stacks/call_site_rule.h"

namespace cumemtrace {
namespace {

// NVML's spelling of a UUID (nvmlDeviceGetUUID), so the two views can be compared by eye.
std::string uuid_text(const uint8_t (&u)[16]) {
  if (std::all_of(std::begin(u), std::end(u), [](uint8_t b) { return b == 0; })) return {};
  char s[48];
  std::snprintf(s, sizeof s, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  return s;
}

// A call site as it can be matched across processes: addresses differ (ASLR), names do not.
// The frame the call-site rule names it by (call_site_rule.h: the user's Python line, else
// the site's native frame), then the caller that tells it from sites of the same frame.
std::string site_name(const SiteRow& s) {
  if (const Frame* f = user_python_frame(s.python_frames))
    return f->function + " (" + source_key(f->file) + ":" + std::to_string(f->line) + ")" + s.caller.text;
  for (const auto& f : s.frames) {
    if (f.function.empty()) continue;
    std::string out = f.function;
    if (!f.file.empty()) out += " (" + source_key(f.file) + ":" + std::to_string(f.line) + ")";
    return out + s.caller.text;
  }
  if (!s.frames.empty() && !s.frames.front().module.empty())
    return describe(s.frames.front(), FrameStyle::kName) + s.caller.text;
  return s.node ? "(not symbolized)" : "(no stack)";
}

std::map<std::string, uint64_t> sites_at_peak(const Report& rep, int32_t device) {
  std::map<std::string, uint64_t> out;
  for (const auto& d : rep.devices)
    if (d.device == device)
      for (const auto& s : d.top_sites) out[site_name(s)] += s.bytes;
  return out;
}

JobProcess process_row(const Report& rep, const std::vector<DeviceInfo>& infos) {
  JobProcess p;
  p.path = rep.path;
  if (rep.process) {
    p.host = rep.process->hostname;
    p.pid = rep.process->pid;
    p.ppid = rep.process->ppid;
    p.rank = rep.process->rank;
    p.local_rank = rep.process->local_rank;
    p.world_size = rep.process->world_size;
    p.job_id = job_id_of(*rep.process);
  }
  uint64_t leaked = 0, held = 0;
  for (const auto& d : rep.devices) {
    p.failed += d.counts.failed;
    if (d.device < 0) continue;
    leaked += d.end_possible_leak_bytes;  // a caching allocator's cache at exit is no leak
    held += d.end_held_by_cache_bytes;
    JobProcessDevice jd;
    jd.ordinal = d.device;
    jd.peak_bytes = d.peak_bytes;
    jd.contexts = d.counts.contexts;
    jd.allocs = d.counts.allocs;
    // The latest DeviceRecord of the ordinal, as Trace::device() picks.
    for (auto it = infos.rbegin(); it != infos.rend(); ++it)
      if (it->ordinal == d.device) {
        jd.uuid = uuid_text(it->uuid);
        break;
      }
    if (jd.peak_bytes == 0 && jd.contexts == 0 && jd.allocs == 0 && d.counts.failed == 0) continue;
    p.devices.push_back(std::move(jd));
  }
  if (rep.complete) p.leaked_bytes = leaked, p.held_by_cache_bytes = held;
  if (rep.start_ns) p.start_ns = rep.start_ns, p.end_ns = rep.start_ns + rep.duration_ns + 1;  // its last event too
  std::sort(p.devices.begin(), p.devices.end(), [](const auto& a, const auto& b) { return a.ordinal < b.ordinal; });
  const JobProcessDevice* own = nullptr;
  for (const auto& d : p.devices)
    if (!own || std::tie(d.peak_bytes, d.allocs) > std::tie(own->peak_bytes, own->allocs)) own = &d;
  if (own && (own->peak_bytes > 0 || own->allocs > 0)) {
    p.own_device = own->ordinal;
    p.own_peak_bytes = own->peak_bytes;
  }
  return p;
}

// The most the peaks of a GPU's processes live at one moment add up to: the sum is largest
// at some process's start, so each start is tried (a GPU's processes are few).
void live_together(JobGpu& gpu, const std::vector<JobProcess>& processes) {
  for (const auto& at : gpu.processes) {
    const uint64_t t = processes[at.process].start_ns;
    uint64_t sum = 0;
    size_t n = 0;
    for (const auto& other : gpu.processes) {
      const JobProcess& o = processes[other.process];
      if (o.start_ns <= t && t < o.end_ns) sum += other.peak_bytes, ++n;
    }
    if (sum > gpu.live_together_bytes) gpu.live_together_bytes = sum, gpu.live_together = n;
  }
}

// Each import paired with the export of its handle's identity among the traces (job.h); an
// export still open at both clean ends moves out of its exporter's leaked or cache bytes.
void pair_ipc(Job& job, const std::vector<Report>& reports, const std::vector<size_t>& order) {
  std::unordered_map<uint64_t, std::pair<size_t, const IpcExport*>> exports;  // by identity
  for (size_t pi = 0; pi < job.processes.size(); ++pi)
    for (const IpcExport& x : reports[order[pi]].ipc.exports)
      if (x.id) exports.try_emplace(x.id, pi, &x);
  std::set<const IpcExport*> counted;  // an export held open by two importers counts once
  for (size_t pi = 0; pi < job.processes.size(); ++pi) {
    const Report& rep = reports[order[pi]];
    for (const IpcImport& m : rep.ipc.imports) {
      JobIpcLink l;
      l.importer = pi, l.id = m.id, l.bytes = m.size, l.device = m.device, l.exporter_pid = m.legacy_pid;
      l.open_at_end = rep.complete && m.open_at_end;
      if (const auto x = m.id ? exports.find(m.id) : exports.end(); x != exports.end()) {
        const auto [ex, made] = x->second;
        JobProcess& e = job.processes[ex];
        l.exporter = ex, l.exporter_pid = e.pid;
        l.still_open = l.open_at_end && made->live_at_end && e.leaked_bytes.has_value();
        if (l.still_open && counted.insert(made).second) {
          e.exported_open_bytes += made->size;
          uint64_t& from = made->held_by_cache ? *e.held_by_cache_bytes : *e.leaked_bytes;
          from -= std::min(from, made->size);
        }
      }
      job.ipc.push_back(l);
    }
  }
}

// One export out of the group and site row that counted it (ipc.h: IpcExport::cache, site).
void take_out(std::vector<LeakGroup>& groups, const IpcExport& x, bool by_cache) {
  for (auto g = groups.begin(); g != groups.end(); ++g) {
    if (by_cache ? g->allocator != x.cache : g->kind != x.kind) continue;
    g->bytes -= std::min(g->bytes, x.size), g->count -= std::min<uint64_t>(g->count, 1);
    for (auto s = g->sites.begin(); s != g->sites.end(); ++s) {
      if (s->node != x.site_node || s->python_stack != x.python_stack || s->device != x.device || s->kind != x.kind)
        continue;
      s->bytes -= std::min(s->bytes, x.size), s->count -= std::min<uint64_t>(s->count, 1);
      if (s->count == 0) g->sites.erase(s);
      break;
    }
    if (g->count == 0) groups.erase(g);
    return;
  }
}

std::string process_label(const JobProcess& p) {
  std::string s = p.rank >= 0 ? "rank " + std::to_string(p.rank) + " (" : "(";
  return s + p.host + " pid " + std::to_string(p.pid) + ")";
}

}  // namespace

std::string_view finding_kind_name(JobFinding::Kind k) {
  switch (k) {
    case JobFinding::Kind::kForeignDevice: return "foreign-device";
    case JobFinding::Kind::kRankImbalance: return "rank-imbalance";
    case JobFinding::Kind::kDeviceOversubscribed: return "device-oversubscribed";
  }
  return "unknown";
}

void set_aside_exports(const Job& job, std::vector<Report>& reports) {
  for (const JobIpcLink& l : job.ipc) {
    if (!l.still_open) continue;
    Report& rep = reports[job.processes[*l.exporter].report];
    for (IpcExport& x : rep.ipc.exports) {
      if (x.id != l.id || !x.live_at_end || x.still_open_in) continue;  // one importer's pid is enough
      x.still_open_in = job.processes[l.importer].pid;
      for (DeviceReport& d : rep.devices) {
        if (d.device != x.device) continue;
        uint64_t& from = x.held_by_cache ? d.end_held_by_cache_bytes : d.end_possible_leak_bytes;
        const uint64_t moved = std::min(from, x.size);
        from -= moved, d.end_exported_open_bytes += moved;
      }
      take_out(x.held_by_cache ? rep.held_by_cache : rep.leaks, x, x.held_by_cache);
    }
  }
}

std::string job_id_of(const ProcessInfo& p) {
  if (const auto* j = p.launcher_value("SLURM_JOB_ID")) {
    const auto* step = p.launcher_value("SLURM_STEP_ID");
    return "slurm:" + *j + (step ? "." + *step : "");
  }
  if (const auto* r = p.launcher_value("TORCHELASTIC_RUN_ID")) return "torchelastic:" + *r;
  const auto* addr = p.launcher_value("MASTER_ADDR");
  const auto* port = p.launcher_value("MASTER_PORT");
  if (addr && port) return "rendezvous:" + *addr + ":" + *port;
  return {};
}

Job build_job(const std::vector<Report>& reports, const std::vector<std::vector<DeviceInfo>>& trace_devices,
              double tolerance_percent, size_t top_sites) {
  Job job;
  job.tolerance_percent = tolerance_percent;
  std::vector<size_t> order(reports.size());
  for (size_t i = 0; i < reports.size(); ++i) {
    job.processes.push_back(
        process_row(reports[i], i < trace_devices.size() ? trace_devices[i] : std::vector<DeviceInfo>{}));
    job.processes.back().report = i;
    order[i] = i;
  }
  // Rows by job id, rank (unranked last), host, pid; `order` keeps each row's report.
  auto key = [&](size_t i) {
    const auto& p = job.processes[i];
    return std::make_tuple(p.job_id, p.rank < 0, p.rank, p.host, p.pid, p.path);
  };
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
  {
    std::vector<JobProcess> sorted;
    for (size_t i : order) sorted.push_back(job.processes[i]);
    job.processes = std::move(sorted);
  }
  for (const auto& p : job.processes)
    if (std::find(job.job_ids.begin(), job.job_ids.end(), p.job_id) == job.job_ids.end())
      job.job_ids.push_back(p.job_id);
  std::sort(job.job_ids.begin(), job.job_ids.end());

  // Physical GPUs.
  for (size_t pi = 0; pi < job.processes.size(); ++pi) {
    const auto& p = job.processes[pi];
    const Report& rep = reports[order[pi]];
    for (const auto& d : p.devices) {
      auto it = std::find_if(job.gpus.begin(), job.gpus.end(), [&](const JobGpu& g) {
        return d.uuid.empty() ? g.uuid.empty() && g.host == p.host && !g.processes.empty() &&
                                    g.processes.front().ordinal == d.ordinal
                              : g.uuid == d.uuid;
      });
      if (it == job.gpus.end()) {
        JobGpu g;
        g.uuid = d.uuid;
        g.host = p.host;
        for (const auto& dr : rep.devices)
          if (dr.device == d.ordinal) g.name = dr.name, g.total_bytes = dr.total_bytes;
        job.gpus.push_back(std::move(g));
        it = job.gpus.end() - 1;
      }
      it->processes.push_back({pi, d.ordinal, d.peak_bytes});
      it->peak_sum_bytes += d.peak_bytes;
    }
  }
  auto gpu_of = [&](size_t pi, int32_t ordinal) {
    for (size_t g = 0; g < job.gpus.size(); ++g)
      for (const auto& gp : job.gpus[g].processes)
        if (gp.process == pi && gp.ordinal == ordinal) return g;
    return size_t(0);
  };

  pair_ipc(job, reports, order);

  // foreign-device
  for (size_t pi = 0; pi < job.processes.size(); ++pi) {
    const auto& p = job.processes[pi];
    if (p.own_device < 0) continue;
    for (const auto& d : p.devices) {
      if (d.ordinal == p.own_device || (d.contexts == 0 && d.allocs == 0)) continue;
      JobFinding f;
      f.kind = JobFinding::Kind::kForeignDevice;
      f.process = pi;
      f.ordinal = d.ordinal;
      f.gpu = gpu_of(pi, d.ordinal);
      f.bytes = d.peak_bytes;
      f.message = process_label(p) + " has " + count_of(d.contexts, "context") + " and " +
                  count_of(d.allocs, "allocation") + " (peak " + iec(d.peak_bytes) + ") on device " +
                  std::to_string(d.ordinal) + (d.uuid.empty() ? "" : " " + d.uuid) + ", not its own device " +
                  std::to_string(p.own_device);
      job.findings.push_back(std::move(f));
    }
  }

  // rank-imbalance: against the median of own-device peaks, among the processes that have
  // a rank (RANK set by the launcher). Others (a producer and its consumer, data loaders)
  // do different work by design: comparing them would flag what is expected (H200 run K).
  std::vector<size_t> with_peak;
  for (size_t pi = 0; pi < job.processes.size(); ++pi)
    if (job.processes[pi].own_device >= 0 && job.processes[pi].rank >= 0) with_peak.push_back(pi);
  job.compared_ranks = with_peak.size();
  job.ranked_processes = size_t(
      std::count_if(job.processes.begin(), job.processes.end(), [](const JobProcess& p) { return p.rank >= 0; }));
  if (with_peak.size() >= 2) {
    std::vector<uint64_t> peaks;
    for (size_t pi : with_peak) peaks.push_back(job.processes[pi].own_peak_bytes);
    std::sort(peaks.begin(), peaks.end());
    const size_t n = peaks.size();
    // The low median (of an even count, the lower middle peak): with two ranks the mean
    // would sit halfway and flag both, the one that grew and the one that did not.
    job.median_peak_bytes = peaks[(n - 1) / 2];
    const double median = double(job.median_peak_bytes);
    // The median process: the first (in row order) whose peak is nearest the median.
    size_t median_pi = with_peak.front();
    for (size_t pi : with_peak) {
      auto dist = [&](size_t i) {
        const uint64_t b = job.processes[i].own_peak_bytes;
        return b > job.median_peak_bytes ? b - job.median_peak_bytes : job.median_peak_bytes - b;
      };
      if (dist(pi) < dist(median_pi)) median_pi = pi;
    }
    for (size_t pi : with_peak) {
      const auto& p = job.processes[pi];
      const double pct = median > 0 ? (double(p.own_peak_bytes) - median) / median * 100 : (p.own_peak_bytes ? 1e9 : 0);
      job.max_imbalance_percent = std::max(job.max_imbalance_percent, std::fabs(pct));
      if (std::fabs(pct) <= tolerance_percent) continue;
      JobFinding f;
      f.kind = JobFinding::Kind::kRankImbalance;
      f.process = pi;
      f.bytes = p.own_peak_bytes;
      f.reference_bytes = job.median_peak_bytes;
      f.percent = pct;
      f.median_process = median_pi;
      const auto mine = sites_at_peak(reports[order[pi]], p.own_device);
      const auto theirs = sites_at_peak(reports[order[median_pi]], job.processes[median_pi].own_device);
      std::map<std::string, std::pair<uint64_t, uint64_t>> both;
      for (const auto& [s, b] : mine) both[s].first = b;
      for (const auto& [s, b] : theirs) both[s].second = b;
      for (const auto& [s, b] : both)
        if (b.first != b.second) f.sites.push_back({s, b.first, b.second});
      auto diff = [](const SiteDifference& d) {
        return d.bytes > d.median_bytes ? d.bytes - d.median_bytes : d.median_bytes - d.bytes;
      };
      std::stable_sort(f.sites.begin(), f.sites.end(), [&](const auto& a, const auto& b) { return diff(a) > diff(b); });
      if (f.sites.size() > top_sites) f.sites.resize(top_sites);
      char pct_text[32];
      std::snprintf(pct_text, sizeof pct_text, "%+.1f%%", pct);
      f.message = process_label(p) + " peaks at " + iec(p.own_peak_bytes) + " on its device, " + pct_text +
                  " from the median " + iec(job.median_peak_bytes);
      job.findings.push_back(std::move(f));
    }
  }

  // device-oversubscribed: among the processes live at one time (job.h)
  for (auto& gpu : job.gpus) live_together(gpu, job.processes);
  for (size_t g = 0; g < job.gpus.size(); ++g) {
    const auto& gpu = job.gpus[g];
    if (gpu.total_bytes == 0 || gpu.live_together_bytes <= gpu.total_bytes) continue;
    JobFinding f;
    f.kind = JobFinding::Kind::kDeviceOversubscribed;
    f.gpu = g;
    f.bytes = gpu.live_together_bytes;
    f.reference_bytes = gpu.total_bytes;
    f.message = "the peaks of the " + std::to_string(gpu.live_together) + " processes live together on " +
                (gpu.uuid.empty() ? gpu.host : gpu.uuid) + " add up to " + iec(gpu.live_together_bytes) +
                ", past its " + iec(gpu.total_bytes);
    job.findings.push_back(std::move(f));
  }
  return job;
}

}  // namespace cumemtrace
