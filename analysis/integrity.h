// What in a trace cannot be taken at face value: damaged byte ranges, an End record whose
// count disagrees with what was read, events the writer dropped, and events whose figures
// are impossible (an allocation larger than its device, a time before tracing began).
// The report states each one, marks its figures as incomplete, and replays the trace
// without the impossible events instead of summing them silently.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cumemtrace/reader.h"

namespace cumemtrace {

struct ImpossibleEvent {
  size_t index = 0;  // the event's place among all the trace's events (0: the first)
  Event event;
  std::string why;
};

struct EndMismatch {
  uint64_t announced = 0;  // EndRecord::events_written
  uint64_t read = 0;       // Event records read
};

struct Integrity {
  bool sealed = false;  // format >= 1.2: checksums verified
  uint64_t sealed_chunks = 0;
  std::vector<DamagedRange> damage;
  std::optional<EndMismatch> end_mismatch;
  uint64_t events_dropped = 0;
  std::vector<ImpossibleEvent> impossible;

  // True when figures computed from the events may be short of the truth.
  bool incomplete() const { return !damage.empty() || end_mismatch || events_dropped || !impossible.empty(); }
};

// In two parts, for a command that reads the events as they come (event_source.h): what
// the records other than events say, given how many events were read; then each event's
// verdict (the report fills Integrity::impossible with them).
Integrity check_records(const Trace& trace, uint64_t events_read);
// Why `e` cannot be true, or empty.
std::string impossible_event(const Trace& trace, const Event& e);

}  // namespace cumemtrace
