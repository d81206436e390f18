// LiveSets (analysis/replay/live_sets.h): each asker gets its own live set back by its
// ticket, whatever the others asked for and in whichever order.
#include "replay/live_sets.h"

#include <stdexcept>

#include "catch.h"
#include "parse_built.h"

using namespace cumemtrace;
using cumemtrace::test::parse;
using cumemtrace::test::TraceBuilder;

namespace {

uint64_t bytes_of(const std::vector<LiveAlloc>& set) {
  uint64_t sum = 0;
  for (const auto& a : set) sum += a.size;
  return sum;
}

}  // namespace

TEST_CASE("live sets: each ticket takes back the set at its own moment and device, once") {
  TraceBuilder b;
  b.process()
      .alloc(100, 0xA000, 1000)        // event 0: d0 1000
      .alloc(200, 0xB000, 3000)        // event 1: d0 4000
      .alloc(250, 0xF000, 9000, 0, 1)  // event 2: d1 9000
      .free(300, 0xA000)               // event 3: d0 3000
      .alloc(400, 0xC000, 500);        // event 4: d0 3500
  const Trace t = parse(b);
  LiveSets sets;
  // Asked out of time order, one moment twice, by askers that know nothing of each other.
  const LiveSets::Ticket late = sets.want(4, 0);
  const LiveSets::Ticket early = sets.want(0, 0);
  const LiveSets::Ticket other_device = sets.want(3, 1);
  const LiveSets::Ticket early_again = sets.want(0, 0);
  const LiveSets::Ticket peak = sets.want(1, 0);
  CHECK_THROWS_AS(sets.take(early), std::logic_error);  // before the replay
  sets.take_all(MemoryEvents(t.events), t.granule());
  CHECK_THROWS_AS(sets.want(2, 0), std::logic_error);  // after it

  CHECK(bytes_of(sets.take(peak)) == 4000);
  CHECK(bytes_of(sets.take(early_again)) == 1000);
  CHECK(bytes_of(sets.take(other_device)) == 9000);
  const auto at_end = sets.take(late);
  CHECK(bytes_of(at_end) == 3500);
  CHECK(at_end.size() == 2);  // 0xB000 and 0xC000
  CHECK(bytes_of(sets.take(early)) == 1000);
  CHECK_THROWS_AS(sets.take(late), std::logic_error);  // taken once
  CHECK_THROWS_AS(sets.take_all(MemoryEvents(t.events), t.granule()), std::logic_error);
}
