#include "render/dump.h"

#include <cstring>
#include <sstream>

#include "base/escape.h"
#include "read/inflate.h"
#include "read/record_names.h"
#include "base/units.h"

namespace cumemtrace {
namespace {

using format::ChunkSequenceRecord;
using format::FileHeader;
using format::kUnknown64;
using format::RecordHeader;
using format::RecordType;

// Describes the one record held by `t` (parsed on its own; see dump()).
void describe(std::ostream& out, const Trace& t, uint16_t type) {
  const std::string_view label = record_type_name(type);  // records.def
  switch (static_cast<RecordType>(type)) {
    case RecordType::kProcess:
      if (t.process) {
        out << label << " pid=" << t.process->pid << " ppid=" << t.process->ppid << " host=" << t.process->hostname
            << " rank=" << t.process->rank << " start_ns=" << t.process->start_monotonic_ns
            << " granule=" << t.process->granule_bytes << " depth=" << t.process->stack_depth
            << " argc=" << t.process->argv.size() << " version=" << t.process->tool_version
            << " local_rank=" << t.process->local_rank << " world_size=" << t.process->world_size;
        for (const auto& [k, v] : t.process->launcher) out << " " << k << "=" << v;
      }
      return;
    case RecordType::kDevice:
      if (!t.devices.empty()) {
        const auto& d = t.devices.back();
        out << label << " ordinal=" << d.ordinal << " nvml=" << d.nvml_index << " total=" << d.total_bytes
            << " name=" << d.name;
      }
      return;
    case RecordType::kModule:
      if (!t.modules.empty()) {
        const auto& m = t.modules.back();
        out << label << " " << hex(m.start) << "-" << hex(m.end) << " bias=" << hex(m.load_bias)
            << " build_id_bytes=" << m.build_id.size() << " " << m.path;
      }
      return;
    case RecordType::kStackNode:
      for (const auto& [id, n] : t.stack_nodes)
        out << label << " id=" << id << " parent=" << n.parent << " ip=" << hex(n.ip);
      return;
    case RecordType::kEvent:
      if (!t.events.empty()) {
        const auto& e = t.events.back();
        out << label << " t=" << e.time_ns << " " << op_name(e.op) << " " << kind_name(e.kind) << " dev=" << e.device
            << " addr=" << hex(e.address) << " size=" << e.size << " handle=" << hex(e.handle)
            << " stream=" << hex(e.stream) << " tid=" << e.tid << " stack=" << e.stack_id << " api=" << e.api
            << " result=" << e.result << " flags=" << e.flags;
        if (e.python_stack_id) out << " python=" << e.python_stack_id;
      }
      return;
    case RecordType::kPyString:
      for (const auto& [id, s] : t.py_strings) out << label << " id=" << id << " " << s;
      return;
    case RecordType::kPyFrame:
      for (const auto& [id, f] : t.py_frames)
        out << label << " id=" << id << " parent=" << f.parent << " file=" << f.file << " function=" << f.function
            << " line=" << f.line << " flags=" << f.flags;
      return;
    case RecordType::kSnapshot:
      if (!t.snapshots.empty()) {
        const auto& s = t.snapshots.back();
        out << label << " t=" << s.time_ns << " reason=" << uint32_t(s.reason) << " dropped=" << s.events_dropped;
        for (const auto& d : s.devices) {
          out << " [dev=" << d.device << " device_bytes=" << d.device_bytes << " peak=" << d.peak_device_bytes
              << " arena=" << d.arena_bytes << " nvml_used=";
          if (d.nvml_process_used == kUnknown64) out << "?";
          else out << d.nvml_process_used;
          if (d.pool_reserved_bytes != kUnknown64) out << " pool_reserved=" << d.pool_reserved_bytes;
          out << "]";
        }
      }
      return;
    case RecordType::kSymbol:
      for (const auto& [ip, s] : t.symbols)
        out << label << " ip=" << hex(ip) << " " << s.function << " " << s.file << ":" << s.line;
      return;
    case RecordType::kEnd:
      if (t.end)
        out << label << " t=" << t.end->time_ns << " written=" << t.end->events_written
            << " dropped=" << t.end->events_dropped;
      return;
    case RecordType::kBounded:
      for (const auto& [what, b] : t.bounded)
        out << label << " what=" << what << " cap=" << b.cap << " dropped=" << b.dropped;
      return;
    case RecordType::kChecksum: out << label; return;
    case RecordType::kChunkSequence:  // described from its bytes (dump())
      return;
    case RecordType::kApiName:
      for (const auto& [id, name] : t.api_names) out << label << " id=" << id << " " << name;
      return;
    case RecordType::kGpuProcesses:
      if (!t.gpu_processes.empty()) {
        const auto& g = t.gpu_processes.back();
        out << label << " t=" << g.time_ns << " dev=" << g.device;
        for (const auto& p : g.processes) out << " pid=" << p.pid << ":" << p.used_bytes;
      }
      return;
    case RecordType::kMark:
      if (!t.marks.empty())
        out << label << " t=" << t.marks.back().time_ns << " tid=" << t.marks.back().tid
            << " source=" << int(t.marks.back().source) << " " << t.marks.back().name;
      return;
    case RecordType::kRangeEnd:
      if (!t.range_ends.empty())
        out << label << " t=" << t.range_ends.back().time_ns << " tid=" << t.range_ends.back().tid
            << " source=" << int(t.range_ends.back().source) << " " << t.range_ends.back().name;
      return;
    case RecordType::kNvtxMem:
      if (!t.nvtx_mem.empty()) {
        const NvtxMemEvent& m = t.nvtx_mem.back();
        out << label << " t=" << m.time_ns << " tid=" << m.tid << " op=" << int(m.op) << " heap=0x" << std::hex
            << m.heap << " addr=0x" << m.address << std::dec << " size=" << m.size << " stack=" << m.stack_id;
        if (!m.name.empty()) out << " " << m.name;
      }
      return;
    case RecordType::kBlockSource:
      if (!t.block_sources.empty()) {
        const BlockSource& b = t.block_sources.back();
        out << label << " t=" << b.time_ns << " dev=" << b.device << " allocator=" << int(b.allocator)
            << " state=" << (b.state == format::BlockSourceState::kOn ? "on" : "off") << " flags=" << b.flags
            << " version=" << b.version << " settings=" << b.settings;
        if (!b.reason.empty()) out << " reason=" << b.reason;
      }
      return;
    case RecordType::kBlockEvent:
      if (!t.block_events.empty()) {
        const BlockEvent& b = t.block_events.back();
        out << label << " t=" << b.time_ns << " dev=" << b.device << " op=" << int(b.op) << " addr=" << hex(b.address)
            << " size=" << b.size << " tid=" << b.tid << " stack=" << b.stack_id << " flags=" << b.flags;
        if (b.allocated != kUnknown64) out << " allocated=" << b.allocated;
        if (b.reserved != kUnknown64) out << " reserved=" << b.reserved;
        if (b.requested != kUnknown64) out << " requested=" << b.requested;
        if (b.stream != kUnknown64) out << " stream=" << hex(b.stream);
        if (b.pool[0] != kUnknown64) out << " pool=" << b.pool[0] << "," << b.pool[1];
        if (b.python_stack_id) out << " python=" << b.python_stack_id;
      }
      return;
    case RecordType::kAllocatorSegments:
      for (const auto& m : t.allocator_maps) {
        size_t blocks = 0;
        for (const auto& s : m.segments) blocks += s.blocks.size();
        out << label << " t=" << m.time_ns << " dev=" << m.device << " " << m.allocator
            << " segments=" << m.segments.size() << " blocks=" << blocks;
      }
      if (t.damaged_records) out << label << " (damaged, skipped)";
      return;
    case RecordType::kCompressed:  // opened by dump()'s walk, never described whole
      break;
  }
  out << "unknown type " << type;
}

}  // namespace

std::optional<std::string> dump(std::ostream& out, std::span<const uint8_t> bytes) {
  // The reader owns the one definition of each record's layout; rather than decode
  // them twice, each record is parsed alone behind a copy of the file header.
  const Trace whole = parse_trace(bytes);
  if (!whole.header_ok) return whole.error ? whole.error->message : "unreadable";
  out << "@0 header version " << whole.version_major << "." << whole.version_minor << "\n";
  FileHeader fh{};
  std::memcpy(&fh, bytes.data(), sizeof fh);
  std::vector<uint8_t> one(bytes.begin(), bytes.begin() + fh.header_bytes);
  const size_t head = one.size();
  // Every record in file order, damaged or not: this is for looking at the bytes. The
  // records inside a compressed one follow it, at "@OFFSET+INNER".
  auto walk = [&](auto& self, const uint8_t* data, uint64_t size, const std::string& at) -> void {
    for (uint64_t off = at.empty() ? fh.header_bytes : 0; off < size;) {
      RecordHeader h;
      if (size - off < sizeof h) break;
      std::memcpy(&h, data + off, sizeof h);
      const uint64_t n = sizeof h + uint64_t(h.payload_bytes);
      const std::string where = "@" + at + std::to_string(off);
      if (n > size - off) {
        out << where << " record of type " << h.type << " announces " << h.payload_bytes
            << " bytes of payload, more than " << (at.empty() ? "the file holds\n" : "its compressed record holds\n");
        break;
      }
      if (h.type == uint16_t(RecordType::kCompressed) && at.empty()) {
        std::vector<uint8_t> raw;
        const std::string bad = inflate_records(data + off + sizeof h, h.payload_bytes, raw);
        out << where << " " << record_type_name(h.type) << " "
            << (bad.empty() ? std::to_string(raw.size()) + " bytes of records" : bad) << " (" << h.payload_bytes
            << " bytes)\n";
        if (bad.empty()) self(self, raw.data(), raw.size(), std::to_string(off) + "+");
        off += n;
        continue;
      }
      if (h.type == uint16_t(RecordType::kChunkSequence) && h.payload_bytes >= sizeof(ChunkSequenceRecord)) {
        ChunkSequenceRecord c;
        std::memcpy(&c, data + off + sizeof h, sizeof c);
        out << where << " " << record_type_name(h.type) << " trace_id=" << c.trace_id << " n=" << c.sequence << " ("
            << h.payload_bytes << " bytes)\n";
        off += n;
        continue;
      }
      one.resize(head);
      one.insert(one.end(), data + off, data + off + n);
      // The trace's strings in a record (host, argv, names, paths) printable: one line each.
      std::ostringstream line;
      describe(line, parse_trace(one, {}, false), h.type);
      out << where << " " << printable(line.str()) << " (" << h.payload_bytes << " bytes)\n";
      off += n;
    }
  };
  walk(walk, bytes.data(), bytes.size(), "");
  for (const auto& d : whole.damage) out << "damage: " << printable(d.message) << "\n";
  return std::nullopt;
}

}  // namespace cumemtrace
