// `cumemtrace export --format pprof`: a gzipped profile.proto, the format pprof, Pyroscope,
// Parca and JAX's own device-memory profiles use (docs/formats.md, "pprof"). Four values per
// sample, as Go's heap profiles have them: alloc_objects and alloc_space (count, bytes) over
// the whole run, inuse_objects and inuse_space at one moment (the peak by default, as
// `--format folded` takes it); inuse_space is the default sample type.
//
// A sample is one distinct stack, frames as the folded export names them (export_frames.h:
// from the call site out, Python frames merged in), under a root frame for the device,
// "cuda:0" (and, with several traces, the process's "rank 3" or "pid 4242" above it). Each
// distinct frame is one Function and one Location; a native frame's module is its Mapping.
// Memory that holds device memory only (format::holds_device_memory), as `live` counts it;
// a capture's graph nodes are not.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "read/event_source.h"
#include "read/reader.h"

namespace cumemtrace {

class PprofProfile {
 public:
  // The allocations of `t` over its events and what was live at `at_ns` (CLOCK_MONOTONIC).
  void add(const Trace& t, const EventSource& events, uint64_t at_ns, bool name_process);
  // The gzipped profile; returns the inuse_space of all samples, in bytes. Throws
  // std::runtime_error when zlib fails.
  uint64_t write(std::ostream& out) const;

 private:
  struct Values {
    int64_t alloc_objects = 0, alloc_space = 0, inuse_objects = 0, inuse_space = 0;
  };
  struct Frame {
    std::string name, file, module;
    int64_t line = 0;
    bool operator<(const Frame& o) const {
      return std::tie(name, file, module, line) < std::tie(o.name, o.file, o.module, o.line);
    }
  };
  std::map<std::vector<Frame>, Values> samples_;  // frames innermost first; sorted, so stable
};

}  // namespace cumemtrace
