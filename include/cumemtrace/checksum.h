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

  static constexpr size_t kSealBytes = sizeof(format::RecordHeader) + sizeof(format::ChecksumRecord);

  // The ChecksumRecord (header included) sealing everything updated since the last
  // seal, into `out` (kSealBytes); starts the next chunk. Allocates nothing, calls only
  // xxHash's pure functions: a fatal signal's handler may use it.
  void seal_into(char* out) {
    format::ChecksumRecord r{};
    std::memcpy(r.marker, format::kChecksumMarker, sizeof r.marker);
    r.covered_bytes = bytes_;
    XXH3_64bits_update(&state_, &r, offsetof(format::ChecksumRecord, xxh3));
    r.xxh3 = XXH3_64bits_digest(&state_);
    const format::RecordHeader h{uint16_t(format::RecordType::kChecksum), 0, uint32_t(sizeof r)};
    std::memcpy(out, &h, sizeof h);
    std::memcpy(out + sizeof h, &r, sizeof r);
    reset();
  }
  std::string seal() {
    std::string out(kSealBytes, '\0');
    seal_into(out.data());
    return out;
  }

 private:
  void reset() {
    XXH3_64bits_reset(&state_);
    bytes_ = 0;
  }
  XXH3_state_t state_;
  uint64_t bytes_ = 0;
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
