// Bounds-checked parsing of a trace file. Every read goes through Cursor, which never
// touches a byte past its end: this is what makes the reader safe on arbitrary input
// (test/analysis/reader_test.cpp cuts a valid trace at every byte offset).
#include "read/reader.h"
#include "base/progress.h"
#include "read/reader_chunks.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "read/chunk_order.h"
#include "cumemtrace/checksum.h"
#include "read/cut_guard.h"
#include "read/inflate.h"
#include "read/plausible.h"

namespace cumemtrace {
namespace {

using namespace format;

// One record's payload is never this large in a sane file: the biggest real records are
// snapshots (≈200 bytes per device) and modules (a path). A larger announced size means
// the framing is damaged; stopping there beats allocating gigabytes on garbage.
constexpr uint32_t kMaxPayloadBytes = 64u << 20;

// A view over one payload. Reads past the end yield "absent": fixed-size reads copy
// what is there and leave the rest zero (shorter payloads from older writers), and
// strings report failure only when a length runs past the end (damage).
class Cursor {
 public:
  Cursor(const uint8_t* p, size_t n) : p_(p), n_(n) {}

  // Copies up to sizeof(T) bytes into `out` (pre-initialised by the caller); returns
  // how many were copied.
  template <class T>
  size_t fixed(T& out) {
    const size_t k = std::min(sizeof(T), n_ - pos_);
    std::memcpy(&out, p_ + pos_, k);
    pos_ += k;
    return k;
  }

  // A u32-length-prefixed string. Absent (payload already ended) is fine: `out` stays
  // empty. A length that does not fit in what is left is an error.
  bool string(std::string& out) {
    if (pos_ == n_) return true;
    if (n_ - pos_ < 4) return false;
    uint32_t len;
    std::memcpy(&len, p_ + pos_, 4);
    pos_ += 4;
    if (len > n_ - pos_) return false;
    out.assign(reinterpret_cast<const char*>(p_ + pos_), len);
    pos_ += len;
    return true;
  }

  size_t left() const { return n_ - pos_; }
  const uint8_t* here() const { return p_ + pos_; }
  void skip(size_t k) { pos_ += std::min(k, left()); }

 private:
  const uint8_t* p_;
  size_t n_;
  size_t pos_ = 0;
};

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

class Parser {
 public:
  Parser(std::span<const uint8_t> bytes, Trace& t, bool verify) : b_(bytes), t_(t), verify_(verify) {}

  // reader_chunks.h: note each sealed chunk's end; or start at a chunk end and stop after
  // the first chunk that ends past a moment.
  std::vector<ChunkEnd>* chunk_ends = nullptr;
  const ChunkCallback* on_chunk = nullptr;  // parse_trace_streaming
  const EventCallback* on_event = nullptr;  // parse_trace_events
  const MappedFile* mapped = nullptr;       // where b_ is mapped from: pages behind are given back
  bool quiet = false;  // no "reading" progress: the caller's pass says its own
  uint64_t resume_at = 0;
  uint64_t stop_after_ns = ~uint64_t(0);

  void run() {
    if (!header()) return;
    if (!verify_) {
      std::string why;
      bool cut;
      if (const uint64_t stop = records(t_.records_end, b_.size(), false, why, cut); stop != b_.size())
        damaged(stop, b_.size(), why);
    } else if (t_.version_minor >= 2) {
      t_.sealed = true;
      if (t_.version_minor >= 10) order_.emplace(t_.trace_id, resume_at > 0);
      sealed_chunks();
      if (order_) t_.last_chunk_sequence = order_->last();
    } else {
      legacy_records();
    }
    if (!t_.damage.empty()) {
      const DamagedRange& d = t_.damage.front();
      t_.error = ReadError{d.byte_offset, d.message, truncated_tail_};
    }
  }

