// The page's flame graph over a time range: range_flame.h says what is kept and why.
#include "reports/timeline/range_flame.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "replay/replay.h"

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

void RangeFlame::add_device(int32_t device, const std::vector<TimeBucket>& timeline) {
  std::vector<Bucket>& out = devices_[device];
  std::optional<BucketMoment> carried;  // the state a bucket starts with: after the last event before it
  size_t j = 0;
  for (; j < timeline.size() && timeline[j].index < first_; ++j) carried = timeline[j].last;
  for (uint64_t k = 0; k < count_; ++k) {
    std::optional<BucketMoment> best;
    if (carried) best = BucketMoment{start() + k * width_, carried->tracked, carried->event};
    for (; j < timeline.size() && (timeline[j].index - first_) / group_ == k; ++j) {
      if (!best || timeline[j].highest.tracked > best->tracked) best = timeline[j].highest;
      carried = timeline[j].last;
    }
    if (best) out.push_back(Bucket{k, *best, {}});
  }
}

std::vector<size_t> RangeFlame::stops() const {
  std::vector<size_t> s;
  for (const auto& [d, buckets] : devices_)
    for (const Bucket& b : buckets) s.push_back(b.moment.event);
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

void RangeFlame::replay(const EventSource& events, uint64_t granule) {
  const std::vector<size_t> stops = this->stops();
  if (stops.empty()) return;
  replay_to_stops(events, granule, stops, [&](size_t k, const Replayer& r) {
    for (auto& [device, buckets] : devices_) {
      const int32_t d = device;  // a structured binding no lambda may capture (clang, C++20)
      std::vector<StackBytes>* live = nullptr;
      for (Bucket& b : buckets)
        if (b.moment.event == stops[k]) {
          if (!live) {
            live = &b.live;
            std::unordered_map<uint64_t, size_t> index;  // pair of stacks -> its place in `live`
            r.for_each_live([&](const LiveAlloc& a) {
              if (a.device != d || !format::holds_device_memory(a.kind)) return;
              const uint64_t key = uint64_t(a.stack_id) << 32 | a.python_stack_id;
              auto [it, fresh] = index.try_emplace(key, live->size());
              if (fresh) live->push_back(StackBytes{a.stack_id, a.python_stack_id, 0});
              (*live)[it->second].bytes += a.size;
            });
          } else {
            b.live = *live;  // a quiet stretch: the same moment for several buckets
          }
        }
    }
  });
}

}  // namespace cumemtrace
