#include "reports/stack_profile.h"

#include "replay/replay.h"
#include "reports/allocation_events.h"

namespace cumemtrace {

void add_live_at(StackProfile& profile, const EventSource& events, uint64_t granule, uint64_t at_ns) {
  const Replayer r = replay_until(events, granule, at_ns);
  // Summed in place: the order the live set is read in does not change a sum.
  r.for_each_live([&](const LiveAlloc& a) {
    if (a.device < 0 || !format::holds_device_memory(a.kind)) return;
    StackFigures& f = profile[{a.device, a.stack_id, a.python_stack_id}];
    ++f.live_objects;
    f.live_bytes += a.size;
  });
}

void add_allocated(StackProfile& profile, const EventSource& events) {
  events.scan([&](const Event& e, size_t) {
    if (!allocates_device_memory(e) || e.device < 0) return;
    StackFigures& f = profile[{e.device, e.stack_id, e.python_stack_id}];
    ++f.alloc_objects;
    f.alloc_bytes += e.size;
  });
}

}  // namespace cumemtrace
