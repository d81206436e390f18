// A post-mortem with zero code: while `cumemtrace run`'s command runs, a traced process
// that writes a failed allocation appends "# oom TRACE" to the manifest (the library does
// so right after the flush that put the failure on disk). Each poll reads what the
// manifest gained since the last one; for each trace named, the report is written beside
// it as TRACE.oom.txt — the failure and its diagnosis, what was live by call site, the
// NVML split, the other processes on the GPU — while the job may still be handling the
// error, dying, or hanging. A poll that finds nothing new costs one read of a few bytes.
#pragma once

#include <cstdint>
#include <string>

namespace cumemtrace {

class OomWatch {
 public:
  explicit OomWatch(std::string manifest) : manifest_(std::move(manifest)) {}
  void poll();

 private:
  std::string manifest_;
  uint64_t offset_ = 0;
  std::string partial_;  // a line not yet ended
};

// Writes TRACE.oom.txt (private, replaced whole) from the trace as it is now; says so on
// stderr. Returns false when the trace could not be read.
bool write_post_mortem(const std::string& trace);

}  // namespace cumemtrace
