// Reading a trace file (trace_format.h) into memory.
//
// The reader never throws and never reads out of bounds, whatever the bytes: a trace is
// often cut short (the process was killed mid-write) and sometimes damaged. It returns
// every record it could read and every damaged byte range with its offset, so a report
// can be made from the readable part and say where data is missing:
//   - format >= 1.2: only chunks whose ChecksumRecord matches are read; the bytes
//     between good chunks are damage, and the next good chunk is found by its marker.
//   - format >= 1.10: each chunk's number and trace id are checked too: a chunk dropped,
//     repeated, moved or taken from another trace is damage (a moved, repeated or foreign
//     one is set aside unread).
//   - every format: values no trace can hold (a device ordinal past any machine's, a time
//     before tracing began, an allocation larger than its device) are set aside by the
//     reader, so that no command counts them (plausible.h), and said.
//   - older files: a record whose size its writer could never have written is damage;
//     reading resumes at the next offset where a run of sound records starts
//     (plausible.h).
//
// The structs here are the packed on-disk records unpacked into ordinary, aligned
// structs: packed fields cannot be bound to references, and analysis code wants to.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <unordered_map>
#include <vector>

#include "read/event_log.h"
#include "cumemtrace/trace_format.h"

namespace cumemtrace {

struct ProcessInfo {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  uint64_t start_monotonic_ns = 0;
  uint64_t start_realtime_ns = 0;
  uint64_t granule_bytes = 0;
  uint32_t stack_depth = 0;
  int32_t rank = -1;
  std::string hostname;
  std::vector<std::string> argv;  // the '\0'-joined command line, split
  std::string tool_version;
  // 1.8 (ProcessLineage): -1 in older traces or when the launcher did not set them.
  int32_t local_rank = -1;  // LOCAL_RANK
  int32_t world_size = -1;  // WORLD_SIZE
  // format::kLauncherVariables that were set, in that order: (name, value).
  std::vector<std::pair<std::string, std::string>> launcher;
  const std::string* launcher_value(std::string_view name) const {
    for (const auto& [k, v] : launcher)
      if (k == name) return &v;
    return nullptr;
  }
  // 1.15: format::kFrameworkVariables that were set, in that order: (name, value).
  std::vector<std::pair<std::string, std::string>> environment;
  const std::string* environment_value(std::string_view name) const {
    for (const auto& [k, v] : environment)
      if (k == name) return &v;
    return nullptr;
  }
};

struct DeviceInfo {
  int32_t ordinal = -1;
  int32_t nvml_index = -1;
  uint64_t total_bytes = 0;
  uint8_t uuid[16] = {};
  std::string name;
};

struct ModuleInfo {
  uint64_t load_bias = 0;
  uint64_t start = 0;
  uint64_t end = 0;
  std::string path;
  std::string build_id;  // raw bytes, may be empty
};

struct StackNode {
  uint32_t id = 0;
  uint32_t parent = 0;
  uint64_t ip = 0;
};

// 1.6: a node of the Python stacks' prefix tree (PyFrameRecord).
struct PyFrameNode {
  uint32_t id = 0;
  uint32_t parent = 0;
  uint32_t file = 0;      // Trace::py_strings id
  uint32_t function = 0;  // Trace::py_strings id
  int32_t line = -1;
  uint32_t flags = 0;  // format::PyFrameFlags
};

struct DeviceSnapshot {
  int32_t device = -1;
  uint64_t live_bytes[format::kKindCount] = {};
  uint64_t live_count = 0;
  uint64_t device_bytes = 0;
  uint64_t peak_device_bytes = 0;
  uint64_t peak_time_ns = 0;
  uint64_t arena_bytes = 0;
  uint64_t arena_count = 0;
  uint64_t gap_bytes = 0;
  uint64_t largest_gap = 0;
  // Absent from an older, shorter entry means "not measured", as kUnknown64 does.
  uint64_t nvml_process_used = format::kUnknown64;
  uint64_t nvml_device_free = format::kUnknown64;
  uint64_t nvml_device_total = format::kUnknown64;
  uint64_t pool_reserved_bytes = format::kUnknown64;  // trace format 1.1
  uint64_t nvml_read_ns = format::kUnknown64;         // 1.3: when NVML was read
  uint64_t event_seq = format::kUnknown64;            // 1.3: events seen at these figures
  uint32_t moment = 0;                                // 1.3: format::MomentFlags
  // 1.9: the device's CUDA graph memory pool, bytes (cuDeviceGetGraphMemAttribute), or kUnknown64
  uint64_t graph_used_current = format::kUnknown64;
  uint64_t graph_reserved_current = format::kUnknown64;
  uint64_t graph_used_high = format::kUnknown64;
  uint64_t graph_reserved_high = format::kUnknown64;
  // One moment: the NVML figures and the tracked figures were taken with no event between.
  bool same_moment() const { return moment & format::kMomentSame; }
};

// 1.4: a named moment (MarkRecord).
struct Mark {
  uint64_t time_ns = 0;
  uint32_t tid = 0;
  format::MarkSource source{};
  std::string name;
};

// 1.12: a heap or region a pool declared through NVTX's memory extension (NvtxMemRecord).
struct NvtxMemEvent {
  uint64_t time_ns = 0;
  uint64_t heap = 0;
  uint64_t address = 0;
  uint64_t size = 0;  // bytes
  uint32_t tid = 0;
  uint32_t stack_id = 0;
  uint32_t python_stack_id = 0;
  format::NvtxMemOp op{};
  uint8_t usage = 0;
  std::string name;
};
// 1.13: a caching allocator's block events start or stop (BlockSourceRecord).
struct BlockSource {
  uint64_t time_ns = 0;
  int32_t device = -1;  // -1: every device
  uint32_t flags = 0;   // format::BlockSourceFlags
  format::BlockAllocator allocator{};
  format::BlockSourceState state{};
  std::string version;
  std::string reason;
  std::string settings;
};
// 1.13: one block action inside a caching allocator (BlockEventRecord).
struct BlockEvent {
  uint64_t time_ns = 0;
  uint64_t address = 0;
  uint64_t size = 0;
  uint64_t requested = format::kUnknown64;
  uint64_t stream = format::kUnknown64;
  uint64_t pool[2] = {format::kUnknown64, format::kUnknown64};
  uint64_t allocated = format::kUnknown64;
  uint64_t reserved = format::kUnknown64;
  uint32_t tid = 0;
  uint32_t stack_id = 0;
  uint32_t python_stack_id = 0;
  int32_t device = -1;
  format::BlockOp op{};
  format::BlockAllocator allocator{};
  uint16_t flags = 0;        // format::BlockEventFlags
  size_t events_before = 0;  // Trace::events read before it: its place among the events
};
// 1.3: NVML's list of compute processes on one GPU at one reading.
struct GpuProcesses {
  uint64_t time_ns = 0;
  int32_t device = -1;
  std::vector<format::GpuProcess> processes;
};

// 1.4: a caching allocator's map at one moment (cumemtrace_allocator_segments, api.h).
struct AllocatorBlock {
  uint64_t size = 0;
  format::BlockState state{};
};
struct AllocatorSegment {
  uint64_t address = 0;
  uint64_t total_bytes = 0;
  uint64_t allocated_bytes = 0;  // the allocator's own figure
  uint64_t stream = 0;
  uint32_t flags = 0;                  // format::AllocatorSegmentFlags
  std::vector<AllocatorBlock> blocks;  // in address order
};
struct AllocatorMap {
  uint64_t time_ns = 0;
  int32_t device = -1;
  std::string allocator;     // e.g. "pytorch"
  size_t events_before = 0;  // Trace::events read before it: the moment it describes
  std::vector<AllocatorSegment> segments;
};

struct Snapshot {
  uint64_t time_ns = 0;
  format::SnapshotReason reason{};
  uint32_t flags = 0;  // format::SnapshotFlags
  uint64_t events_dropped = 0;
  std::vector<DeviceSnapshot> devices;

