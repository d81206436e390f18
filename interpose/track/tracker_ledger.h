// The tracker's use of the shared ledger (cumemtrace/rules/ledger.h): it completes each event
// as the program made it (the device, kind and size of what a free, release, retain,
// unmap or share names; a trim's pool's device; a map's handle's device), flags what
// names nothing live, and keeps what only the tracer reports: each device's peak as
// first reached, the peak since cumemtrace_reset_peak(), the sampled peak, and who made
// each allocation (stack, reset epoch, context) for the C API.
//
// No lock, no driver call, no allocation per event beyond the ledger's maps: the
// tracker calls it under its mutex. A header so that the differential test
// (test/analysis/replay/ledger_differential_test.cpp) drives the very code the tracer runs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "cumemtrace/rules/ledger.h"
#include <cumemtrace/trace_format.h>

namespace cumemtrace::interpose {

struct Allocation {
  uint64_t size;  // bytes
  int32_t device;
  format::Kind kind;
  uint32_t stack;             // for cumemtrace_live_sites (api.h)
  uint32_t epoch;             // cumemtrace_reset_peak() calls before it was made
  uint64_t context = 0;       // the cuCtxCreate context it was made in; 0: its device's primary
  uint32_t python_stack = 0;  // its Python stack (PyStackTree id), for cumemtrace_live_sites_python
  uint64_t serial = 0;        // allocations made before it, this one counted: 1 for the first
};

struct TrackedDevice : ledger::Figures {
  explicit TrackedDevice(uint64_t granule) : Figures(granule) {}
  uint64_t peak = 0, peak_time = 0;  // highest device_bytes (bytes), and when it was first reached (ns)
  uint64_t peak_since_reset = 0;     // for cumemtrace_stats (api.h): since cumemtrace_reset_peak()
  // What was live at that peak (cumemtrace_peak_sites_python), kept once a reset was asked
  // for: the allocations made up to the one that reached it (by serial) and live still,
  // and those freed since, at most as many as were live then.
  uint64_t peak_since_reset_serial = 0;
  std::vector<Allocation> freed_since_peak;
  uint64_t sampled_peak = 0;  // device_bytes at the last kSampledPeak snapshot

  // What a snapshot carries (DeviceSnapshot::live_count): every live entry, reservations
  // included (their bytes are the vmm-reserve kind's live bytes there).
  uint64_t snapshot_live_count() const {
    uint64_t n = reserved_count;
    for (uint64_t c : live_count) n += c;
    return n;
  }
};

// The kinds whose memory a context's teardown frees with it: cuMemAlloc's,
// cuMemAllocPitch's and CUDA arrays (cuda.h, cuCtxDestroy: "all resources allocated
// in the context"; the simulated driver does the same). Stream-
// ordered pools and VMM memory outlive a context; managed and pinned host memory are left
// live, since their fate at a teardown is not pinned down by a driver we can test against.
inline bool owned_by_context(format::Kind k) {
  return k == format::Kind::kDevice || k == format::Kind::kPitch || k == format::Kind::kArray;
}

class TrackerLedger : public ledger::Ledger<TrackerLedger, Allocation, TrackedDevice> {
 public:
  explicit TrackerLedger(uint64_t granule) : granule_(granule) {}

  std::map<int32_t, TrackedDevice> devices;
  std::unordered_map<uint64_t, int32_t> pool_devices;  // memory pool -> device ordinal
  uint64_t peak_rises = 0;                             // times some device's peak rose
  uint32_t epoch = 0;                                  // cumemtrace_reset_peak() calls
  // What each device's peak since a reset held is kept once the C API asked for a "since"
  // (cumemtrace_reset_peak, even before the first CUDA call): a program that never asks
  // keeps nothing per free.
  bool keep_peak_sites = false;

  TrackedDevice& device(int32_t d) { return devices.try_emplace(d, granule_).first->second; }

  // Updates the live picture and completes `ev` (device, kind, size of what it names).
  // `python_stack`: the event's Python stack, kept with what it allocates.
  void apply(format::EventRecord& ev, uint32_t python_stack = 0) {
    using format::Kind;
    using format::Op;
    const auto op = Op(ev.op);
    if (op == Op::kPoolTrim) {
      const auto pool = pool_devices.find(ev.handle);
      ev.device = pool != pool_devices.end() ? pool->second : -1;
    }
    if (op == Op::kShare) {
      // A mark on what it names: completed; no bytes move. Naming nothing live, it
      // touches no device.
      const ledger::Named n = share_names(ev.address, ev.handle);
      if (!n.found) return unknown(ev);
      complete(ev, n);
    }
    device(ev.device);  // even a failed call puts its device in the snapshots
    if (op == Op::kMap && ev.result == 0) ev.device = handle_device(ev.handle);
    now_ = ev.time_ns;
    const ledger::Outcome o = ledger::Ledger<TrackerLedger, Allocation, TrackedDevice>::apply(
        ledger::entry_of(ev),
        [&](Kind k) { return Allocation{ev.size, ev.device, k, ev.stack_id, epoch, 0, python_stack, ++serials_}; });
    switch (o.step) {
      case ledger::Step::kApplied:
        if (op == Op::kFree || op == Op::kRetain) complete(ev, o.named);
        if (op == Op::kUnmap) ev.device = o.named.device;  // its first mapping's
        if (op == Op::kAlloc && ev.handle && Kind(ev.kind) == Kind::kAsyncPool) pool_devices[ev.handle] = ev.device;
        break;
      case ledger::Step::kGraph:
        if (!o.named.found) break;
        complete(ev, o.named);
        break;
      case ledger::Step::kUnknown:
        if (o.named.found) complete(ev, o.named);  // a handle released more than retained
        unknown(ev);
        break;
      case ledger::Step::kNone:
      case ledger::Step::kFailed: break;
    }
  }

