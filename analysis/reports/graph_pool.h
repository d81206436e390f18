// The device's CUDA graph memory pool as the trace read it (trace format 1.9).
//
// The pool's memory is in no allocation event: a graph's allocation nodes take it at
// launch and the pool keeps it until cuDeviceGraphMemTrim. The tracer reads the pool's
// reserve (CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT) right after each graph launch, executable
// destroy and trim (the event's `size`) and in every snapshot, so the figures here are
// readings at moments, never replayed bytes. A figure for "the peak" is the last reading
// at or before it (the reserve changes at launches and trims, each read right after) and
// says when it was read; with no reading before the peak there is no figure for it. A
// reading during a stream capture is unknown and skipped.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "read/reader.h"

namespace cumemtrace {

struct GraphPoolReading {
  bool known = false;
  uint64_t reserved = 0;  // bytes the pool reserved
  uint64_t time_ns = 0;   // when it was read (monotonic)
};

struct GraphPoolFigures {
  GraphPoolReading at_peak;  // the last reading at or before the peak; unknown when none
  GraphPoolReading at_end;   // the last reading
  GraphPoolReading highest;  // the highest reserve read, first time read
  // The driver's own high-water mark (CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH) and the pool's
  // used bytes, from the last snapshot that read them; kUnknown64 otherwise.
  uint64_t driver_reserved_high = format::kUnknown64;
  uint64_t used_at_end = format::kUnknown64;
  uint64_t launches = 0, exec_destroys = 0, trims = 0;  // successful calls seen
  // Worth a line in the report: the pool ever held memory, or graphs were launched.
  bool shown() const { return highest.reserved > 0 || launches > 0 || trims > 0; }
};

// The graph launches, executable destroys and trims of a trace, per device, gathered as
// its events are read (one reading per call that read the reserve).
struct GraphPoolCalls {
  struct Device {
    uint64_t launches = 0, exec_destroys = 0, trims = 0;
    std::vector<GraphPoolReading> readings;  // in file order
  };
  std::map<int32_t, Device> devices;
  void observe(const Event& e);
};

// `peak_ns`: the moment of the device's peak of tracked bytes (0: no peak).
GraphPoolFigures graph_pool_figures(const Trace& t, const GraphPoolCalls& calls, int32_t device, uint64_t peak_ns);

}  // namespace cumemtrace