 private:
  // Reads records in [from, to). Returns where it stopped: `to` when all were read,
  // else the start of the first record that is cut off, implausible (strict) or unparsable;
  // `why` then says what is wrong.
  uint64_t records(uint64_t from, uint64_t to, bool strict, std::string& why, bool& cut) {
    uint64_t off = from;
    cut = false;
    while (off < to) {
      const uint64_t left = to - off;
      if (left < sizeof(RecordHeader)) {
        cut = true;
        why = "truncated record header at byte " + std::to_string(off) + ": " + std::to_string(sizeof(RecordHeader)) +
              " bytes needed, " + std::to_string(left) + " left";
        return off;
      }
      RecordHeader h;
      std::memcpy(&h, b_.data() + off, sizeof h);
      const uint64_t body = left - sizeof h;
      if (h.payload_bytes > kMaxPayloadBytes) {
        why = "absurd payload size at byte " + std::to_string(off) + ": " + std::to_string(h.payload_bytes) +
              " bytes announced for a record of type " + std::to_string(h.type);
        return off;
      }
      if (h.payload_bytes > body) {
        cut = true;
        why = "truncated record at byte " + std::to_string(off) + ": payload of " + std::to_string(h.payload_bytes) +
              " bytes announced, " + std::to_string(body) + " left";
        return off;
      }
      const uint8_t* payload = b_.data() + off + sizeof h;
      if (strict && !plausible_legacy_record(h.type, h.flags, payload, h.payload_bytes)) {
        why = "implausible record at byte " + std::to_string(off) + ": type " + std::to_string(h.type) + " with " +
              std::to_string(h.payload_bytes) + " bytes of payload (flags " + std::to_string(h.flags) + ")";
        return off;
      }
      Cursor c(payload, h.payload_bytes);
      record_at_ = off;
      record_bytes_ = sizeof h + h.payload_bytes;
      if (std::string bad = record(static_cast<RecordType>(h.type), c); !bad.empty()) {
        why = bad + " in record of type " + std::to_string(h.type) + " at byte " + std::to_string(off);
        return off;
      }
      off += sizeof h + h.payload_bytes;
      t_.records_end = off;
      if (off - reported_ >= (1u << 20)) {  // a clock read per MiB, not per record
        reported_ = off;
        if (!quiet) progress("reading", off, b_.size());
        // Formats before 1.2 have no chunks to give pages back after: give them back here.
        if (mapped && !t_.sealed) mapped->release_before(off);
      }
    }
    return off;
  }

  void fail(uint64_t off, std::string msg, bool truncated) {
    t_.error = ReadError{off, std::move(msg), truncated};
  }

  void damaged(uint64_t from, uint64_t to, const std::string& why) {
    t_.damage.push_back(DamagedRange{from, to - from, why});
  }

  // Format 1.2: chunks sealed by ChecksumRecords (checksum.h). A seal is found by its
  // marker and trusted only when its hash matches, so damage anywhere (a length field
  // included) costs only the chunks it touches.
  void sealed_chunks() {
    const uint8_t* base = b_.data();
    const uint64_t size = b_.size();
    const uint64_t first = std::max(t_.records_end, resume_at);  // header_bytes, or where to resume
    uint64_t pos = resume_at;  // 0: the first chunk covers the FileHeader too
    uint64_t search = first + sizeof(RecordHeader);
    while (search + sizeof(ChecksumRecord) <= size) {
      const uint64_t m = next_marker(search);
      if (m == size) break;
      search = m + 1;
      const uint64_t rec = m - sizeof(RecordHeader);
      RecordHeader h;
      ChecksumRecord r;
      std::memcpy(&h, base + rec, sizeof h);
      // The seal's own header is outside its hash: every field of it must be exact.
      if (h.type != uint16_t(RecordType::kChecksum) || h.flags != 0 || h.payload_bytes != sizeof r ||
          size - m < sizeof r)
        continue;
      std::memcpy(&r, base + m, sizeof r);
      if (r.covered_bytes > rec || rec - r.covered_bytes < pos) continue;
      const uint64_t start = rec - r.covered_bytes;
      if (!seal_matches(base + start, r)) continue;
      if (start > pos) damaged(pos, start, damage_message(pos, start));
      ++t_.sealed_chunks;
      // 1.10: the chunk's place, which its checksum alone does not cover (chunk_order.h).
      const ChunkOrder::Verdict order =
          order_ ? order_->judge(base, start, rec, m + sizeof r, start == pos) : ChunkOrder::Verdict{};
      if (!order.read) {
        damaged(start, m + sizeof r, order.damage);
        pos = m + sizeof r;
        t_.records_end = pos;
        search = pos + sizeof(RecordHeader);
        continue;
      }
      if (!order.damage.empty()) damaged(start, start, order.damage);
      std::string why;
      bool cut;
      const uint64_t from = std::max(start, first);
      if (uint64_t stop = records(from, rec, false, why, cut); stop != rec) {
        damaged(stop, rec, why + " (inside a chunk whose checksum matched: a writer fault)");
      }
      pos = m + sizeof r;
      t_.records_end = pos;
      search = pos + sizeof(RecordHeader);
      if (mapped) mapped->release_before(pos);  // never read again: the next marker is past it
      if (chunk_ends) chunk_ends->push_back({pos, dropped_ + t_.events.size()});
      if (on_chunk) {
        (*on_chunk)(t_, ChunkEnd{pos, dropped_ + t_.events.size()});
        dropped_ += t_.events.size();
        t_.events.clear();
      }
      if (!t_.events.empty() && t_.events.back().time_ns > stop_after_ns) return;
    }
    if (pos < size) {
      const uint64_t tail_from = std::max(pos, first);
      if (tail_from < size) {
        damaged(tail_from, size,
                std::to_string(size - tail_from) + " bytes at byte " + std::to_string(tail_from) +
                    " not sealed by a checksum (the writer was cut off mid-flush, or damage)");
        truncated_tail_ = t_.damage.size() == 1;
      }
    }
  }

