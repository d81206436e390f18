// The tracer's ledger (interpose/track/tracker_ledger.h, what its snapshots carry) against the
// replay (replay.h, what every report prints), fed the same long random event sequences
// and compared figure by figure after every event. Both apply the rules of
// cumemtrace/rules/ledger.h; what this holds together is what each side does around them: the
// tracer completes an event as the program made it and the replay reads the completed
// event back, each keeps its own peak, and the snapshot's live count and reserved bytes
// are put together from the ledger's figures.
//
// Events are made as the hooks make them (interpose/hooks_*.h, call.cpp's restores,
// tracker.cpp's teardown): raw, with what the tracker completes left out. Addresses,
// handles and reservations come from small pools, so that addresses are reused, handles
// made twice, unmaps span mappings, and frees name nothing live.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "catch.h"
#include "replay/replay.h"
#include "track/tracker_ledger.h"  // interpose/ (CMakeLists.txt gives this file that folder)

using namespace cumemtrace;
using format::Kind;
using format::Op;

namespace {

constexpr uint64_t kGranule = 2u << 20;  // bytes
constexpr uint64_t kMiB = 1u << 20;

struct Generator {
  std::mt19937_64 rng;
  uint64_t time_ns = 1000;
  explicit Generator(uint64_t seed) : rng(seed) {}

  uint64_t pick(uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng); }
  bool chance(int percent) { return pick(100) < uint64_t(percent); }
  int32_t device() { return int32_t(pick(3)) - (chance(10) ? 1 : 0); }  // -1 (host), 0, 1, 2
  // 24 slots 4 MiB apart, so that sizes up to 6 MiB sometimes overlap a neighbour.
  uint64_t address() { return 0x7f0000000000ull + pick(24) * 4 * kMiB; }
  uint64_t mapped() { return 0x600000000000ull + pick(16) * 2 * kMiB; }
  uint64_t reserved() { return 0x500000000000ull + pick(4) * 256 * kMiB; }
  uint64_t handle() { return 1 + pick(8); }
  int32_t result() { return chance(8) ? 2 : 0; }  // CUDA_ERROR_OUT_OF_MEMORY

  format::EventRecord event(Op op, Kind kind) {
    format::EventRecord ev{};
    time_ns += pick(3);  // sometimes the same moment twice
    ev.time_ns = time_ns;
    ev.op = uint8_t(op);
    ev.kind = uint8_t(kind);
    ev.device = -1;
    ev.stack_id = uint32_t(pick(5));
    ev.tid = 7;
    return ev;
  }
};

// Every figure of one device, tracer side and replay side, as one comparable line.
std::string tracer_figures(const interpose::TrackedDevice& d) {
  std::ostringstream o;
  for (int k = 0; k < format::kKindCount; ++k) o << d.live_bytes[k] << '/' << d.live_count[k] << ' ';
  const FragmentationFigures f = d.frag.figures();
  o << "device " << d.device_bytes << " reserved " << d.reserved_bytes << " entries " << d.snapshot_live_count()
    << " peak " << d.peak << " at " << d.peak_time << " arenas " << f.arena_bytes << '/' << f.arena_count << " gaps "
    << f.gap_bytes << '/' << f.largest_gap;
  return o.str();
}

std::string replay_figures(const DeviceState& d, const Replayer& r, int32_t device) {
  std::ostringstream o;
  uint64_t entries = 0;
  for (int k = 0; k < format::kKindCount; ++k) {
    o << d.live_bytes[k] << '/' << d.live_count[k] << ' ';
    entries += d.live_count[k];
  }
  for (const auto& [address, v] : r.reservations()) entries += v.device == device;
  const FragmentationFigures f = d.frag.figures();
  o << "device " << d.device_bytes << " reserved " << d.reserved_bytes << " entries " << entries << " peak "
    << d.peak_bytes << " at " << (d.peak_bytes ? d.peak_time_ns : 0) << " arenas " << f.arena_bytes << '/'
    << f.arena_count << " gaps " << f.gap_bytes << '/' << f.largest_gap;
  return o.str();
}

