// What the per-range, per-function, per-band and pprof figures agree an event is.
#pragma once

#include <cstdint>

#include "read/reader.h"

namespace cumemtrace {

// It made device memory: a successful allocation of a kind that holds device memory, and
// not a graph's allocation node made during a stream capture (rules/ledger.h keeps those
// apart: they hold no memory of their own).
inline bool allocates_device_memory(const Event& e) {
  return e.op == format::Op::kAlloc && e.result == 0 && format::holds_device_memory(e.kind) &&
         !(e.flags & format::kEventCaptured);
}

// What an allocation is known by until its free: its address, or a physical handle's
// handle (cuMemCreate has no address), kept apart by the top bit; 0 for neither.
inline uint64_t allocation_key(const Event& e) {
  return e.address ? e.address : e.handle ? e.handle | (1ull << 63) : 0;
}

}  // namespace cumemtrace
