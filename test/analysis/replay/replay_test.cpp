#include "replay/replay.h"

#include "catch.h"
#include "parse_built.h"

using namespace cumemtrace;
using cumemtrace::test::parse;
using cumemtrace::test::TraceBuilder;
namespace fmt = cumemtrace::format;
using fmt::Kind;
using fmt::Op;

TEST_CASE("the peak is the first moment tracked device bytes are highest, per device") {
  TraceBuilder b;
  b.process()
      .alloc(100, 0xA000, 1000)
      .alloc(200, 0xB000, 3000)                       // 4000 at t=200: the peak
      .free(300, 0xA000)                              // 3000
      .alloc(400, 0xC000, 1000)                       // 4000 again: not a new peak
      .alloc(450, 0xF000, 9999, 0, 1)                 // device 1, alone
      .alloc(500, 0xD000, 777, 0, 0, Kind::kManaged)  // managed: not device bytes
      .alloc(600, 0xE000, 555, 0, -1, Kind::kHostPinned);
  const Replayer r = replay(parse(b));
  const auto& d0 = r.devices().at(0);
  CHECK(d0.peak_bytes == 4000);
  CHECK(d0.peak_time_ns == TraceBuilder::kStart + 200);
  CHECK(d0.peak_event == 1);
  CHECK(d0.device_bytes == 4000);
  CHECK(d0.live_bytes[int(Kind::kManaged)] == 777);
  CHECK(d0.counts.allocs == 4);
  CHECK(d0.counts.frees == 1);
  CHECK(r.devices().at(1).peak_bytes == 9999);
  CHECK(r.devices().at(-1).device_bytes == 0);
  CHECK(r.devices().at(-1).live_bytes[int(Kind::kHostPinned)] == 555);

  const Trace t = parse(b);
  const auto at_peak = live_after(MemoryEvents(t.events), t.granule(), {{d0.peak_event, 0}});
  REQUIRE(at_peak.at(0).size() == 2);  // 0xA000 and 0xB000, before the free
  uint64_t sum = 0;
  for (const auto& a : at_peak.at(0)) sum += a.size;
  CHECK(sum == 4000);
}

TEST_CASE("vmm physical memory is gone only after release and the last unmap") {
  TraceBuilder b;
  b.process();
  auto create = TraceBuilder::ev(1, Op::kAlloc, Kind::kVmmPhysical, 0, 2 << 20);
  create.handle = 0x77;
  auto reserve = TraceBuilder::ev(2, Op::kReserve, Kind::kVmmReserve, 0x600000000, 8 << 20);
  auto map1 = TraceBuilder::ev(3, Op::kMap, Kind::kVmmMap, 0x600000000, 2 << 20);
  map1.handle = 0x77;
  auto map2 = TraceBuilder::ev(4, Op::kMap, Kind::kVmmMap, 0x600400000, 2 << 20);
  map2.handle = 0x77;
  auto release = TraceBuilder::ev(5, Op::kFree, Kind::kVmmPhysical, 0, 0);
  release.handle = 0x77;
  auto unmap1 = TraceBuilder::ev(6, Op::kUnmap, Kind::kVmmMap, 0x600000000, 2 << 20);
  auto unmap2 = TraceBuilder::ev(7, Op::kUnmap, Kind::kVmmMap, 0x600400000, 2 << 20);
  auto unreserve = TraceBuilder::ev(8, Op::kReserveFree, Kind::kVmmReserve, 0x600000000, 8 << 20);
  for (auto& e : {create, reserve, map1, map2, release, unmap1, unmap2, unreserve}) b.event(e);
  const Trace t = parse(b);

  auto at = [&](uint64_t ns) { return replay_until(t, TraceBuilder::kStart + ns).devices().at(0); };
  CHECK(at(1).device_bytes == (2u << 20));
  CHECK(at(2).reserved_bytes == (8u << 20));
  CHECK(at(2).device_bytes == (2u << 20));               // a reservation is not device memory
  CHECK(at(4).frag.figures().live_bytes == (4u << 20));  // both mappings are laid out
  CHECK(at(4).device_bytes == (2u << 20));               // ... but one handle's memory
  CHECK(at(5).device_bytes == (2u << 20));               // released, still mapped twice
  CHECK(at(6).device_bytes == (2u << 20));               // still mapped once
  CHECK(at(7).device_bytes == 0);                        // now gone
  CHECK(at(7).frag.figures().arena_bytes == 0);
  CHECK(at(8).reserved_bytes == 0);
  const Replayer r = replay(t);
  CHECK(r.devices().at(0).peak_reserved_bytes == (8u << 20));
  CHECK(r.live(0).empty());
  CHECK(r.devices().at(0).counts.frees == 1);
}

TEST_CASE("an unmapped-then-released handle is gone at the release") {
  TraceBuilder b;
  b.process();
  auto create = TraceBuilder::ev(1, Op::kAlloc, Kind::kVmmPhysical, 0, 2 << 20);
  create.handle = 5;
  auto map = TraceBuilder::ev(2, Op::kMap, Kind::kVmmMap, 0x700000000, 2 << 20);
  map.handle = 5;
  auto unmap = TraceBuilder::ev(3, Op::kUnmap, Kind::kVmmMap, 0x700000000, 2 << 20);
  auto release = TraceBuilder::ev(4, Op::kFree, Kind::kVmmPhysical, 0, 0);
  release.handle = 5;
  for (auto& e : {create, map, unmap, release}) b.event(e);
  const Trace t = parse(b);
  CHECK(replay_until(t, TraceBuilder::kStart + 3).devices().at(0).device_bytes == (2u << 20));
  CHECK(replay_until(t, TraceBuilder::kStart + 4).devices().at(0).device_bytes == 0);
}

