// The reader's parser, private to read/: the framing (parser.cpp: the header, records,
// sealed chunks, resynchronising after damage) and one decoder per record type
// (record_decoders.cpp) share its state, the trace being built. reader.h is the interface.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cumemtrace/trace_format.h"
#include "read/chunk_order.h"
#include "read/reader.h"
#include "read/reader_chunks.h"

namespace cumemtrace::read_detail {

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

// Splits a NUL-joined argument list (ProcessRecord's argv).
std::vector<std::string> split_argv(const std::string& joined);

class Parser {
 public:
  Parser(std::span<const uint8_t> bytes, Trace& t, bool verify) : b_(bytes), t_(t), verify_(verify) {}

  // reader_chunks.h: note each sealed chunk's end; or start at a chunk end and stop after
  // the first chunk that ends past a moment.
  std::vector<ChunkEnd>* chunk_ends = nullptr;
  const ChunkCallback* on_chunk = nullptr;  // parse_trace_streaming
  const EventCallback* on_event = nullptr;  // parse_trace_events
  const BlockCallback* on_block = nullptr;  // parse_trace_events, its block records too
  const MappedFile* mapped = nullptr;       // where b_ is mapped from: pages behind are given back
  bool quiet = false;                       // no "reading" progress: the caller's pass says its own
  uint64_t resume_at = 0;
  uint64_t stop_after_ns = ~uint64_t(0);

  void run();

 private:
  // Reads records in [from, to). Returns where it stopped: `to` when all were read,
  // else the start of the first record that is cut off, implausible (strict) or unparsable;
  // `why` then says what is wrong.
  uint64_t records(uint64_t from, uint64_t to, bool strict, std::string& why, bool& cut);

  void fail(uint64_t off, std::string msg, bool truncated);

  void damaged(uint64_t from, uint64_t to, const std::string& why);

  // Format 1.2: chunks sealed by ChecksumRecords (checksum.h). A seal is found by its
  // marker and trusted only when its hash matches, so damage anywhere (a length field
  // included) costs only the chunks it touches.
  void sealed_chunks();

  uint64_t dropped_ = 0;  // events handed to on_chunk or on_event, and not kept

  // Where the next seal's marker starts, at or after `from`; the file's size if none. A
  // long stretch without one (damage, a sparse file) is searched a window at a time, and
  // the pages searched are given back behind it, so that it is not held whole. Pages given
  // back are read again from the file if a seal found later covers them.
  uint64_t next_marker(uint64_t from) const;

  static std::string damage_message(uint64_t from, uint64_t to);

  // Formats 1.0 and 1.1: no checksums. Every record is checked against the sizes those
  // writers wrote; after an implausible one, reading resumes at the next offset from
  // which kResyncRun records in a row are plausible.
  void legacy_records();

  bool header();

  // Returns an empty string on success, else what is wrong with the payload. One decoder
  // per row of records.def; a type no row names is a newer writer's, skipped by its length.
  std::string record(format::RecordType type, Cursor& c);

  // One decoder per row of records.def (record_decoders.cpp): "" on success, else what is
  // wrong with the payload.
#define CUMEMTRACE_RECORD(Name, id, since, label, Fixed, strings) std::string decode_##Name(Cursor& c);
#include "cumemtrace/records.def"
#undef CUMEMTRACE_RECORD
  std::string mark(Cursor& c, std::vector<Mark>& into);  // Mark and RangeEnd records

  // False, adding nothing, when the lists do not fit the payload or a segment's blocks
  // lie outside the block list.
  bool allocator_map(Cursor& c);

  // A record whose framing holds but whose device ordinal no trace can name (plausible.h):
  // left out, and said as damage at the record (inside a compressed record: at it, 0 bytes,
  // so that ranges stay in order). Returns "" so that reading goes on.
  std::string set_aside_record(const std::string& what);

  std::span<const uint8_t> b_;
  Trace& t_;
  bool verify_;
  std::optional<ChunkOrder> order_;            // 1.10
  uint64_t record_at_ = 0, record_bytes_ = 0;  // the (outer) record being read
  uint64_t set_aside_at_ = ~0ull;              // the last record set_aside_record said
  size_t events_seen_ = 0;                     // Event records read, set aside or not
  bool truncated_tail_ = false;                // the only damage is a cut-off end
  bool inside_compressed_ = false;             // reading the records of a CompressedRecord
  uint64_t reported_ = 0;                      // where progress() was last told
};

}  // namespace cumemtrace::read_detail
