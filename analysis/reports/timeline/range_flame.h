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
// buckets' highest: exact, found from every event. How the stacks are named and the
// buckets written is the page's (render/page/range_flame.h).
//
// Those moments are taken during the page's own replay, not by a second one to them (a
// second replay, and a walk of the whole live set at each of up to 200 moments, was a
// seventh of `html`'s time with 100 k allocations live: docs/performance.md, "`html`: one
// replay, and the page's data never copied"). A bucket's highest moment is known only once
// its last timeline bucket closes, by then the replay has gone past it. So each device keeps its live bytes
// by pair of stacks now, and the changes since the earliest moment still wanted, each with
// its event: a moment's bytes are now's less the changes after it. The changes kept are at
// most a bucket's (a 200th of the range), the work O(events + buckets × pairs of stacks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "replay/replay.h"

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

class RangeFlame : public LiveWatcher {
 public:
  static constexpr size_t kBuckets = 200;

  struct Bucket {
    uint64_t k = 0;
    BucketMoment moment;
    // By pair of stacks (each pair once), in the order of (stack, Python stack): the page
    // numbers the stacks as it first meets them. Buckets that share a moment (a quiet
    // stretch) hold the same bytes.
    std::vector<StackBytes> live;
  };

  // `timeline_width`: the timeline's bucket (ns; its bucket i is [i, i + 1) × the width);
  // [range_from, range_end]: the time range (ns since start). The first bucket starts
  // with the timeline's bucket that holds range_from.
  RangeFlame(uint64_t timeline_width, uint64_t range_from, uint64_t range_end, size_t buckets = kBuckets);

  // Fed by one replay of the events in file order, watching it (Replayer::watch): event(i)
  // before event i is applied, timeline_bucket() for each of a device's timeline buckets
  // as it closes, in time order, and finish() after the last event and bucket.
  void event(size_t index) { event_ = index; }
  void timeline_bucket(int32_t device, const TimeBucket& b);
  void finish();
  void entered(const LiveAlloc& a) override { change(a, 1); }
  void left(const LiveAlloc& a) override { change(a, -1); }
  // Only LiveSets::watch calls at(), at stops this replay has none of.
  void at(size_t, const Replayer&) override {}

  // The events of the buckets' moments, ascending, each once.
  std::vector<size_t> stops() const;

  const std::map<int32_t, std::vector<Bucket>>& devices() const { return devices_; }
  uint64_t bucket_ns() const { return width_; }
  uint64_t buckets() const { return count_; }
  uint64_t start() const { return first_ * (width_ / group_); }

 private:
  struct Held {
    int64_t count = 0;
    int64_t bytes = 0;
  };
  struct Change {
    size_t event;
    uint64_t pair;  // stack << 32 | Python stack
    int64_t sign;   // +1 entered, -1 left
    int64_t bytes;
  };
  // One device while the replay goes: its live bytes by pair now, the changes the moments
  // still wanted need undone, and the bucket being decided.
  struct Taking {
    std::unordered_map<uint64_t, Held> now;
    std::deque<Change> changes;           // in event order
    std::optional<BucketMoment> carried;  // the state a bucket starts with: after the last event before it
    uint64_t k = 0;                       // the bucket being decided
    bool begun = false;                   // ... which has taken `carried` as its first best
    std::optional<BucketMoment> best;
  };
  void change(const LiveAlloc& a, int64_t sign);
  void begin(Taking& t) const;
  // Decides bucket t.k from its best moment, then goes on to the next.
  void close_bucket(int32_t device, Taking& t);
  // The live bytes by pair just after `event`: now less the changes after it.
  std::vector<StackBytes> live_after(const Taking& t, size_t event) const;

  uint64_t first_ = 0;  // the timeline's bucket the first bucket starts with
  uint64_t group_ = 1;  // timeline buckets per bucket
  uint64_t width_ = 1;
  uint64_t count_ = 1;
  std::map<int32_t, std::vector<Bucket>> devices_;
  std::map<int32_t, Taking> taking_;
  size_t event_ = 0;
};

}  // namespace cumemtrace