  uint64_t dropped_ = 0;  // events handed to on_chunk or on_event, and not kept

  // Where the next seal's marker starts, at or after `from`; the file's size if none. A
  // long stretch without one (damage, a sparse file) is searched a window at a time, and
  // the pages searched are given back behind it, so that it is not held whole. Pages given
  // back are read again from the file if a seal found later covers them.
  uint64_t next_marker(uint64_t from) const {
    constexpr uint64_t kWindow = 64u << 20;
    const uint64_t size = b_.size();
    // Behind `from` too: a stretch of failed seals (damage) calls here once per marker.
    if (mapped) mapped->release_before(from);
    for (uint64_t at = from; at < size;) {
      const uint64_t end = std::min(size, at + kWindow);
      if (const void* hit = memmem(b_.data() + at, end - at, kChecksumMarker, sizeof kChecksumMarker))
        return uint64_t(static_cast<const uint8_t*>(hit) - b_.data());
      if (end == size) break;
      at = end - (sizeof kChecksumMarker - 1);  // a marker across the windows' edge
      // A seal found later may cover bytes given back: they are read again from the file.
      if (mapped) mapped->release_before(at);
    }
    return size;
  }

  static std::string damage_message(uint64_t from, uint64_t to) {
    return "damaged bytes " + std::to_string(from) + "-" + std::to_string(to) + " (" + std::to_string(to - from) +
           " bytes): checksum mismatch; reading resumed at the next good chunk";
  }

  // Formats 1.0 and 1.1: no checksums. Every record is checked against the sizes those
  // writers wrote; after an implausible one, reading resumes at the next offset from
  // which kResyncRun records in a row are plausible.
  void legacy_records() {
    constexpr int kResyncRun = 4;
    const uint64_t size = b_.size();
    uint64_t pos = t_.records_end;
    while (pos < size) {
      std::string why;
      bool cut;
      const uint64_t stop = records(pos, size, true, why, cut);
      if (stop == size) return;
      uint64_t next = stop + 1;
      for (; next < size && !plausible_run(b_.data(), size, next, kResyncRun); ++next)
        if (mapped && (next & ((1u << 20) - 1)) == 0) mapped->release_before(next);  // a long resync
      if (next >= size) {
        // A record cut off at the end is the common case (a killed writer): said as is.
        damaged(stop, size,
                cut ? why : why + "; the " + std::to_string(size - stop) + " bytes from there on are unread");
        truncated_tail_ = cut && t_.damage.size() == 1;
        return;
      }
      damaged(
          stop, next,
          why + "; " + std::to_string(next - stop) + " bytes skipped, reading resumed at byte " + std::to_string(next));
      pos = next;
    }
  }

