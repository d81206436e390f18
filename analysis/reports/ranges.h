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

// Fed by the report's first pass (report.cpp): advance() before the replay applies an
// event, observe() after it, finish() at the end.
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
  struct Interval {
    uint32_t row;  // index into rows_
    uint32_t tid;  // 0: every thread
    uint64_t start_ns, end_ns;
    bool ended;
    uint64_t peak = 0;
    int32_t peak_device = -1;
    uint64_t held = 0;  // allocated inside, not freed inside so far
  };
  uint32_t row_of(const std::string& name, const char* kind);
  void open(Interval& in, const Replayer& r);
  void close(Interval& in);

  std::vector<RangeRow> rows_;
  std::unordered_map<std::string, uint32_t> row_index_;  // kind + '\0' + name -> rows_
  std::vector<Interval> intervals_;                      // by start
  size_t next_ = 0;                                      // the first interval not opened yet
  std::vector<uint32_t> open_;                           // intervals open now
  // A live allocation made inside open intervals: which, to take its bytes off their
  // `held` when it is freed before they end.
  std::unordered_map<uint64_t, std::pair<uint64_t, std::vector<uint32_t>>> inside_;  // address -> (size, intervals)
};

}  // namespace cumemtrace
