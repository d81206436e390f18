// The accounting rules of the live picture, written once: what each event does to the
// allocations, VMM handles, mappings and reservations that are live, and to each
// device's figures. The tracer (interpose/track/tracker_ledger.h: the figures its snapshots
// carry) and the replay (analysis/replay/replay.h: every figure a report prints) both apply
// events through this class, as both lay out gaps through arena_rules.h, so that the
// two can never count a kind of memory differently.
//
// The rules (one event at a time):
//   - A failed call changes nothing, except an allocation flagged kEventRestored: the
//     free just before it failed, so the memory is back.
//   - An allocation made on a stream under capture (kEventCaptured) is a graph memory
//     node: no memory when made; its address is remembered so that its frees, captured
//     or not, are known. A captured free of an ordinary allocation runs with the graph,
//     unseen: not applied.
//   - Device, pitch, managed, async-pool, host-pinned, array and ipc-import (by address)
//     allocations pair with their frees by address. A live address allocated again means
//     its free was missed (made before the tracer loaded, or events lost): the old one
//     goes first, counted as an anomaly.
//   - A vmm-physical allocation is a cuMemCreate handle (address 0); an ipc-import with
//     address 0 is a cuMemImportFromShareableHandle handle, another process's memory whose
//     size is learnt at its first map. A handle holds its bytes until it is released by
//     every reference (cuMemCreate's and each kRetain's) AND no mapping of it remains. A
//     handle value made again while live is an anomaly: the old one goes first.
//   - A map lays a handle into reserved address space: the mapping is what the gap index
//     sees, never the handle; a mapping of an imported handle is counted nowhere. An unmap
//     may cover several mappings made by separate maps; a map over a live mapping unmaps
//     that one first (an anomaly).
//   - A reservation is address space only: reserved_bytes, never live_bytes.
//   - A free, release, unmap, reserve free or retain of nothing live is "unknown": counted
//     by the caller, never applied.
// The caller gives each event's device: the replay reads it from the trace; the tracer
// works it out first (a map's is its handle's) and completes frees from what they name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

#include "cumemtrace/rules/address_map.h"
#include "cumemtrace/rules/flat_fragmentation.h"
#include "cumemtrace/trace_format.h"

