// Replaying a trace's events to know what was live, where, and when.
//
// The algorithm (one forward pass, state per device; the rules are the tracer's too,
// written once in cumemtrace/rules/ledger.h):
//   - kAlloc/kFree of device, pitch, managed, async-pool and host-pinned memory pair by
//     address. A vmm-physical kAlloc is a cuMemCreate handle (address 0) and its kFree
//     is cuMemRelease, by handle; but the driver keeps the physical memory until the
//     handle is released AND no cuMemMap of it remains, so each handle carries a map
//     count, and its bytes leave "tracked device bytes" only when both have happened.
//   - kMap/kUnmap lay physical memory into reserved address space: the mapping is what
//     the FragmentationIndex sees (counts_for_fragmentation), never the handle.
//   - kReserve/kReserveFree are address space only, kept apart from device bytes.
//   - A kAlloc with result != 0 is a failed allocation (an OOM, usually); it is kept
//     with the tracked bytes of its device at that moment.
//   - An allocation made on a stream under capture (kEventCaptured) is a graph memory
//     node: no device memory when made, so it is only remembered, to pair its free. A
//     captured free of an ordinary allocation runs with the graph, unseen: not applied.
//   - 1.9: arrays (address = CUarray handle) and ipc-imports pair by address too; an
//     array holds device memory but is no place in the address space (not in the
//     FragmentationIndex); an ipc-import is another process's memory: listed, never in
//     device bytes nor in what was live at a peak. kShare marks an export: counted only.
//   - A free of an address never seen (flag kEventUnknownAddress, or simply not live
//     because events were dropped) is counted, never trusted further.
// After every event the touched device's figures are read: the peak of tracked device
// bytes (first time reached, strictly greater) and the maximum gap ratio over moments
// that matter (gap_ratio_front.h). Reading is O(1) because FragmentationIndex maintains
// its figures incrementally.
//
// What was live *at* the peak needs the live set at one past moment. Copying the live
// set at every new peak would be quadratic on a ramp-up (every allocation is a new peak),
// so, as heaptrack's peak tracking does, the first pass only remembers the event index
// of each device's peak and a second pass (live_after, replay_to_stops) replays up to
// those indices and copies the live set there, once per device, or lets a reader that
// only sums read it in place. A report's second pass goes on to the last event and says
// what is live at the end, so that the first can forget its own before it starts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "read/reader.h"
#include "cumemtrace/rules/ledger.h"
#include "read/event_source.h"
#include "replay/gap_ratio_front.h"

namespace cumemtrace {

inline constexpr size_t kNoEvent = ~size_t(0);

struct LiveAlloc {
  uint64_t address = 0;  // 0 for a vmm-physical handle
  uint64_t size = 0;
  uint64_t handle = 0;
  uint64_t time_ns = 0;
  uint32_t stack_id = 0;
  uint32_t tid = 0;
  int32_t device = -1;
  uint16_t api = 0;
  format::Kind kind{};
  uint32_t python_stack_id = 0;  // trace 1.6
};

// What the replay keeps of one live allocation, beside its key (the address, or the handle
// of a handle kept by handle): 36 bytes, where a LiveAlloc is 56, so that a map entry with
// its key is 44 (docs/performance.md, "What the analyzer keeps per live allocation").
// The one of address and handle that is not the key is 0 for almost every allocation; where
// it is not, it sits in a side table of the Replayer and `has_other` says so. Packed to
// 4-byte alignment (36 bytes, not 40): its 8-byte fields are then read unaligned, which
// x86-64 and AArch64 do in hardware.
#pragma pack(push, 4)
struct LiveEntry {
  uint64_t size = 0, time_ns = 0;
  uint32_t stack_id = 0, python_stack_id = 0, tid = 0;
  int32_t device = -1;
  uint16_t api = 0;
  format::Kind kind{};
  bool has_other = false;  // the address (kept by handle) or the handle (else) is noted aside
};
#pragma pack(pop)
static_assert(sizeof(LiveEntry) == 36);

struct DeviceCounts {
  uint64_t allocs = 0;         // successful allocations (vmm-physical handles included)
  uint64_t frees = 0;          // frees that matched a live allocation or handle
  uint64_t failed = 0;         // allocations with result != 0
  uint64_t unknown_frees = 0;  // frees/unmaps of something never seen live
  uint64_t maps = 0;
  uint64_t unmaps = 0;
  uint64_t reserves = 0;
  uint64_t reserve_frees = 0;
  uint64_t pool_trims = 0;
  uint64_t contexts = 0;
  uint64_t anomalies = 0;     // an address allocated twice, or overlapping ranges
  uint64_t graph_allocs = 0;  // made on a stream under capture (graph memory nodes)
  uint64_t shares = 0;        // 1.9: exports to other processes (kShare)
  uint64_t imports = 0;       // 1.9: ipc-imports opened (also in allocs)
};

// live_bytes, live_count, device_bytes (tracked device bytes), reserved_bytes and frag
// (the tracer's gap figures, flat_fragmentation.h) are the ledger's (ledger::Figures).
struct DeviceState : ledger::Figures {
  int32_t device = -1;
  uint64_t context_bytes = 0;  // sum of kContextCreate sizes
  DeviceCounts counts;