  // Whether the allocation just applied lifts its device past the last sampled peak by
  // the margin (trace_format.h: sampled_peak_margin); if so, that is the new sampled peak.
  bool crosses_sampled_peak(const format::EventRecord& ev) {
    using format::Op;
    if (Op(ev.op) != Op::kAlloc || ev.result != 0 || !format::holds_device_memory(format::Kind(ev.kind))) return false;
    TrackedDevice& ds = device(ev.device);
    if (ds.device_bytes < ds.sampled_peak + format::sampled_peak_margin(ds.sampled_peak)) return false;
    ds.sampled_peak = ds.device_bytes;
    return true;
  }

  // The live allocations a teardown of `context` (0: `device`'s primary context) takes,
  // in address order, so that a trace of the same run always reads the same. The list is
  // as long as what the context held; a teardown is rare (once per device and process).
  std::vector<uint64_t> torn_down(int32_t device, uint64_t context) const {
    std::vector<uint64_t> doomed;
    allocations().for_each([&](uint64_t address, const Allocation& a) {
      if (a.context == context && a.device == device && owned_by_context(a.kind)) doomed.push_back(address);
    });
    std::sort(doomed.begin(), doomed.end());
    return doomed;
  }

  // Calls f(allocation) for each live allocation holding device memory made since the
  // last reset_peak() (cumemtrace_stats and cumemtrace_live_sites count the same set).
  template <class F>
  void each_since_reset(F f) const {
    allocations().for_each([&](uint64_t, const Allocation& a) {
      if (a.epoch == epoch && format::holds_device_memory(a.kind)) f(a);
    });
    for (const auto& [handle, h] : handles())
      if (h.alloc.epoch == epoch && !h.imported()) f(h.alloc);
  }

  // Calls f(allocation) for each allocation holding device memory made since the last
  // reset_peak() that was live when its device reached its peak since then: live still and
  // made up to the one that reached it, or freed since (cumemtrace_peak_sites_python).
  template <class F>
  void each_at_peak_since_reset(F f) const {
    if (!keep_peak_sites) return;
    each_since_reset([&](const Allocation& a) {
      const auto d = devices.find(a.device);
      if (d != devices.end() && a.serial <= d->second.peak_since_reset_serial) f(a);
    });
    for (const auto& [ordinal, d] : devices)
      for (const Allocation& a : d.freed_since_peak) f(a);
  }

  // A new "since" (cumemtrace_reset_peak): each device's peak is what is live now, of
  // which nothing was made since.
  void reset_peak() {
    ++epoch;
    keep_peak_sites = true;
    for (auto& [d, ds] : devices) {
      ds.peak_since_reset = ds.device_bytes;
      ds.peak_since_reset_serial = serials_;
      ds.freed_since_peak.clear();
    }
  }

  // The ledger's calls back (ledger.h).
  TrackedDevice& ledger_device(int32_t d) { return device(d); }
  bool ledger_keeps_gaps() const { return true; }
  void ledger_added(TrackedDevice& d, const Allocation& a) {
    if (!format::holds_device_memory(a.kind)) return;
    if (d.device_bytes > d.peak_since_reset) {
      d.peak_since_reset = d.device_bytes;
      d.peak_since_reset_serial = a.serial;
      d.freed_since_peak.clear();  // freed before this peak: not live at it
    }
    if (d.device_bytes <= d.peak) return;
    d.peak = d.device_bytes, d.peak_time = now_;
    ++peak_rises;
  }
  void ledger_removed(TrackedDevice& d, const Allocation& a) {
    if (keep_peak_sites && a.epoch == epoch && format::holds_device_memory(a.kind) &&
        a.serial <= d.peak_since_reset_serial)
      d.freed_since_peak.push_back(a);
  }

 private:
  static void complete(format::EventRecord& ev, const ledger::Named& n) {
    ev.device = n.device;
    ev.kind = uint8_t(n.kind);
    ev.size = n.size;
  }
  static void unknown(format::EventRecord& ev) {
    ev.flags |= format::kEventUnknownAddress;
    ev.kind = uint8_t(format::Kind::kUnknown);
  }

  uint64_t granule_;      // bytes
  uint64_t now_ = 0;      // the event being applied's time_ns
  uint64_t serials_ = 0;  // allocations made (Allocation::serial)
};

}  // namespace cumemtrace::interpose
