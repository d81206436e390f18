#include "replay/replay.h"

#include "base/progress.h"

#include <algorithm>
#include <optional>
#include <tuple>

namespace cumemtrace {

using format::Kind;
using format::Op;

DeviceState& Replayer::dev(int32_t d) {
  if (last_.state && last_.state->device == d) return *last_.state;  // an event asks 2-3 times
  auto it = devices_.find(d);
  if (it == devices_.end()) it = devices_.emplace(d, DeviceState(d, granule_)).first;
  last_.state = &it->second;  // map nodes never move
  return it->second;
}

void Replayer::ledger_added(DeviceState& s, const LiveEntry& a) {
  if (live_set_only_) return;
  const uint64_t pinned = s.live_bytes[ledger::kind_index(Kind::kHostPinned)];
  if (a.kind == Kind::kHostPinned && pinned > s.peak_pinned_bytes) {
    s.peak_pinned_bytes = pinned;
    s.peak_pinned_time_ns = a.time_ns;
  }
  const uint64_t imported = s.live_bytes[ledger::kind_index(Kind::kIpcImport)];
  if (a.kind == Kind::kIpcImport) s.peak_import_bytes = std::max(s.peak_import_bytes, imported);
}

void Replayer::apply(const Event& e, size_t index) {
  if (e.op == Op::kShare && e.device < 0) return;  // an export of memory never seen: no device to count it on
  DeviceState& s = dev(e.device);
  const ledger::Outcome o = Ledger::apply(ledger::entry_of(e), [&](Kind k) { return entry_of(e, k); });
  forget_notes(e);
  count(s, e, o, index);
  observe(s, e, index);
}

LiveEntry Replayer::entry_of(const Event& e, Kind k) {
  LiveEntry a{e.size, e.time_ns, e.stack_id, e.python_stack_id, e.tid, e.device, e.api, k, false};
  // Which map the ledger puts it in (ledger.h): reservations, handles or allocations.
  if (k == Kind::kVmmReserve) a.has_other = note(reservation_handles_, e.address, e.handle);
  else if (ledger::keyed_by_handle(k, e.address, e.handle)) a.has_other = note(handle_addresses_, e.handle, e.address);
  else a.has_other = note(alloc_handles_, e.address, e.handle);
  return a;
}

void Replayer::forget_notes(const Event& e) {
  if (e.op != Op::kFree && e.op != Op::kReserveFree) return;
  if (!alloc_handles_.empty() && !by_address_.find(e.address)) alloc_handles_.erase(e.address);
  if (!handle_addresses_.empty() && !handles_.count(e.handle)) handle_addresses_.erase(e.handle);
  if (!reservation_handles_.empty() && !reservations_.count(e.address)) reservation_handles_.erase(e.address);
}

void Replayer::forget_allocations() {
  by_address_ = {};
  handles_.clear();
  mappings_.clear();
  reservations_.clear();
  graph_.clear();
  alloc_handles_ = {}, handle_addresses_ = {}, reservation_handles_ = {};
  for (auto& [d, s] : devices_) s.frag = FlatFragmentationIndex(granule_);
}

void Replayer::recovered(const Event& e) {
  const auto it = unrecovered_.find(e.tid);
  if (it == unrecovered_.end()) return;
  FailedAlloc& f = failed_[it->second];
  if (e.size < f.event.size) return;
  f.recovered_after_ns = e.time_ns > f.event.time_ns ? e.time_ns - f.event.time_ns : 0;
  unrecovered_.erase(it);
}

void Replayer::count(DeviceState& s, const Event& e, const ledger::Outcome& o, size_t index) {
  using ledger::Step;
  s.counts.anomalies += o.anomalies;
  const bool restored = e.flags & format::kEventRestored;
  switch (e.op) {
    case Op::kAlloc:
      if (o.step == Step::kFailed) {
        ++s.counts.failed;
        unrecovered_[e.tid] = failed_.size();  // an earlier one not recovered from stays so
        failed_.push_back(FailedAlloc{index, e, s.device_bytes, std::nullopt});
        break;
      }
      if (o.step == Step::kApplied && !restored && e.kind != Kind::kIpcImport) recovered(e);
      if (o.step == Step::kGraph) {
        ++s.counts.graph_allocs;
      } else if (restored) {
        --s.counts.frees;  // the free just before failed: it freed nothing
      } else if (o.step == Step::kApplied) {
        ++s.counts.allocs;
        if (e.kind != Kind::kIpcImport) break;
        ++s.counts.imports;
        // The exporter's pid, when the trace knows it (trace_format.h: EventRecord::handle);
        // a handle's identity (kEventIpcId) names no process.
        if (e.address && e.handle && !(e.flags & format::kEventIpcId) &&
            std::find(s.import_pids.begin(), s.import_pids.end(), e.handle) == s.import_pids.end())
          s.import_pids.push_back(uint32_t(e.handle));
      }
      break;
    case Op::kFree:
      if (o.step == Step::kUnknown) ++s.counts.unknown_frees;
      if (o.step == Step::kApplied) ++dev(o.named.device).counts.frees;
      break;
    case Op::kMap:
      if (o.step != Step::kApplied) break;
      ++s.counts.maps;
      if (o.remapped) ++s.counts.unmaps;
      break;
    case Op::kUnmap:
      if (o.step == Step::kUnknown) ++s.counts.unknown_frees;
      if (o.step == Step::kApplied) ++s.counts.unmaps;
      break;
    case Op::kReserve:
      if (o.step != Step::kApplied) break;
      ++s.counts.reserves;
      if (s.reserved_bytes > s.peak_reserved_bytes) s.peak_reserved_bytes = s.reserved_bytes;
      break;
    case Op::kReserveFree:
      if (o.step == Step::kUnknown) ++s.counts.unknown_frees;
      if (o.step == Step::kApplied) ++dev(o.named.device).counts.reserve_frees;
      break;
    case Op::kPoolTrim: ++s.counts.pool_trims; break;
    case Op::kContextCreate:
      if (e.result != 0) break;
      ++s.counts.contexts;
      s.context_bytes += e.size;
      break;
    case Op::kShare:
      if (e.result == 0 && !(e.flags & format::kEventUnknownAddress)) ++s.counts.shares;
      break;
    default: break;  // retains, graph launches; an op from a newer writer: nothing to count
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
  by_address_.for_each([&](uint64_t address, const LiveEntry& a) {
    if (all || a.device == device) out.push_back(view(a, address, other_of(alloc_handles_, address, a)));
  });
  // In address order, as the callers have always had them (addresses are unique here).
  std::sort(out.begin(), out.end(), [](const LiveAlloc& a, const LiveAlloc& b) { return a.address < b.address; });
  for (const auto& [h, handle] : handles_)
    if (all || handle.alloc.device == device)
      out.push_back(view(handle.alloc, other_of(handle_addresses_, h, handle.alloc), h));
  return out;
}

std::vector<LiveAlloc> Replayer::reserved(int32_t device) const {
  std::vector<LiveAlloc> out;
  for (const auto& [address, a] : reservations_)
    if (a.device == device) out.push_back(view(a, address, other_of(reservation_handles_, address, a)));
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
                                               const std::vector<std::pair<size_t, int32_t>>& stops, Replayer* to_end) {
  std::vector<std::vector<LiveAlloc>> out(stops.size());
  std::vector<size_t> at(stops.size());
  for (size_t k = 0; k < stops.size(); ++k) at[k] = stops[k].first;
  replay_to_stops(
      events, granule, at, [&](size_t k, const Replayer& r) { out[k] = live_holding(r, stops[k].second); }, to_end);
  return out;
}

std::vector<LiveAlloc> live_holding(const Replayer& r, int32_t device) {
  std::vector<LiveAlloc> out = r.live(device);
  std::erase_if(out, [](const LiveAlloc& a) { return !format::holds_device_memory(a.kind); });
  return out;
}

void replay_to_stops(const EventSource& events, uint64_t granule, const std::vector<size_t>& stops,
                     const std::function<void(size_t, const Replayer&)>& at, Replayer* to_end) {
  std::multimap<size_t, size_t> order;  // event index -> position in stops
  for (size_t i = 0; i < stops.size(); ++i) order.emplace(stops[i], i);
  if (order.empty() && !to_end) return;
  std::optional<Replayer> own;
  Replayer& r = to_end ? *to_end : own.emplace(granule, /*live_set_only=*/true);
  auto stop = order.begin();
  const size_t last = to_end ? events.size() : order.rbegin()->first + 1;
  // A source read from a file cannot stop early: past the last stop its events are skipped.
  events.scan([&](const Event& e, size_t i) {
    if (stop == order.end() && !to_end) return;
    if ((i & 0xfff) == 0) progress("live sets", i, last);
    r.apply(e, i);
    for (; stop != order.end() && stop->first == i; ++stop) at(stop->second, r);
  });
}

}  // namespace cumemtrace