  uint64_t peak_bytes = 0;
  uint64_t peak_time_ns = 0;
  size_t peak_event = kNoEvent;  // index into Trace::events
  FragmentationFigures frag_at_peak;
  GapRatioFront gap_front;
  double max_gap_ratio = 0;  // over moments with footprint >= peak footprint / 10 (gap_ratio_front.h)
  uint64_t max_gap_ratio_time_ns = 0;
  uint64_t peak_reserved_bytes = 0;
  uint64_t peak_pinned_bytes = 0;  // host-pinned (the host row's own peak)
  uint64_t peak_pinned_time_ns = 0;
  uint64_t peak_import_bytes = 0;     // 1.9: ipc-import bytes mapped at once, at most (never device bytes)
  std::vector<uint32_t> import_pids;  // 1.9: exporters' pids the trace names, in order seen

  explicit DeviceState(int32_t d, uint64_t granule) : Figures(granule), device(d) {}
};

struct FailedAlloc {
  size_t event_index = 0;
  Event event;
  uint64_t live_device_bytes = 0;  // tracked device bytes on its device at that moment
  // Recovered (docs/cli.md, "Recovered or fatal"): an allocation of at least its size
  // succeeded on its thread before the thread's next failure; how long after it.
  std::optional<uint64_t> recovered_after_ns;
};

// A reader that keeps its own figures as a replay goes (added on allocation, taken away on
// free) instead of walking the live set where the replay stands: told of each allocation
// or handle as its bytes enter the live set and as they leave it (an imported handle whose
// size is learnt at its first map leaves and enters again), and, through LiveSets::watch,
// of each stop it asked for, with the replay standing there (to be read in place, once,
// not at every stop: that is what the watcher is for).
class Replayer;
class LiveWatcher {
 public:
  virtual ~LiveWatcher() = default;
  virtual void entered(const LiveAlloc& a) = 0;
  virtual void left(const LiveAlloc& a) = 0;
  virtual void at(size_t stop, const Replayer& r) = 0;  // just after the event of its `stop`th stop
};

class Replayer : public ledger::Ledger<Replayer, LiveEntry, DeviceState> {
 public:
  // `live_set_only`: keep what is live (live(), reservations(), failed()) and nothing
  // per moment: no fragmentation index, no peaks, no gap ratios. The second passes only
  // want the live set, and the index was half of a replay's time.
  explicit Replayer(uint64_t granule, bool live_set_only = false) : granule_(granule), live_set_only_(live_set_only) {}

  void apply(const Event& e, size_t index);

  const std::map<int32_t, DeviceState>& devices() const { return devices_; }
  const std::vector<FailedAlloc>& failed() const { return failed_; }

  // Every live allocation on `device` (all devices when `all`), vmm-physical handles
  // still holding memory included; mappings and reservations excluded.
  std::vector<LiveAlloc> live(int32_t device, bool all = false) const;
  // What live(0, true) returns, one at a time and in no particular order, without a copy
  // of the set: for a reader that only sums.
  template <class F>
  void for_each_live(F&& f) const {
    by_address_.for_each(
        [&](uint64_t address, const LiveEntry& a) { f(view(a, address, other_of(alloc_handles_, address, a))); });
    for (const auto& [h, handle] : handles_) f(view(handle.alloc, other_of(handle_addresses_, h, handle.alloc), h));
  }
  // The address-space reservations live on `device`, in address order.
  std::vector<LiveAlloc> reserved(int32_t device) const;

  // Tells `w` of every allocation or handle entering or leaving the live set from the next
  // event on; `w` must outlive the replay.
  void watch(LiveWatcher& w) { watchers_.push_back(&w); }
  void stop_watching() { watchers_.clear(); }

  // Forgets every live allocation, handle, mapping, reservation and each device's
  // fragmentation index, keeping devices() and failed(): what was live is then another
  // replay's to say (a report's second pass replays to the end, live_after's `to_end`).
  // The figures of each device's index as they stood at the end must be read before.
  void forget_allocations();

 private:
  friend struct ReplayerCheckpoint;  // checkpoint.cpp: saves and restores the live state
  friend class ledger::Ledger<Replayer, LiveEntry, DeviceState>;
  using Handle = ledger::Handle<LiveEntry>;
  using Mapping = ledger::Mapping;

