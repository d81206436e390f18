// Each device's tracked device bytes (replay.h) over a run, as a time chart draws them: a
// step at the device's first event (often its context: 0, where the chart starts) and at
// every event that changed them, with the failed allocations among the events. Handed over
// one at a time as the events are read, so that a long trace's series is never held whole
// (the Chrome export writes it record by record, docs/formats.md).
#pragma once

#include <cstdint>
#include <functional>

#include "read/event_source.h"

namespace cumemtrace {

// One event of a device (device >= 0) that a chart shows: a failed allocation, a change of
// the device's tracked bytes, or both (the failure comes first).
struct TrackedStep {
  const Event& event;
  bool failed = false;   // a failed allocation
  bool changed = false;  // `tracked` is new: the device's first step, or other bytes than its last
  uint64_t tracked = 0;  // the device's tracked bytes just after the event
};

// Calls `step` for each such event of `events` (laid out in `granule`), in file order.
void tracked_steps(const EventSource& events, uint64_t granule, const std::function<void(const TrackedStep&)>& step);

}  // namespace cumemtrace
