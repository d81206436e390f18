// The job view of `cumemtrace report` over several traces: the processes of one job
// (ranks of a torchrun/srun job, on one host or many), the physical GPUs they share,
// and what looks wrong across them (docs/cli.md, docs/report-json.md "job").
//
// A physical GPU is named by its UUID (DeviceRecord), never by ordinal: ordinal 0 of a
// process started with CUDA_VISIBLE_DEVICES=3 is the fourth GPU, and NVML and the
// driver agree on a UUID whatever the remapping. UUIDs are unique per GPU, so GPUs of
// different hosts never merge.
//
// Findings (JobFinding::Kind; the JSON `kind` strings are fixed, documented names):
//   - foreign-device: a process has a context or allocations on a GPU other than its own.
//     Its own GPU is the one where its tracked peak is highest (ties: more allocations,
//     then the lower ordinal).
//   - rank-imbalance: a process's peak on its own GPU differs from the median of those
//     peaks by more than the tolerance (percent of the median); the call sites whose
//     bytes at peak differ most from the median process's are named.
//   - device-oversubscribed: the peaks of the processes on one GPU that were live at one
//     time add up past its total. A process is live from its start to its trace's end
//     (Report::start_ns, duration_ns; all the time when its start is not recorded): two
//     whose lifetimes never overlapped never add up. Peaks within one lifetime may still
//     come at different times, so the sum is an upper bound of what was ever used at once:
//     the finding says the job could not be sure to fit, not that it failed.
//
// CUDA IPC (JobIpcLink): each import is paired with the export of the same handle
// identity (trace 1.15, ipc.h) among the traces given. An exporter's allocation live at
// its clean end that an importer still had open at the importer's clean end is "exported
// to pid N, still open": neither leaked nor held by a cache in the exporter's row.
#pragma once

#include <cstdint>
#include <climits>
#include <optional>
#include <string>
#include <vector>

#include "reports/report.h"

