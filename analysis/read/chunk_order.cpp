#include "read/chunk_order.h"

#include <cstring>

#include "cumemtrace/trace_format.h"

namespace cumemtrace {
namespace {

using namespace format;

std::string chunk_at(uint64_t start, uint64_t end) {
  return "the chunk at bytes " + std::to_string(start) + "-" + std::to_string(end);
}

}  // namespace

ChunkOrder::Verdict ChunkOrder::judge(const uint8_t* file, uint64_t start, uint64_t seal_at, uint64_t end,
                                      bool contiguous) {
  constexpr uint64_t kBytes = sizeof(RecordHeader) + sizeof(ChunkSequenceRecord);
  RecordHeader h{};
  ChunkSequenceRecord s{};
  if (seal_at >= start + kBytes) {
    std::memcpy(&h, file + seal_at - kBytes, sizeof h);
    std::memcpy(&s, file + seal_at - kBytes + sizeof h, sizeof s);
  }
  if (h.type != uint16_t(RecordType::kChunkSequence) || h.flags != 0 || h.payload_bytes != sizeof s)
    return {false, chunk_at(start, end) + " has no sequence number, which every chunk of a 1.10 trace has: set aside"};
  if (s.trace_id != trace_id_)
    return {false, chunk_at(start, end) + " belongs to another trace (trace id " + std::to_string(s.trace_id) +
                       ", this one's is " + std::to_string(trace_id_) + "): set aside"};
  const uint64_t n = s.sequence;
  if (!started_ || n == next_) {
    started_ = true;
    next_ = n + 1;
    return {};
  }
  if (n > next_) {
    const uint64_t first = next_;
    missing_[first] = n - 1;
    next_ = n + 1;
    // Damaged bytes before it may well hold the missing chunks: that damage is said already.
    if (!contiguous) return {};
    const std::string which = first == n - 1 ? "chunk " + std::to_string(first)
                                             : "chunks " + std::to_string(first) + "-" + std::to_string(n - 1);
    return {true, which + " missing before " + chunk_at(start, end) + ", chunk " + std::to_string(n) +
                      " (dropped, or moved): figures lack its events"};
  }
  // Below the next number: one skipped before (out of order), or one read already.
  auto it = missing_.upper_bound(n);
  if (it != missing_.begin() && (--it)->second >= n) {
    const uint64_t first = it->first, last = it->second;
    missing_.erase(it);
    if (first < n) missing_[first] = n - 1;
    if (n < last) missing_[n + 1] = last;
    return {false, chunk_at(start, end) + " is chunk " + std::to_string(n) + ", out of order (after chunk " +
                       std::to_string(next_ - 1) + "): set aside"};
  }
  return {false, chunk_at(start, end) + " repeats chunk " + std::to_string(n) + ", read already: set aside"};
}

}  // namespace cumemtrace