  const DeviceSnapshot* find(int32_t device) const {
    for (const auto& d : devices)
      if (d.device == device) return &d;
    return nullptr;
  }
};

struct Symbol {
  uint64_t ip = 0;
  uint32_t line = 0;
  std::string function;
  std::string file;
};

struct EndInfo {
  uint64_t time_ns = 0;
  uint64_t events_written = 0;
  uint64_t events_dropped = 0;
  bool exec = false;         // the process exec'd (format::EndReason::kExec) ...
  std::string exec_into;     // ... into this program (as the exec call named it)
  int32_t exit_status = -1;  // 1.15: the status exit() or _exit() was given (0-255); -1 unknown
};

// What the tracer did not keep past one of its bounds (format::BoundedWhat, 1.14).
struct BoundedCount {
  uint32_t cap = 0;
  uint64_t dropped = 0;
};

struct ReadError {
  uint64_t byte_offset = 0;  // where the offending record (or header) starts
  std::string message;       // names the offset, e.g. "truncated record at byte 1234: ..."
  // True when the file simply ends inside a record (the writer was cut off): what
  // precedes it is sound and more records may be appended after truncating there.
  bool truncated = false;
};

// Bytes that could not be read: a checksum that did not match, a record that made no
// sense, or bytes after the last checksum. Reading goes on after each.
struct DamagedRange {
  uint64_t byte_offset = 0;
  uint64_t bytes = 0;
  std::string message;  // names the offset and the cause
};

// An event whose figures cannot be true (plausible.h, implausible_event): the reader sets
// it aside, so that no command counts it.
struct SetAsideEvent {
  size_t index = 0;  // the event's place among all the trace's Event records (0: the first)
  Event event;
  std::string why;
};
struct Trace {
  std::string path;
  bool header_ok = false;  // magic and major version accepted
  uint16_t version_major = 0;
  uint16_t version_minor = 0;

