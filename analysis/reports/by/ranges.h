// Memory per range, cProfile-style (`report --by range`; docs/cli.md, "Memory per range"):
// for each NVTX range name, and for each mark name, how many times it ran and what the
// device memory did inside it. The intervals:
//   - an NVTX push (Mark, source nvtx-push) to the RangeEnd (nvtx-pop) that closes it on
//     the same thread: counts that thread's allocations only, as a profiler's range does;
//   - a tag (tag-push, cumemtrace_tag_push or cumemtrace.tag) to its tag-pop: the same;
//   - an NVTX start (Mark, nvtx-start) to the first later RangeEnd (nvtx-end) of its name:
//     counts every thread's (such a range may end on another thread);
//   - a mark (cumemtrace_mark, nvtxMark) to the next mark of its name: every thread's.
// A range with no end runs to the trace's end and is counted as open at the end.
// Figures are for memory that holds device memory (format::holds_device_memory), in bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "read/reader.h"
#include "replay/replay.h"

namespace cumemtrace {

struct RangeRow {
  std::string name;
  std::string kind;               // "nvtx push", "nvtx start" or "mark"
  uint64_t calls = 0;             // intervals
  uint64_t open_at_end = 0;       // of them, never ended (counted to the trace's end)
  uint64_t time_ns = 0;           // inside, summed over calls
  uint64_t allocations = 0;       // successful allocations made inside
  uint64_t bytes_allocated = 0;   // their bytes
  uint64_t peak_bytes = 0;        // the most tracked device bytes one device held while inside
  int32_t peak_device = -1;       // that device (-1: nothing was live)
  uint64_t held_after_bytes = 0;  // allocated inside and live when the call ended, over calls
};

// Fed by the report's first pass (reports/sections/first_pass.h): advance() before the replay applies an
// event, observe() after it, finish() at the end. Each event and each interval costs
// O(log n), however many intervals are open at once (docs/performance.md, "Analysis of
// hostile traces"): an interval reads running sums when it opens and when it closes.
class RangeScan {
 public:
  explicit RangeScan(const Trace& trace);
  bool empty() const { return intervals_.empty(); }
  // Opens the intervals that start at or before `t` and closes those that end at or before
  // it, reading the device bytes `r` holds (the moment before the event at `t`).
  void advance(uint64_t t, const Replayer& r);
  void observe(const Event& e, const Replayer& r);
  // Rows by bytes allocated, largest first; `end_ns`: the trace's last moment.
  std::vector<RangeRow> finish(uint64_t end_ns, const Replayer& r);

 private:
  // Sums over positions 0..size()-1 that grow at the end: an allocation's bytes by its
  // place in its thread's (or every thread's) sequence of allocations, while it lives.
  class LiveBytes {
   public:
    size_t size() const { return tree_.size() - 1; }
    void push_back();  // a new position, 0
    void add(size_t at, uint64_t delta);
    uint64_t from(size_t at) const { return prefix(size()) - prefix(at); }  // positions at..size()-1

   private:
    uint64_t prefix(size_t n) const;  // positions 0..n-1
    std::vector<uint64_t> tree_{0};   // a Fenwick tree, 1-based; unsigned wrap keeps differences exact
  };
  // What a thread's allocations (or every thread's, tid 0) summed to so far: an interval
  // reads it when it opens and when it closes, and the difference is what it saw.
  struct Tally {
    uint64_t allocations = 0, bytes = 0;
    LiveBytes live;  // bytes of allocations made inside some interval and not freed since
  };
  struct Interval {
    uint32_t row;  // index into rows_
    uint32_t tid;  // 0: every thread
    uint64_t start_ns, end_ns;
    bool ended;
    bool closed = false;
    uint64_t peak = 0;
    int32_t peak_device = -1;
    uint64_t allocations_at_open = 0, bytes_at_open = 0;  // its tally's, when it opened
    size_t readings_at_open = 0;                          // readings_'s count, when it opened
  };
  // A device's bytes after an event; readings_ keeps only those no later one exceeds, so
  // the first that is largest since any moment is found by a binary search.
  struct Reading {
    uint64_t bytes;
    int32_t device;
    size_t at;  // its place among all readings
  };
  struct Inside {  // a live allocation made inside an open interval
    uint64_t size;
    uint32_t tid;
    size_t thread_at, all_at;  // its place in its thread's tally and in every thread's
  };
  uint32_t row_of(const std::string& name, const char* kind);
  Tally& tally_of(uint32_t tid) { return tid ? threads_[tid] : all_; }
  void open(size_t i, const Replayer& r);
  void close(size_t i);

  std::vector<RangeRow> rows_;
  std::unordered_map<std::string, uint32_t> row_index_;  // kind + '\0' + name -> rows_
  std::vector<Interval> intervals_;                      // by start
  size_t next_ = 0;                                      // the first interval not opened yet
  size_t open_count_ = 0;                                // intervals open now
  size_t open_all_ = 0;                                  // of them, every thread's
  std::unordered_map<uint32_t, size_t> open_by_thread_;  // of them, each thread's own
  // Ended intervals open now, soonest end first: (end, index).
  std::priority_queue<std::pair<uint64_t, size_t>, std::vector<std::pair<uint64_t, size_t>>, std::greater<>> ends_;
  Tally all_;
  std::unordered_map<uint32_t, Tally> threads_;
  std::vector<Reading> readings_;  // bytes never rising, at rising
  size_t reading_count_ = 0;
  std::unordered_map<uint64_t, Inside> inside_;  // by allocation key
};

}  // namespace cumemtrace
