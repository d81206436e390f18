#include "replay.h"

#include "progress.h"

#include <algorithm>
#include <tuple>

namespace cumemtrace {

using format::Kind;
using format::Op;

namespace {

bool pairs_by_address(Kind k) {
  return k == Kind::kDevice || k == Kind::kPitch || k == Kind::kManaged || k == Kind::kAsyncPool ||
         k == Kind::kHostPinned || k == Kind::kArray || k == Kind::kIpcImport;
}

size_t kind_index(Kind k) {
  const size_t i = static_cast<size_t>(k);
  return i < format::kKindCount ? i : 0;
}

}  // namespace

DeviceState& Replayer::dev(int32_t d) {
  if (last_.state && last_.state->device == d) return *last_.state;  // an event asks 2-3 times
  auto it = devices_.find(d);
  if (it == devices_.end()) it = devices_.emplace(d, DeviceState(d, granule_)).first;
  last_.state = &it->second;  // map nodes never move
  return it->second;
}

void Replayer::add_live(DeviceState& s, const LiveAlloc& a) {
  s.live_bytes[kind_index(a.kind)] += a.size;
  s.live_count[kind_index(a.kind)] += 1;
  if (format::holds_device_memory(a.kind)) s.device_bytes += a.size;
  if (live_set_only_) return;
  if (format::counts_for_fragmentation(a.kind) && !s.frag.insert(a.address, a.size)) ++s.counts.anomalies;
  const uint64_t pinned = s.live_bytes[kind_index(Kind::kHostPinned)];
  if (a.kind == Kind::kHostPinned && pinned > s.peak_pinned_bytes) {
    s.peak_pinned_bytes = pinned;
    s.peak_pinned_time_ns = a.time_ns;
  }
  const uint64_t imported = s.live_bytes[kind_index(Kind::kIpcImport)];
  if (a.kind == Kind::kIpcImport) s.peak_import_bytes = std::max(s.peak_import_bytes, imported);
}

void Replayer::remove_live(DeviceState& s, const LiveAlloc& a) {
  s.live_bytes[kind_index(a.kind)] -= a.size;
  s.live_count[kind_index(a.kind)] -= 1;
  if (format::holds_device_memory(a.kind)) s.device_bytes -= a.size;
  if (format::counts_for_fragmentation(a.kind) && !live_set_only_) s.frag.erase(a.address);
}

void Replayer::apply(const Event& e, size_t index) {
  if (e.op == Op::kShare && e.device < 0) return;  // an export of memory never seen: no device to count it on
  DeviceState& s = dev(e.device);
  if (graph(e)) return observe(s, e, index);
  switch (e.op) {
    case Op::kAlloc: alloc(e, index); break;
    case Op::kFree: free(e); break;
    case Op::kMap: map(e); break;
    case Op::kUnmap: unmap(e); break;
    case Op::kReserve:
      if (e.result != 0) break;
      ++s.counts.reserves;
      if (auto old = reservations_.find(e.address); old != reservations_.end()) {
        dev(old->second.device).reserved_bytes -= old->second.size;
        reservations_.erase(old);
        ++s.counts.anomalies;
      }
      reservations_[e.address] = LiveAlloc{e.address, e.size, e.handle, e.time_ns, e.stack_id,
                                           e.tid, e.device, e.api, Kind::kVmmReserve, e.python_stack_id};
      s.reserved_bytes += e.size;
      if (s.reserved_bytes > s.peak_reserved_bytes) s.peak_reserved_bytes = s.reserved_bytes;
      break;
    case Op::kReserveFree:
      if (e.result != 0) break;
      if (auto it = reservations_.find(e.address); it != reservations_.end()) {
        DeviceState& owner = dev(it->second.device);
        owner.reserved_bytes -= it->second.size;
        ++owner.counts.reserve_frees;
        reservations_.erase(it);
      } else {
        ++s.counts.unknown_frees;
      }
      break;
    case Op::kPoolTrim: ++s.counts.pool_trims; break;
    case Op::kRetain:
      // One more reference to a physical handle: it takes one more release to go.
      if (e.result != 0) break;
      if (auto h = handles_.find(e.handle); h != handles_.end()) ++h->second.references;
      break;
    case Op::kContextCreate:
      if (e.result != 0) break;
      ++s.counts.contexts;
      s.context_bytes += e.size;
      break;
    case Op::kShare:
      if (e.result == 0 && !(e.flags & format::kEventUnknownAddress)) ++s.counts.shares;
      break;
    default: break;  // an op from a newer writer: nothing we can replay
  }
  observe(dev(e.device), e, index);
}

void Replayer::alloc(const Event& e, size_t index) {
  DeviceState& s = dev(e.device);
  // A restore: the free just before failed, so the memory is back and was never freed.
  const bool restored = e.flags & format::kEventRestored;
  if (restored) {
    --s.counts.frees;
  } else if (e.result != 0) {
    ++s.counts.failed;
    failed_.push_back(FailedAlloc{index, e, s.device_bytes});
    return;
  }
  LiveAlloc a{e.address, e.size, e.handle, e.time_ns, e.stack_id, e.tid, e.device, e.api, e.kind, e.python_stack_id};
  // cuMemImportFromShareableHandle: a physical handle of another process's memory, released
  // like one; its bytes come with its first mapping (map()).
  const bool imported_handle = e.kind == Kind::kIpcImport && e.address == 0 && e.handle != 0;
  if (e.kind == Kind::kVmmPhysical || imported_handle) {
    if (auto old = handles_.find(e.handle); old != handles_.end()) {
      // A handle value reused while we still thought it alive: events were lost.
      remove_live(dev(old->second.alloc.device), old->second.alloc);
      handles_.erase(old);
      ++s.counts.anomalies;
    }
    handles_[e.handle] = Handle{a, 1, 0};
    add_live(s, a);
    if (!restored) ++s.counts.allocs;
    if (imported_handle && !restored) ++s.counts.imports;
    return;
  }
  if (!pairs_by_address(e.kind)) return;
  if (const LiveAlloc* old = by_address_.find(e.address)) {
    remove_live(dev(old->device), *old);
    by_address_.erase(e.address);
    ++s.counts.anomalies;
  }
  by_address_.insert_or_assign(e.address, a);
  add_live(s, a);
  if (!restored) ++s.counts.allocs;
  if (e.kind == Kind::kIpcImport && !restored) {
    ++s.counts.imports;
    // The exporter's pid, when the trace knows it (trace_format.h: EventRecord::handle).
    if (e.handle && std::find(s.import_pids.begin(), s.import_pids.end(), e.handle) == s.import_pids.end())
      s.import_pids.push_back(uint32_t(e.handle));
  }
}

void Replayer::free(const Event& e) {
  DeviceState& s = dev(e.device);
  if (e.result != 0) return;  // a failed free leaves the memory where it was
  if (e.flags & format::kEventUnknownAddress) {
    ++s.counts.unknown_frees;
    return;
  }
  // cuMemRelease names a handle, not an address.
  if (e.kind == Kind::kVmmPhysical || (e.address == 0 && e.handle != 0)) {
    auto it = handles_.find(e.handle);
    if (it == handles_.end() || it->second.released()) {
      ++s.counts.unknown_frees;
      return;
    }
    --it->second.references;
    ++dev(it->second.alloc.device).counts.frees;
    drop_handle_if_gone(it);
    return;
  }
  const LiveAlloc* it = by_address_.find(e.address);
  if (!it) {
    ++s.counts.unknown_frees;
    return;
  }
  DeviceState& owner = dev(it->device);
  remove_live(owner, *it);
  ++owner.counts.frees;
  by_address_.erase(e.address);
}

bool Replayer::graph(const Event& e) {
  if (e.result != 0 && !(e.flags & format::kEventRestored)) return false;
  if (e.op == Op::kAlloc && (e.flags & format::kEventCaptured)) {
    graph_[e.address] = e.size;
    ++dev(e.device).counts.graph_allocs;
    return true;
  }
  if (e.op == Op::kAlloc) graph_.erase(e.address);  // the address is ordinary memory now
  if (e.op != Op::kFree) return false;
  // A graph node's address stays the graph's: each launch makes an escaped allocation live
  // again, and the program frees it after each launch (the tracker does the same).
  return graph_.count(e.address) == 1 || (e.flags & format::kEventCaptured);
}

void Replayer::drop_handle_if_gone(std::map<uint64_t, Handle>::iterator it) {
  if (!it->second.released() || it->second.maps > 0) return;
  remove_live(dev(it->second.alloc.device), it->second.alloc);
  handles_.erase(it);
}

void Replayer::map(const Event& e) {
  DeviceState& s = dev(e.device);
  if (e.result != 0) return;
  ++s.counts.maps;
  if (auto old = mappings_.find(e.address); old != mappings_.end()) {
    ++s.counts.anomalies;
    Event undo = e;
    undo.size = old->second.size;
    unmap(undo);
  }
  auto h = handles_.find(e.handle);
  const bool imported = h != handles_.end() && h->second.alloc.kind == Kind::kIpcImport;
  mappings_[e.address] = Mapping{e.size, e.handle, e.device, imported};
  if (h != handles_.end()) ++h->second.maps;
  if (imported) {
    // Another process's memory: not mapped bytes here, nor in fragmentation. Its bytes are
    // learnt at its first mapping, by the tracer and here alike.
    if (LiveAlloc& a = h->second.alloc; a.size == 0) {
      DeviceState& owner = dev(a.device);
      remove_live(owner, a);
      a.size = e.size;
      add_live(owner, a);
    }
    return;
  }
  if (!live_set_only_ && !s.frag.insert(e.address, e.size)) ++s.counts.anomalies;
  s.live_bytes[kind_index(Kind::kVmmMap)] += e.size;
  s.live_count[kind_index(Kind::kVmmMap)] += 1;
}

void Replayer::unmap(const Event& e) {
  DeviceState& s = dev(e.device);
  if (e.result != 0) return;
  // cuMemUnmap may cover several mappings made by separate cuMemMap calls.
  const uint64_t end = e.address + (e.size ? e.size : 1);
  auto it = mappings_.lower_bound(e.address);
  if (it == mappings_.end() || it->first >= end) {
    ++s.counts.unknown_frees;
    return;
  }
  ++s.counts.unmaps;
  while (it != mappings_.end() && it->first < end) {
    DeviceState& owner = dev(it->second.device);
    // Whether it was counted is the mapping's own fact: its handle may be gone or reused.
    auto h = handles_.find(it->second.handle);
    if (!it->second.imported) {
      if (!live_set_only_) owner.frag.erase(it->first);
      owner.live_bytes[kind_index(Kind::kVmmMap)] -= it->second.size;
      owner.live_count[kind_index(Kind::kVmmMap)] -= 1;
    }
    if (h != handles_.end()) {
      if (h->second.maps > 0) --h->second.maps;
      drop_handle_if_gone(h);
    }
    it = mappings_.erase(it);
  }
}

void Replayer::observe(DeviceState& s, const Event& e, size_t index) {
  if (live_set_only_) return;
  if (s.device_bytes > s.peak_bytes) {
    s.peak_bytes = s.device_bytes;
    s.peak_time_ns = e.time_ns;
    s.peak_event = index;
    s.frag_at_peak = s.frag.figures();
  }
  const FragmentationFigures f = s.frag.figures();
  if (s.gap_front.observe(f.arena_bytes, f.gap_ratio(), e.time_ns))
    std::tie(s.max_gap_ratio, s.max_gap_ratio_time_ns) = s.gap_front.max_over_significant();
}

std::vector<LiveAlloc> Replayer::live(int32_t device, bool all) const {
  std::vector<LiveAlloc> out;
  by_address_.for_each([&](uint64_t, const LiveAlloc& a) {
    if (all || a.device == device) out.push_back(a);
  });
  // In address order, as the callers have always had them (addresses are unique here).
  std::sort(out.begin(), out.end(), [](const LiveAlloc& a, const LiveAlloc& b) { return a.address < b.address; });
  for (const auto& [h, handle] : handles_)
    if (all || handle.alloc.device == device) out.push_back(handle.alloc);
  return out;
}

Replayer replay(const Trace& trace) {
  Replayer r(trace.granule());
  for (size_t i = 0; i < trace.events.size(); ++i) {
    if ((i & 0xfff) == 0) progress("replaying", i, trace.events.size());
    r.apply(trace.events[i], i);
  }
  return r;
}

Replayer replay_until(const Trace& trace, uint64_t t) {
  return replay_until(MemoryEvents(trace.events), trace.granule(), t);
}

Replayer replay_until(const EventSource& events, uint64_t granule, uint64_t t) {
  Replayer r(granule);
  const size_t n = events.size();
  events.scan([&](const Event& e, size_t i) {
    if ((i & 0xfff) == 0) progress("replaying", i, n);
    if (e.time_ns <= t) r.apply(e, i);
  });
  return r;
}

std::vector<std::vector<LiveAlloc>> live_after(const EventSource& events, uint64_t granule,
                                               const std::vector<std::pair<size_t, int32_t>>& stops) {
  std::vector<std::vector<LiveAlloc>> out(stops.size());
  std::multimap<size_t, size_t> order;  // event index -> position in stops
  for (size_t i = 0; i < stops.size(); ++i) order.emplace(stops[i].first, i);
  if (order.empty()) return out;
  Replayer r(granule, /*live_set_only=*/true);
  auto stop = order.begin();
  const size_t last = order.rbegin()->first + 1;
  // A source read from a file cannot stop early: past the last stop its events are skipped.
  events.scan([&](const Event& e, size_t i) {
    if (stop == order.end()) return;
    if ((i & 0xfff) == 0) progress("live sets", i, last);
    r.apply(e, i);
    for (; stop != order.end() && stop->first == i; ++stop)
      for (auto& a : r.live(stops[stop->second].second))
        if (format::holds_device_memory(a.kind)) out[stop->second].push_back(a);
  });
  return out;
}

}  // namespace cumemtrace
