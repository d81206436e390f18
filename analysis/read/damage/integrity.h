// What in a trace cannot be taken at face value: damaged byte ranges, an End record whose
// count disagrees with what was read, events the writer dropped, and events whose figures
// are impossible (an allocation larger than its device, a time before tracing began), which
// the reader set aside (plausible.h). The report states each one and marks its figures as
// incomplete; no command counts the impossible events.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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

// What the tracer did not keep past one of its bounds (format::BoundedWhat): the figures
// `affects` names are not whole, whatever else the trace says. One rule for every output:
// the text, the JSON and the page say these words.
struct BoundedLoss {
  uint32_t what = 0;                 // format::BoundedWhat
  std::string key;                   // "open_range_ids", ...: the JSON's name of it
  uint32_t cap = 0;                  // the bound
  uint64_t dropped = 0;              // how many were not kept
  std::string says;                  // one sentence: what was not kept and what that did
  std::vector<std::string> affects;  // the report's parts not whole for it: "by_range", "growth", "pools"
};

struct Integrity {
  bool sealed = false;  // format >= 1.2: checksums verified
  uint64_t sealed_chunks = 0;
  std::vector<DamagedRange> damage;
  std::optional<EndMismatch> end_mismatch;
  uint64_t events_dropped = 0;
  std::vector<ImpossibleEvent> impossible;
  std::vector<BoundedLoss> bounded;  // in BoundedWhat order; only kinds with a loss

  // The bounds that cut what `part` ("by_range", "growth", "pools": the report's JSON keys)
  // is made of; none: not cut.
  std::vector<const BoundedLoss*> bounded_for(std::string_view part) const;

  // True when figures computed from the events may be short of the truth.
  bool incomplete() const { return !damage.empty() || end_mismatch || events_dropped || !impossible.empty(); }
};

// What the records say, given how many events were read (and kept: those the reader set
// aside are counted here from the trace).
Integrity check_records(const Trace& trace, uint64_t events_read);

}  // namespace cumemtrace
