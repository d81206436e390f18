// What `cumemtrace html`'s page shows beyond the report itself (docs/html-report.md),
// computed from one more replay of the trace (the range flame graph's moments too);
// render/page/html_data.h writes it as the page's JSON.
//
// A 10-million-event trace cannot go into a page event by event, nor can its address map
// at every moment. So:
//   - the timeline is decimated per device into time buckets (a screen's width of them);
//     each bucket keeps its minimum, maximum and last sample of tracked device bytes, so
//     every peak and trough that a pixel can show survives, with its exact figures;
//   - the address map and the flame graph are kept for a bounded set of moments: each
//     device's peak, the end, the first failed allocations, and moments evenly spaced in
//     event order, the latter only while a budget of allocations lasts.
// Times are in ns since the report's start_ns, sizes and addresses in bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cumemtrace/rules/fragmentation.h"
#include "read/event_source.h"
#include "read/reader.h"
#include "reports/report.h"
#include "reports/timeline/range_flame.h"
#include "reports/timeline/site_bands.h"
#include "reports/views/allocation_stats.h"
#include "stacks/stacks.h"

namespace cumemtrace {

struct HtmlDataOptions {
  size_t buckets = 2000;         // timeline buckets per device (about a screen's width, twice)
  size_t spaced_moments = 48;    // evenly spaced moments, beyond the peaks, end and failures
  size_t failed_moments = 16;    // the first failed allocations get a moment each
  size_t alloc_budget = 300000;  // allocations drawn over all spaced moments together
  size_t max_marks = 5000;       // marks (steps) drawn as rules; the rest are counted
  size_t top = 10;               // the allocation views' rows and children a node (`html --top`)
  size_t frames = 6;             // ... their stacks' frames, the callers tree's depth (`html --frames`)
};

// One reading of a device after an event.
struct PageSample {
  uint64_t t = 0;  // ns since start
  uint64_t tracked = 0;
  uint64_t footprint = 0;
  uint64_t context = 0;
  SiteBands::Values bands{};  // live bytes by call site (site_bands.h)
  size_t event = 0;           // just after this event
};

// Per device, per time bucket: the minimum, maximum and last sample, kept in time order
// when the bucket closes. A step line through them shows every extreme a pixel can.
class PageTimeline {
 public:
  PageTimeline(uint64_t duration, size_t buckets);

  uint64_t width() const { return width_; }
  void add(const PageSample& s);
  // Closes the last bucket; then samples() and buckets() are whole.
  void close();
  const std::vector<PageSample>& samples() const { return out_; }
  // Each bucket's highest and last moment (range_flame.h).
  const std::vector<TimeBucket>& buckets() const { return buckets_; }

 private:
  void flush();

  uint64_t width_;
  bool open_ = false;
  uint64_t bucket_ = 0;
  PageSample min_, max_, last_;
  std::vector<PageSample> out_;
  std::vector<TimeBucket> buckets_;
};

// One live allocation of the address map, in address order. A VMM mapping has no
// allocation of its own at its address (its handle was made apart): no stacks then.
struct MapAlloc {
  uint64_t start = 0, size = 0;
  bool has_stacks = false;
  uint32_t stack_id = 0, python_stack_id = 0;
  uint64_t born = 0;  // ns since start (a mapping: the moment itself)
};

// The address map (arenas of granules, allocations) and the flame graph of one device at
// one moment.
struct DeviceMoment {
  int32_t device = -1;
  uint64_t tracked = 0;
  FragmentationFigures figures;
  uint64_t granule = 0;
  // Arenas and gaps as fragmentation.h defines them: neighbours share an arena when the
  // granule-rounded end of one reaches the granule-rounded start of the next.
  std::vector<std::pair<uint64_t, uint64_t>> arenas;            // [start, end)
  std::optional<std::pair<uint64_t, uint64_t>> largest_gap_at;  // (start, bytes)
  std::vector<MapAlloc> allocs;
  // The allocations holding device memory by pair of stacks, each pair once, in the order
  // of the live set by address (the page names the stacks in that order).
  std::vector<StackBytes> flame;
};

struct PageMoment {
  uint64_t t = 0;
  size_t event = 0;     // just after this event
  std::string kind;     // "peak", "failed", "end", "spaced", or "peak,end" and the like
  int32_t device = -1;  // the device whose peak or failure it is; -1 for all
  std::vector<DeviceMoment> devices;
};

struct PageModel {
  std::map<int32_t, PageTimeline> timelines;              // closed
  std::map<int32_t, std::vector<uint64_t>> failed_times;  // failed allocations' times by device
  std::vector<PageMoment> moments;
  // The time charts' one range: from the first memory event or mark to the last. A reading
  // taken before or after (NVML's at exit) would stretch the axis and squeeze the run into
  // one edge; a trace with neither keeps its whole duration.
  uint64_t first = 0, last = 0;
  RangeFlame flames{1, 0, 0};
  std::optional<SiteBands> bands;
  // What `report --view` shows (allocation_stats.h), from the same scan: the page's trees,
  // its rankings by number of allocations and by temporary ones, its size histogram.
  AllocationStats allocations;
};

// The page of `trace` with its events read from `events` (event_source.h: a trace read in
// passes), in one scan; `rep` is the trace's report (its peaks and failures, found in the
// report's first pass, choose the moments), `stacks` its stacks.
PageModel page_model(const Trace& trace, const EventSource& events, const Report& rep, const Stacks& stacks,
                     const HtmlDataOptions& opt = {});

}  // namespace cumemtrace
