// The models the exports are written from (docs/architecture.md, "Reports compute, render
// formats"): the live and allocated bytes by device and stacks (stack_profile.h) and the
// steps of tracked bytes (timeline/tracked_steps.h), on a trace whose figures are worked
// out by hand.
#include "catch.h"

#include <tuple>
#include <vector>

#include "parse_built.h"
#include "read/event_source.h"
#include "reports/stack_profile.h"
#include "reports/timeline/tracked_steps.h"
#include "sizes.h"
#include "trace_builder.h"

using namespace cumemtrace;
using cumemtrace::test::parse;
using cumemtrace::test::TraceBuilder;

namespace {

// Device 0: A (8 MiB, stack 1) at 1 ms, B (4 MiB, stack 1) at 2 ms, C (2 MiB, stack 2) at
// 3 ms, B freed at 4 ms, 16 MiB refused (stack 2) at 6 ms, A freed at 7 ms, a free of an
// address never allocated at 8 ms. Device 1: D (6 MiB, stack 1) at 5 ms.
TraceBuilder two_devices() {
  TraceBuilder b;
  b.process().device(0, 1024 * MiB).device(1, 1024 * MiB);
  b.stack(1, 0, 0x401000).stack(2, 0, 0x402000);
  b.alloc(1 * ms, 0x7f0000000000, 8 * MiB, 1);
  b.alloc(2 * ms, 0x7f0000800000, 4 * MiB, 1);
  b.alloc(3 * ms, 0x7f0001000000, 2 * MiB, 2);
  b.free(4 * ms, 0x7f0000800000);
  b.alloc(5 * ms, 0x7f1000000000, 6 * MiB, 1, 1);
  b.failed(6 * ms, 16 * MiB, 2, 2);
  b.free(7 * ms, 0x7f0000000000);
  b.free(8 * ms, 0x7f0009000000);
  b.end(10 * ms);
  return b;
}

}  // namespace

TEST_CASE("stack profile: what was live at a moment and what was allocated, by device and stacks") {
  const Trace t = parse(two_devices());
  const MemoryEvents events(t.events);
  StackProfile p;
  // At 4.5 ms A (8 MiB) and C (2 MiB) are live on device 0; B was freed, D not yet made.
  add_live_at(p, events, t.granule(), TraceBuilder::kStart + 4 * ms + ms / 2);
  REQUIRE(p.size() == 2);
  CHECK(p[{0, 1, 0}].live_objects == 1);
  CHECK(p[{0, 1, 0}].live_bytes == 8 * MiB);
  CHECK(p[{0, 2, 0}].live_objects == 1);
  CHECK(p[{0, 2, 0}].live_bytes == 2 * MiB);
  // Over the run: A and B from stack 1 (12 MiB), C from stack 2 (the refused 16 MiB made
  // nothing), D on device 1.
  add_allocated(p, events);
  REQUIRE(p.size() == 3);
  CHECK(p[{0, 1, 0}].alloc_objects == 2);
  CHECK(p[{0, 1, 0}].alloc_bytes == 12 * MiB);
  CHECK(p[{0, 2, 0}].alloc_objects == 1);
  CHECK(p[{0, 2, 0}].alloc_bytes == 2 * MiB);
  CHECK(p[{1, 1, 0}].alloc_objects == 1);
  CHECK(p[{1, 1, 0}].alloc_bytes == 6 * MiB);
  CHECK(p[{1, 1, 0}].live_objects == 0);
  CHECK(p[{1, 1, 0}].live_bytes == 0);

  // At the end: C on device 0, D on device 1.
  StackProfile end;
  add_live_at(end, events, t.granule(), TraceBuilder::kStart + 10 * ms);
  REQUIRE(end.size() == 2);
  CHECK(end[{0, 2, 0}].live_bytes == 2 * MiB);
  CHECK(end[{1, 1, 0}].live_bytes == 6 * MiB);
}

TEST_CASE("tracked steps: a device's first event and every change of its tracked bytes, failures among them") {
  const Trace t = parse(two_devices());
  std::vector<std::tuple<int32_t, bool, bool, uint64_t>> steps;  // device, failed, changed, tracked
  tracked_steps(MemoryEvents(t.events), t.granule(),
                [&](const TrackedStep& s) { steps.emplace_back(s.event.device, s.failed, s.changed, s.tracked); });
  // Device 0: 8, 12, 14, 10 MiB; device 1's first, 6 MiB; the refusal on device 0 (still 10
  // MiB, no change); A's free, 2 MiB. The free of an unknown address changes nothing: no step.
  const std::vector<std::tuple<int32_t, bool, bool, uint64_t>> expected = {
      {0, false, true, 8 * MiB}, {0, false, true, 12 * MiB}, {0, false, true, 14 * MiB}, {0, false, true, 10 * MiB},
      {1, false, true, 6 * MiB}, {0, true, false, 10 * MiB}, {0, false, true, 2 * MiB}};
  CHECK(steps == expected);
}
