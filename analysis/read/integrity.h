// What in a trace cannot be taken at face value: damaged byte ranges, an End record whose
// count disagrees with what was read, events the writer dropped, and events whose figures
// are impossible (an allocation larger than its device, a time before tracing began), which
// the reader set aside (plausible.h). The report states each one and marks its figures as
// incomplete; no command counts the impossible events.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "read/reader.h"

namespace cumemtrace {

// Set aside by the reader (reader.h, plausible.h): index is the event's place among all
// the trace's events (0: the first).
using ImpossibleEvent = SetAsideEvent;

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

// What the records say, given how many events were read (and kept: those the reader set
// aside are counted here from the trace).
Integrity check_records(const Trace& trace, uint64_t events_read);

}  // namespace cumemtrace
