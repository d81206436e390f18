// A trace's events and its block records (trace format 1.13) as they were written: a block
// record comes after the events read before it (BlockEvent::events_before), so a segment
// the driver gave is seen before the blocks the allocator cut from it.
#pragma once

#include <cstddef>

#include "read/event_source.h"
#include "read/reader.h"

namespace cumemtrace {

// Calls each(event, nullptr, 0) for an event and each(nullptr, block, index) for the
// trace's block record of that index, in file order; one scan (EventSource::scan_in_file_order).
template <class Each>
void in_file_order(const Trace& trace, const EventSource& events, Each&& each) {
  events.scan_in_file_order(
      trace, [&](const Event& e, size_t) { each(&e, static_cast<const BlockEvent*>(nullptr), size_t(0)); },
      [&](const BlockEvent& b, size_t i) { each(static_cast<const Event*>(nullptr), &b, i); });
}

}  // namespace cumemtrace
