#include "integrity.h"

#include "units.h"

namespace cumemtrace {
namespace {

using format::Op;

bool allocates(Op op) { return op == Op::kAlloc || op == Op::kReserve || op == Op::kMap; }

}  // namespace

// Only allocations are judged by size: a free's size is whatever the tracker recorded for it.
std::string impossible_event(const Trace& t, const Event& e) {
  const uint64_t start = t.process ? t.process->start_monotonic_ns : 0;
  if (e.time_ns < start)
    return "time " + std::to_string(e.time_ns) + " ns is before the trace began (" + std::to_string(start) + " ns)";
  if (!allocates(e.op) || e.result != 0) return {};
  if (e.address + e.size < e.address)
    return "range at " + hex(e.address) + " of " + std::to_string(e.size) + " bytes runs past the end of memory";
  // Address reservations and host memory have no device size to compare with.
  if (e.op == Op::kReserve || e.kind == format::Kind::kHostPinned || e.kind == format::Kind::kManaged) return {};
  const DeviceInfo* d = t.device(e.device);
  if (d && d->total_bytes && e.size > d->total_bytes)
    return "allocation of " + iec_exact(e.size) + " on device " + std::to_string(e.device) + " of " +
           iec_exact(d->total_bytes);
  return {};
}

Integrity check_records(const Trace& trace, uint64_t events_read) {
  Integrity in;
  in.sealed = trace.sealed;
  in.sealed_chunks = trace.sealed_chunks;
  in.damage = trace.damage;
  if (trace.end && trace.end->events_written != events_read)
    in.end_mismatch = EndMismatch{trace.end->events_written, events_read};
  if (trace.end) in.events_dropped = trace.end->events_dropped;
  for (const auto& s : trace.snapshots) in.events_dropped = std::max(in.events_dropped, s.events_dropped);
  return in;
}

}  // namespace cumemtrace