namespace cumemtrace::ledger {

// A device's figures, in bytes and counts, as both sides keep them.
struct Figures {
  explicit Figures(uint64_t granule) : frag(granule) {}
  uint64_t live_bytes[format::kKindCount] = {};  // by kind; vmm-physical: bytes a handle still holds
  uint64_t live_count[format::kKindCount] = {};
  uint64_t device_bytes = 0;    // sum over holds_device_memory kinds: tracked device bytes
  uint64_t reserved_bytes = 0;  // VMM address space reserved; no memory
  uint64_t reserved_count = 0;  // reservations live
  FlatFragmentationIndex frag;  // counts_for_fragmentation kinds (empty when the caller keeps no gaps)
};

// What the rules read of an event (format::EventRecord and the reader's Event alike).
struct Entry {
  format::Op op{};
  format::Kind kind{};
  int32_t result = 0;
  uint32_t flags = 0;
  uint64_t address = 0, size = 0, handle = 0;
  int32_t device = -1;
};
template <class E>
Entry entry_of(const E& e) {
  return {format::Op(e.op), format::Kind(e.kind), int32_t(e.result), uint32_t(e.flags), e.address, e.size,
          e.handle,         int32_t(e.device)};
}

enum class Step : uint8_t {
  kNone,     // moves no bytes: trims, contexts, shares, graph launches, an op of a newer writer
  kFailed,   // a failed call: nothing changed
  kGraph,    // a graph memory node made or freed, or a captured free: remembered, not applied
  kApplied,  // the live picture changed
  kUnknown,  // names nothing live (a free, release, unmap, reserve free or retain)
};

// What an event named, when it named something live (a free's allocation, a release's or
// retain's handle, an unmap's first mapping, a reserve free's reservation, a share's).
struct Named {
  bool found = false;
  int32_t device = -1;
  format::Kind kind = format::Kind::kUnknown;
  uint64_t size = 0;  // bytes
};

struct Outcome {
  Step step = Step::kNone;
  Named named;
  uint32_t anomalies = 0;  // set right on the event's device: an address, handle or range live twice
  bool remapped = false;   // a map over a live mapping unmapped that one first
};

template <class Alloc>
struct Handle {
  Alloc alloc;
  uint32_t references = 1;  // cuMemCreate's, plus one per retain (kRetain)
  uint32_t maps = 0;
  bool released() const { return references == 0; }
  bool imported() const { return alloc.kind == format::Kind::kIpcImport; }
};
struct Mapping {
  uint64_t size = 0;  // bytes
  uint64_t handle = 0;
  int32_t device = -1;
  bool imported = false;  // of an imported handle: never counted, so never taken off
};
struct GraphNode {
  uint64_t size = 0;  // bytes
  int32_t device = -1;
};

inline bool pairs_by_address(format::Kind k) {
  using format::Kind;
  return k == Kind::kDevice || k == Kind::kPitch || k == Kind::kManaged || k == Kind::kAsyncPool ||
         k == Kind::kHostPinned || k == Kind::kArray || k == Kind::kIpcImport;
}
// Whether an allocation of `k` is kept by its handle (cuMemCreate's, or an imported
// physical handle, which has no address) rather than by its address.
inline bool keyed_by_handle(format::Kind k, uint64_t address, uint64_t handle) {
  return k == format::Kind::kVmmPhysical || (k == format::Kind::kIpcImport && address == 0 && handle != 0);
}
inline size_t kind_index(format::Kind k) {
  const size_t i = static_cast<size_t>(k);
  return i < format::kKindCount ? i : 0;
}

// Derived (CRTP, no virtual call on the tracer's path) provides:
//   Device& ledger_device(int32_t)             its device, made on first use
//   bool ledger_keeps_gaps() const            whether Figures::frag is kept
//   void ledger_added(Device&, const Alloc&)  after an allocation's or handle's bytes were added
// and may provide (the default does nothing):
//   void ledger_removed(Device&, const Alloc&)  after an allocation's or handle's bytes were taken away
//   void ledger_keyed(const Alloc&, bool by_handle, uint64_t key, bool added)  at both moments, with
//       what the entry is kept by: its handle (keyed_by_handle) or its address
// Alloc has `size` (bytes), `device` and `kind`; Device derives from Figures.
template <class Derived, class Alloc, class Device>
class Ledger {
 public:
  // The defaults of the optional call backs (above): Derived's own hide them.
  void ledger_removed(Device&, const Alloc&) {}
  void ledger_keyed(const Alloc&, bool, uint64_t, bool) {}

  // Applies `e`. make(kind) builds the record of what the event makes; called only then.
  template <class Make>
  Outcome apply(const Entry& e, Make&& make) {
    using format::Kind;
    using format::Op;
    Outcome o;
    const bool restored = e.flags & format::kEventRestored;
    if (e.result != 0 && !(restored && e.op == Op::kAlloc)) {
      o.step = Step::kFailed;
      return o;
    }
    if (graph(e, o)) return o;
    switch (e.op) {
      case Op::kAlloc: alloc(e, make, o); break;
      case Op::kFree: free(e, o); break;
      case Op::kMap: map(e, o); break;
      case Op::kUnmap: unmap(e.address, e.size, o); break;
      case Op::kReserve: {
        if (auto old = reservations_.find(e.address); old != reservations_.end()) {
          Device& owner = device(old->second.device);
          owner.reserved_bytes -= old->second.size;
          --owner.reserved_count;
          reservations_.erase(old);
          ++o.anomalies;
        }
        reservations_.insert_or_assign(e.address, make(Kind::kVmmReserve));
        Device& d = device(e.device);
        d.reserved_bytes += e.size;
        ++d.reserved_count;
        o.step = Step::kApplied;
        break;
      }
      case Op::kReserveFree: {
        auto it = reservations_.find(e.address);
        if (it == reservations_.end()) {
          o.step = Step::kUnknown;
          break;
        }
        o.named = {true, it->second.device, Kind::kVmmReserve, it->second.size};
        Device& owner = device(it->second.device);
        owner.reserved_bytes -= it->second.size;
        --owner.reserved_count;
        reservations_.erase(it);
        o.step = Step::kApplied;
        break;
      }
      case Op::kRetain: {
        auto h = handles_.find(e.handle);
        if (h == handles_.end()) {
          o.step = Step::kUnknown;
          break;
        }
        o.named = named(h->second.alloc);
        ++h->second.references;  // one more release to go
        o.step = Step::kApplied;
        break;
      }
      default: break;
    }
    return o;
  }

