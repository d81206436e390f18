// The reader's framing: the file header, records laid end to end, the sealed chunks of
// format 1.2 on (each trusted only when its checksum matches), and resynchronising after
// damage in the formats before it. What each record holds: record_decoders.cpp.
#include "read/parser.h"

#include <cstring>

#include "base/progress.h"
#include "cumemtrace/checksum.h"
#include "read/damage/plausible.h"

namespace cumemtrace::read_detail {

using namespace format;

// One record's payload is never this large in a sane file: the biggest real records are
// snapshots (≈200 bytes per device) and modules (a path). A larger announced size means
// the framing is damaged; stopping there beats allocating gigabytes on garbage.
constexpr uint32_t kMaxPayloadBytes = 64u << 20;

void Parser::run() {
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

uint64_t Parser::records(uint64_t from, uint64_t to, bool strict, std::string& why, bool& cut) {
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

void Parser::fail(uint64_t off, std::string msg, bool truncated) {
  t_.error = ReadError{off, std::move(msg), truncated};
}

void Parser::damaged(uint64_t from, uint64_t to, const std::string& why) {
  t_.damage.push_back(DamagedRange{from, to - from, why});
}

void Parser::sealed_chunks() {
  const uint8_t* base = b_.data();
  const uint64_t size = b_.size();
  const uint64_t first = std::max(t_.records_end, resume_at);  // header_bytes, or where to resume
  uint64_t pos = resume_at;                                    // 0: the first chunk covers the FileHeader too
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
    if (h.type != uint16_t(RecordType::kChecksum) || h.flags != 0 || h.payload_bytes != sizeof r || size - m < sizeof r)
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

uint64_t Parser::next_marker(uint64_t from) const {
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

std::string Parser::damage_message(uint64_t from, uint64_t to) {
  return "damaged bytes " + std::to_string(from) + "-" + std::to_string(to) + " (" + std::to_string(to - from) +
         " bytes): checksum mismatch; reading resumed at the next good chunk";
}

void Parser::legacy_records() {
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
      damaged(stop, size, cut ? why : why + "; the " + std::to_string(size - stop) + " bytes from there on are unread");
      truncated_tail_ = cut && t_.damage.size() == 1;
      return;
    }
    damaged(
        stop, next,
        why + "; " + std::to_string(next - stop) + " bytes skipped, reading resumed at byte " + std::to_string(next));
    pos = next;
  }
}

bool Parser::header() {
  FileHeader fh{};
  if (b_.size() == 0) {
    fail(0, "empty file (0 bytes): no trace in it", false);
    return false;
  }
  // Fewer bytes than the magic that begin as it does: a header cut short, not another file.
  const size_t compared = std::min<size_t>(b_.size(), sizeof kMagic);
  if (std::memcmp(b_.data(), kMagic, compared) != 0) {
    fail(0, "bad magic at byte 0: not a cumemtrace trace", false);
    return false;
  }
  if (b_.size() < sizeof fh) {
    fail(0,
         "truncated file header at byte 0: " + std::to_string(sizeof fh) + " bytes needed, " +
             std::to_string(b_.size()) + " present",
         true);
    return false;
  }
  std::memcpy(&fh, b_.data(), sizeof fh);
  t_.version_major = fh.version_major;
  t_.version_minor = fh.version_minor;
  if (fh.version_major != kVersionMajor) {
    fail(8,
         "unknown major version " + std::to_string(fh.version_major) + " at byte 8 (this reader knows " +
             std::to_string(kVersionMajor) + ")",
         false);
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

std::string Parser::record(RecordType type, Cursor& c) {
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

}  // namespace cumemtrace::read_detail
