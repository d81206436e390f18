// Encoded records waiting for the writer thread, kept in fixed-size chunks.
//
// One growing std::string doubled and copied itself while a hook held the tracker's
// lock: with ~20 MB between 100 ms flushes that copy stalled a single CUDA call for
// ~10 ms (bench/: worst-case latency, docs/performance.md). Chunks never move what is
// already written; the writer hands emptied chunks back so their memory is reused.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cumemtrace::interpose {

class PendingBuffer {
 public:
  static constexpr size_t kChunkBytes = 1 << 20;

  void append(const char* p, size_t n) {
    if (chunks_.empty() || chunks_.back().size() + n > kChunkBytes) new_chunk(n);
    chunks_.back().append(p, n);
    bytes_ += n;
  }
  void append(std::string_view s) { append(s.data(), s.size()); }

  size_t size() const { return bytes_; }

  // Reads the chunks in order without moving them (a fatal signal's handler: no allocation).
  template <class F>
  void for_each_chunk(F&& f) const {
    for (const auto& c : chunks_) f(std::string_view(c));
  }

  // Moves every chunk out (in order) into `out`, which must be empty.
  void take(std::vector<std::string>& out) {
    out.swap(chunks_);
    bytes_ = 0;
  }

  // Chunks the writer has written, emptied, for reuse.
  void give_back(std::vector<std::string>& written) {
    for (auto& c : written) {
      c.clear();
      if (spare_.size() < kSpareChunks) spare_.push_back(std::move(c));
    }
    written.clear();
  }

 private:
  static constexpr size_t kSpareChunks = 32;

  void new_chunk(size_t at_least) {
    if (!spare_.empty() && at_least <= kChunkBytes) {
      chunks_.push_back(std::move(spare_.back()));
      spare_.pop_back();
    } else {
      chunks_.emplace_back();
      chunks_.back().reserve(at_least > kChunkBytes ? at_least : kChunkBytes);
    }
  }

  std::vector<std::string> chunks_;
  std::vector<std::string> spare_;
  size_t bytes_ = 0;
};

}  // namespace cumemtrace::interpose
