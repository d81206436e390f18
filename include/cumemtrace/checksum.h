// Sealing flushed bytes into checksummed chunks (trace format 1.2, ChecksumRecord).
//
// Shared by the writer (libcumemtrace.so), the symbolizer (which appends records) and the
// reader, so the three cannot disagree. xxHash comes from Debian's libxxhash-dev as a
// header only (XXH_INLINE_ALL): every function is static inline, so the preload library
// links nothing new and exports nothing of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "cumemtrace/record_encode.h"
#include "cumemtrace/trace_format.h"

namespace cumemtrace {

// Hashes the bytes of one chunk as they are written, then makes the record that seals them.
class ChunkHasher {
 public:
  ChunkHasher() { reset(); }

  void update(const void* p, size_t n) {
    XXH3_64bits_update(&state_, p, n);
    bytes_ += n;
  }
  uint64_t pending() const { return bytes_; }

  // The ChecksumRecord with its header; and (1.10) the ChunkSequenceRecord before it.
  static constexpr size_t kSealBytes = sizeof(format::RecordHeader) + sizeof(format::ChecksumRecord);
  static constexpr size_t kSequenceBytes = sizeof(format::RecordHeader) + sizeof(format::ChunkSequenceRecord);
  static constexpr size_t kMaxSealBytes = kSequenceBytes + kSealBytes;

  // 1.10: from now on each seal is preceded by a ChunkSequenceRecord of `trace_id`, the
  // next one numbered `next`, so that a reader knows each chunk's place.
  void number_chunks(uint64_t trace_id, uint64_t next) {
    trace_id_ = trace_id;
    next_ = next;
    numbered_ = true;
  }

  // The records (headers included) sealing everything updated since the last seal, into
  // `out` (kMaxSealBytes at least); returns how many bytes they take. Starts the next
  // chunk. Allocates nothing, calls only xxHash's pure functions: a fatal signal's handler
  // may use it.
  size_t seal_into(char* out) {
    size_t n = 0;
    if (numbered_) {
      BytesAt at{out};
      put_record<format::RecordType::kChunkSequence>(at, format::ChunkSequenceRecord{trace_id_, next_++});
      update(out, kSequenceBytes);
      n = kSequenceBytes;
    }
    format::ChecksumRecord r{};
    std::memcpy(r.marker, format::kChecksumMarker, sizeof r.marker);
    r.covered_bytes = bytes_;
    XXH3_64bits_update(&state_, &r, offsetof(format::ChecksumRecord, xxh3));
    r.xxh3 = XXH3_64bits_digest(&state_);
    BytesAt at{out + n};
    put_record<format::RecordType::kChecksum>(at, r);
    reset();
    return n + kSealBytes;
  }
  std::string seal() {
    char out[kMaxSealBytes];
    return std::string(out, seal_into(out));
  }

 private:
  void reset() {
    XXH3_64bits_reset(&state_);
    bytes_ = 0;
  }
  XXH3_state_t state_;
  uint64_t bytes_ = 0;
  bool numbered_ = false;
  uint64_t trace_id_ = 0, next_ = 0;
};

// Whether `r`, found right after `covered`, seals those bytes.
inline bool seal_matches(const uint8_t* covered, const format::ChecksumRecord& r) {
  XXH3_state_t st;
  XXH3_64bits_reset(&st);
  XXH3_64bits_update(&st, covered, r.covered_bytes);
  XXH3_64bits_update(&st, &r, offsetof(format::ChecksumRecord, xxh3));
  return XXH3_64bits_digest(&st) == r.xxh3;
}

}  // namespace cumemtrace
