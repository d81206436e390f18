// Native stacks, walked with libunwind in the hook (stack_tree.h deduplicates them).
// Frames inside libcumemtrace.so are dropped wherever they sit, so a stack shows only the
// program's and CUDA's frames.
#pragma once

#include <cstdint>

namespace cumemtrace::interpose {

struct RawStack {
  static constexpr uint32_t kMax = 256;
  uint32_t count = 0;
  uint64_t ip[kMax];  // innermost first
};

// The whole-stack hash both stack caches key on (stack_tree.cpp's recent slots,
// stack_pair_cache.h): one multiply per word, so hashing costs less than the compare after it.
inline uint64_t stack_hash_step(uint64_t h, uint64_t word) { return (h ^ word) * 0x9E3779B97F4A7C15ull; }
inline uint64_t stack_hash_ips(uint64_t h, const RawStack& s) {
  for (uint32_t k = 0; k < s.count; ++k) h = stack_hash_step(h, s.ip[k]);
  return h;
}
inline uint64_t stack_hash_end(uint64_t h) { return h ^ h >> 29; }

// Unwinds the calling thread (outside any lock of ours: libunwind may take the loader
// lock through dl_iterate_phdr). Captures at most `depth` frames beyond our own.
// `as_before`: without the per-thread guess of our own frames' number (stack.cpp), as
// CUMEMTRACE_CHECK_STACKS checks it.
void walk_stack(RawStack& out, uint32_t depth, bool as_before = false);

// Before a fork: finishes (or waits for) the one-time set-up walk_stack needs, so a
// child never finds it half done by a thread it does not have.
void stack_prepare_fork();

}  // namespace cumemtrace::interpose
