#include "replay/live_sets.h"

#include <stdexcept>

namespace cumemtrace {

LiveSets::Ticket LiveSets::want(size_t event_index, int32_t device) {
  if (replayed_) throw std::logic_error("LiveSets::want after the replay");
  Ticket t;
  t.at_ = stops_.size();
  stops_.emplace_back(event_index, device);
  return t;
}

void LiveSets::visit(size_t event_index, int32_t device, std::function<void(const LiveAlloc&)> f) {
  if (replayed_) throw std::logic_error("LiveSets::visit after the replay");
  visits_.push_back({event_index, device, std::move(f)});
}

void LiveSets::take_all(const EventSource& events, uint64_t granule) {
  if (replayed_) throw std::logic_error("LiveSets::take_all twice");
  // The copies' stops first, then the visits'.
  std::vector<size_t> at;
  for (const auto& [i, d] : stops_) at.push_back(i);
  for (const Visit& v : visits_) at.push_back(v.event_index);
  sets_.assign(stops_.size(), {});
  end_.emplace(granule, /*live_set_only=*/true);
  replay_to_stops(
      events, granule, at,
      [&](size_t k, const Replayer& r) {
        if (k >= stops_.size())
          return for_each_holding(r, visits_[k - stops_.size()].device, visits_[k - stops_.size()].f);
        sets_[k] = live_holding(r, stops_[k].second);
      },
      &*end_);
  taken_.assign(sets_.size(), false);
  replayed_ = true;
}

const Replayer& LiveSets::end() const {
  if (!end_) throw std::logic_error("LiveSets::end before the replay");
  return *end_;
}

std::vector<LiveAlloc> LiveSets::take(Ticket t) {
  if (!replayed_ || t.at_ >= sets_.size() || taken_[t.at_])
    throw std::logic_error("LiveSets::take before the replay, or twice");
  taken_[t.at_] = true;
  return std::move(sets_[t.at_]);
}

}  // namespace cumemtrace