using Row = std::tuple<uint64_t, uint64_t, int32_t, int>;  // address or handle, size, device, kind

std::vector<Row> tracer_live(const interpose::TrackerLedger& t) {
  std::vector<Row> out;
  t.allocations().for_each(
      [&](uint64_t a, const interpose::Allocation& v) { out.emplace_back(a, v.size, v.device, int(v.kind)); });
  std::sort(out.begin(), out.end());
  for (const auto& [h, v] : t.handles()) out.emplace_back(h, v.alloc.size, v.alloc.device, int(v.alloc.kind));
  for (const auto& [a, v] : t.reservations()) out.emplace_back(a, v.size, v.device, int(Kind::kVmmReserve));
  return out;
}

std::vector<Row> replay_live(const Replayer& r) {
  std::vector<Row> out;
  for (const LiveAlloc& v : r.live(0, /*all=*/true))
    out.emplace_back(v.address ? v.address : v.handle, v.size, v.device, int(v.kind));
  for (const auto& [a, v] : r.reservations()) out.emplace_back(a, v.size, v.device, int(v.kind));
  return out;
}

// The first figure on which the two sides differ after the events so far; empty if none.
std::string difference(const interpose::TrackerLedger& t, const Replayer& r, uint64_t tracer_unknown) {
  std::vector<int32_t> td, rd;
  for (const auto& [d, s] : t.devices) td.push_back(d);
  for (const auto& [d, s] : r.devices()) rd.push_back(d);
  if (td != rd) return "the devices differ: " + std::to_string(td.size()) + " against " + std::to_string(rd.size());
  uint64_t replay_unknown = 0;
  for (const auto& [d, s] : r.devices()) {
    const std::string a = tracer_figures(t.devices.at(d)), b = replay_figures(s, r, d);
    if (a != b) return "device " + std::to_string(d) + ":\n  tracer " + a + "\n  replay " + b;
    replay_unknown += s.counts.unknown_frees;
  }
  if (tracer_live(t) != replay_live(r)) return "the live sets differ";
  if (tracer_unknown != replay_unknown)
    return "frees of nothing live: tracer flagged " + std::to_string(tracer_unknown) + ", replay counted " +
           std::to_string(replay_unknown);
  return {};
}

std::string describe(const format::EventRecord& ev) {
  std::ostringstream o;
  o << "op " << int(ev.op) << " kind " << int(ev.kind) << " result " << ev.result << " flags " << ev.flags
    << " address 0x" << std::hex << ev.address << std::dec << " size " << ev.size << " handle " << ev.handle
    << " device " << ev.device;
  return o.str();
}

struct Run {
  interpose::TrackerLedger tracer{kGranule};
  Replayer replay{kGranule};
  size_t index = 0;
  uint64_t tracer_unknown = 0;   // frees, unmaps and reserve frees the tracer flagged unknown
  uint64_t spanning_unmaps = 0;  // unmaps that took more than one mapping
  std::string failure;

  // The tracer applies and completes the event; the replay reads it as written.
  format::EventRecord feed(format::EventRecord ev) {
    tracer.apply(ev);
    const Op op = Op(ev.op);
    if ((ev.flags & format::kEventUnknownAddress) && ev.result == 0 &&
        (op == Op::kFree || op == Op::kUnmap || op == Op::kReserveFree))
      ++tracer_unknown;
    Event e;
    e.time_ns = ev.time_ns, e.address = ev.address, e.size = ev.size, e.stream = ev.stream, e.handle = ev.handle;
    e.tid = ev.tid, e.device = ev.device, e.stack_id = ev.stack_id, e.result = ev.result, e.api = ev.api;
    e.op = op, e.kind = Kind(ev.kind), e.flags = ev.flags;
    const uint64_t maps_before = replay_maps();
    replay.apply(e, index++);
    if (op == Op::kUnmap && maps_before > replay_maps() + 1) ++spanning_unmaps;
    if (failure.empty()) {
      const std::string d = difference(tracer, replay, tracer_unknown);
      if (!d.empty()) failure = "after event " + std::to_string(index - 1) + " (" + describe(ev) + "):\n" + d;
    }
    return ev;
  }