  bool header() {
    FileHeader fh{};
    if (b_.size() < sizeof(kMagic) || std::memcmp(b_.data(), kMagic, sizeof kMagic) != 0) {
      fail(0, "bad magic at byte 0: not a cumemtrace trace", false);
      return false;
    }
    if (b_.size() < sizeof fh) {
      fail(0, "truncated file header at byte 0: " + std::to_string(sizeof fh) + " bytes needed, " +
                  std::to_string(b_.size()) + " present", true);
      return false;
    }
    std::memcpy(&fh, b_.data(), sizeof fh);
    t_.version_major = fh.version_major;
    t_.version_minor = fh.version_minor;
    if (fh.version_major != kVersionMajor) {
      fail(8, "unknown major version " + std::to_string(fh.version_major) + " at byte 8 (this reader knows " +
                  std::to_string(kVersionMajor) + ")", false);
      return false;
    }
    // A later minor version may have a longer header; never a shorter one.
    if (fh.header_bytes < sizeof fh || fh.header_bytes > b_.size()) {
      fail(12, "bad header size " + std::to_string(fh.header_bytes) + " at byte 12", fh.header_bytes > b_.size());
      return false;
    }
    t_.header_ok = true;
    t_.records_end = fh.header_bytes;
    if (fh.version_minor >= 10) t_.trace_id = fh.trace_id;
    return true;
  }

  // Returns an empty string on success, else what is wrong with the payload. One decoder
  // per row of records.def; a type no row names is a newer writer's, skipped by its length.
  std::string record(RecordType type, Cursor& c) {
    switch (type) {
#define CUMEMTRACE_RECORD(Name, id, since, label, Fixed, strings) \
  case RecordType::k##Name:                                       \
    return decode_##Name(c);
#include "cumemtrace/records.def"
#undef CUMEMTRACE_RECORD
    }
    ++t_.unknown_records;
    return {};
  }

  std::string decode_Process(Cursor& c) {
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
    t_.process = std::move(p);
    return {};
  }

