// The page's flame graph over a time range: range_flame.h says what is kept and why.
#include "render/page/range_flame.h"

#include <algorithm>
#include <optional>

namespace cumemtrace {

using Json = nlohmann::ordered_json;

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

uint32_t RangeFlame::path_id(const std::vector<uint32_t>& labels) {
  auto [it, fresh] = path_index_.emplace(labels, uint32_t(paths_.size()));
  if (fresh) paths_.push_back(&it->first);
  return it->second;
}

void RangeFlame::at(size_t event, const Replayer& r, const PathOf& path_of) {
  for (auto& [device, buckets] : devices_) {
    const int32_t d = device;  // a structured binding no lambda may capture (clang, C++20)
    std::map<uint32_t, uint64_t>* live = nullptr;
    for (Bucket& b : buckets)
      if (b.moment.event == event) {
        if (!live) {
          live = &b.live;
          r.for_each_live([&](const LiveAlloc& a) {
            if (a.device == d && format::holds_device_memory(a.kind))
              (*live)[path_id(path_of(a.stack_id, a.python_stack_id))] += a.size;
          });
        } else {
          b.live = *live;  // a quiet stretch: the same moment for several buckets
        }
      }
  }
}

Json RangeFlame::json() const {
  Json paths = Json::array();
  for (const std::vector<uint32_t>* p : paths_) paths.push_back(*p);
  Json devices = Json::array();
  for (const auto& [d, buckets] : devices_) {
    Json out = Json::array();
    const std::map<uint32_t, uint64_t>* before = nullptr;
    static const std::map<uint32_t, uint64_t> kNone;
    for (const Bucket& b : buckets) {
      const std::map<uint32_t, uint64_t>& prev = before ? *before : kNone;
      Json change = Json::array();
      for (const auto& [p, bytes] : b.live)
        if (auto it = prev.find(p); it == prev.end() || it->second != bytes)
          change.push_back(p), change.push_back(bytes);
      for (const auto& [p, bytes] : prev)
        if (!b.live.count(p)) change.push_back(p), change.push_back(0);
      out.push_back(Json::array({b.k, b.moment.t, b.moment.tracked, change}));
      before = &b.live;
    }
    devices.push_back(Json{{"device", d}, {"buckets", out}});
  }
  return Json{
      {"start_ns", start()}, {"bucket_ns", width_}, {"buckets", count_}, {"paths", paths}, {"devices", devices}};
}

}  // namespace cumemtrace
