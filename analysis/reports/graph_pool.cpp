#include "reports/graph_pool.h"

#include <algorithm>
#include <vector>

namespace cumemtrace {

void GraphPoolCalls::observe(const Event& e) {
  if (e.result != 0) return;
  if (e.op != format::Op::kGraphLaunch && e.op != format::Op::kGraphExecDestroy && e.op != format::Op::kGraphMemTrim)
    return;
  Device& d = devices[e.device];
  if (e.op == format::Op::kGraphLaunch) ++d.launches;
  else if (e.op == format::Op::kGraphExecDestroy) ++d.exec_destroys;
  else ++d.trims;
  if (e.size != format::kUnknown64) d.readings.push_back({true, e.size, e.time_ns});
}

GraphPoolFigures graph_pool_figures(const Trace& t, const GraphPoolCalls& calls, int32_t device, uint64_t peak_ns) {
  GraphPoolFigures f;
  std::vector<GraphPoolReading> readings;
  if (auto it = calls.devices.find(device); it != calls.devices.end()) {
    f.launches = it->second.launches;
    f.exec_destroys = it->second.exec_destroys;
    f.trims = it->second.trims;
    readings = it->second.readings;
  }
  for (const auto& s : t.snapshots) {
    const DeviceSnapshot* d = s.find(device);
    if (!d) continue;
    if (d->graph_reserved_current != format::kUnknown64)
      readings.push_back({true, d->graph_reserved_current, s.time_ns});
    if (d->graph_reserved_high != format::kUnknown64) f.driver_reserved_high = d->graph_reserved_high;
    if (d->graph_used_current != format::kUnknown64) f.used_at_end = d->graph_used_current;
  }
  // Events and snapshots are each in time order, not together.
  std::stable_sort(readings.begin(), readings.end(),
                   [](const GraphPoolReading& a, const GraphPoolReading& b) { return a.time_ns < b.time_ns; });
  if (readings.empty()) return f;
  f.at_end = readings.back();
  f.highest = readings.front();
  for (const auto& r : readings)
    if (r.reserved > f.highest.reserved) f.highest = r;
  // Only a reading made before the peak can stand for it: one made after may already
  // include a launch that came after the peak.
  if (peak_ns)
    for (const auto& r : readings)
      if (r.time_ns <= peak_ns) f.at_peak = r;
  return f;
}

}  // namespace cumemtrace
