// The page's flame graph over a chosen time range (docs/html-report.md, "Flame graph over a
// time range"), by the rule of `export --format folded --from A --to B` (live_time.h:
// peak_moment_between): the bytes live at the first moment of the window at which the
// device's tracked bytes were highest, a moment's state being the one just after an event.
//
// A page cannot carry the live set at every moment, so the time range (page_model.h) is cut
// into at most 200 buckets, each a whole number of the timeline's buckets, and each
// bucket keeps the live bytes by stack at its highest moment: the state it started with
// (the last event before it) or its timeline buckets' highest, the first on a tie. A window
// snapped outwards to bucket edges then has, for its highest moment, the first of its
// buckets' highest: exact, found from every event. Those moments' live sets come from a
// second replay to them (replay.h: replay_to_stops). How the stacks are named and the
// buckets written is the page's (render/page/range_flame.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "read/event_source.h"

namespace cumemtrace {

// A moment: just after event `event`, at `t` (ns since start), `tracked` device bytes.
struct BucketMoment {
  uint64_t t = 0;
  uint64_t tracked = 0;
  size_t event = 0;
};
// One bucket of a device's timeline: its index, highest moment (the first on a tie) and last.
struct TimeBucket {
  uint64_t index = 0;
  BucketMoment highest, last;
};
// The bytes live on one device that a pair of stacks made, at some moment.
struct StackBytes {
  uint32_t stack_id = 0, python_stack_id = 0;
  uint64_t bytes = 0;
};

class RangeFlame {
 public:
  static constexpr size_t kBuckets = 200;

  struct Bucket {
    uint64_t k = 0;
    BucketMoment moment;
    // By pair of stacks, in the order the live set was read at the stop (each pair once;
    // the page names the stacks in that order). A bucket whose moment an earlier bucket of
    // the device shares (a quiet stretch) has its copy.
    std::vector<StackBytes> live;
  };

  // `timeline_width`: the timeline's bucket (ns; its bucket i is [i, i + 1) × the width);
  // [range_from, range_end]: the time range (ns since start). The first bucket starts
  // with the timeline's bucket that holds range_from.
  RangeFlame(uint64_t timeline_width, uint64_t range_from, uint64_t range_end, size_t buckets = kBuckets);

  // Picks each bucket's highest moment from a device's timeline buckets, in time order.
  void add_device(int32_t device, const std::vector<TimeBucket>& timeline);
  // The events to replay to, ascending, each once.
  std::vector<size_t> stops() const;
  // Fills every bucket's live bytes from one replay of `events` (laid out in `granule`) to the stops.
  void replay(const EventSource& events, uint64_t granule);

  const std::map<int32_t, std::vector<Bucket>>& devices() const { return devices_; }
  uint64_t bucket_ns() const { return width_; }
  uint64_t buckets() const { return count_; }
  uint64_t start() const { return first_ * (width_ / group_); }

 private:
  uint64_t first_ = 0;  // the timeline's bucket the first bucket starts with
  uint64_t group_ = 1;  // timeline buckets per bucket
  uint64_t width_ = 1;
  uint64_t count_ = 1;
  std::map<int32_t, std::vector<Bucket>> devices_;
};

}  // namespace cumemtrace
