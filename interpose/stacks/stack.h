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

// Unwinds the calling thread (outside any lock of ours: libunwind may take the loader
// lock through dl_iterate_phdr). Captures at most `depth` frames beyond our own.
// `as_before`: without the per-thread guess of our own frames' number (stack.cpp), as
// CUMEMTRACE_CHECK_STACKS checks it.
void walk_stack(RawStack& out, uint32_t depth, bool as_before = false);

// Before a fork: finishes (or waits for) the one-time set-up walk_stack needs, so a
// child never finds it half done by a thread it does not have.
void stack_prepare_fork();

}  // namespace cumemtrace::interpose
