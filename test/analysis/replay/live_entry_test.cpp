// The replay's compact live entry (replay.h: LiveEntry, 36 bytes, the address or handle that
// is not its key noted aside where not 0) against the ledger kept with whole LiveAllocs, as
// the replay kept it before; and a live set read in place (LiveSets::visit, for_each_live)
// against the copy of it. Random event sequences from small pools of addresses and handles
// (0 among them), so that keys are reused, handles made twice, frees name nothing live and
// notes are written, overwritten and forgotten.
#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "catch.h"
#include "read/event_log.h"
#include "read/event_source.h"
#include "replay/live_sets.h"
#include "replay/replay.h"

using namespace cumemtrace;
using format::Kind;
using format::Op;

namespace live_entry_test {

constexpr uint64_t kGranule = 2u << 20;  // bytes

// The ledger as the replay kept it before LiveEntry: a whole LiveAlloc per entry.
class WholeLedger : public ledger::Ledger<WholeLedger, LiveAlloc, DeviceState> {
 public:
  void apply(const Event& e) {
    Ledger::apply(ledger::entry_of(e), [&](Kind k) {
      return LiveAlloc{e.address, e.size,   e.handle, e.time_ns, e.stack_id,
                       e.tid,     e.device, e.api,    k,         e.python_stack_id};
    });
  }
  std::vector<LiveAlloc> live() const {
    std::vector<LiveAlloc> out;
    by_address_.for_each([&](uint64_t, const LiveAlloc& a) { out.push_back(a); });
    std::sort(out.begin(), out.end(), [](const LiveAlloc& a, const LiveAlloc& b) { return a.address < b.address; });
    for (const auto& [h, handle] : handles_) out.push_back(handle.alloc);
    return out;
  }
  std::vector<LiveAlloc> reserved(int32_t device) const {
    std::vector<LiveAlloc> out;
    for (const auto& [address, a] : reservations_)
      if (a.device == device) out.push_back(a);
    return out;
  }

 private:
  friend class ledger::Ledger<WholeLedger, LiveAlloc, DeviceState>;
  DeviceState& ledger_device(int32_t d) { return devices_.try_emplace(d, d, kGranule).first->second; }
  bool ledger_keeps_gaps() const { return false; }
  void ledger_added(DeviceState&, const LiveAlloc&) {}
  std::map<int32_t, DeviceState> devices_;
};

using Fields = std::tuple<uint64_t, uint64_t, uint64_t, uint64_t, uint32_t, uint32_t, int32_t, uint16_t, int, uint32_t>;
Fields fields(const LiveAlloc& a) {
  return {a.address, a.size, a.handle, a.time_ns, a.stack_id, a.tid, a.device, a.api, int(a.kind), a.python_stack_id};
}
std::vector<Fields> fields(const std::vector<LiveAlloc>& set) {
  std::vector<Fields> out;
  for (const auto& a : set) out.push_back(fields(a));
  return out;
}
std::vector<Fields> sorted(std::vector<Fields> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<Event> random_events(uint64_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  const auto pick = [&](uint64_t k) { return std::uniform_int_distribution<uint64_t>(0, k - 1)(rng); };
  static constexpr Op kOps[] = {Op::kAlloc, Op::kAlloc, Op::kAlloc,   Op::kFree,        Op::kFree,
                                Op::kMap,   Op::kUnmap, Op::kReserve, Op::kReserveFree, Op::kRetain};
  static constexpr Kind kKinds[] = {Kind::kDevice,      Kind::kDevice,    Kind::kManaged, Kind::kHostPinned,
                                    Kind::kVmmPhysical, Kind::kIpcImport, Kind::kArray,   Kind::kAsyncPool};
  std::vector<Event> out;
  for (size_t i = 0; i < n; ++i) {
    Event e;
    e.time_ns = 1000 + i;
    e.op = kOps[pick(std::size(kOps))];
    e.kind = e.op == Op::kReserve || e.op == Op::kReserveFree ? Kind::kVmmReserve
             : e.op == Op::kMap || e.op == Op::kUnmap         ? Kind::kVmmMap
                                                              : kKinds[pick(std::size(kKinds))];
    e.address = pick(4) == 0 ? 0 : 0x7f0000000000ull + pick(12) * kGranule;
    e.handle = pick(3) == 0 ? 0 : 1 + pick(6);
    e.size = (1 + pick(3)) * kGranule / 2;
    e.device = int32_t(pick(3)) - 1;
    e.stack_id = uint32_t(pick(5));
    e.python_stack_id = pick(2) ? 0 : uint32_t(1 + pick(4));
    e.tid = uint32_t(1 + pick(3));
    e.api = uint16_t(pick(4));
    e.result = pick(12) == 0 ? 2 : 0;
    if (pick(20) == 0) e.flags |= format::kEventUnknownAddress;
    out.push_back(e);
  }
  return out;
}

}  // namespace live_entry_test

using namespace live_entry_test;

TEST_CASE("live entries: the compact entries give back every field the whole ones kept, after every event") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const std::vector<Event> events = random_events(seed, 600);
    Replayer r(kGranule);
    WholeLedger whole;
    for (size_t i = 0; i < events.size(); ++i) {
      r.apply(events[i], i);
      whole.apply(events[i]);
      INFO("seed " << seed << " event " << i);
      REQUIRE(fields(r.live(0, true)) == fields(whole.live()));
      for (int32_t d = -1; d <= 1; ++d) REQUIRE(fields(r.reserved(d)) == fields(whole.reserved(d)));
      std::vector<LiveAlloc> visited;
      r.for_each_live([&](const LiveAlloc& a) { visited.push_back(a); });
      REQUIRE(sorted(fields(visited)) == sorted(fields(whole.live())));
    }
  }
}

