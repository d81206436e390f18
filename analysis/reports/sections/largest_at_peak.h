// The largest single allocations live at each device's peak (docs/cli.md, "Largest
// allocations at the peak"): what one call holds, where the call-site tables sum a site's
// many. Kept while the second pass stands at the peak (steps.h, at_peak), the largest
// kLargestShown of each device only, so the live set is never copied.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "reports/sections/steps.h"

namespace cumemtrace {

inline constexpr size_t kLargestShown = 5;

struct LargeAllocation {
  uint64_t size = 0;
  uint64_t address = 0;  // 0 for a vmm-physical handle
  format::Kind kind{};
  uint64_t time_ns = 0;  // when it was made, monotonic
  uint64_t age_ns = 0;   // at the peak: how long it had been live
  uint32_t tid = 0;
  uint32_t stack_id = 0, python_stack_id = 0;
  std::string library;               // the call site's module; "?" when unknown
  std::vector<Frame> frames;         // from the call site outward, at most ReportOptions::frames
  std::vector<Frame> python_frames;  // innermost first
  CallerNames::Names caller;         // as the call-site tables name the site
};

struct DeviceLargest {
  int32_t device = -1;
  uint64_t peak_time_ns = 0;
  uint64_t live = 0;                     // allocations holding device memory live at the peak
  std::vector<LargeAllocation> largest;  // largest first; of one size, the older first
};

// Devices that held device memory at their peak, ascending.
struct LargestAtPeak {
  std::map<int32_t, DeviceLargest> devices;
};

// The report's step row's two halves: each allocation at a peak, then the frames, names and
// ages of those kept.
void largest_at_peak_seen(const LiveAlloc& a, Report& rep);
void largest_at_peak_step(ReportInputs& in, Report& rep);

}  // namespace cumemtrace
