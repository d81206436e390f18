#include "replay/replay.h"

#include "base/progress.h"

#include <algorithm>
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

void Replayer::ledger_added(DeviceState& s, const LiveAlloc& a) {
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
  const ledger::Outcome o = Ledger::apply(ledger::entry_of(e), [&](Kind k) {
    return LiveAlloc{e.address, e.size, e.handle, e.time_ns, e.stack_id, e.tid, e.device, e.api, k, e.python_stack_id};
  });
  count(s, e, o, index);
  observe(s, e, index);
}

void Replayer::count(DeviceState& s, const Event& e, const ledger::Outcome& o, size_t index) {
  using ledger::Step;
  s.counts.anomalies += o.anomalies;
  const bool restored = e.flags & format::kEventRestored;
  switch (e.op) {
    case Op::kAlloc:
      if (o.step == Step::kFailed) {
        ++s.counts.failed;
        failed_.push_back(FailedAlloc{index, e, s.device_bytes});
      } else if (o.step == Step::kGraph) {
        ++s.counts.graph_allocs;
      } else if (restored) {
        --s.counts.frees;  // the free just before failed: it freed nothing
      } else if (o.step == Step::kApplied) {
        ++s.counts.allocs;
        if (e.kind != Kind::kIpcImport) break;
        ++s.counts.imports;
        // The exporter's pid, when the trace knows it (trace_format.h: EventRecord::handle).
        if (e.address && e.handle &&
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