TEST_CASE("live entries: a handle or address other than the key comes back only where it was not 0") {
  Replayer r(kGranule);
  Event a;  // an ipc-import at an address, the exporter's pid in its handle
  a.op = Op::kAlloc, a.kind = Kind::kIpcImport, a.address = 0xA000, a.size = 512, a.handle = 4242, a.device = 0;
  Event b = a;  // a plain allocation: no handle
  b.kind = Kind::kDevice, b.address = 0xB000, b.handle = 0;
  Event c = a;  // cuMemCreate: kept by its handle; an address the trace gave it all the same
  c.kind = Kind::kVmmPhysical, c.address = 0xC000, c.handle = 77;
  Event a_again = b;  // the ipc-import's address freed and made again without a handle
  Event free_a = a;
  free_a.op = Op::kFree;
  a_again.address = 0xA000;
  for (const Event& e : {a, b, c}) r.apply(e, 0);
  auto live = r.live(0);
  REQUIRE(live.size() == 3);
  CHECK((live[0].address == 0xA000 && live[0].handle == 4242));
  CHECK((live[1].address == 0xB000 && live[1].handle == 0));
  CHECK((live[2].address == 0xC000 && live[2].handle == 77));
  r.apply(free_a, 3);
  r.apply(a_again, 4);
  live = r.live(0);
  REQUIRE(live.size() == 3);
  CHECK((live[0].address == 0xA000 && live[0].handle == 0 && live[0].kind == Kind::kDevice));
}

TEST_CASE(
    "live sets: a set read in place at a stop is the set copied there, and the replay at the end is the whole "
    "replay's") {
  for (uint64_t seed = 100; seed < 110; ++seed) {
    const std::vector<Event> list = random_events(seed, 800);
    EventLog log;
    for (const Event& e : list) log.push_back(e);
    const MemoryEvents events(log);
    std::mt19937_64 rng(seed);
    LiveSets sets;
    std::vector<LiveSets::Ticket> tickets;
    std::vector<std::vector<LiveAlloc>> visited(12);
    for (size_t k = 0; k < visited.size(); ++k) {
      const size_t at = std::uniform_int_distribution<size_t>(0, list.size() - 1)(rng);
      const int32_t device = int32_t(k % 3) - 1;
      tickets.push_back(sets.want(at, device));
      sets.visit(at, device, [&visited, k](const LiveAlloc& a) { visited[k].push_back(a); });
    }
    sets.take_all(events, kGranule);
    for (size_t k = 0; k < visited.size(); ++k) {
      INFO("seed " << seed << " stop " << k);
      CHECK(sorted(fields(visited[k])) == sorted(fields(sets.take(tickets[k]))));
    }
    Replayer whole(kGranule);
    for (size_t i = 0; i < list.size(); ++i) whole.apply(list[i], i);
    CHECK(fields(sets.end().live(0, true)) == fields(whole.live(0, true)));
    CHECK(fields(sets.end().reserved(0)) == fields(whole.reserved(0)));
  }
}
