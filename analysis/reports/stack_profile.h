// Device memory by device and stacks: what was live at one moment and what was allocated
// over the whole run, the figures the folded and pprof exports draw (docs/cli.md, `export`).
// Kept per (device, native stack, Python stack), the ids the trace gave them; how a stack
// is put into words is the exporter's.
//
// Live = what `cumemtrace live --at` counts as device bytes at that moment (replay.h
// replay_until: events at or before it; kinds that hold device memory), so the live bytes
// of one device add up to its tracked device bytes then. Allocated = every allocation that
// made device memory (allocation_events.h), a capture's graph nodes not.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>

#include "read/event_source.h"

namespace cumemtrace {

// (device, stack_id, python_stack_id), device >= 0.
using StackKey = std::tuple<int32_t, uint32_t, uint32_t>;

struct StackFigures {
  uint64_t alloc_objects = 0, alloc_bytes = 0;  // allocated over the run
  uint64_t live_objects = 0, live_bytes = 0;    // live at the moment asked for
};

// Ordered, so that whatever is made from it comes out the same for the same trace.
using StackProfile = std::map<StackKey, StackFigures>;

// Adds what was live at `at_ns` (CLOCK_MONOTONIC) in `events`, laid out in `granule`.
void add_live_at(StackProfile& profile, const EventSource& events, uint64_t granule, uint64_t at_ns);
// Adds every allocation of `events` that made device memory.
void add_allocated(StackProfile& profile, const EventSource& events);

}  // namespace cumemtrace