  // Mappings live: mapped bytes are counted per mapping (vmm-map live_count).
  uint64_t replay_maps() const {
    uint64_t n = 0;
    for (const auto& [d, s] : replay.devices()) n += s.live_count[int(Kind::kVmmMap)];
    return n;
  }

  // A free as call.cpp records it: applied first; when the driver refuses it, restored.
  void free_maybe_refused(Generator& g, format::EventRecord ev) {
    const format::EventRecord freed = feed(ev);
    if (!g.chance(10)) return;
    format::EventRecord back = g.event(Op::kAlloc, Kind(freed.kind));
    back.result = 1;  // CUDA_ERROR_INVALID_VALUE
    back.address = freed.address, back.size = freed.size, back.handle = freed.handle, back.device = freed.device;
    back.flags = format::kEventRestored | (freed.flags & format::kEventCaptured);
    if (freed.flags & format::kEventUnknownAddress) {
      back.op = uint8_t(Op::kFree), back.kind = 0, back.size = 0, back.handle = 0;
      back.flags = format::kEventUnknownAddress | format::kEventRestored;
    }
    feed(back);
  }
};

void step(Generator& g, Run& run) {
  static constexpr Kind kByAddress[] = {Kind::kDevice,     Kind::kPitch, Kind::kManaged,  Kind::kAsyncPool,
                                        Kind::kHostPinned, Kind::kArray, Kind::kIpcImport};
  switch (g.pick(16)) {
    case 0:
    case 1:
    case 2: {  // cuMemAlloc and its kin, cuIpcOpenMemHandle; some made under a capture
      const Kind k = kByAddress[g.pick(std::size(kByAddress))];
      format::EventRecord ev = g.event(Op::kAlloc, k);
      ev.result = g.result();
      ev.address = ev.result ? 0 : g.address();
      ev.size = 1 + g.pick(6 * kMiB);
      ev.device = k == Kind::kHostPinned ? -1 : g.device();
      if (k == Kind::kAsyncPool) ev.handle = 100 + g.pick(2);   // its pool
      if (k == Kind::kIpcImport) ev.handle = g.pick(3) * 4242;  // the exporter's pid, 0: unknown
      if (g.chance(8)) ev.flags |= format::kEventCaptured;
      run.feed(ev);
      break;
    }
    case 3:
    case 4: {  // cuMemFree (cuIpcCloseMemHandle too), some under a capture
      format::EventRecord ev = g.event(Op::kFree, Kind::kUnknown);
      ev.address = g.address();
      if (g.chance(8)) ev.flags |= format::kEventCaptured;
      run.free_maybe_refused(g, ev);
      break;
    }
    case 5: {  // cuMemCreate
      format::EventRecord ev = g.event(Op::kAlloc, Kind::kVmmPhysical);
      ev.result = g.result();
      ev.handle = ev.result ? 0 : g.handle();
      ev.size = (1 + g.pick(3)) * kGranule;
      ev.device = g.device();
      run.feed(ev);
      break;
    }
    case 6: {  // cuMemRelease
      format::EventRecord ev = g.event(Op::kFree, Kind::kVmmPhysical);
      ev.handle = g.handle();
      run.free_maybe_refused(g, ev);
      break;
    }
    case 7: {  // cuMemImportFromShareableHandle: size unknown until mapped
      format::EventRecord ev = g.event(Op::kAlloc, Kind::kIpcImport);
      ev.result = g.result();
      ev.handle = ev.result ? 0 : g.handle();
      ev.device = g.device();
      run.feed(ev);
      break;
    }
    case 8:
    case 9: {  // cuMemMap
      format::EventRecord ev = g.event(Op::kMap, Kind::kVmmMap);
      ev.result = g.result();
      ev.address = g.mapped();
      ev.size = (1 + g.pick(3)) * kGranule;
      ev.handle = g.handle();
      run.feed(ev);
      break;
    }
    case 10: {  // cuMemUnmap: may span several mappings
      format::EventRecord ev = g.event(Op::kUnmap, Kind::kVmmMap);
      ev.result = g.chance(5) ? 1 : 0;
      ev.address = g.mapped();
      ev.size = g.chance(5) ? 0 : (1 + g.pick(6)) * kGranule;
      run.feed(ev);
      break;
    }
    case 11: {  // cuMemAddressReserve / cuMemAddressFree
      const bool reserve = g.chance(55);
      format::EventRecord ev = g.event(reserve ? Op::kReserve : Op::kReserveFree, Kind::kVmmReserve);
      ev.result = g.result();
      ev.address = ev.result && reserve ? 0 : g.reserved();
      ev.size = (1 + g.pick(4)) * 64 * kMiB;
      run.feed(ev);
      break;
    }
    case 12: {  // cuMemRetainAllocationHandle
      format::EventRecord ev = g.event(Op::kRetain, Kind::kVmmPhysical);
      ev.result = g.chance(5) ? 1 : 0;
      ev.address = g.mapped();
      ev.handle = g.handle();
      run.feed(ev);
      break;
    }
    case 13: {  // exports: cuIpcGetMemHandle, cuMemExportToShareableHandle
      const bool by_handle = g.chance(50);
      format::EventRecord ev = g.event(Op::kShare, by_handle ? Kind::kVmmPhysical : Kind::kUnknown);
      if (by_handle) ev.handle = g.handle();
      else ev.address = g.address();
      run.feed(ev);
      break;
    }
    case 14: {  // a trim, a context, a graph launch: no bytes move
      static constexpr Op kOthers[] = {Op::kPoolTrim, Op::kContextCreate, Op::kGraphLaunch, Op::kGraphMemTrim};
      format::EventRecord ev = g.event(kOthers[g.pick(std::size(kOthers))], Kind::kUnknown);
      ev.handle = 100 + g.pick(3);
      ev.size = g.pick(2) * 300 * kMiB;
      ev.device = Op(ev.op) == Op::kContextCreate ? g.device() : -1;
      ev.result = g.chance(5) ? 1 : 0;
      run.feed(ev);
      break;
    }
    case 15: {  // a device's primary context torn down (cudaDeviceReset): tracker.cpp's track_teardown
      if (!g.chance(15)) break;
      const int32_t device = int32_t(g.pick(3));
      for (const uint64_t address : run.tracer.torn_down(device, 0)) {
        format::EventRecord ev = g.event(Op::kFree, Kind::kUnknown);
        ev.address = address;
        ev.device = device;
        ev.flags = format::kEventTeardown;
        run.feed(ev);
      }
      break;
    }
  }
}

}  // namespace

TEST_CASE("ledger: the tracer's figures equal the replay's after every event of long random sequences") {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    INFO("seed " << seed);
    Generator g(seed);
    Run run;
    while (run.index < 4000) step(g, run);  // to the end: the checks below need a whole run
    CHECK(run.failure == "");
    // The sequences reach what they are made for: reused addresses and handles, spanning
    // unmaps, frees of nothing live, a peak on every device.
    uint64_t anomalies = 0, unknown = 0, unmaps = 0;
    for (const auto& [d, s] : run.replay.devices())
      anomalies += s.counts.anomalies, unknown += s.counts.unknown_frees, unmaps += s.counts.unmaps;
    CHECK(anomalies > 20);
    CHECK(unknown > 100);
    CHECK(unmaps > 20);
    CHECK(run.spanning_unmaps > 5);
    for (int32_t d : {0, 1, 2}) CHECK(run.tracer.devices.at(d).peak > 0);
  }
}
