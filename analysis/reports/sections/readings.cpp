#include "reports/sections/readings.h"

#include "reports/moments.h"

namespace cumemtrace {

using format::Kind;
using format::SnapshotReason;

uint64_t context_bytes_until(const std::vector<Event>& contexts, int32_t device, uint64_t until_ns) {
  uint64_t sum = 0;
  for (const auto& e : contexts)
    if (e.device == device && e.time_ns <= until_ns) sum += e.size;
  return sum;
}

uint64_t footprint(const DeviceSnapshot& d) {
  const uint64_t phys = d.live_bytes[int(Kind::kVmmPhysical)], mapped = d.live_bytes[int(Kind::kVmmMap)];
  return d.arena_bytes + (phys > mapped ? phys - mapped : 0) + d.live_bytes[int(Kind::kArray)];
}

NvmlSplit nvml_split(const Trace& t, const std::vector<Event>& contexts, int32_t device, uint64_t peak_bytes,
                     uint64_t peak_ns) {
  NvmlSplit n;
  const Choice c = choose_reading(t, device, peak_bytes, peak_ns);
  const std::optional<Reading>& r = c.reading;
  n.at_peak = c.at;
  n.same_moment = c.same;
  for (const auto& s : t.snapshots)
    if (const DeviceSnapshot* d = s.find(device); d && (d->moment & format::kMomentReadingMissed)) {
      ++n.readings_missed;
      if (peak_bytes && d->device_bytes == peak_bytes && s.time_ns >= peak_ns) n.peak_reading_missed = true;
    }
  if (!r) return n;
  const DeviceSnapshot& d = *r->device;
  n.known = true;
  n.snapshot_time_ns = r->snapshot->time_ns;
  n.reason = r->snapshot->reason;
  n.device_bytes = d.device_bytes;
  n.process_used = d.nvml_process_used;
  n.footprint = footprint(d);
  n.context = context_bytes_until(contexts, device, n.snapshot_time_ns);
  // A stream-ordered pool keeps freed memory for reuse: held, but in no allocation.
  const uint64_t pool = d.pool_reserved_bytes, async_live = d.live_bytes[int(format::Kind::kAsyncPool)];
  n.pool_slack = pool != format::kUnknown64 && pool > async_live ? pool - async_live : 0;
  // The graph memory pool's reserve is held in no allocation the trace saw (graph_pool.h).
  if (d.graph_reserved_current != format::kUnknown64) n.graph_pool = d.graph_reserved_current;
  const uint64_t accounted = n.footprint + n.context + n.pool_slack + n.graph_pool;
  n.untracked = n.process_used > accounted ? n.process_used - accounted : 0;
  return n;
}

void attach_snapshot(const Trace& t, FailedRow& row) {
  const Choice c = choose_reading(t, row.device, row.live_device_bytes, row.time_ns);
  const std::optional<Reading>& r = c.reading;
  row.snapshot_at_failure = c.at;
  row.snapshot_same_moment = c.same;
  if (r) {
    const DeviceSnapshot& d = *r->device;
    row.snapshot_known = true;
    row.snapshot_time_ns = r->snapshot->time_ns;
    row.snapshot_reason = r->snapshot->reason;
    row.snapshot_device_bytes = d.device_bytes;
    row.snapshot_arena_bytes = footprint(d);
    row.snapshot_pool_reserved = d.pool_reserved_bytes;
    row.snapshot_async_live = d.live_bytes[int(format::Kind::kAsyncPool)];
    row.snapshot_graph_reserved = d.graph_reserved_current;
    row.device_free = d.nvml_device_free;
    if (d.nvml_device_total != format::kUnknown64) row.device_total = d.nvml_device_total;
    row.process_used = d.nvml_process_used;
  }
  if (const GpuProcesses* g = processes_near(t, row.device, row.time_ns)) {
    row.processes_known = true;
    const uint32_t self = t.process ? t.process->pid : 0;
    for (const auto& p : g->processes)
      if (p.pid != self) row.other_processes.push_back(p);
  }
}

const DeviceSnapshot* exit_snapshot(const Trace& t, int32_t device) {
  for (auto it = t.snapshots.rbegin(); it != t.snapshots.rend(); ++it)
    if (it->reason == SnapshotReason::kExit) return it->find(device);
  return nullptr;
}

MemoryBeyondAllocations beyond_at_end(const Trace& t, const std::vector<Event>& contexts, const DeviceReport& dr,
                                      uint64_t last) {
  const uint64_t ctx = context_bytes_until(contexts, dr.device, last);
  const GraphPoolReading& g = dr.graph_pool.at_end;
  const DeviceSnapshot* x = exit_snapshot(t, dr.device);
  if (!x || !(x->moment & format::kMomentSame) || x->device_bytes != dr.end_device_bytes)
    return {ctx, 0, g.known ? g.reserved : 0, 0};
  return beyond_of_reading({footprint(*x), x->pool_reserved_bytes, x->live_bytes[int(Kind::kAsyncPool)],
                            x->graph_reserved_current, x->nvml_process_used},
                           ctx);
}

}  // namespace cumemtrace
