#include "reports/moments.h"

namespace cumemtrace {
namespace {

uint64_t distance(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

template <class Accept>
std::optional<Reading> nearest(const Trace& t, int32_t device, uint64_t at_ns, Accept accept) {
  std::optional<Reading> best;
  for (const auto& s : t.snapshots) {
    const DeviceSnapshot* d = s.find(device);
    if (!d || d->nvml_process_used == format::kUnknown64 || !accept(*d)) continue;
    if (!best || distance(s.time_ns, at_ns) < distance(best->snapshot->time_ns, at_ns)) best = Reading{&s, d};
  }
  return best;
}

}  // namespace

std::optional<Reading> reading_with_bytes(const Trace& t, int32_t device, uint64_t bytes, uint64_t after_ns) {
  for (const auto& s : t.snapshots) {
    if (s.time_ns < after_ns) continue;
    const DeviceSnapshot* d = s.find(device);
    if (d && d->same_moment() && d->nvml_process_used != format::kUnknown64 && d->device_bytes == bytes)
      return Reading{&s, d};
  }
  return std::nullopt;
}

std::optional<Reading> nearest_same_moment(const Trace& t, int32_t device, uint64_t at_ns) {
  return nearest(t, device, at_ns, [](const DeviceSnapshot& d) { return d.same_moment(); });
}

std::optional<Reading> nearest_reading(const Trace& t, int32_t device, uint64_t at_ns) {
  return nearest(t, device, at_ns, [](const DeviceSnapshot&) { return true; });
}

Choice choose_reading(const Trace& t, int32_t device, uint64_t bytes, uint64_t at_ns) {
  Choice c;
  c.reading = reading_with_bytes(t, device, bytes, at_ns);
  c.at = c.same = c.reading.has_value();
  if (!c.reading) c.same = (c.reading = nearest_same_moment(t, device, at_ns)).has_value();
  if (!c.reading) c.reading = nearest_reading(t, device, at_ns);
  return c;
}

const GpuProcesses* processes_near(const Trace& t, int32_t device, uint64_t at_ns) {
  const GpuProcesses* best = nullptr;
  for (const auto& g : t.gpu_processes)
    if (g.device == device && (!best || distance(g.time_ns, at_ns) < distance(best->time_ns, at_ns))) best = &g;
  return best;
}

}  // namespace cumemtrace