  std::string decode_Device(Cursor& c) {
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

  std::string decode_Module(Cursor& c) {
    ModuleRecord r{};
    c.fixed(r);
    ModuleInfo m{r.load_bias, r.start, r.end, {}, {}};
    if (!c.string(m.path) || !c.string(m.build_id)) return "bad string length";
    t_.modules.push_back(std::move(m));
    return {};
  }

  std::string decode_StackNode(Cursor& c) {
    StackNodeRecord r{};
    c.fixed(r);
    t_.stack_nodes[r.id] = StackNode{r.id, r.parent, r.ip};
    return {};
  }

  std::string decode_Event(Cursor& c) {
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


  std::string decode_Symbol(Cursor& c) {
    SymbolRecord r{};
    c.fixed(r);
    Symbol s{r.ip, r.line, {}, {}};
    if (!c.string(s.function) || !c.string(s.file)) return "bad string length";
    ++t_.symbol_records;
    t_.symbols[s.ip] = std::move(s);
    return {};
  }

  std::string decode_End(Cursor& c) {
    EndRecord r{};
    c.fixed(r);
    t_.end = EndInfo{r.time_ns, r.events_written, r.events_dropped, false, {}};
    uint32_t reason = 0;
    c.fixed(reason);
    t_.end->exec = reason == uint32_t(format::EndReason::kExec);
    if (!c.string(t_.end->exec_into)) return "bad string length";
    return {};
  }

  std::string decode_ApiName(Cursor& c) {
    ApiNameRecord r{};
    c.fixed(r);
    std::string name;
    if (!c.string(name)) return "bad string length";
    t_.api_names[r.id] = std::move(name);
    return {};
  }

  std::string decode_PyString(Cursor& c) {
    PyStringRecord r{};
    c.fixed(r);
    std::string text;
    if (!c.string(text)) return "bad string length";
    t_.py_strings[r.id] = std::move(text);
    return {};
  }

  std::string decode_PyFrame(Cursor& c) {
    PyFrameRecord r{};
    r.line = -1;
    c.fixed(r);
    t_.py_frames[r.id] = PyFrameNode{r.id, r.parent, r.file, r.function, r.line, r.flags};
    return {};
  }

  std::string decode_Mark(Cursor& c) { return mark(c, t_.marks); }
  std::string decode_RangeEnd(Cursor& c) { return mark(c, t_.range_ends); }
  std::string mark(Cursor& c, std::vector<Mark>& into) {
    MarkRecord r{};
    c.fixed(r);
    Mark m{r.time_ns, r.tid, static_cast<MarkSource>(r.source), {}};
    if (!c.string(m.name)) return "bad string length";
    into.push_back(std::move(m));
    return {};
  }

  std::string decode_GpuProcesses(Cursor& c) {
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

  std::string decode_AllocatorSegments(Cursor& c) {
    if (!allocator_map(c)) ++t_.damaged_records;  // a program's record: never fatal
    return {};
  }

  // 1.10: judged where its chunk's seal is (chunk_order.h).
  std::string decode_ChunkSequence(Cursor&) { return {}; }

  // A seal is judged before its chunk's records reach here; one anywhere else is out of
  // place: counted as unknown.
  std::string decode_Checksum(Cursor&) {
    ++t_.unknown_records;
    return {};
  }

  // 1.7: whole records in one zstd frame. Its chunk's checksum matched, so what is wrong
  // inside is a writer's fault: said, and the records before it kept.
  std::string decode_Compressed(Cursor& c) {
    if (inside_compressed_) return "a compressed record inside another";
    std::vector<uint8_t> raw;
    if (std::string bad = inflate_records(c.here(), c.left(), raw); !bad.empty()) return bad;
    inside_compressed_ = true;
    std::string why;
    for (size_t off = 0; off < raw.size();) {
      RecordHeader h;
      if (raw.size() - off < sizeof h) { why = "a record cut off"; break; }
      std::memcpy(&h, raw.data() + off, sizeof h);
      if (h.payload_bytes > raw.size() - off - sizeof h) { why = "a record cut off"; break; }
      if (h.type == uint16_t(RecordType::kChecksum)) { why = "a checksum record"; break; }
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
  bool allocator_map(Cursor& c) {
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
      m.segments.push_back({s.address, s.total_bytes, s.allocated_bytes, s.stream, s.flags,
                            {blocks.begin() + s.first_block, blocks.begin() + s.first_block + s.block_count}});
    }
    t_.allocator_maps.push_back(std::move(m));
    return true;
  }

  std::string decode_Snapshot(Cursor& c) {
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
  std::string set_aside_record(const std::string& what) {
    // One range per record, whatever number of its entries are set aside.
    if (set_aside_at_ == record_at_) return {};
    set_aside_at_ = record_at_;
    const uint64_t bytes = inside_compressed_ ? 0 : record_bytes_;
    damaged(record_at_, record_at_ + bytes,
            what + " at byte " + std::to_string(record_at_) + (inside_compressed_ ? " (compressed)" : "") +
                ": no device has it; set aside");
    return {};
  }

  std::span<const uint8_t> b_;
  Trace& t_;
  bool verify_;
  std::optional<ChunkOrder> order_;  // 1.10
  uint64_t record_at_ = 0, record_bytes_ = 0;  // the (outer) record being read
  uint64_t set_aside_at_ = ~0ull;              // the last record set_aside_record said
  size_t events_seen_ = 0;  // Event records read, set aside or not
  bool truncated_tail_ = false;  // the only damage is a cut-off end
  bool inside_compressed_ = false;  // reading the records of a CompressedRecord
  uint64_t reported_ = 0;           // where progress() was last told
};

}  // namespace

const DeviceInfo* Trace::device(int32_t ordinal) const {
  for (auto it = devices.rbegin(); it != devices.rend(); ++it)
    if (it->ordinal == ordinal) return &*it;
  return nullptr;
}

std::string Trace::api_name(uint16_t id) const {
  auto it = api_names.find(id);
  return it != api_names.end() ? it->second : "api#" + std::to_string(id);
}

uint64_t Trace::granule() const {
  return process && process->granule_bytes ? process->granule_bytes : (2ull << 20);
}

Trace parse_trace(std::span<const uint8_t> bytes, std::string path, bool verify) {
  Trace t;
  t.path = std::move(path);
  Parser(bytes, t, verify).run();
  return t;
}

namespace {
// A verifying read, its Parser set up by `setup` first (reader_chunks.h's ways of reading).
template <class Setup>
Trace parse_verified(std::span<const uint8_t> bytes, std::string path, Setup setup) {
  Trace t;
  t.path = std::move(path);
  Parser p(bytes, t, true);
  setup(p);
  p.run();
  return t;
}
}  // namespace

Trace parse_trace_chunks(std::span<const uint8_t> bytes, std::string path, std::vector<ChunkEnd>& ends) {
  return parse_verified(bytes, std::move(path), [&](Parser& p) { p.chunk_ends = &ends; });
}

Trace parse_trace_streaming(std::span<const uint8_t> bytes, std::string path, const ChunkCallback& on_chunk) {
  return parse_verified(bytes, std::move(path), [&](Parser& p) { p.on_chunk = &on_chunk; });
}

Trace parse_trace_events(std::span<const uint8_t> bytes, std::string path, const EventCallback& on_event, bool quiet,
                         const MappedFile* mapped) {
  return parse_verified(bytes, std::move(path), [&](Parser& p) {
    p.on_event = &on_event;
    p.quiet = quiet;
    p.mapped = mapped;
  });
}

Trace parse_trace_from(std::span<const uint8_t> bytes, std::string path, uint64_t offset, uint64_t stop_after_ns) {
  return parse_verified(bytes, std::move(path), [&](Parser& p) {
    p.resume_at = std::min<uint64_t>(offset, bytes.size());
    p.stop_after_ns = stop_after_ns;
  });
}

MappedFile::MappedFile(const std::string& path) : path_(path) {
  // O_NONBLOCK: a FIFO's open would wait for a writer forever; it is refused below.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    error_ = std::strerror(errno);
    return;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    error_ = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    error_ = "not a regular file";
  } else if (st.st_size > 0) {
    mtime_ns_ = uint64_t(st.st_mtim.tv_sec) * 1'000'000'000ull + uint64_t(st.st_mtim.tv_nsec);
    // mmap rather than read: traces of long jobs run to gigabytes and are read once.
    void* p = ::mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      error_ = std::strerror(errno);
    } else {
      data_ = p;
      size_ = size_t(st.st_size);
      guard_ = guard_mapping(data_, size_);
      device_ = uint64_t(st.st_dev), inode_ = uint64_t(st.st_ino);
    }
  } else {
    mtime_ns_ = uint64_t(st.st_mtim.tv_sec) * 1'000'000'000ull + uint64_t(st.st_mtim.tv_nsec);
  }
  ::close(fd);
}

void MappedFile::release_before(uint64_t offset) const {
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  const uint64_t end = std::min<uint64_t>(offset, size_) / page * page;
  if (end < released_) released_ = 0;  // a new read from the start: give back behind it again
  if (!data_ || end < released_ + (64u << 20)) return;
  // Advice only: a failure leaves the pages where they are, which is harmless.
  ::madvise(static_cast<uint8_t*>(data_) + released_, end - released_, MADV_DONTNEED);
  released_ = end;
}

bool MappedFile::cut() const {
  if (mapping_cut(guard_)) return true;
  struct stat st;
  if (!data_ || ::stat(path_.c_str(), &st) != 0) return false;
  return uint64_t(st.st_dev) == device_ && uint64_t(st.st_ino) == inode_ && uint64_t(st.st_size) < size_;
}

bool MappedFile::written_in_place() const {
  struct stat st;
  if (!data_ || ::stat(path_.c_str(), &st) != 0) return false;
  const uint64_t mtime = uint64_t(st.st_mtim.tv_sec) * 1'000'000'000ull + uint64_t(st.st_mtim.tv_nsec);
  return uint64_t(st.st_dev) == device_ && uint64_t(st.st_ino) == inode_ && uint64_t(st.st_size) == size_ &&
         mtime != mtime_ns_;
}

MappedFile::~MappedFile() {
  unguard_mapping(guard_);
  if (data_) ::munmap(data_, size_);
}

Trace read_trace(const std::string& path) {
  const MappedFile file(path);
  if (!file.error().empty()) {
    Trace t;
    t.path = path;
    t.error = ReadError{0, "cannot read " + path + ": " + file.error(), false};
    return t;
  }
  return parse_trace(file.bytes(), path);
}

}  // namespace cumemtrace
