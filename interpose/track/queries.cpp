// The C API's live figures (api.h: cumemtrace_stats and its kin), read from the state
// without ever starting a trace.
#include "track/tracker.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "track/tracker_state.h"

namespace cumemtrace::interpose {

bool device_stats(std::vector<DeviceStats>& out) {
  State* s = started_state();
  if (!s) return false;
  std::lock_guard lock(s->mu);
  for (const auto& [d, ds] : s->devices) out.push_back({d, ds.device_bytes, ds.peak, ds.peak_since_reset, 0, 0});
  s->each_since_reset([&](const Allocation& a) {
    for (auto& o : out)
      if (o.device == a.device) o.live_since_reset_bytes += a.size, ++o.live_since_reset_count;
  });
  return true;
}

bool live_sites(std::vector<LiveSite>& out, bool by_python, bool at_peak) {
  State* s = started_state();
  if (!s) return false;
  std::lock_guard lock(s->mu);
  std::map<std::tuple<int32_t, uint32_t, uint32_t>, LiveSite> by_site;
  const auto add = [&](const Allocation& a) {
    const uint32_t python = by_python ? a.python_stack : 0;
    LiveSite& l = by_site[{a.device, a.stack, python}];
    l.device = a.device, l.stack = a.stack, l.python_stack = python, l.bytes += a.size, ++l.count;
  };
  if (at_peak) s->each_at_peak_since_reset(add);
  else s->each_since_reset(add);
  for (auto& [key, l] : by_site) out.push_back(l);
  std::stable_sort(out.begin(), out.end(), [](const LiveSite& a, const LiveSite& b) { return a.bytes > b.bytes; });
  return true;
}

uint32_t stack_frames(uint32_t id, uint64_t* out, uint32_t max) {
  State* s = started_state();
  if (!s) return 0;
  std::lock_guard lock(s->mu);
  return s->stacks.frames(id, out, max);
}

std::vector<PythonFrameText> python_frames(uint32_t id, size_t max) {
  std::vector<PythonFrameText> out;
  State* s = started_state();
  if (!s) return out;
  std::lock_guard lock(s->mu);
  for (const PyStackTree::Frame& f : s->python_stacks.frames(id, max)) out.push_back({*f.file, *f.function, f.line});
  return out;
}

bool reset_peak() {
  ask_for_peak_sites();
  State* s = started_state();
  if (!s) return false;
  std::lock_guard lock(s->mu);
  s->reset_peak();
  return true;
}

}  // namespace cumemtrace::interpose
