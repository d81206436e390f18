// `cumemtrace export --format chrome`: Chrome trace-event JSON for the Perfetto UI and
// chrome://tracing. What its readers accept: docs/formats.md, "Chrome trace-event JSON".
//
// One synthetic process per traced process and device (pid 1000, 1001, … in the order
// the traces and their devices come), named by a process_name metadata event ("GPU 0
// (NVIDIA H200), pid 4242, rank 0") and sorted by process_sort_index. On each:
//   - counter "memory", key tracked_bytes: tracked device bytes (replay.h) after the
//     device's first event (often its context: 0, where the graph starts) and after every
//     event that changed them;
//   - counter "nvml", key process_used_bytes: NVML's used memory of the process at each
//     snapshot that measured it;
//   - instant events (scope "p") for marks (name = the mark's, args {tid, source}) on every
//     device of the process that made them, and for failed allocations (name "failed
//     allocation", args {size, result, api, stack: frames innermost first, as
//     export_frames.h names them}).
// A process with no device gets one synthetic process of its own for its marks.
// `ts` is CLOCK_MONOTONIC in microseconds with three decimals (ns exact), so traces of
// one machine line up.
//
// The file is the bare-array form, written record by record: "[", then one record per
// line separated by ",", then "]". A file cut anywhere between records is "[" plus
// records and perhaps a trailing comma, which both viewers load (Perfetto accepts a
// missing "]" and a trailing comma in this form; chrome://tracing closes it).
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <vector>

#include "read/reader.h"
#include "read/event_source.h"

namespace cumemtrace {

// Writes the file one trace at a time (a trace read in passes, event_source.h, is
// scanned twice: for its devices, then for its events), so that a job's traces need not
// be held together.
class ChromeWriter {
 public:
  explicit ChromeWriter(std::ostream& out);  // writes the opening "["
  ~ChromeWriter();
  ChromeWriter(const ChromeWriter&) = delete;
  ChromeWriter& operator=(const ChromeWriter&) = delete;
  // The next trace's records; its synthetic pids follow the previous trace's.
  void add(const Trace& t, const EventSource& events);
  // Writes the closing "]" and flushes; returns the number of records written.
  uint64_t close();

 private:
  struct Stream;
  std::ostream& out_;
  std::unique_ptr<Stream> rs_;
  int next_pid_ = 1000;
  uint64_t records_ = 0;
};

// All of `traces`, each holding its events. Returns the number of records written.
uint64_t write_chrome(std::ostream& out, const std::vector<const Trace*>& traces);

}  // namespace cumemtrace
