#include "integrity.h"

#include "units.h"

namespace cumemtrace {
namespace {

using format::Op;

bool allocates(Op op) { return op == Op::kAlloc || op == Op::kReserve || op == Op::kMap; }

// Why `e` cannot be true, or empty. Only allocations are judged by size: a free's size
// is whatever the tracker recorded for it.
std::string impossible(const Trace& t, const Event& e) {
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

}  // namespace

Integrity check_integrity(const Trace& trace) {
  Integrity in;
  in.sealed = trace.sealed;
  in.sealed_chunks = trace.sealed_chunks;
  in.damage = trace.damage;
  if (trace.end && trace.end->events_written != trace.events.size())
    in.end_mismatch = EndMismatch{trace.end->events_written, trace.events.size()};
  if (trace.end) in.events_dropped = trace.end->events_dropped;
  for (const auto& s : trace.snapshots) in.events_dropped = std::max(in.events_dropped, s.events_dropped);
  for (size_t i = 0; i < trace.events.size(); ++i)
    if (std::string why = impossible(trace, trace.events[i]); !why.empty())
      in.impossible.push_back(ImpossibleEvent{i, trace.events[i], std::move(why)});
  return in;
}

Trace without_impossible(const Trace& trace, const Integrity& integrity) {
  Trace t = trace;
  if (integrity.impossible.empty()) return t;
  EventLog kept;
  size_t next = 0;
  for (size_t i = 0; i < trace.events.size(); ++i) {
    if (next < integrity.impossible.size() && integrity.impossible[next].index == i) {
      ++next;
      continue;
    }
    kept.push_back(trace.events[i]);
  }
  t.events = std::move(kept);
  return t;
}

}  // namespace cumemtrace
