// The page's flame graph over a time range: range_flame.h says what is kept and why.
#include "reports/timeline/range_flame.h"

#include <algorithm>

namespace cumemtrace {

RangeFlame::RangeFlame(uint64_t timeline_width, uint64_t range_from, uint64_t range_end, size_t buckets) {
  const uint64_t tw = std::max<uint64_t>(1, timeline_width);
  first_ = range_from / tw;
  const uint64_t timeline_buckets = std::max(range_from, range_end) / tw - first_ + 1;
  const uint64_t b = std::max<size_t>(1, buckets);
  group_ = (timeline_buckets + b - 1) / b;
  width_ = group_ * tw;
  count_ = (timeline_buckets + group_ - 1) / group_;
}

void RangeFlame::change(const LiveAlloc& a, int64_t sign) {
  if (!format::holds_device_memory(a.kind)) return;
  Taking& t = taking_[a.device];
  if (t.k >= count_) return;  // every bucket decided
  const uint64_t pair = uint64_t(a.stack_id) << 32 | a.python_stack_id;
  Held& h = t.now[pair];
  h.count += sign;
  h.bytes += sign * int64_t(a.size);
  if (h.count == 0) t.now.erase(pair);
  t.changes.push_back(Change{event_, pair, sign, int64_t(a.size)});
}

void RangeFlame::begin(Taking& t) const {
  if (t.begun) return;
  t.begun = true;
  t.best.reset();
  if (t.carried) t.best = BucketMoment{start() + t.k * width_, t.carried->tracked, t.carried->event};
}

void RangeFlame::close_bucket(int32_t device, Taking& t) {
  begin(t);
  if (t.best) devices_[device].push_back(Bucket{t.k, *t.best, live_after(t, t.best->event)});
  ++t.k;
  t.begun = false;
}

void RangeFlame::timeline_bucket(int32_t device, const TimeBucket& b) {
  devices_.try_emplace(device);
  Taking& t = taking_[device];
  if (t.k >= count_) return;  // every bucket decided
  if (b.index < first_ && t.k == 0 && !t.begun) {
    t.carried = b.last;
  } else {
    // A timeline bucket before the one being decided (a clock that went back, or one before
    // the range once it began) ends the reading: the buckets left take what they have now
    // and the state after, as a reading of the timeline in order would stop there.
    const bool back = b.index < first_ || (b.index - first_) / group_ < t.k;
    const uint64_t k = back ? UINT64_MAX : (b.index - first_) / group_;
    while (t.k < k && t.k < count_) close_bucket(device, t);
    if (t.k >= count_) {
      t.now.clear();
      t.changes.clear();
      return;
    }
    begin(t);
    if (!t.best || b.highest.tracked > t.best->tracked) t.best = b.highest;
    t.carried = b.last;
  }
  // The moments still wanted are the best so far and the state the next bucket starts
  // with; a change at or before both is never undone.
  size_t wanted = t.carried->event;
  if (t.begun && t.best) wanted = std::min(wanted, t.best->event);
  while (!t.changes.empty() && t.changes.front().event <= wanted) t.changes.pop_front();
}

void RangeFlame::finish() {
  for (auto& [device, buckets] : devices_) {
    Taking& t = taking_[device];
    while (t.k < count_) close_bucket(device, t);
  }
  taking_.clear();
}

std::vector<StackBytes> RangeFlame::live_after(const Taking& t, size_t event) const {
  std::unordered_map<uint64_t, Held> undone;
  for (auto it = t.changes.rbegin(); it != t.changes.rend() && it->event > event; ++it) {
    Held& h = undone[it->pair];
    h.count -= it->sign;
    h.bytes -= it->sign * it->bytes;
  }
  std::vector<StackBytes> out;
  auto add = [&](uint64_t pair, const Held& h) {
    if (h.count > 0) out.push_back(StackBytes{uint32_t(pair >> 32), uint32_t(pair), uint64_t(h.bytes)});
  };
  for (const auto& [pair, held] : t.now) {
    Held h = held;
    if (auto u = undone.find(pair); u != undone.end()) {
      h.count += u->second.count;
      h.bytes += u->second.bytes;
      undone.erase(u);
    }
    add(pair, h);
  }
  for (const auto& [pair, h] : undone) add(pair, h);
  std::sort(out.begin(), out.end(), [](const StackBytes& a, const StackBytes& b) {
    return std::pair(a.stack_id, a.python_stack_id) < std::pair(b.stack_id, b.python_stack_id);
  });
  return out;
}

std::vector<size_t> RangeFlame::stops() const {
  std::vector<size_t> s;
  for (const auto& [d, buckets] : devices_)
    for (const Bucket& b : buckets) s.push_back(b.moment.event);
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

}  // namespace cumemtrace
