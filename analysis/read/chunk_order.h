// Each chunk's place in a trace of format 1.10 on (trace_format.h, ChunkSequenceRecord):
// whether a chunk whose checksum matched is the next one written, or one dropped from
// before it, repeated, moved, or taken from another trace. A checksum covers its chunk's
// bytes only; this is what covers their order.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace cumemtrace {

class ChunkOrder {
 public:
  // `trace_id`: FileHeader::trace_id. `resumed`: reading starts at a chunk end (not the
  // first chunk), so the first chunk read sets where the numbers stand.
  ChunkOrder(uint64_t trace_id, bool resumed) : trace_id_(trace_id), started_(!resumed) {}

  struct Verdict {
    bool read = true;    // false: the chunk is set aside, its records unread
    std::string damage;  // what is wrong, naming byte offsets; empty when nothing is
  };
  // The sealed chunk [start, end), whose ChunkSequenceRecord (its header included) is the
  // `sequence_bytes` bytes before its ChecksumRecord's header at `seal_at` (0 bytes: none
  // there). `contiguous`: it starts where the previous chunk read ended (no damaged bytes
  // between, which may hold the chunks that are missing).
  Verdict judge(const uint8_t* file, uint64_t start, uint64_t seal_at, uint64_t end, bool contiguous);

  // The highest number read so far (so that an appended chunk takes the next).
  std::optional<uint64_t> last() const { return started_ && next_ ? std::optional<uint64_t>(next_ - 1) : std::nullopt; }

 private:
  uint64_t trace_id_;
  bool started_;
  uint64_t next_ = 0;
  // Numbers skipped so far, as ranges first -> last: a chunk that turns up later with one
  // of them came out of order; one with any other number below next_ is a repeat.
  std::map<uint64_t, uint64_t> missing_;
};

}  // namespace cumemtrace