namespace cumemtrace {

// One device as one process saw it.
struct JobProcessDevice {
  int32_t ordinal = -1;     // the process's CUDA ordinal
  std::string uuid;         // "GPU-xxxxxxxx-..." as NVML prints it; "" when not recorded
  uint64_t peak_bytes = 0;  // tracked device bytes (report's peak)
  uint64_t contexts = 0;    // contexts created on it
  uint64_t allocs = 0;      // successful allocations
};

struct JobProcess {
  size_t report = 0;  // index into the reports build_job was given
  std::string path;
  std::string host;
  uint32_t pid = 0;
  uint32_t ppid = 0;
  int32_t rank = -1;
  int32_t local_rank = -1;
  int32_t world_size = -1;
  std::string job_id;                     // job_id_of() below; "" when the launcher gave none
  std::vector<JobProcessDevice> devices;  // ascending ordinal
  int32_t own_device = -1;                // ordinal; -1 when it touched no device
  uint64_t own_peak_bytes = 0;
  // Device memory live at a clean end outside caching allocators' caches (possible leaks);
  // unknown if cut short. What the caches held then is held_by_cache_bytes.
  std::optional<uint64_t> leaked_bytes;
  std::optional<uint64_t> held_by_cache_bytes;
  // Of what was live at its clean end, the exports an importer still had open at its own
  // clean end (JobIpcLink::still_open): left out of the two figures above.
  uint64_t exported_open_bytes = 0;
  uint64_t failed = 0;  // failed allocations
  // Its lifetime in the host's monotonic clock, [start_ns, end_ns); 0 and UINT64_MAX when
  // its start is not recorded (then it is taken as live all the time).
  uint64_t start_ns = 0, end_ns = UINT64_MAX;
};

struct JobGpuProcess {
  size_t process = 0;  // index into Job::processes
  int32_t ordinal = -1;
  uint64_t peak_bytes = 0;
};

struct JobGpu {
  std::string uuid;  // "" for devices without a UUID: then one per (host, ordinal)
  std::string host;
  std::string name;
  uint64_t total_bytes = 0;
  uint64_t peak_sum_bytes = 0;  // the processes' peaks added up
  // The most the peaks of processes live at one time add up to, and how many those are.
  uint64_t live_together_bytes = 0;
  size_t live_together = 0;
  std::vector<JobGpuProcess> processes;
};

struct SiteDifference {
  std::string site;           // innermost Python line, else innermost symbolized frame "function (file:line)"
  uint64_t bytes = 0;         // this process's live bytes there at its peak
  uint64_t median_bytes = 0;  // the median process's
};

struct JobFinding {
  enum class Kind { kForeignDevice, kRankImbalance, kDeviceOversubscribed };
  Kind kind{};
  size_t process = 0;                 // foreign-device, rank-imbalance: index into Job::processes
  size_t gpu = 0;                     // foreign-device (the foreign GPU), device-oversubscribed: Job::gpus index
  int32_t ordinal = -1;               // foreign-device: the foreign GPU's ordinal in that process
  uint64_t bytes = 0;                 // foreign-device: peak there; rank-imbalance: the peak;
                                      // device-oversubscribed: the sum of the peaks live together
  uint64_t reference_bytes = 0;       // rank-imbalance: the median; oversubscribed: the GPU's total
  double percent = 0;                 // rank-imbalance: (peak - median) / median × 100
  size_t median_process = 0;          // rank-imbalance: whose sites are compared
  std::vector<SiteDifference> sites;  // rank-imbalance: largest differences first
  std::string message;                // one line for people
};
std::string_view finding_kind_name(JobFinding::Kind k);  // "foreign-device", ...

// One CUDA IPC import of a process, and its exporter when the traces tell it.
struct JobIpcLink {
  size_t importer = 0;             // index into Job::processes
  std::optional<size_t> exporter;  // none: the exporter's trace is not among those given
  uint32_t exporter_pid = 0;       // the exporter's pid (a trace before 1.15 may name it alone); 0 unknown
  uint64_t id = 0;                 // the handle's identity; 0: not recorded (a trace before 1.15)
  uint64_t bytes = 0;              // the import's size
  int32_t device = -1;             // the importer's ordinal
  bool open_at_end = false;        // the importer had it open at its clean end
  // ... and the exporter's allocation was live at its clean end: "exported to pid N, still
  // open", counted in the exporter's exported_open_bytes (once, whichever importers hold it)
  bool still_open = false;
};

struct Job {
  std::vector<std::string> job_ids;   // distinct, sorted; "" (no id) included when some had none
  std::vector<JobProcess> processes;  // by job id, rank (unranked last), host, pid
  std::vector<JobGpu> gpus;           // by host, then first ordinal seen
  uint64_t median_peak_bytes = 0;     // of own-device peaks of the ranked processes
  size_t ranked_processes = 0;        // with a rank (RANK set by the launcher)
  size_t compared_ranks = 0;          // of those, with device memory of their own: compared when >= 2
  double tolerance_percent = 0;
  std::vector<JobFinding> findings;  // foreign-device, then rank-imbalance, then oversubscribed
  std::vector<JobIpcLink> ipc;       // by importer (row order), then the order opened
  double max_imbalance_percent = 0;  // the largest |peak - median| / median × 100
};

// The launcher's job id: "slurm:SLURM_JOB_ID[.SLURM_STEP_ID]", else
// "torchelastic:TORCHELASTIC_RUN_ID", else "rendezvous:MASTER_ADDR:MASTER_PORT" (torchrun
// without elastic, Kubeflow's PyTorchJob on Kubernetes); "" if none.
std::string job_id_of(const ProcessInfo& p);

// `reports` are build_report()s of the traces, in any order; `trace_devices` their traces'
// DeviceInfo lists (for UUIDs), index for index. `tolerance_percent`: rank-imbalance's.
Job build_job(const std::vector<Report>& reports, const std::vector<std::vector<DeviceInfo>>& trace_devices,
              double tolerance_percent, size_t top_sites = 5);

// The same reports, as the job view tells them apart (JobIpcLink::still_open): each export
// still open in an importer leaves its exporter's possible leaks or cache at exit, its group
// and its site row, for DeviceReport::end_exported_open_bytes and IpcExport::still_open_in.
void set_aside_exports(const Job& job, std::vector<Report>& reports);

}  // namespace cumemtrace