TEST_CASE("a retained handle takes one release per reference") {
  TraceBuilder b;
  b.process();
  auto create = TraceBuilder::ev(1, Op::kAlloc, Kind::kVmmPhysical, 0, 2 << 20);
  create.handle = 5;
  auto retain = TraceBuilder::ev(2, Op::kRetain, Kind::kVmmPhysical, 0x700000000, 0);
  retain.handle = 5;
  auto release = TraceBuilder::ev(3, Op::kFree, Kind::kVmmPhysical, 0, 0);
  release.handle = 5;
  auto again = release;
  again.time_ns = TraceBuilder::kStart + 4;
  for (auto& e : {create, retain, release, again}) b.event(e);
  const Trace t = parse(b);
  CHECK(replay_until(t, TraceBuilder::kStart + 3).devices().at(0).device_bytes == (2u << 20));
  const auto end = replay_until(t, TraceBuilder::kStart + 4);
  CHECK(end.devices().at(0).device_bytes == 0);
  CHECK(end.devices().at(0).counts.unknown_frees == 0);
  CHECK(end.devices().at(0).counts.frees == 2);
}

TEST_CASE("frees of unknown memory are counted and change nothing") {
  TraceBuilder b;
  b.process().alloc(1, 0x1000, 100);
  auto flagged = TraceBuilder::ev(2, Op::kFree, Kind::kUnknown, 0xdead, 0);
  flagged.flags = fmt::kEventUnknownAddress;
  b.event(flagged).free(3, 0xbeef);
  auto failed_free = TraceBuilder::ev(4, Op::kFree, Kind::kDevice, 0x1000, 0);
  failed_free.result = 1;
  b.event(failed_free);
  const Replayer r = replay(parse(b));
  CHECK(r.devices().at(0).counts.unknown_frees == 2);
  CHECK(r.devices().at(0).device_bytes == 100);  // the failed free freed nothing
}

TEST_CASE("a failed allocation keeps the tracked bytes of its device at that moment") {
  TraceBuilder b;
  b.process().alloc(1, 0x1000, 300).alloc(2, 0x2000, 700, 0, 1).failed(3, 1ull << 40, 2).free(4, 0x1000);
  const Replayer r = replay(parse(b));
  REQUIRE(r.failed().size() == 1);
  CHECK(r.failed()[0].event.size == (1ull << 40));
  CHECK(r.failed()[0].live_device_bytes == 300);  // device 0 only
  CHECK(r.failed()[0].event_index == 2);
  CHECK(r.devices().at(0).counts.failed == 1);
}

TEST_CASE("live state at T applies exactly the events with time <= T") {
  TraceBuilder b;
  b.process().alloc(10, 0x1000, 1).alloc(20, 0x2000, 2).free(30, 0x1000);
  const Trace t = parse(b);
  CHECK(replay_until(t, TraceBuilder::kStart + 9).devices().empty());
  CHECK(replay_until(t, TraceBuilder::kStart + 10).devices().at(0).device_bytes == 1);
  CHECK(replay_until(t, TraceBuilder::kStart + 29).devices().at(0).device_bytes == 3);
  CHECK(replay_until(t, TraceBuilder::kStart + 30).devices().at(0).device_bytes == 2);
}

TEST_CASE("an imported handle's mapping is never counted, even when its handle is reused before the unmap") {
  // Import H (address 0), map 4 MiB of it at A: the import is 4 MiB, no mapped bytes.
  // Released, then H comes back as an own physical handle (events were lost: an anomaly),
  // and A is unmapped: nothing was added for A, so nothing is taken off.
  constexpr uint64_t H = 0x77, A = 0x7f0000000000, MiB = 1ull << 20;
  auto with_handle = [](fmt::EventRecord e, uint64_t h) {
    e.handle = h;
    return e;
  };
  TraceBuilder b;
  b.process();
  b.event(with_handle(TraceBuilder::ev(10, Op::kAlloc, Kind::kIpcImport, 0, 0), H));
  b.event(with_handle(TraceBuilder::ev(20, Op::kMap, Kind::kVmmMap, A, 4 * MiB), H));
  const Replayer mapped = replay(parse(b));
  CHECK(mapped.devices().at(0).live_bytes[int(Kind::kIpcImport)] == 4 * MiB);
  CHECK(mapped.devices().at(0).live_bytes[int(Kind::kVmmMap)] == 0);
  b.event(with_handle(TraceBuilder::ev(30, Op::kFree, Kind::kVmmPhysical, 0, 0), H));
  b.event(with_handle(TraceBuilder::ev(40, Op::kAlloc, Kind::kVmmPhysical, 0, 2 * MiB), H));
  b.event(TraceBuilder::ev(50, Op::kUnmap, Kind::kVmmMap, A, 4 * MiB));
  const Replayer r = replay(parse(b));
  const auto& d = r.devices().at(0);
  CHECK(d.live_bytes[int(Kind::kVmmMap)] == 0);
  CHECK(d.live_count[int(Kind::kVmmMap)] == 0);
  CHECK(d.live_bytes[int(Kind::kIpcImport)] == 0);
  CHECK(d.live_bytes[int(Kind::kVmmPhysical)] == 2 * MiB);
  CHECK(d.counts.anomalies == 1);
}
