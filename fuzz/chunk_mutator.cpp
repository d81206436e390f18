// libFuzzer custom mutator for both targets: half of the time it moves whole sealed chunks
// (swaps two adjacent ones, repeats one, drops one, moves one elsewhere), so that inputs
// whose every checksum matches but whose chunks are out of order reach the reader's order
// checks (chunk_order.h) — byte mutations alone almost never keep a chunk's seal valid.
// Otherwise, or when the input has fewer than two chunks, libFuzzer's own mutation.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cumemtrace/trace_format.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

using Range = std::pair<size_t, size_t>;  // [begin, end) of one chunk

// Chunks end right after each seal (its marker, then covered_bytes and the hash); a chunk
// begins where the one before ended (the first at byte 0). Bytes after the last seal stay last.
std::vector<Range> chunks_of(const uint8_t* data, size_t size) {
  namespace fmt = cumemtrace::format;
  std::vector<Range> out;
  size_t begin = 0;
  for (size_t at = 0; at + sizeof(fmt::ChecksumRecord) <= size;) {
    const void* hit = memmem(data + at, size - at, fmt::kChecksumMarker, sizeof fmt::kChecksumMarker);
    if (!hit) break;
    const size_t m = size_t(static_cast<const uint8_t*>(hit) - data);
    if (m + sizeof(fmt::ChecksumRecord) > size) break;
    const size_t end = m + sizeof(fmt::ChecksumRecord);
    out.emplace_back(begin, end);
    begin = at = end;
  }
  return out;
}

size_t move_chunks(uint8_t* data, size_t size, size_t max_size, std::minstd_rand& rng) {
  std::vector<Range> chunks = chunks_of(data, size);
  if (chunks.size() < 2) return 0;
  const size_t tail = chunks.back().second;
  const size_t n = chunks.size();
  const size_t i = rng() % n;
  switch (rng() % 4) {
    case 0:  // swap two adjacent chunks
      std::swap(chunks[i == n - 1 ? i - 1 : i], chunks[i == n - 1 ? i : i + 1]);
      break;
    case 1:  // repeat one, anywhere
      chunks.insert(chunks.begin() + std::ptrdiff_t(rng() % (n + 1)), chunks[i]);
      break;
    case 2:  // drop one
      chunks.erase(chunks.begin() + std::ptrdiff_t(i));
      break;
    default: {  // move one elsewhere
      const Range c = chunks[i];
      chunks.erase(chunks.begin() + std::ptrdiff_t(i));
      chunks.insert(chunks.begin() + std::ptrdiff_t(rng() % n), c);
    }
  }
  std::string out;
  for (const auto& [b, e] : chunks) out.append(reinterpret_cast<const char*>(data) + b, e - b);
  out.append(reinterpret_cast<const char*>(data) + tail, size - tail);
  if (out.size() > max_size) return 0;
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::minstd_rand rng(seed);
  if (rng() % 2 == 0) {
    if (const size_t n = move_chunks(data, size, max_size, rng)) return n;
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
