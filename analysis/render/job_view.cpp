#include "render/job_view.h"

#include <algorithm>
#include <cstdio>
#include <iomanip>

#include "base/escape.h"
#include "base/plural.h"
#include "base/units.h"

namespace cumemtrace {
namespace {

using json = nlohmann::ordered_json;

std::string rank_text(int32_t r) { return r >= 0 ? std::to_string(r) : "-"; }

json finding_json(const Job& job, const JobFinding& f) {
  json j;
  j["kind"] = finding_kind_name(f.kind);
  const JobProcess& p = job.processes[f.kind == JobFinding::Kind::kDeviceOversubscribed ? 0 : f.process];
  if (f.kind != JobFinding::Kind::kDeviceOversubscribed) {
    j["process"] = f.process;
    j["pid"] = p.pid;
    j["rank"] = p.rank;
  }
  switch (f.kind) {
    case JobFinding::Kind::kForeignDevice: {
      j["own_device"] = p.own_device;
      j["device"] = f.ordinal;
      j["uuid"] = job.gpus[f.gpu].uuid;
      for (const auto& d : p.devices)
        if (d.ordinal == f.ordinal) j["contexts"] = d.contexts, j["allocations"] = d.allocs;
      j["peak_bytes"] = f.bytes;
      break;
    }
    case JobFinding::Kind::kRankImbalance: {
      j["peak_bytes"] = f.bytes;
      j["median_peak_bytes"] = f.reference_bytes;
      j["percent"] = f.percent;
      j["median_process"] = f.median_process;
      json sites = json::array();
      for (const auto& s : f.sites)
        sites.push_back({{"site", s.site},
                         {"bytes", s.bytes},
                         {"median_bytes", s.median_bytes},
                         {"difference_bytes", int64_t(s.bytes) - int64_t(s.median_bytes)}});
      j["sites"] = std::move(sites);
      break;
    }
    case JobFinding::Kind::kDeviceOversubscribed:
      j["gpu"] = f.gpu;
      j["uuid"] = job.gpus[f.gpu].uuid;
      j["peak_sum_bytes"] = f.bytes;
      j["total_bytes"] = f.reference_bytes;
      break;
  }
  j["message"] = f.message;
  return j;
}

// 16 hex digits: a JSON number past 2^53 is not read exactly by every reader.
std::string hex_id(uint64_t id) {
  char s[20];
  std::snprintf(s, sizeof s, "%016llx", static_cast<unsigned long long>(id));
  return s;
}

json ipc_json(const Job& job, const JobIpcLink& l) {
  return {{"importer", l.importer},
          {"importer_pid", job.processes[l.importer].pid},
          {"exporter", l.exporter ? json(*l.exporter) : json(nullptr)},
          {"exporter_pid", l.exporter_pid ? json(l.exporter_pid) : json(nullptr)},
          {"id", l.id ? json(hex_id(l.id)) : json(nullptr)},
          {"bytes", l.bytes},
          {"device", l.device},
          {"open_at_end", l.open_at_end},
          {"still_open", l.still_open}};
}

// One import: from whom, and whether it was still open when the importer ended.
void write_ipc_line(std::ostream& out, const Job& job, const JobIpcLink& l) {
  out << "  pid " << job.processes[l.importer].pid << " imported " << iec(l.bytes) << " from ";
  if (l.exporter) out << "pid " << l.exporter_pid;
  else if (l.exporter_pid) out << "pid " << l.exporter_pid << " (its trace is not among those given)";
  else out << "unknown (the exporter's trace is not among those given)";
  if (l.still_open)
    out << ": exported to pid " << job.processes[l.importer].pid << ", still open (neither leaked nor cache in pid "
        << l.exporter_pid << ")";
  else if (l.open_at_end) out << ": still open at its end";
  else out << ": closed";
  out << "\n";
}

}  // namespace

json job_to_json(const Job& job) {
  json j;
  j["job_ids"] = job.job_ids;
  json procs = json::array();
  for (const auto& p : job.processes) {
    json devs = json::array();
    for (const auto& d : p.devices)
      devs.push_back({{"device", d.ordinal},
                      {"uuid", d.uuid},
                      {"peak_bytes", d.peak_bytes},
                      {"contexts", d.contexts},
                      {"allocations", d.allocs}});
    procs.push_back(
        {{"trace", p.path},
         {"host", p.host},
         {"pid", p.pid},
         {"ppid", p.ppid},
         {"rank", p.rank},
         {"local_rank", p.local_rank},
         {"world_size", p.world_size},
         {"job_id", p.job_id},
         {"own_device", p.own_device},
         {"own_peak_bytes", p.own_peak_bytes},
         {"devices", std::move(devs)},
         {"leaked_bytes", p.leaked_bytes ? json(*p.leaked_bytes) : json(nullptr)},
         {"held_by_cache_at_exit_bytes", p.held_by_cache_bytes ? json(*p.held_by_cache_bytes) : json(nullptr)},
         {"exported_still_open_bytes", p.exported_open_bytes},
         {"failed", p.failed}});
  }
  j["processes"] = std::move(procs);
  json gpus = json::array();
  for (const auto& g : job.gpus) {
    json ps = json::array();
    for (const auto& gp : g.processes)
      ps.push_back({{"process", gp.process}, {"device", gp.ordinal}, {"peak_bytes", gp.peak_bytes}});
    gpus.push_back({{"uuid", g.uuid},
                    {"host", g.host},
                    {"name", g.name},
                    {"total_bytes", g.total_bytes},
                    {"peak_sum_bytes", g.peak_sum_bytes},
                    {"live_together_bytes", g.live_together_bytes},
                    {"processes", std::move(ps)}});
  }
  j["gpus"] = std::move(gpus);
  j["ranked_processes"] = job.ranked_processes;
  j["compared_ranks"] = job.compared_ranks;
  j["median_peak_bytes"] = job.compared_ranks >= 2 ? json(job.median_peak_bytes) : json(nullptr);
  j["max_imbalance_percent"] = job.max_imbalance_percent;
  j["tolerance_percent"] = job.tolerance_percent;
  json findings = json::array();
  for (const auto& f : job.findings) findings.push_back(finding_json(job, f));
  j["findings"] = std::move(findings);
  json ipc = json::array();
  for (const auto& l : job.ipc) ipc.push_back(ipc_json(job, l));
  j["ipc"] = std::move(ipc);
  return j;
}

void write_exports_still_open(std::ostream& out, const Report& rep) {
  bool first = true;
  for (const IpcExport& x : rep.ipc.exports) {
    if (!x.still_open_in) continue;
    if (first)
      out << "\nExported to other processes, still open there at exit (the job view paired them: neither leaks nor "
             "cache)\n";
    first = false;
    out << "  exported to pid " << x.still_open_in << ", still open: " << iec_exact(x.size) << " on device " << x.device
        << " (" << (x.held_by_cache ? "else held by " + x.cache + "'s cache" : std::string("else a possible leak"))
        << ")\n";
  }
}

void write_job_text(std::ostream& out, const Job& job) {
  out << "Job: " << count_of(job.processes.size(), "process");
  for (const auto& id : job.job_ids) out << (id.empty() ? "" : ", " + id);
  out << "\n\n";
  // The devices column is as wide as its widest row.
  std::vector<std::string> devs(job.processes.size());
  size_t width = 24;
  for (size_t i = 0; i < job.processes.size(); ++i) {
    const auto& p = job.processes[i];
    for (const auto& d : p.devices) {
      if (!devs[i].empty()) devs[i] += "; ";
      devs[i] += (d.ordinal == p.own_device ? "*d" : "d") + std::to_string(d.ordinal) + " " + iec(d.peak_bytes) + ", " +
                 std::to_string(d.contexts) + " ctx";
    }
    width = std::max(width, devs[i].size());
  }
  out << std::left << std::setw(6) << "rank" << std::setw(20) << "host" << std::setw(9) << "pid" << std::setw(width + 2)
      << "devices (peak, contexts)" << std::right << std::setw(12) << "leaked" << std::setw(8) << "failed"
      << "\n";
  for (size_t i = 0; i < job.processes.size(); ++i) {
    const auto& p = job.processes[i];
    out << std::left << std::setw(6) << rank_text(p.rank) << std::setw(20) << printable(p.host) << std::setw(9) << p.pid
        << std::setw(width + 2) << devs[i] << std::right << std::setw(12)
        << (p.leaked_bytes ? iec(*p.leaked_bytes) : "unknown") << std::setw(8) << p.failed << "\n";
  }
  out << "(*: the process's own device, where its peak is highest)\n\nGPUs:\n";
  for (const auto& g : job.gpus) {
    out << "  " << (g.uuid.empty() ? "(no UUID)" : printable(g.uuid)) << " on " << printable(g.host) << " ("
        << iec(g.total_bytes) << "): peaks add up to " << iec(g.peak_sum_bytes);
    if (g.live_together < g.processes.size())
      out << ", " << iec(g.live_together_bytes) << " of those live together (never all at once)";
    out << "\n";
    for (const auto& gp : g.processes) {
      const auto& p = job.processes[gp.process];
      out << "    rank " << rank_text(p.rank) << " pid " << p.pid << " (its device " << gp.ordinal << "): peak "
          << iec(gp.peak_bytes) << "\n";
    }
  }
  if (job.compared_ranks >= 2)
    out << "\nFindings (rank tolerance " << fixed(job.tolerance_percent, 1) << "% of the median peak "
        << iec(job.median_peak_bytes) << "):\n";
  else
    out << "\nFindings (ranks not compared: " << job.ranked_processes << " of "
        << count_of(job.processes.size(), "process") << (job.processes.size() == 1 ? " has" : " have")
        << " a rank, RANK set by the launcher, " << job.compared_ranks << " of them with device memory):\n";
  if (job.findings.empty()) out << "  none\n";
  for (const auto& f : job.findings) {
    out << "  " << finding_kind_name(f.kind) << ": " << printable(f.message) << "\n";
    for (const auto& s : f.sites)
      out << "      " << printable(s.site) << ": " << iec(s.bytes) << " here, " << iec(s.median_bytes)
          << " in the median rank\n";
  }
  if (job.ipc.empty()) return;
  out << "\nCUDA IPC imports (paired with their exports by the handle's identity):\n";
  for (const auto& l : job.ipc) write_ipc_line(out, job, l);
}

}  // namespace cumemtrace
