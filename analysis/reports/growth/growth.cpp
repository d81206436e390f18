#include "reports/growth/growth.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "stacks/call_site_rule.h"
#include "stacks/python_stacks.h"
#include "replay/replay.h"

namespace cumemtrace {
namespace {

// The user frame's key (a native call instruction: every path through it is one site; or a
// Python file, function and line), whether it is Python's, kind, device.
using Key = std::tuple<uint64_t, bool, int, int32_t>;

}  // namespace

GrowthFit classify_growth(const std::vector<uint64_t>& b, uint64_t allocations_within,
                          const std::vector<uint64_t>* carried_at) {
  GrowthFit fit;
  std::vector<int64_t> steps;
  for (size_t k = 1; k < b.size(); ++k) steps.push_back(int64_t(b[k]) - int64_t(b[k - 1]));
  const bool none_live = std::all_of(b.begin(), b.end(), [](uint64_t v) { return v == 0; });
  if (none_live) {
    fit.cls = allocations_within ? GrowthSite::Class::kTransient : GrowthSite::Class::kVaries;
    return fit;
  }
  const size_t grows = size_t(std::count_if(steps.begin(), steps.end(), [](int64_t d) { return d > 0; }));
  const bool shrinks = std::any_of(steps.begin(), steps.end(), [](int64_t d) { return d < 0; });
  // A leak: the last half of the iterations (two at least), or all of them from its first
  // growth when that came later, each grows by a steady amount. The first iterations are
  // left out because a caching allocator warms up over a few (PyTorch: two or three).
  const size_t first =
      size_t(std::find_if(steps.begin(), steps.end(), [](int64_t d) { return d > 0; }) - steps.begin());
  const size_t tail = std::max<size_t>(2, (steps.size() + 1) / 2);
  const size_t from = std::max(first, steps.size() >= tail ? steps.size() - tail : 0);
  if (steps.size() >= 2 && from + 2 <= steps.size()) {
    const auto [lo, hi] = std::minmax_element(steps.begin() + long(from), steps.end());
    if (*lo > 0 && double(*hi) <= 1.1 * double(*lo)) {
      fit.per_iteration = uint64_t((b.back() - b[from]) / (steps.size() - from));
      fit.min = uint64_t(*lo), fit.max = uint64_t(*hi);
      // Steps k → k + 1 for k from `from`: nothing of boundary k still live at k + 1 is a
      // buffer replaced by a larger one, not memory kept.
      const bool replaced = carried_at && std::all_of(carried_at->begin() + long(from) + 1, carried_at->end(),
                                                      [](uint64_t carried) { return carried == 0; });
      fit.cls = replaced ? GrowthSite::Class::kGrowing : GrowthSite::Class::kLeak;
      return fit;
    }
  }
  if (shrinks) fit.cls = GrowthSite::Class::kVaries;
  else if (grows <= 1) fit.cls = GrowthSite::Class::kOneTime;
  else fit.cls = steps.back() == 0 ? GrowthSite::Class::kCacheGrowth : GrowthSite::Class::kVaries;
  return fit;
}

std::string_view class_name(GrowthSite::Class c) {
  switch (c) {
    case GrowthSite::Class::kLeak: return "leak";
    case GrowthSite::Class::kGrowing: return "growing";
    case GrowthSite::Class::kOneTime: return "one-time";
    case GrowthSite::Class::kCacheGrowth: return "cache-growth";
    case GrowthSite::Class::kTransient: return "transient";
    case GrowthSite::Class::kVaries: return "varies";
  }
  return "varies";
}

GrowthScan::GrowthScan(const Trace& trace) : timed_(timed_iterations(trace)), clean_end_(trace.end.has_value()) {
  g_.by = timed_.by;
  g_.mark = timed_.name;
  given_ = timed_.boundaries;
  first_after_.assign(given_.size(), kNoEvent);
  if (timed_.by == IterationsBy::kMarks) stretches_.assign(given_.size() + 1, {});
  if (trace.end) end_ = trace.end->time_ns;
}

void GrowthScan::count_within(const Within& key) {
  auto [it, fresh] = within_of_.try_emplace(key, within_.size());
  if (fresh) within_.emplace_back(key, 0);
  ++within_[it->second].second;
}

void GrowthScan::observe(const Event& e, size_t index) {
  end_ = std::max(end_, e.time_ns);
  if (e.device != last_device_) devices_[last_device_ = e.device] = true;
  // A boundary's prefix ends at the first event later than it, even when a later event is
  // earlier again (events out of time order): the live set at a prefix of the file.
  for (; cursor_ < given_.size() && e.time_ns > given_[cursor_]; ++cursor_) first_after_[cursor_] = index;
  if (!format::holds_device_memory(e.kind) || e.result != 0) return;
  if (e.op == format::Op::kFree && given_.empty()) ++frees_;
  if (e.op != format::Op::kAlloc) return;
  const Within key{e.stack_id, e.python_stack_id, int(e.kind), e.device};
  if (given_.empty()) {
    count_within(key);
    if (allocs_.size() < kMaxLoopAllocs) {
      allocs_.push_back({index, e.time_ns, e.stack_id, e.python_stack_id, frees_});
      alloc_kinds_.emplace_back(int(e.kind), e.device);
    } else {
      too_many_ = true;
    }
  } else if (e.time_ns > given_.front()) {
    count_within(key);
  }
  if (!stretches_.empty()) stretches_[cursor_].add(e.stack_id, e.python_stack_id);
}

void GrowthScan::observe_block(const BlockEvent& b) {
  if (!block_allocator_) block_allocator_ = b.allocator;
  if (timed_.by != IterationsBy::kNone || too_many_blocks_) return;
  if (b.op == format::BlockOp::kFree) ++block_frees_;
  if (b.op != format::BlockOp::kAlloc) return;
  if (block_steps_.size() == kMaxLoopAllocs) {
    too_many_blocks_ = true;
    block_steps_ = {};
    return;
  }
  // Just before the block: the allocator's record has the time of the allocation that
  // starts an iteration, which must not be live at its own boundary.
  block_steps_.push_back({b.events_before, b.time_ns ? b.time_ns - 1 : 0, b.stack_id, b.python_stack_id, block_frees_});
}

void GrowthScan::want(size_t events, LiveSets& sets) {
  std::vector<std::pair<uint64_t, size_t>> bounds;  // (time, events before it)
  for (size_t k = 0; k < given_.size(); ++k)
    bounds.emplace_back(given_[k], first_after_[k] == kNoEvent ? events : first_after_[k]);
  if (timed_.by == IterationsBy::kMarks && end_ > given_.back()) {
    // The stretch after the last mark: a whole iteration only when the trace ended cleanly
    // and it allocated as an iteration did (iterations.h).
    const std::vector<StretchSignature> whole(stretches_.begin() + 1, stretches_.end() - 1);
    if (last_stretch_whole(whole, stretches_.back(), clean_end_)) bounds.emplace_back(end_, events);
    else g_.partial_left_out = true;
  } else if (timed_.by == IterationsBy::kRanges) {
    g_.partial_left_out = timed_.partial_left_out;
  } else if (timed_.by == IterationsBy::kNone) {
    // A caching allocator's blocks, where the trace has them, are the program's own
    // allocations (a warmed cache takes no segment a step): the loop is looked for there
    // first, then in the driver's allocations (iterations.h).
    // (their records seen by observe_block with the first pass's events)
    const FoundLoop in_blocks = too_many_blocks_ ? FoundLoop{} : find_loop(block_steps_, block_frees_);
    const bool from_blocks = in_blocks.found;
    const FoundLoop loop = from_blocks ? in_blocks : too_many_ ? FoundLoop{} : find_loop(allocs_, frees_);
    const std::deque<AllocStep>& steps = from_blocks ? block_steps_ : allocs_;
    if (!from_blocks && (too_many_ || too_many_blocks_))
      g_.loop_search_skipped = "more than " + std::to_string(kMaxLoopAllocs) + " allocations";
    if (loop.found) {
      g_.by = IterationsBy::kCallSite;
      g_.loop_stack = loop.stack, g_.loop_python = loop.python;
      if (from_blocks) g_.loop_inside = format::block_allocator_name(*block_allocator_);
      g_.stretches = loop.stretches, g_.agreeing = loop.agreeing;
      g_.partial_left_out = !loop.last_whole;
      for (size_t p : loop.starts) bounds.emplace_back(steps[p].time_ns, steps[p].event);
      if (loop.last_whole) bounds.emplace_back(std::max(end_, bounds.back().first), events);
      // Allocations within: from the first iteration's start on.
      within_of_.clear(), within_.clear();
      for (size_t p = 0; p < allocs_.size(); ++p)
        if (from_blocks ? allocs_[p].time_ns > bounds.front().first : p >= loop.starts.front())
          count_within({allocs_[p].stack, allocs_[p].python, alloc_kinds_[p].first, alloc_kinds_[p].second});
    } else {
      bounds.emplace_back(end_, events);  // no iterations: the end alone; every allocation is within
    }
    allocs_ = {}, alloc_kinds_ = {}, block_steps_ = {};
  }
  g_.iterations = g_.by == IterationsBy::kNone ? 0 : bounds.size() - 1;
  std::vector<size_t> stops;
  for (size_t k = 0; k < bounds.size(); ++k) {
    g_.boundaries_ns.push_back(bounds[k].first);
    if (bounds[k].second == 0) continue;  // nothing before it: nothing live
    stops.push_back(bounds[k].second - 1);
    stop_bound_.push_back(k);
  }
  stops_left_ = stops.size();
  bound_ns_ = g_.boundaries_ns;
  ranks_ = bound_ns_;
  std::sort(ranks_.begin(), ranks_.end());
  ranks_.erase(std::unique(ranks_.begin(), ranks_.end()), ranks_.end());
  in_time_order_ = std::is_sorted(bound_ns_.begin(), bound_ns_.end());
  sets.watch(*this, std::move(stops));
}

size_t GrowthScan::WithinHash::operator()(const Within& w) const {
  const auto& [stack, python, kind, device] = w;
  uint64_t h = (uint64_t(stack) << 32 | python) * 0x9e3779b97f4a7c15ULL;
  h ^= (uint64_t(uint32_t(kind)) << 32 | uint32_t(device)) + 0x632be59bd9b4e019ULL + (h << 6) + (h >> 2);
  return size_t(h);
}

GrowthScan::Tallied* GrowthScan::tally(const LiveAlloc& a) {
  if (!format::holds_device_memory(a.kind)) return nullptr;
  auto [it, fresh] = tallies_.try_emplace({a.stack_id, a.python_stack_id, int(a.kind), a.device});
  if (fresh) it->second.device = devices_.count(a.device) ? a.device : INT32_MIN;
  return it->second.device == INT32_MIN ? nullptr : &*it;
}

void GrowthScan::entered(const LiveAlloc& a) {
  Tallied* t = tally(a);
  if (!t) return;
  Tally& y = t->second;
  y.bytes += a.size;
  if (y.count++ == 0) y.slot = live_tallies_.size(), live_tallies_.push_back(t);
  const size_t rank = size_t(std::lower_bound(ranks_.begin(), ranks_.end(), a.time_ns) - ranks_.begin());
  if (rank < carried_below_) y.carried += a.size;
  if (rank >= carried_below_ || !in_time_order_) {
    auto& [bytes, count] = by_rank_[rank][t];
    bytes += a.size, ++count;
  }
  const bool by_handle = ledger::keyed_by_handle(a.kind, a.address, a.handle);
  if (!y.at && stops_left_ > 1) y.unmet.emplace(by_handle, by_handle ? a.handle : a.address);
}

void GrowthScan::left(const LiveAlloc& a) {
  Tallied* t = tally(a);
  if (!t) return;
  Tally& y = t->second;
  y.bytes -= a.size;
  if (--y.count == 0) {
    live_tallies_[y.slot] = live_tallies_.back();
    live_tallies_[y.slot]->second.slot = y.slot;
    live_tallies_.pop_back();
  }
  const size_t rank = size_t(std::lower_bound(ranks_.begin(), ranks_.end(), a.time_ns) - ranks_.begin());
  if (rank < carried_below_) y.carried -= a.size;
  if (rank >= carried_below_ || !in_time_order_) {
    const auto bucket = by_rank_.find(rank);
    auto& [bytes, count] = bucket->second[t];
    bytes -= a.size;
    if (--count == 0) bucket->second.erase(t);
    if (bucket->second.empty()) by_rank_.erase(bucket);
  }
  const bool by_handle = ledger::keyed_by_handle(a.kind, a.address, a.handle);
  if (!y.at && stops_left_ > 1) y.unmet.erase({by_handle, by_handle ? a.handle : a.address});
}

// Allocations whose time ranks below `rank` are carried: those at or before ranks_[rank - 1].
// Boundaries in time order move it only up, and what became carried stays so: its ranks are
// forgotten. One earlier than the boundary before (a loop found in a file whose events are
// out of time order) moves it back, so then every rank is kept.
void GrowthScan::carry_below(size_t rank) {
  auto up = by_rank_.lower_bound(carried_below_);
  for (; rank > carried_below_ && up != by_rank_.end() && up->first < rank; ++up)
    for (const auto& [t, live] : up->second) t->second.carried += live.first;
  if (in_time_order_) by_rank_.erase(by_rank_.begin(), up);
  for (auto it = by_rank_.lower_bound(rank);
       rank < carried_below_ && it != by_rank_.end() && it->first < carried_below_; ++it)
    for (const auto& [t, live] : it->second) t->second.carried -= live.first;
  carried_below_ = rank;
}

// What is live at boundary k: read from the tallies, those with something live only (a
// site's bytes at a boundary where nothing of it is live stay 0).
void GrowthScan::at(size_t stop, const Replayer& r) {
  const size_t k = stop_bound_[stop], n = bound_ns_.size();
  // Carried at k: allocated at or before boundary k - 1, whose time is ranks_[rank]: ranks up to it.
  const size_t rank =
      k ? size_t(std::lower_bound(ranks_.begin(), ranks_.end(), bound_ns_[k - 1]) - ranks_.begin()) + 1 : 0;
  carry_below(rank);
  // Where each stack first met here was met, as finish() orders them: the least of its
  // allocations live here. The last stop reads it from the replay, the others kept it.
  std::unordered_map<Tallied*, std::pair<bool, uint64_t>> least;
  const bool unmet = std::any_of(live_tallies_.begin(), live_tallies_.end(), [](Tallied* t) { return !t->second.at; });
  if (--stops_left_ == 0 && unmet) {
    r.for_each_live([&](const LiveAlloc& a) {
      Tallied* t = tally(a);
      if (!t || t->second.at) return;
      const bool by_handle = ledger::keyed_by_handle(a.kind, a.address, a.handle);
      const std::pair<bool, uint64_t> here{by_handle, by_handle ? a.handle : a.address};
      auto [it, fresh] = least.try_emplace(t, here);
      if (!fresh) it->second = std::min(it->second, here);
    });
  }
  for (Tallied* t : live_tallies_) {
    Tally& y = t->second;
    if (!y.at) {
      y.at = &at_boundaries_[t->first];
      const auto first = y.unmet.empty() ? least.at(t) : *y.unmet.begin();
      y.at->first = std::tuple(k, y.device, first.first, first.second);
      y.at->bytes_at.assign(n, 0), y.at->carried_at.assign(n, 0);
      y.unmet = {};
    }
    y.at->bytes_at[k] = y.bytes;
    y.at->carried_at[k] = y.carried;
    if (k + 1 == n) y.at->count_at_end = y.count;
  }
  // Only the last stop is left: it reads where stacks were first met from the replay.
  if (stops_left_ == 1)
    for (Tallied* t : live_tallies_) t->second.unmet = {};
}

Growth GrowthScan::finish(const Stacks& stacks, size_t frames) {
  Growth g = std::move(g_);
  std::map<Key, GrowthSite> sites;
  const UserSites users(stacks);
  // One site per user part of the stack (call_site_rule.h): the program's line and its
  // callers, not the allocator's or the framework's frame every allocation passes through.
  auto site = [&](uint32_t stack, uint32_t python, format::Kind kind, int32_t device) -> GrowthSite& {
    const UserSite us = users.of(stack, python);
    GrowthSite& s = sites[{us.key, us.from_python, int(kind), device}];
    if (s.bytes_at.empty()) {
      s.node = us.node, s.library = stacks.call_site(stack).library, s.kind = kind, s.device = device;
      s.key = us.key, s.from_python = us.from_python;
      s.python_frames = user_python_frames(stacks.trace(), us, python);
      s.bytes_at.assign(g.boundaries_ns.size(), 0);
      s.carried_at.assign(g.boundaries_ns.size(), 0);
    }
    return s;
  };
  std::vector<std::pair<const Within, AtBoundaries>*> met;
  for (auto& entry : at_boundaries_) met.push_back(&entry);
  std::sort(met.begin(), met.end(), [](const auto* a, const auto* b) { return a->second.first < b->second.first; });
  for (const auto* m : met) {
    const auto& [stack, python, kind, device] = m->first;
    GrowthSite& s = site(stack, python, format::Kind(kind), device);
    for (size_t k = 0; k < s.bytes_at.size(); ++k)
      s.bytes_at[k] += m->second.bytes_at[k], s.carried_at[k] += m->second.carried_at[k];
    s.count_at_end += m->second.count_at_end;
  }
  for (const auto& [key, count] : within_)
    site(std::get<0>(key), std::get<1>(key), format::Kind(std::get<2>(key)), std::get<3>(key)).allocations_within +=
        count;
  if (g.by == IterationsBy::kCallSite) {
    const CallSite cs = stacks.call_site(g.loop_stack);
    g.loop_frames = stacks.frames(cs.node, frames);
    const auto py = python_frames(stacks.trace(), g.loop_python);
    g.loop_frames.insert(g.loop_frames.end(), py.begin(), py.end());
  }
  for (auto& [key, s] : sites) {
    const GrowthFit fit = classify_growth(s.bytes_at, s.allocations_within, &s.carried_at);
    s.cls = fit.cls, s.growth_per_iteration = fit.per_iteration, s.growth_min = fit.min, s.growth_max = fit.max;
    s.frames = stacks.frames(s.node, frames);
    g.sites.push_back(std::move(s));
  }
  std::stable_sort(g.sites.begin(), g.sites.end(), [](const GrowthSite& a, const GrowthSite& b) {
    return std::tie(a.cls, b.growth_per_iteration, b.bytes_at.back()) <
           std::tie(b.cls, a.growth_per_iteration, a.bytes_at.back());
  });
  return g;
}

}  // namespace cumemtrace