  // What a share (an export) names: a handle when it gives no address, else an allocation.
  Named share_names(uint64_t address, uint64_t handle) const {
    if (!address) {
      if (auto h = handles_.find(handle); h != handles_.end()) return named(h->second.alloc);
    } else if (const Alloc* a = by_address_.find(address)) {
      return named(*a);
    }
    return {};
  }
  // The device of a live handle; -1 when none is live.
  int32_t handle_device(uint64_t handle) const {
    auto h = handles_.find(handle);
    return h != handles_.end() ? h->second.alloc.device : -1;
  }

  // Live allocations paired by address.
  const AddressMap<Alloc>& allocations() const { return by_address_; }
  Alloc* allocation(uint64_t address) { return by_address_.find(address); }
  // Live handles (by handle value), reservations (by address).
  const std::map<uint64_t, Handle<Alloc>>& handles() const { return handles_; }
  const std::map<uint64_t, Alloc>& reservations() const { return reservations_; }

 protected:
  AddressMap<Alloc> by_address_;  // no node per allocation (address_map.h)
  std::map<uint64_t, Handle<Alloc>> handles_;
  std::map<uint64_t, Mapping> mappings_;  // by address, ordered for unmaps spanning mappings
  std::map<uint64_t, Alloc> reservations_;
  std::map<uint64_t, GraphNode> graph_;  // graph memory nodes, by address

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
  Device& device(int32_t d) { return self().ledger_device(d); }
  static Named named(const Alloc& a) { return {true, a.device, a.kind, a.size}; }

  // `key`: the entry's handle when `by_handle`, else its address (a handle has no place in
  // the gap index: address 0 there, as it always was).
  void add(Device& d, const Alloc& a, bool by_handle, uint64_t key, Outcome& o) {
    const uint64_t address = by_handle ? 0 : key;
    d.live_bytes[kind_index(a.kind)] += a.size;
    d.live_count[kind_index(a.kind)] += 1;
    if (format::holds_device_memory(a.kind)) d.device_bytes += a.size;
    if (format::counts_for_fragmentation(a.kind) && self().ledger_keeps_gaps() && !d.frag.insert(address, a.size))
      ++o.anomalies;
    self().ledger_added(d, a);
    self().ledger_keyed(a, by_handle, key, true);
  }
  void remove(Device& d, const Alloc& a, bool by_handle, uint64_t key) {
    const uint64_t address = by_handle ? 0 : key;
    d.live_bytes[kind_index(a.kind)] -= a.size;
    d.live_count[kind_index(a.kind)] -= 1;
    if (format::holds_device_memory(a.kind)) d.device_bytes -= a.size;
    if (format::counts_for_fragmentation(a.kind) && self().ledger_keeps_gaps()) d.frag.erase(address);
    self().ledger_removed(d, a);
    self().ledger_keyed(a, by_handle, key, false);
  }

  bool graph(const Entry& e, Outcome& o) {
    using format::Op;
    if (e.op == Op::kAlloc && (e.flags & format::kEventCaptured)) {
      graph_.insert_or_assign(e.address, GraphNode{e.size, e.device});
      o.step = Step::kGraph;
      return true;
    }
    if (e.op == Op::kAlloc && !graph_.empty()) graph_.erase(e.address);  // ordinary memory now
    if (e.op != Op::kFree) return false;
    // A graph node's address stays the graph's: each launch makes an escaped allocation
    // live again, and the program frees it after each launch.
    if (auto g = graph_.find(e.address); g != graph_.end()) {
      o.named = {true, g->second.device, format::Kind::kAsyncPool, g->second.size};
    } else if (!(e.flags & format::kEventCaptured)) {
      return false;
    } else if (const Alloc* a = by_address_.find(e.address)) {
      o.named = named(*a);
    }
    o.step = Step::kGraph;
    return true;
  }