  DeviceState& dev(int32_t d);
  // What only the replay keeps of an event the ledger applied: counts, failures, exporters.
  void count(DeviceState& s, const Event& e, const ledger::Outcome& o, size_t index);
  // An allocation that succeeded: is it the recovery of its thread's last failure?
  void recovered(const Event& e);
  void observe(DeviceState& s, const Event& e, size_t index);
  // The ledger's calls back (ledger.h).
  DeviceState& ledger_device(int32_t d) { return dev(d); }
  bool ledger_keeps_gaps() const { return !live_set_only_; }
  void ledger_added(DeviceState& s, const LiveEntry& a);
  void ledger_keyed(const LiveEntry& a, bool by_handle, uint64_t key, bool added) {
    if (watchers_.empty()) return;
    const LiveAlloc v =
        by_handle ? view(a, other_of(handle_addresses_, key, a), key) : view(a, key, other_of(alloc_handles_, key, a));
    for (LiveWatcher* w : watchers_) added ? w->entered(v) : w->left(v);
  }

  // The entry of what `e` makes, of kind `k`, its address or handle noted aside if needed.
  LiveEntry entry_of(const Event& e, format::Kind k);
  // Forgets the side tables' notes whose entry is gone after `e` (they would only waste room:
  // an entry reads its note only while `has_other` is set, and a new entry writes its own).
  void forget_notes(const Event& e);
  static uint64_t other_of(const AddressMap<uint64_t>& notes, uint64_t key, const LiveEntry& a) {
    return a.has_other ? *notes.find(key) : 0;
  }
  static bool note(AddressMap<uint64_t>& notes, uint64_t key, uint64_t other) {
    if (other) notes.insert_or_assign(key, other);
    return other != 0;
  }
  static LiveEntry compact(const LiveAlloc& a) {
    return LiveEntry{a.size, a.time_ns, a.stack_id, a.python_stack_id, a.tid, a.device, a.api, a.kind, false};
  }
  static LiveAlloc view(const LiveEntry& a, uint64_t address, uint64_t handle) {
    return LiveAlloc{address, a.size, handle, a.time_ns, a.stack_id, a.tid, a.device, a.api, a.kind, a.python_stack_id};
  }

  uint64_t granule_;
  bool live_set_only_;
  std::map<int32_t, DeviceState> devices_;
  // The device dev() found last; forgotten when the Replayer is copied or moved.
  struct LastDevice {
    DeviceState* state = nullptr;
    LastDevice() = default;
    LastDevice(const LastDevice&) {}
    LastDevice& operator=(const LastDevice&) {
      state = nullptr;
      return *this;
    }
  } last_;
  // The live set is the ledger's: allocations by address hashed (address_map.h: a tree
  // was a fifth of a replay, a node-based hash a quarter of `report`; live() sorts what it
  // returns by address), handles, mappings, reservations and graph nodes in ordered maps.
  std::vector<FailedAlloc> failed_;
  // Per thread, its last failure (index into failed_) not yet recovered from; a replay
  // restored from a checkpoint starts without (it does not report failures).
  std::unordered_map<uint32_t, size_t> unrecovered_;
  // The notes of LiveEntry::has_other: an allocation's handle by its address, a handle's
  // address by its handle, a reservation's handle by its address.
  AddressMap<uint64_t> alloc_handles_, handle_addresses_, reservation_handles_;
  std::vector<LiveWatcher*> watchers_;
};

// The whole trace, replayed.
Replayer replay(const Trace& trace);

// Replays the events with time_ns <= t (in file order).
Replayer replay_until(const Trace& trace, uint64_t t);
// The same over `events` (event_source.h), laid out in `granule`.
Replayer replay_until(const EventSource& events, uint64_t granule, uint64_t t);

// Second pass in general: for each (event index, device) stop, the allocations holding
// device memory live on that device just after that event; keyed by the stop's position
// in `stops`.
// `events` (event_source.h) are replayed laid out in `granule`.
// With `to_end`, a fresh Replayer made with live_set_only, the replay goes on to the last
// event into it, so that what is live at the end needs no other replay kept beside this one.
std::vector<std::vector<LiveAlloc>> live_after(const EventSource& events, uint64_t granule,
                                               const std::vector<std::pair<size_t, int32_t>>& stops,
                                               Replayer* to_end = nullptr);
// The replay behind live_after, for a reader that sums rather than copies: at(k, r) is called
// just after the event at stops[k].first, with r replayed to there (its live set read in
// place, for_each_live), the stops of one event in the order given. `to_end` as above.
void replay_to_stops(const EventSource& events, uint64_t granule, const std::vector<size_t>& stops,
                     const std::function<void(size_t, const Replayer&)>& at, Replayer* to_end = nullptr);
// What live_after copies at a stop: the allocations of `r` holding device memory on `device`.
std::vector<LiveAlloc> live_holding(const Replayer& r, int32_t device);
// The same, one at a time and in no particular order.

template <class F>
void for_each_holding(const Replayer& r, int32_t device, F&& f) {
  r.for_each_live([&](const LiveAlloc& a) {
    if (a.device == device && format::holds_device_memory(a.kind)) f(a);
  });
}

}  // namespace cumemtrace