  std::optional<ProcessInfo> process;
  std::vector<DeviceInfo> devices;  // in file order; a device may be re-reported
  std::vector<ModuleInfo> modules;  // in file order; later records win on overlap
  std::map<uint16_t, std::string> api_names;
  std::unordered_map<uint32_t, StackNode> stack_nodes;
  std::unordered_map<uint32_t, std::string> py_strings;  // 1.6
  std::unordered_map<uint32_t, PyFrameNode> py_frames;   // 1.6
  EventLog events;                                       // in file order
  std::vector<Snapshot> snapshots;                       // in file order
  std::vector<GpuProcesses> gpu_processes;               // in file order (1.3)
  std::vector<AllocatorMap> allocator_maps;              // in file order (1.4)
  std::vector<Mark> marks;                               // in file order (1.5)
  std::vector<Mark> range_ends;                          // RangeEnd records, in file order (1.10)
  std::vector<NvtxMemEvent> nvtx_mem;                    // NvtxMem records, in file order (1.12)
  std::vector<BlockSource> block_sources;                // BlockSource records, in file order (1.13)
  // BlockEvent records, in file order (1.13); none in a trace read in passes, whose source
  // reads them again at each scan (event_source.h: EventSource::scan_blocks)
  std::vector<BlockEvent> block_events;
  std::unordered_map<uint64_t, Symbol> symbols;  // by ip
  std::map<uint32_t, BoundedCount> bounded;      // by format::BoundedWhat: the last count (1.14)
  std::optional<EndInfo> end;

  uint64_t records_end = 0;      // byte offset just past the last record read whole
  uint64_t unknown_records = 0;  // records of types this reader does not know (skipped)
  uint64_t symbol_records = 0;   // SymbolRecords seen (the symbolizer is idempotent on this)
  // Records whose framing held but whose content did not (an AllocatorSegments record
  // whose lists do not fit it): skipped whole, the rest of the file is still read.
  uint64_t damaged_records = 0;
  std::optional<ReadError> error;    // the first problem (damage[0]), if any
  bool sealed = false;               // format >= 1.2: every chunk carries a checksum
  uint64_t sealed_chunks = 0;        // chunks whose checksum matched
  std::vector<DamagedRange> damage;  // every unreadable range, in file order
  uint64_t trace_id = 0;             // 1.10: FileHeader::trace_id (0 before)
  // 1.10: the highest chunk number read, so that a chunk appended takes the next one.
  std::optional<uint64_t> last_chunk_sequence;
  // Events read but not kept nor handed on, in file order: `events` and the callbacks
  // never see them.
  std::vector<SetAsideEvent> set_aside;

  const DeviceInfo* device(int32_t ordinal) const;  // latest record for that ordinal
  std::string api_name(uint16_t id) const;          // "api#N" when unnamed
  uint64_t granule() const;                         // from the process record, else 2 MiB
};

// Parses an in-memory image of a trace file. `verify` false reads records one after the
// other with no checksum or plausibility check (for `cumemtrace dump`, which shows
// records one at a time, whatever they are).
Trace parse_trace(std::span<const uint8_t> bytes, std::string path = {}, bool verify = true);

// Reads and parses the file at `path`; an unreadable file is reported in Trace::error
// at byte 0.
Trace read_trace(const std::string& path);

}  // namespace cumemtrace
