#include "read/integrity.h"

#include <algorithm>

namespace cumemtrace {

Integrity check_records(const Trace& trace, uint64_t events_read) {
  Integrity in;
  in.sealed = trace.sealed;
  in.sealed_chunks = trace.sealed_chunks;
  in.damage = trace.damage;
  in.impossible = trace.set_aside;
  events_read += trace.set_aside.size();  // read, and set aside (plausible.h)
  if (trace.end && trace.end->events_written != events_read)
    in.end_mismatch = EndMismatch{trace.end->events_written, events_read};
  if (trace.end) in.events_dropped = trace.end->events_dropped;
  for (const auto& s : trace.snapshots) in.events_dropped = std::max(in.events_dropped, s.events_dropped);
  return in;
}

}  // namespace cumemtrace
