#include "growth.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "replay.h"

namespace cumemtrace {
namespace {

// The call-site frame's address, kind, device: every path through one call instruction is
// one site (a caching allocator's segments all come from one cudaMalloc call).
using Key = std::tuple<uint64_t, int, int32_t>;

GrowthSite::Class classify(const GrowthSite& s, uint64_t& per_iteration) {
  const auto& b = s.bytes_at;
  std::vector<int64_t> steps;
  for (size_t k = 1; k < b.size(); ++k) steps.push_back(int64_t(b[k]) - int64_t(b[k - 1]));
  const bool none_live = std::all_of(b.begin(), b.end(), [](uint64_t v) { return v == 0; });
  if (none_live) return s.allocations_within ? GrowthSite::Class::kTransient : GrowthSite::Class::kVaries;
  const size_t grows = size_t(std::count_if(steps.begin(), steps.end(), [](int64_t d) { return d > 0; }));
  const bool shrinks = std::any_of(steps.begin(), steps.end(), [](int64_t d) { return d < 0; });
  // A leak: the last half of the iterations (two at least), or all of them from its first
  // growth when that came later, each grows by a steady amount. The first iterations are
  // left out because a caching allocator warms up over a few (PyTorch: two or three).
  const size_t first = size_t(std::find_if(steps.begin(), steps.end(), [](int64_t d) { return d > 0; }) - steps.begin());
  const size_t tail = std::max<size_t>(2, (steps.size() + 1) / 2);
  const size_t from = std::max(first, steps.size() >= tail ? steps.size() - tail : 0);
  if (steps.size() >= 2 && from + 2 <= steps.size()) {
    const auto [lo, hi] = std::minmax_element(steps.begin() + long(from), steps.end());
    if (*lo > 0 && double(*hi) <= 1.1 * double(*lo)) {
      per_iteration = uint64_t((b.back() - b[from]) / (steps.size() - from));
      return GrowthSite::Class::kLeak;
    }
  }
  if (shrinks) return GrowthSite::Class::kVaries;
  if (grows <= 1) return GrowthSite::Class::kOneTime;
  return steps.back() == 0 ? GrowthSite::Class::kCacheGrowth : GrowthSite::Class::kVaries;
}

}  // namespace

std::string_view class_name(GrowthSite::Class c) {
  switch (c) {
    case GrowthSite::Class::kLeak: return "leak";
    case GrowthSite::Class::kOneTime: return "one-time";
    case GrowthSite::Class::kCacheGrowth: return "cache-growth";
    case GrowthSite::Class::kTransient: return "transient";
    case GrowthSite::Class::kVaries: return "varies";
  }
  return "varies";
}

GrowthScan::GrowthScan(const Trace& trace) {
  std::map<std::string, std::vector<uint64_t>> by_name;
  for (const auto& m : trace.marks) by_name[m.name].push_back(m.time_ns);
  for (const auto& [name, times] : by_name)
    if (times.size() >= 2 && times.size() > g_.iterations) g_.mark = name, g_.iterations = times.size();
  if (!g_.mark.empty()) {
    given_ = by_name[g_.mark];
  } else {
    g_.iterations = 0;
    for (const auto& s : trace.snapshots) given_.push_back(s.time_ns);
  }
  if (!given_.empty()) given_last_ = given_.back();
  std::sort(given_.begin(), given_.end());
  first_after_.assign(given_.size(), kNoEvent);
  if (trace.end) end_ = trace.end->time_ns;
}

void GrowthScan::observe(const Event& e, size_t index) {
  end_ = std::max(end_, e.time_ns);
  if (e.device != last_device_) devices_[last_device_ = e.device] = true;
  // A boundary's prefix ends at the first event later than it, even when a later event is
  // earlier again (events out of time order): the live set at a prefix of the file.
  for (; cursor_ < given_.size() && e.time_ns > given_[cursor_]; ++cursor_) first_after_[cursor_] = index;
  if (e.op == format::Op::kAlloc && e.result == 0 && format::holds_device_memory(e.kind) && !given_.empty() &&
      e.time_ns > given_.front()) {
    const std::tuple<uint32_t, int, int32_t> key{e.stack_id, int(e.kind), e.device};
    auto [it, fresh] = within_of_.try_emplace(key, within_.size());
    if (fresh) within_.emplace_back(key, 0);
    ++within_[it->second].second;
  }
}

std::vector<std::pair<size_t, int32_t>> GrowthScan::stops(size_t events) {
  // The trace's end is the last boundary unless a record's boundary comes at or after it;
  // every later allocation counted above then falls within (end bounds every event).
  g_.boundaries_ns = given_;
  if (given_.empty() || given_last_ < end_) g_.boundaries_ns.push_back(end_);
  std::sort(g_.boundaries_ns.begin(), g_.boundaries_ns.end());
  std::vector<std::pair<size_t, int32_t>> out;
  stop_of_.assign(g_.boundaries_ns.size(), kNoEvent);
  for (size_t k = 0; k < g_.boundaries_ns.size(); ++k) {
    const uint64_t b = g_.boundaries_ns[k];
    const size_t at = size_t(std::lower_bound(given_.begin(), given_.end(), b) - given_.begin());
    size_t i = at < given_.size() && given_[at] == b ? first_after_[at] : kNoEvent;
    if (i == kNoEvent) i = events;  // no event is later than it
    if (i == 0) continue;
    stop_of_[k] = out.size();
    for (const auto& [d, unused] : devices_) out.emplace_back(i - 1, d);
  }
  return out;
}

Growth GrowthScan::finish(const Stacks& stacks, size_t frames, std::span<const std::vector<LiveAlloc>> lives) {
  Growth g = std::move(g_);
  std::map<Key, GrowthSite> sites;
  std::unordered_map<uint32_t, uint64_t> call_ip;  // call-site node -> its frame's address
  auto site = [&](uint32_t stack, format::Kind kind, int32_t device) -> GrowthSite& {
    const CallSite cs = stacks.call_site(stack);
    // The owner frame (the allocator's own call), not the call site past the allocator's
    // frames: which operator made a caching allocator grow its segments varies.
    auto ip = call_ip.find(cs.owner);
    if (ip == call_ip.end()) {
      const auto ips = stacks.ips(cs.owner);
      ip = call_ip.emplace(cs.owner, ips.empty() ? 0 : ips.front()).first;
    }
    GrowthSite& s = sites[{ip->second, int(kind), device}];
    if (s.bytes_at.empty()) {
      s.node = cs.node, s.library = cs.library, s.kind = kind, s.device = device;
      s.bytes_at.assign(g.boundaries_ns.size(), 0);
    }
    return s;
  };
  for (size_t k = 0; k < g.boundaries_ns.size(); ++k) {
    if (stop_of_[k] == kNoEvent) continue;
    for (size_t d = 0; d < devices_.size(); ++d)
      for (const auto& a : lives[stop_of_[k] + d]) {
        GrowthSite& s = site(a.stack_id, a.kind, a.device);
        s.bytes_at[k] += a.size;
        if (k + 1 == g.boundaries_ns.size()) ++s.count_at_end;
      }
  }
  for (const auto& [key, count] : within_)
    site(std::get<0>(key), format::Kind(std::get<1>(key)), std::get<2>(key)).allocations_within += count;
  for (auto& [key, s] : sites) {
    s.cls = classify(s, s.growth_per_iteration);
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
