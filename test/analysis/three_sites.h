// Test-only: the trace of the views' tests (cli/views_test.cpp, the text views;
// render/allocation_views_test.cpp, the page's), whose every figure is worked out here.
//
// Three call sites of the program `train`, each called from main (train.cpp:5): load
// (train.cpp:10), step (train.cpp:20), scratch (train.cpp:30). In time order:
//   1 s  A = 1 GiB from load, kept
//   2 s  B = 1 MiB from scratch;  3 s  B freed: no allocation came between, temporary
//   4 s  C = 2 MiB from step;     5 s  D = 1 MiB from scratch
//   6 s  C freed: D came after it, not temporary
//   7 s  D freed: D is still the latest allocation (C's free does not count), temporary
//   8 s  E = 3 MiB from step;     9 s  F = 512 B from scratch, kept
//  10 s  E freed: F came after it, not temporary
// 6 allocations, 1 GiB + 7 MiB + 512 B = 1,081,082,368 B; 2 temporary, both scratch's.
#pragma once

#include "sizes.h"
#include "trace_builder.h"

namespace cumemtrace::test {

inline TraceBuilder three_sites() {
  TraceBuilder b;
  b.process().device(0, 80 * GiB);
  b.module(0, 0x4000, 0x5000, "/opt/app/bin/train");
  b.stack(4, 0, 0x4050).stack(1, 4, 0x4100).stack(2, 4, 0x4200).stack(3, 4, 0x4300);
  b.symbol(0x4050, "main", "train.cpp", 5)
      .symbol(0x4100, "load", "train.cpp", 10)
      .symbol(0x4200, "step", "train.cpp", 20);
  b.symbol(0x4300, "scratch", "train.cpp", 30);
  b.alloc(1 * kSec, 0x7000000000, GiB, 1);
  b.alloc(2 * kSec, 0x7100000000, MiB, 3).free(3 * kSec, 0x7100000000);
  b.alloc(4 * kSec, 0x7200000000, 2 * MiB, 2).alloc(5 * kSec, 0x7300000000, MiB, 3);
  b.free(6 * kSec, 0x7200000000).free(7 * kSec, 0x7300000000);
  b.alloc(8 * kSec, 0x7400000000, 3 * MiB, 2).alloc(9 * kSec, 0x7500000000, 512, 3);
  b.free(10 * kSec, 0x7400000000).end(11 * kSec);
  return b;
}

}  // namespace cumemtrace::test
