#include "read/damage/integrity.h"

#include <algorithm>

namespace cumemtrace {
namespace {

// The words for each kind the tracer bounds (trace_format.h, BoundedWhat); a kind this
// reader does not know is still said, by its number.
BoundedLoss loss_of(uint32_t what, const BoundedCount& c) {
  using format::BoundedWhat;
  const std::string n = std::to_string(c.dropped), cap = std::to_string(c.cap);
  switch (BoundedWhat(what)) {
    case BoundedWhat::kOpenRangeIds:
      return {what,
              "open_range_ids",
              c.cap,
              c.dropped,
              n + " nvtxRangeStart ranges began while " + cap + " were open: their ends were not recorded",
              {"by_range", "growth"}};
    case BoundedWhat::kPushNames:
      return {what,
              "push_names",
              c.cap,
              c.dropped,
              n + " NVTX pops closed pushes deeper than the " + cap +
                  " innermost of their thread: their ends were not recorded",
              {"by_range", "growth"}};
    case BoundedWhat::kTagNames:
      return {what,
              "tag_names",
              c.cap,
              c.dropped,
              n + " tag pops closed tags deeper than the " + cap +
                  " innermost of their thread: their ends were not recorded",
              {"by_range"}};
    case BoundedWhat::kRegionHandles:
      return {what,
              "region_handles",
              c.cap,
              c.dropped,
              n + " region handles of a chained NVTX tool were not kept (" + cap +
                  " at once): those regions' unregisters and names could not be matched",
              {"pools"}};
    case BoundedWhat::kRegisteredStrings:
      return {what,
              "registered_strings",
              c.cap,
              c.dropped,
              n + " NVTX strings registered past the first " + cap + ": what they name reads \"(registered string)\"",
              {"by_range", "growth", "pools"}};
    case BoundedWhat::kPushDomains:
      return {
          what,
          "push_domains",
          c.cap,
          c.dropped,
          n + " NVTX domains were created past the first " + cap + ": their pushes nested with the default domain's",
          {"by_range", "growth"}};
  }
  return {what,
          "bound_" + std::to_string(what),
          c.cap,
          c.dropped,
          n + " things of kind " + std::to_string(what) + " were not kept past a bound of " + cap,
          {"by_range", "growth", "pools"}};
}

}  // namespace

std::vector<const BoundedLoss*> Integrity::bounded_for(std::string_view part) const {
  std::vector<const BoundedLoss*> out;
  for (const auto& b : bounded)
    if (std::find(b.affects.begin(), b.affects.end(), part) != b.affects.end()) out.push_back(&b);
  return out;
}

Integrity check_records(const Trace& trace, uint64_t events_read) {
  Integrity in;
  in.sealed = trace.sealed;
  in.sealed_chunks = trace.sealed_chunks;
  in.damage = trace.damage;
  in.impossible = trace.set_aside;
  events_read += trace.set_aside.size();  // read, and set aside (plausible.h)
  if (trace.end && trace.end->events_written != events_read)
    in.end_mismatch = EndMismatch{trace.end->events_written, events_read};
  if (trace.end) in.events_dropped = trace.end->events_dropped;
  for (const auto& s : trace.snapshots) in.events_dropped = std::max(in.events_dropped, s.events_dropped);
  for (const auto& [what, count] : trace.bounded)
    if (count.dropped) in.bounded.push_back(loss_of(what, count));
  return in;
}

}  // namespace cumemtrace