  template <class Make>
  void alloc(const Entry& e, Make& make, Outcome& o) {
    using format::Kind;
    if (keyed_by_handle(e.kind, e.address, e.handle)) {
      if (auto old = handles_.find(e.handle); old != handles_.end()) {
        remove(device(old->second.alloc.device), old->second.alloc, true, e.handle);
        handles_.erase(old);
        ++o.anomalies;
      }
      const Alloc& a = handles_.insert_or_assign(e.handle, Handle<Alloc>{make(e.kind)}).first->second.alloc;
      add(device(e.device), a, true, e.handle, o);
      o.step = Step::kApplied;
      return;
    }
    if (!pairs_by_address(e.kind)) return;
    if (const Alloc* old = by_address_.find(e.address)) {  // its free was missed
      remove(device(old->device), *old, false, e.address);
      by_address_.erase(e.address);
      ++o.anomalies;
    }
    by_address_.insert_or_assign(e.address, make(e.kind));
    add(device(e.device), *by_address_.find(e.address), false, e.address, o);
    o.step = Step::kApplied;
  }

  void free(const Entry& e, Outcome& o) {
    o.step = Step::kUnknown;
    if (e.flags & format::kEventUnknownAddress) return;
    // cuMemRelease names a handle, not an address.
    if (e.kind == format::Kind::kVmmPhysical || (e.address == 0 && e.handle != 0)) {
      auto it = handles_.find(e.handle);
      if (it == handles_.end()) return;
      o.named = named(it->second.alloc);
      if (it->second.released()) return;  // more releases than references
      --it->second.references;
      drop_handle_if_gone(it);
      o.step = Step::kApplied;
      return;
    }
    const Alloc* a = by_address_.find(e.address);
    if (!a) return;
    o.named = named(*a);
    remove(device(a->device), *a, false, e.address);
    by_address_.erase(e.address);
    o.step = Step::kApplied;
  }

  void drop_handle_if_gone(typename std::map<uint64_t, Handle<Alloc>>::iterator it) {
    if (!it->second.released() || it->second.maps > 0) return;
    remove(device(it->second.alloc.device), it->second.alloc, true, it->first);
    handles_.erase(it);
  }

  void map(const Entry& e, Outcome& o) {
    using format::Kind;
    if (auto old = mappings_.find(e.address); old != mappings_.end()) {
      ++o.anomalies;
      o.remapped = true;
      Outcome undone;
      unmap(e.address, old->second.size, undone);
    }
    auto h = handles_.find(e.handle);
    const bool imported = h != handles_.end() && h->second.imported();
    mappings_[e.address] = Mapping{e.size, e.handle, e.device, imported};
    if (h != handles_.end()) ++h->second.maps;
    o.step = Step::kApplied;
    if (imported) {
      // Another process's memory seen through this range: neither mapped bytes nor gaps
      // here. Its bytes are learnt at its first mapping.
      if (Alloc& a = h->second.alloc; a.size == 0) {
        Device& owner = device(a.device);
        remove(owner, a, true, e.handle);
        a.size = e.size;
        add(owner, a, true, e.handle, o);
      }
      return;
    }
    Device& d = device(e.device);
    if (self().ledger_keeps_gaps() && !d.frag.insert(e.address, e.size)) ++o.anomalies;
    d.live_bytes[kind_index(Kind::kVmmMap)] += e.size;
    d.live_count[kind_index(Kind::kVmmMap)] += 1;
  }

  // Every mapping starting in [address, address + size) (size 0: the one at `address`).
  void unmap(uint64_t address, uint64_t size, Outcome& o) {
    const uint64_t end = address + (size ? size : 1);
    auto it = mappings_.lower_bound(address);
    if (it == mappings_.end() || it->first >= end) {
      o.step = Step::kUnknown;
      return;
    }
    o.named = {true, it->second.device, format::Kind::kVmmMap, it->second.size};
    o.step = Step::kApplied;
    while (it != mappings_.end() && it->first < end) {
      // Whether it was counted is the mapping's own fact: its handle may be gone or reused.
      if (!it->second.imported) {
        Device& owner = device(it->second.device);
        if (self().ledger_keeps_gaps()) owner.frag.erase(it->first);
        owner.live_bytes[kind_index(format::Kind::kVmmMap)] -= it->second.size;
        owner.live_count[kind_index(format::Kind::kVmmMap)] -= 1;
      }
      if (auto h = handles_.find(it->second.handle); h != handles_.end()) {
        if (h->second.maps > 0) --h->second.maps;
        drop_handle_if_gone(h);
      }
      it = mappings_.erase(it);
    }
  }
};

}  // namespace cumemtrace::ledger
