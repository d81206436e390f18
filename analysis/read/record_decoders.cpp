// One decoder per record type of records.def: a payload into the trace being built.
// Reads go through Cursor, which never touches a byte past the payload's end.
#include <algorithm>
#include <cstring>

#include "read/inflate.h"
#include "read/parser.h"
#include "read/damage/plausible.h"

namespace cumemtrace::read_detail {

using namespace format;

std::vector<std::string> split_argv(const std::string& joined) {
  std::vector<std::string> argv;
  if (joined.empty()) return argv;
  size_t start = 0;
  for (;;) {
    size_t z = joined.find('\0', start);
    if (z == std::string::npos) {
      argv.push_back(joined.substr(start));
      break;
    }
    argv.push_back(joined.substr(start, z - start));
    start = z + 1;
    if (start == joined.size()) break;  // a trailing terminator adds no empty argument
  }
  return argv;
}

std::string Parser::decode_Process(Cursor& c) {
  ProcessRecord r{};
  r.rank = -1;
  c.fixed(r);
  ProcessInfo p;
  p.pid = r.pid;
  p.ppid = r.ppid;
  p.start_monotonic_ns = r.start_monotonic_ns;
  p.start_realtime_ns = r.start_realtime_ns;
  p.granule_bytes = r.granule_bytes;
  p.stack_depth = r.stack_depth;
  p.rank = r.rank;
  std::string cmd;
  if (!c.string(p.hostname) || !c.string(cmd) || !c.string(p.tool_version)) return "bad string length";
  p.argv = split_argv(cmd);
  if (c.left() > 0) {  // 1.8
    ProcessLineage l{-1, -1};
    c.fixed(l);
    p.local_rank = l.local_rank;
    p.world_size = l.world_size;
    std::string launcher;
    if (!c.string(launcher)) return "bad string length";
    for (const std::string& entry : split_argv(launcher)) {
      const auto eq = entry.find('=');
      if (eq != std::string::npos) p.launcher.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
    }
  }
  if (c.left() > 0) {  // 1.15
    std::string environment;
    if (!c.string(environment)) return "bad string length";
    for (const std::string& entry : split_argv(environment)) {
      const auto eq = entry.find('=');
      if (eq != std::string::npos) p.environment.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
    }
  }
  t_.process = std::move(p);
  return {};
}

std::string Parser::decode_Device(Cursor& c) {
  DeviceRecord r{};
  r.ordinal = -1;
  r.nvml_index = -1;
  c.fixed(r);
  DeviceInfo d;
  d.ordinal = r.ordinal;
  d.nvml_index = r.nvml_index;
  d.total_bytes = r.total_bytes;
  std::memcpy(d.uuid, r.uuid, sizeof d.uuid);
  if (!c.string(d.name)) return "bad string length";
  if (verify_ && !plausible_ordinal(d.ordinal))
    return set_aside_record("a Device record of ordinal " + std::to_string(d.ordinal));
  t_.devices.push_back(std::move(d));
  return {};
}

std::string Parser::decode_Module(Cursor& c) {
  ModuleRecord r{};
  c.fixed(r);
  ModuleInfo m{r.load_bias, r.start, r.end, {}, {}};
  if (!c.string(m.path) || !c.string(m.build_id)) return "bad string length";
  t_.modules.push_back(std::move(m));
  return {};
}

std::string Parser::decode_StackNode(Cursor& c) {
  StackNodeRecord r{};
  c.fixed(r);
  t_.stack_nodes[r.id] = StackNode{r.id, r.parent, r.ip};
  return {};
}

std::string Parser::decode_Event(Cursor& c) {
  EventRecord r{};
  r.device = -1;
  c.fixed(r);
  Event e;
  e.time_ns = r.time_ns;
  e.address = r.address;
  e.size = r.size;
  e.stream = r.stream;
  e.handle = r.handle;
  e.tid = r.tid;
  e.device = r.device;
  e.stack_id = r.stack_id;
  e.result = r.result;
  e.api = r.api;
  e.op = static_cast<Op>(r.op);
  e.kind = static_cast<Kind>(r.kind);
  e.flags = r.flags;
  EventPython py{};  // 1.6: only events with Python frames carry it
  c.fixed(py);
  e.python_stack_id = py.python_stack_id;
  const size_t index = events_seen_++;
  if (verify_) {
    if (std::string why = implausible_event(t_, e); !why.empty()) {
      t_.set_aside.push_back(SetAsideEvent{index, e, std::move(why)});
      return {};
    }
  }
  if (t_.end && t_.end->exec) t_.end.reset();  // the exec failed or a thread went on (EndReason)
  if (on_event) {
    (*on_event)(e);
    ++dropped_;
  } else {
    t_.events.push_back(e);
  }
  return {};
}

std::string Parser::decode_Symbol(Cursor& c) {
  SymbolRecord r{};
  c.fixed(r);
  Symbol s{r.ip, r.line, {}, {}};
  if (!c.string(s.function) || !c.string(s.file)) return "bad string length";
  ++t_.symbol_records;
  t_.symbols[s.ip] = std::move(s);
  return {};
}

std::string Parser::decode_End(Cursor& c) {
  EndRecord r{};
  c.fixed(r);
  t_.end = EndInfo{r.time_ns, r.events_written, r.events_dropped, false, {}};
  uint32_t reason = 0;
  c.fixed(reason);
  t_.end->exec = reason == uint32_t(format::EndReason::kExec);
  if (!c.string(t_.end->exec_into)) return "bad string length";
  if (c.left() >= sizeof(int32_t)) c.fixed(t_.end->exit_status);  // 1.15
  return {};
}

std::string Parser::decode_ApiName(Cursor& c) {
  ApiNameRecord r{};
  c.fixed(r);
  std::string name;
  if (!c.string(name)) return "bad string length";
  t_.api_names[r.id] = std::move(name);
  return {};
}

std::string Parser::decode_PyString(Cursor& c) {
  PyStringRecord r{};
  c.fixed(r);
  std::string text;
  if (!c.string(text)) return "bad string length";
  t_.py_strings[r.id] = std::move(text);
  return {};
}

std::string Parser::decode_PyFrame(Cursor& c) {
  PyFrameRecord r{};
  r.line = -1;
  c.fixed(r);
  t_.py_frames[r.id] = PyFrameNode{r.id, r.parent, r.file, r.function, r.line, r.flags};
  return {};
}

std::string Parser::decode_Mark(Cursor& c) { return mark(c, t_.marks); }

// A running total: the largest one read is the count (a record of a damaged chunk may be lost).
std::string Parser::decode_Bounded(Cursor& c) {
  BoundedRecord r{};
  c.fixed(r);
  BoundedCount& b = t_.bounded[r.what];
  b.cap = r.cap;
  b.dropped = std::max(b.dropped, r.dropped);
  return {};
}

std::string Parser::decode_RangeEnd(Cursor& c) { return mark(c, t_.range_ends); }

std::string Parser::mark(Cursor& c, std::vector<Mark>& into) {
  MarkRecord r{};
  c.fixed(r);
  Mark m{r.time_ns, r.tid, static_cast<MarkSource>(r.source), {}};
  if (!c.string(m.name)) return "bad string length";
  into.push_back(std::move(m));
  return {};
}

std::string Parser::decode_NvtxMem(Cursor& c) {
  NvtxMemRecord r{};
  c.fixed(r);
  NvtxMemEvent m{r.time_ns,         r.heap,          r.address, r.size, r.tid, r.stack_id,
                 r.python_stack_id, NvtxMemOp(r.op), r.usage,   {}};
  if (!c.string(m.name)) return "bad string length";
  if (verify_ && (r.op < uint8_t(NvtxMemOp::kHeapRegister) || r.op > uint8_t(NvtxMemOp::kRegionName)))
    return set_aside_record("an NVTX memory record of operation " + std::to_string(r.op));
  t_.nvtx_mem.push_back(std::move(m));
  return {};
}

std::string Parser::decode_BlockSource(Cursor& c) {
  BlockSourceRecord r{};
  c.fixed(r);
  BlockSource b{r.time_ns, r.device, r.flags, BlockAllocator(r.allocator), BlockSourceState(r.state), {}, {}, {}};
  if (!c.string(b.version) || !c.string(b.reason) || !c.string(b.settings)) return "bad string length";
  t_.block_sources.push_back(std::move(b));
  return {};
}

std::string Parser::decode_BlockEvent(Cursor& c) {
  BlockEventRecord r{};
  c.fixed(r);
  BlockEvent b{r.time_ns,
               r.address,
               r.size,
               r.requested,
               r.stream,
               {r.pool[0], r.pool[1]},
               r.allocated,
               r.reserved,
               r.tid,
               r.stack_id,
               r.python_stack_id,
               r.device,
               BlockOp(r.op),
               BlockAllocator(r.allocator),
               r.flags,
               dropped_ + t_.events.size()};
  if (on_block) (*on_block)(b);
  else t_.block_events.push_back(b);
  return {};
}

std::string Parser::decode_GpuProcesses(Cursor& c) {
  GpuProcessesRecord r{};
  c.fixed(r);
  if (verify_ && !plausible_ordinal(r.device))
    return set_aside_record("a GPU processes record of device ordinal " + std::to_string(r.device));
  if (uint64_t(r.count) * sizeof(GpuProcess) > c.left())
    return "list of " + std::to_string(r.count) + " GPU processes does not fit its payload";
  GpuProcesses g{r.time_ns, r.device, std::vector<GpuProcess>(r.count)};
  for (auto& p : g.processes) c.fixed(p);
  t_.gpu_processes.push_back(std::move(g));
  return {};
}

std::string Parser::decode_AllocatorSegments(Cursor& c) {
  if (!allocator_map(c)) ++t_.damaged_records;  // a program's record: never fatal
  return {};
}

// 1.10: judged where its chunk's seal is (chunk_order.h).
std::string Parser::decode_ChunkSequence(Cursor&) { return {}; }

// A seal is judged before its chunk's records reach here; one anywhere else is out of
// place: counted as unknown.
std::string Parser::decode_Checksum(Cursor&) {
  ++t_.unknown_records;
  return {};
}

// 1.7: whole records in one zstd frame. Its chunk's checksum matched, so what is wrong
// inside is a writer's fault: said, and the records before it kept.
std::string Parser::decode_Compressed(Cursor& c) {
  if (inside_compressed_) return "a compressed record inside another";
  std::vector<uint8_t> raw;
  if (std::string bad = inflate_records(c.here(), c.left(), raw); !bad.empty()) return bad;
  inside_compressed_ = true;
  std::string why;
  for (size_t off = 0; off < raw.size();) {
    RecordHeader h;
    if (raw.size() - off < sizeof h) {
      why = "a record cut off";
      break;
    }
    std::memcpy(&h, raw.data() + off, sizeof h);
    if (h.payload_bytes > raw.size() - off - sizeof h) {
      why = "a record cut off";
      break;
    }
    if (h.type == uint16_t(RecordType::kChecksum)) {
      why = "a checksum record";
      break;
    }
    Cursor inner(raw.data() + off + sizeof h, h.payload_bytes);
    if (std::string bad = record(static_cast<RecordType>(h.type), inner); !bad.empty()) {
      why = bad;
      break;
    }
    off += sizeof h + h.payload_bytes;
  }
  inside_compressed_ = false;
  return why.empty() ? std::string() : why + " inside a compressed record";
}

// False, adding nothing, when the lists do not fit the payload or a segment's blocks
// lie outside the block list.
bool Parser::allocator_map(Cursor& c) {
  AllocatorSegmentsRecord r{};
  c.fixed(r);
  AllocatorMap m;
  m.time_ns = r.time_ns;
  m.device = r.device;
  m.events_before = dropped_ + t_.events.size();
  if (verify_ && !plausible_ordinal(m.device)) {
    set_aside_record("an allocator map of device ordinal " + std::to_string(m.device));
    return true;
  }
  if (!c.string(m.allocator) || r.segment_bytes < 40 || r.block_bytes < 12) return false;
  if (uint64_t(r.segment_count) * r.segment_bytes + uint64_t(r.block_count) * r.block_bytes > c.left()) return false;
  std::vector<format::AllocatorSegment> raw(r.segment_count);
  for (auto& s : raw) {
    Cursor entry(c.here(), r.segment_bytes);
    entry.fixed(s);
    c.skip(r.segment_bytes);
  }
  std::vector<cumemtrace::AllocatorBlock> blocks(r.block_count);
  for (auto& b : blocks) {
    format::AllocatorBlock rb{};
    Cursor entry(c.here(), r.block_bytes);
    entry.fixed(rb);
    c.skip(r.block_bytes);
    b = {rb.size, static_cast<BlockState>(rb.state)};
  }
  for (const auto& s : raw) {
    if (uint64_t(s.first_block) + s.block_count > blocks.size()) return false;
    m.segments.push_back({s.address,
                          s.total_bytes,
                          s.allocated_bytes,
                          s.stream,
                          s.flags,
                          {blocks.begin() + s.first_block, blocks.begin() + s.first_block + s.block_count}});
  }
  t_.allocator_maps.push_back(std::move(m));
  return true;
}

std::string Parser::decode_Snapshot(Cursor& c) {
  SnapshotRecord r{};
  c.fixed(r);
  Snapshot s;
  s.time_ns = r.time_ns;
  s.reason = static_cast<SnapshotReason>(r.reason);
  s.flags = r.flags;
  s.events_dropped = r.events_dropped;
  if (r.device_count > 0) {
    if (r.entry_bytes < sizeof(int32_t)) return "bad snapshot entry size " + std::to_string(r.entry_bytes);
    if (uint64_t(r.device_count) * r.entry_bytes > c.left()) {
      return "snapshot of " + std::to_string(r.device_count) + " entries of " + std::to_string(r.entry_bytes) +
             " bytes does not fit its payload";
    }
  }
  s.devices.reserve(r.device_count);
  for (uint32_t i = 0; i < r.device_count; ++i) {
    format::DeviceSnapshot raw{};
    raw.nvml_process_used = raw.nvml_device_free = raw.nvml_device_total = raw.pool_reserved_bytes = kUnknown64;
    raw.nvml_read_ns = raw.event_seq = kUnknown64;
    raw.graph_used_current = raw.graph_reserved_current = raw.graph_used_high = raw.graph_reserved_high = kUnknown64;
    Cursor entry(c.here(), r.entry_bytes);
    entry.fixed(raw);
    c.skip(r.entry_bytes);
    if (verify_ && !plausible_ordinal(raw.device)) {
      set_aside_record("a snapshot entry of device ordinal " + std::to_string(raw.device));
      continue;
    }
    cumemtrace::DeviceSnapshot d;
    d.device = raw.device;
    std::memcpy(d.live_bytes, raw.live_bytes, sizeof raw.live_bytes);
    // 1.9: array and ipc-import bytes follow; 0 in older (shorter) entries.
    std::memcpy(d.live_bytes + format::kSnapshotKinds, raw.live_bytes_more, sizeof raw.live_bytes_more);
    d.live_count = raw.live_count;
    d.device_bytes = raw.device_bytes;
    d.peak_device_bytes = raw.peak_device_bytes;
    d.peak_time_ns = raw.peak_time_ns;
    d.arena_bytes = raw.arena_bytes;
    d.arena_count = raw.arena_count;
    d.gap_bytes = raw.gap_bytes;
    d.largest_gap = raw.largest_gap;
    d.nvml_process_used = raw.nvml_process_used;
    d.nvml_device_free = raw.nvml_device_free;
    d.nvml_device_total = raw.nvml_device_total;
    d.pool_reserved_bytes = raw.pool_reserved_bytes;
    d.nvml_read_ns = raw.nvml_read_ns;
    d.event_seq = raw.event_seq;
    d.moment = raw.moment;
    d.graph_used_current = raw.graph_used_current;
    d.graph_reserved_current = raw.graph_reserved_current;
    d.graph_used_high = raw.graph_used_high;
    d.graph_reserved_high = raw.graph_reserved_high;
    s.devices.push_back(d);
  }
  t_.snapshots.push_back(std::move(s));
  return {};
}

// A record whose framing holds but whose device ordinal no trace can name (plausible.h):
// left out, and said as damage at the record (inside a compressed record: at it, 0 bytes,
// so that ranges stay in order). Returns "" so that reading goes on.
std::string Parser::set_aside_record(const std::string& what) {
  // One range per record, whatever number of its entries are set aside.
  if (set_aside_at_ == record_at_) return {};
  set_aside_at_ = record_at_;
  const uint64_t bytes = inside_compressed_ ? 0 : record_bytes_;
  damaged(record_at_, record_at_ + bytes,
          what + " at byte " + std::to_string(record_at_) + (inside_compressed_ ? " (compressed)" : "") +
              ": no device has it; set aside");
  return {};
}

}  // namespace cumemtrace::read_detail
