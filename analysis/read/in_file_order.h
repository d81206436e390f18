// A trace's events and its block records (trace format 1.13) as they were written: a block
// record comes after the events read before it (BlockEvent::events_before), so a segment
// the driver gave is seen before the blocks the allocator cut from it.
#pragma once

#include <cstddef>

#include "read/event_source.h"
#include "read/reader.h"

namespace cumemtrace {

// Calls each(event, nullptr, 0) for an event and each(nullptr, block, index) for the block
// record trace.block_events[index], in file order; one scan of `events`.
template <class Each>
void in_file_order(const Trace& trace, const EventSource& events, Each&& each) {
  size_t b = 0;
  events.scan([&](const Event& e, size_t i) {
    for (; b < trace.block_events.size() && trace.block_events[b].events_before <= i; ++b)
      each(static_cast<const Event*>(nullptr), &trace.block_events[b], b);
    each(&e, static_cast<const BlockEvent*>(nullptr), size_t(0));
  });
  for (; b < trace.block_events.size(); ++b) each(static_cast<const Event*>(nullptr), &trace.block_events[b], b);
}

}  // namespace cumemtrace
