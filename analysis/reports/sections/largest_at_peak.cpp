#include "reports/sections/largest_at_peak.h"

#include <algorithm>

#include "stacks/call_site_rule.h"
#include "stacks/python_stacks.h"

namespace cumemtrace {
namespace {

// Largest first; of one size the older, then the lower address: the same order whatever
// order the live set is visited in.
bool before(const LargeAllocation& a, const LargeAllocation& b) {
  if (a.size != b.size) return a.size > b.size;
  if (a.time_ns != b.time_ns) return a.time_ns < b.time_ns;
  return a.address < b.address;
}

}  // namespace

void largest_at_peak_seen(const LiveAlloc& a, Report& rep) {
  if (!format::holds_device_memory(a.kind)) return;  // what the device's peak bytes count
  DeviceLargest& d = rep.section_results.get<LargestAtPeak>().devices[a.device];
  d.device = a.device;
  ++d.live;
  LargeAllocation l;
  l.size = a.size, l.address = a.address, l.kind = a.kind, l.time_ns = a.time_ns, l.tid = a.tid;
  l.stack_id = a.stack_id, l.python_stack_id = a.python_stack_id;
  if (d.largest.size() == kLargestShown && !before(l, d.largest.back())) return;
  d.largest.insert(std::upper_bound(d.largest.begin(), d.largest.end(), l, before), std::move(l));
  if (d.largest.size() > kLargestShown) d.largest.pop_back();
}

// Frames and names as the call-site tables give a site (site_sums.cpp): native frames
// from the user's frame the call-site rule chose.
void largest_at_peak_step(ReportInputs& in, Report& rep) {
  const UserSites users(in.stacks);
  for (auto& [device, d] : rep.section_results.get<LargestAtPeak>().devices) {
    d.peak_time_ns = in.pass.final.devices().at(device).peak_time_ns;
    for (LargeAllocation& l : d.largest) {
      l.age_ns = d.peak_time_ns > l.time_ns ? d.peak_time_ns - l.time_ns : 0;
      l.library = in.stacks.call_site(l.stack_id).library;
      l.frames = in.stacks.frames(users.of(l.stack_id, l.python_stack_id).node, in.opt.frames);
      l.python_frames = python_frames(in.trace, l.python_stack_id);
      l.caller = in.names.of(l.stack_id, l.python_stack_id);
    }
  }
}

}  // namespace cumemtrace
