// The content of `cumemtrace report`, computed once from a trace; report_text and
// report_json only render it, so the two outputs cannot disagree.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "cumemtrace/rules/fragmentation.h"
#include "reports/oom/allocator_map.h"
#include "reports/cache/blocks.h"
#include "reports/by/categories.h"
#include "reports/by/functions.h"
#include "reports/pools.h"
#include "reports/by/ranges.h"
#include "read/reader.h"
#include "reports/oom/diagnosis.h"
#include "read/event_source.h"
#include "reports/graph_pool.h"
#include "reports/framework_limit.h"
#include "reports/growth/growth.h"
#include "reports/job/ipc.h"
#include "reports/sections/section_results.h"
#include "read/damage/integrity.h"
#include "replay/replay.h"
#include "stacks/call_site_rule.h"
#include "stacks/stacks.h"

namespace cumemtrace {

struct ReportOptions {
  size_t top = 10;    // call-site rows per table
  size_t frames = 6;  // frames shown per call site
  // Symbols resolved in memory for a trace without SymbolRecords (may be null).
  const std::unordered_map<uint64_t, Symbol>* extra_symbols = nullptr;
  // `--by category`: the rule table (stacks/categories.h); null: no category figures.
  const CategoryRules* categories = nullptr;
  bool by_range = false;     // `--by range`: memory per NVTX range and mark (ranges.h)
  bool by_function = false;  // `--by function`: memory per function of the program's (functions.h)
};

struct SiteRow {
  uint32_t node = 0;          // call-site StackNode id (0: no stack)
  uint32_t python_stack = 0;  // innermost PyFrameNode (trace 1.6; 0: no Python frames)
  std::string library;
  int32_t device = -1;
  format::Kind kind{};
  uint64_t bytes = 0;
  uint64_t count = 0;
  std::vector<Frame> frames;
  std::vector<Frame> python_frames;  // innermost first (python_stacks.h)
  std::vector<Frame> merged_frames;  // the whole stack from the call site, Python frames merged in
  std::set<uint32_t> threads;        // the allocating threads' ids (gettid), ascending
  CallerNames::Names caller;         // the caller that tells it from sites of the same frame (call_site_rule.h)
};

struct LibraryRow {
  std::string library;
  uint64_t bytes = 0;
  uint64_t count = 0;
  uint64_t bytes_by_kind[format::kKindCount] = {};  // the same bytes, split by Kind
};

// NVML's figure for the process at (or near) the peak, split by what we can account for.
// moments.h says which reading is chosen.
struct NvmlSplit {
  bool known = false;
  bool has_peak = true;      // false: the device never held memory; split near the trace's end
  bool same_moment = false;  // NVML's and the tracker's figures are of one moment
  bool at_peak = false;      // ... taken while tracked bytes equalled the peak
  uint64_t snapshot_time_ns = 0;
  format::SnapshotReason reason{};
  uint64_t device_bytes = 0;  // the reading's own tracked device bytes
  uint64_t process_used = 0;
  uint64_t footprint = 0;   // the snapshot's arena bytes: granule-rounded, not requested bytes
  uint64_t context = 0;     // kContextCreate sizes on the device up to the snapshot
  uint64_t pool_slack = 0;  // the default async pool's reserve beyond its live allocations
  uint64_t graph_pool = 0;  // 1.9: the CUDA graph memory pool's reserve read in the same snapshot
  uint64_t untracked = 0;   // the rest, clamped at 0
  // Snapshot entries whose NVML reading did not come within the tracer's wait
  // (kMomentReadingMissed), and whether one of them was taken at the peak: the peak's own
  // reading missed it, so the split shown is a reading from another moment.
  uint64_t readings_missed = 0;
  bool peak_reading_missed = false;
};

// Calls per entry point the program called (e.g. "cudaMalloc"), on one device.
struct ApiCounts {
  uint64_t allocs = 0;
  uint64_t frees = 0;
  uint64_t failed = 0;
};

struct DeviceReport {
  int32_t device = -1;  // -1: host memory (pinned)
  std::string name;
  uint64_t total_bytes = 0;
  uint64_t peak_bytes = 0;
  uint64_t peak_time_ns = 0;       // monotonic; 0 with peak_bytes 0
  uint64_t peak_pinned_bytes = 0;  // host-pinned memory's own peak (the host row's figure)
  uint64_t peak_pinned_time_ns = 0;
  uint64_t peak_import_bytes = 0;     // 1.9: ipc-import bytes mapped at once, at most
  std::vector<uint32_t> import_pids;  // 1.9: the exporters' pids the trace names
  FragmentationFigures frag_at_peak;
  double max_gap_ratio = 0;
  uint64_t max_gap_ratio_time_ns = 0;
  uint64_t end_device_bytes = 0;
  uint64_t end_live_bytes[format::kKindCount] = {};
  uint64_t end_live_count[format::kKindCount] = {};
  FragmentationFigures frag_at_end;
  DeviceCounts counts;
  std::map<std::string, ApiCounts> by_api;  // allocation and free calls by API name
  uint64_t context_bytes = 0;
  NvmlSplit nvml;
  GraphPoolFigures graph_pool;  // 1.9: the CUDA graph memory pool (graph_pool.h)
  // Graph allocation nodes (allocations captured from a stream, or added by
  // cuGraphAddMemAllocNode): virtual addresses of graphs, never live device bytes.
  uint64_t graph_nodes = 0;
  uint64_t graph_node_bytes = 0;  // requested bytes, summed over the nodes
  std::vector<SiteRow> graph_node_sites;
  uint64_t graph_node_sites_omitted = 0;
  std::vector<SiteRow> top_sites;      // at peak, by live bytes
  uint64_t top_sites_omitted = 0;      // call sites beyond --top
  std::vector<LibraryRow> by_library;  // at peak
  // Device bytes live at the end split (docs/report-json.md, "Held at exit is not leaked"):
  // held by a caching allocator's cache
  // (kept by design until exit) and possible leaks (the rest, and cache bytes at call sites
  // growth classifies `leak`); the two sum to end_device_bytes.
  uint64_t end_held_by_cache_bytes = 0;
  uint64_t end_possible_leak_bytes = 0;
  // With several traces (the job view, job.h): exports still open in an importer at both
  // clean ends, taken out of the two above (then the three sum to end_device_bytes).
  uint64_t end_exported_open_bytes = 0;
  // The library's own figures at exit (the last exit snapshot): exact even when events
  // were dropped or damaged, unlike the replayed ones above.
  std::optional<DeviceSnapshot> exit_snapshot;
  // With ReportOptions::categories (reports/by/categories.h). At the end, memory beyond the
  // allocations is the exit snapshot's split when it is of one moment with the end's bytes,
  // else the contexts and the graph memory pool's last reading only.
  std::optional<std::vector<CategoryRow>> categories_at_peak, categories_at_end;
};

struct LeakGroup {
  format::Kind kind{};
  std::string allocator;         // held_by_cache only: the caching allocator holding them ("PyTorch"), or
                                 // the library whose handles do ("cuBLAS": library_handle_owner)
  bool library_handles = false;  // held_by_cache only: `allocator` is such a library
  uint64_t bytes = 0;
  uint64_t count = 0;
  std::vector<SiteRow> sites;
  uint64_t sites_omitted = 0;
};

// One failed allocation, or several identical ones (same device, size, kind, entry
// point, result and call site), counted.
// Frees the driver or the runtime refused (docs/cli.md, "Failed frees"): the memory stayed
// allocated. Identical ones (device, kind, API, result, call site) are one row.
struct FailedFreeRow {
  uint64_t count = 1;
  uint64_t time_ns = 0, last_time_ns = 0;  // the first and the last of them
  int32_t device = -1;
  format::Kind kind{};  // of the allocation it would have freed; unknown when the trace had none there
  std::string api;
  int32_t result = 0;
  bool runtime_layer = false;  // result is a cudaError_t, not a CUresult
  uint64_t address = 0;        // the first one's
  uint64_t size = 0;           // the allocation it would have freed; 0: unknown
  std::set<uint32_t> threads;  // every thread that made one
  uint32_t tid = 0;            // the first one's
  std::string library;
  uint64_t key = 0;           // UserSite::key of its call site
  CallerNames::Names caller;  // call_site_rule.h
  std::vector<Frame> frames;  // from the user's native frame (UserSite::node); none without a stack
  std::vector<Frame> python_frames;
};

struct FailedRow {
  // Identical failures (device, size, kind, API, result, call site) are one row: PyTorch
  // retries a failed cudaMalloc after freeing its cache, from another line of its caller.
  uint64_t count = 1;
  uint64_t time_ns = 0;       // the first of them
  uint64_t last_time_ns = 0;  // the last of them
  int32_t device = -1;
  uint64_t size = 0;
  format::Kind kind{};
  std::string api;
  int32_t result = 0;
  bool runtime_layer = false;  // result is a cudaError_t, not a CUresult
  uint32_t tid = 0;
  // Recovered from (docs/cli.md, "Recovered or fatal"): each failure of the row was followed
  // on its thread by a success at least as large; rows hold recovered or fatal ones, not both.
  bool recovered = false;
  uint64_t recovered_after_ns = 0;  // the first failure's: how long until it succeeded
  std::string library;
  uint64_t key = 0;                  // UserSite::key of its call site
  CallerNames::Names caller;         // the caller that tells it from sites of the same frame (call_site_rule.h)
  std::vector<Frame> frames;         // from the user's native frame (UserSite::node)
  std::vector<Frame> python_frames;  // of the first attempt, innermost first
  uint64_t live_device_bytes = 0;
  bool snapshot_known = false;
  bool snapshot_same_moment = false;  // the reading's figures are of one moment (moments.h)
  bool snapshot_at_failure = false;   // ... taken right after the failure, nothing between
  uint64_t snapshot_time_ns = 0;
  format::SnapshotReason snapshot_reason{};
  uint64_t snapshot_device_bytes = 0;  // the reading's own tracked device bytes
  uint64_t snapshot_arena_bytes = 0;   // footprint: arenas plus unmapped physical memory
  uint64_t snapshot_pool_reserved = format::kUnknown64;
  uint64_t snapshot_async_live = 0;
  uint64_t snapshot_graph_reserved = format::kUnknown64;  // 1.9: the graph memory pool's reserve
  uint64_t device_free = format::kUnknown64;
  uint64_t device_total = format::kUnknown64;
  uint64_t process_used = format::kUnknown64;
  bool processes_known = false;
  std::vector<format::GpuProcess> other_processes;  // NVML's list nearest the failure, less this process
  Diagnosis diagnosis;
  std::vector<SiteRow> sites_at_failure;  // live on the device at the first attempt, top --top
  // The caching allocator's block map given after this failure (trace 1.4; allocator_map.h).
  std::optional<AllocatorMapView> allocator_map;
  // With ReportOptions::categories: what was live on the device at the first attempt, by
  // category, and the failed request's own category (segment: a caching allocator's).
  std::optional<std::vector<CategoryRow>> categories;
  std::string request_category;
  bool request_segment = false;
};

// A CUDA context coming into being: who put its hundreds of MiB on which GPU.
struct ContextRow {
  uint64_t time_ns = 0;
  int32_t device = -1;
  uint64_t bytes = 0;  // NVML's used-memory increase across the call (0: unknown)
  std::string api;
  uint32_t tid = 0;
  std::string library;
  std::vector<Frame> frames;
  std::vector<Frame> python_frames;  // innermost first
};

struct ReservationReport {
  int32_t device = -1;
  uint64_t reserves = 0;
  uint64_t frees = 0;
  uint64_t peak_bytes = 0;
  uint64_t end_bytes = 0;
  uint64_t end_count = 0;
  std::vector<SiteRow> sites;  // live at end, by bytes
};

struct Report {
  std::string path;
  size_t frames = 6;  // ReportOptions::frames: the text prints at most this many Python frames per stack too
  std::optional<ProcessInfo> process;
  bool complete = false;                 // an EndRecord was found
  std::optional<std::string> exec_into;  // the trace ended at an exec of this program
  int32_t exit_status = -1;              // the End record's (1.15); -1 unknown
  std::optional<ReadError> error;
  Integrity integrity;       // damage, count mismatch, drops, impossible events
  uint64_t start_ns = 0;     // monotonic start of the process
  uint64_t duration_ns = 0;  // to the EndRecord, else to the last time seen
  uint64_t events = 0;
  uint64_t events_dropped = 0;
  uint64_t unknown_records = 0;
  size_t symbols = 0;  // ips with a symbol (file + in-memory)
  std::vector<DeviceReport> devices;
  std::vector<LeakGroup> leaks;             // possible leaks: device memory kinds first, then managed, host-pinned
  std::vector<LeakGroup> held_by_cache;     // live at the end in a caching allocator's cache, by allocator
  std::vector<FailedRow> failed;            // groups in order of first occurrence, at most --top
  uint64_t failed_total = 0;                // failed allocations, all groups
  uint64_t failed_recovered = 0;            // ... of them recovered from (FailedRow::recovered)
  uint64_t failed_omitted = 0;              // groups beyond --top
  std::vector<FailedFreeRow> failed_frees;  // groups in order of first occurrence, at most --top
  uint64_t failed_frees_total = 0, failed_frees_omitted = 0;
  std::vector<ContextRow> contexts;
  std::vector<ReservationReport> reservations;
  Growth growth;                                      // across iterations (growth.h)
  bool categories = false;                            // figures by category were asked for
  size_t category_user_rules = 0;                     // ... with this many rules of the user's
  std::optional<std::vector<RangeRow>> ranges;        // with ReportOptions::by_range (ranges.h)
  std::optional<std::vector<FunctionRow>> functions;  // with ReportOptions::by_function (functions.h)
  Pools pools;                                        // inside pools that told NVTX (pools.h); 1.12
  Blocks blocks;                                      // inside a caching allocator (blocks.h); 1.13
  Ipc ipc;                                            // CUDA IPC exports and imports (ipc.h)
  std::optional<FrameworkLimit> framework_limit;      // a framework's own limit reached (framework_limit.h)
  SectionResults section_results;                     // the figures of sections whose own files say what they are
  // Where the first pass's replay found each device's peak and each failed allocation, by
  // event index in file order: the page (reports/timeline/page_model.h) takes its moments there
  // without a replay of its own to find them. Not printed.
  std::map<int32_t, size_t> peak_events;                  // devices that had a peak
  std::vector<std::pair<size_t, int32_t>> failed_events;  // (event index, device), in file order
  // The least and the greatest time of the events (ns, monotonic; 0 without events): the
  // page's time range is known before its replay. Not printed.
  uint64_t earliest_event_ns = 0, latest_event_ns = 0;
};

Report build_report(const Trace& trace, const ReportOptions& opt);
// The same with the events read from `events` (event_source.h: a TraceFile's, so that a
// trace of any length is reported in memory bounded by its live sets, not by its events);
// `trace` holds the other records. Two passes over the events.
Report build_report(const Trace& trace, const EventSource& events, const ReportOptions& opt);

// `cumemtrace live`: the state at one moment.
struct LiveDevice {
  int32_t device = -1;
  uint64_t live_bytes[format::kKindCount] = {};
  uint64_t live_count[format::kKindCount] = {};
  uint64_t device_bytes = 0;
  uint64_t count = 0;  // live allocations of all kinds (mappings and reservations excluded)
  uint64_t reserved_bytes = 0;
  FragmentationFigures frag;
  std::vector<LibraryRow> by_library;  // kinds holding device memory
};

struct LiveReport {
  std::string path;
  uint64_t at_ns = 0;
  uint64_t events_applied = 0;
  std::vector<LiveDevice> devices;
};

// The live report of `r`, a replay of the trace's first `events_applied` events, at `at_ns`.
LiveReport live_report(const Trace& trace, const Stacks& stacks, const Replayer& r, uint64_t at_ns,
                       uint64_t events_applied);

// What was live just after the events with time_ns <= at_ns (applied in file order).
LiveReport build_live(const Trace& trace, uint64_t at_ns);
// The same for many moments (any order, repeats allowed), in the order given: one replay
// for all of them when the trace's events are in time order (the usual case).
std::vector<LiveReport> build_live(const Trace& trace, const std::vector<uint64_t>& ats);
// The same with the events read from `events` (event_source.h), whose time order the
// caller knows (event_facts, live_time.h): one pass for all moments when in time order,
// one per moment otherwise.
std::vector<LiveReport> build_live(const Trace& trace, const EventSource& events, const std::vector<uint64_t>& ats,
                                   bool in_time_order);

}  // namespace cumemtrace
