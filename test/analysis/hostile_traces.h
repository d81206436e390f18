// Traces built to be hard on the analysis (docs/performance.md, "Analysis of hostile
// traces"), of `n` ranges, marks, tags or heaps: the tests assert their figures
// (reports/hostile_ranges_test.cpp), bench/hostile_traces writes them large for
// bench/run_hostile.sh to time, and small as fuzz seeds (docs/fuzzing.md).
#pragma once

#include <cstdint>
#include <string>

#include "trace_builder.h"

namespace cumemtrace::test {

// Push "r<i>" at t = i + 1 on thread 7, never popped, then one allocation of 1000 B
// (thread 7) at t = n + 10,000 inside all of them; the end at t = n + 20,000.
inline TraceBuilder open_pushes(uint64_t n) {
  TraceBuilder b;
  b.process().device(0, 1ull << 30);
  for (uint64_t i = 0; i < n; ++i) b.mark(i + 1, "r" + std::to_string(i), fmt::MarkSource::kNvtxPush, 7);
  b.alloc(n + 10000, 0xA000, 1000).end(n + 20000);
  return b;
}

// Mark "m<i>" at t = i + 1 (thread 1), then 3000 B allocated at t = n + 10,000 and freed
// at n + 10,001; the end at t = n + 20,000.
inline TraceBuilder distinct_marks(uint64_t n) {
  TraceBuilder b;
  b.process().device(0, 1ull << 30);
  for (uint64_t i = 0; i < n; ++i) b.mark(i + 1, "m" + std::to_string(i));
  b.alloc(n + 10000, 0xA000, 3000).free(n + 10001, 0xA000).end(n + 20000);
  return b;
}

// Tag "t<i>" pushed at t = 2i + 1 on thread 7, then 1 B allocated (thread 7, live to the
// end) at t = 2i + 2; no pop; the end at t = 2n + 10.
inline TraceBuilder nested_tags(uint64_t n) {
  TraceBuilder b;
  b.process().device(0, 1ull << 30);
  for (uint64_t i = 0; i < n; ++i)
    b.mark(2 * i + 1, "t" + std::to_string(i), fmt::MarkSource::kTagPush, 7).alloc(2 * i + 2, 0x100000 + 16 * i, 1);
  b.end(2 * n + 10);
  return b;
}

// Heap "h<i>" (handle 0x10000 + i) registered at t = 2i + 1 over [16 MiB * (i + 1), + 1 MiB)
// with one region of i + 1 bytes at its start, registered at t = 2i + 2; the end at 2n + 10.
inline TraceBuilder pool_heaps(uint64_t n) {
  TraceBuilder b;
  b.process().device(0, 1ull << 30);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t at = (i + 1) << 24;
    b.nvtx_mem(2 * i + 1, fmt::NvtxMemOp::kHeapRegister, 0x10000 + i, at, 1 << 20, 0, "h" + std::to_string(i), 1);
    b.nvtx_mem(2 * i + 2, fmt::NvtxMemOp::kRegionRegister, 0x10000 + i, at, i + 1);
  }
  b.end(2 * n + 10);
  return b;
}

}  // namespace cumemtrace::test
