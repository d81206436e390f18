// Progress of a long command, on stderr only (stdout stays exactly what the command
// prints). Nothing is said during the first second, so a fast command stays silent; after
// that a bar redrawn in place when stderr is a terminal, else a plain line about every
// 5 s. The environment variable CUMEMTRACE_PROGRESS_AFTER_MS changes the first second
// (0: from the start, as the tests do).
//
// A command opens one ProgressScope on its thread; the long loops (reading, replaying)
// call progress(), which reports to that thread's scope and does nothing on a thread
// without one (the jobs of a multi-trace command run silent, parallel.h).
#pragma once

#include <cstdint>
#include <string>

namespace cumemtrace {

class ProgressScope {
 public:
  explicit ProgressScope(std::string command);  // e.g. "cumemtrace report"
  ~ProgressScope();                             // ends the bar's line, if one was drawn
  ProgressScope(const ProgressScope&) = delete;
  ProgressScope& operator=(const ProgressScope&) = delete;

  void report(const char* stage, uint64_t done, uint64_t total);
  // Wipes a bar drawn on a terminal, before a message goes to stderr (redrawn later).
  void clear();

 private:
  std::string command_;
  int64_t start_ns_;
  int64_t after_ns_;      // silent until start + after
  int64_t next_line_ns_;  // plain lines: the next one not before this
  bool tty_;
  bool drawn_ = false;
  std::string last_stage_;
};

// `stage` ("reading", "replaying"): done of total units. Cheap enough to call every few
// thousand events (one clock read); nothing without a ProgressScope on this thread.
void progress(const char* stage, uint64_t done, uint64_t total);

}  // namespace cumemtrace
