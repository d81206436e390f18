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

void LiveSets::watch(LiveWatcher& w, std::vector<size_t> stops) {
  if (replayed_) throw std::logic_error("LiveSets::watch after the replay");
  watchers_.emplace_back(&w, std::move(stops));
}

void LiveSets::take_all(const EventSource& events, uint64_t granule) {
  if (replayed_) throw std::logic_error("LiveSets::take_all twice");
  // The copies' stops first, then the visits', then the watchers' (each: which, and its own number).
  std::vector<size_t> at;
  for (const auto& [i, d] : stops_) at.push_back(i);
  for (const Visit& v : visits_) at.push_back(v.event_index);
  std::vector<std::pair<LiveWatcher*, size_t>> watched;
  sets_.assign(stops_.size(), {});
  end_.emplace(granule, /*live_set_only=*/true);
  for (const auto& [w, stops] : watchers_) {
    end_->watch(*w);
    for (size_t k = 0; k < stops.size(); ++k) at.push_back(stops[k]), watched.emplace_back(w, k);
  }
  const size_t before_watched = stops_.size() + visits_.size();
  replay_to_stops(
      events, granule, at,
      [&](size_t k, const Replayer& r) {
        if (k >= before_watched) return watched[k - before_watched].first->at(watched[k - before_watched].second, r);
        if (k >= stops_.size())
          return for_each_holding(r, visits_[k - stops_.size()].device, visits_[k - stops_.size()].f);
        sets_[k] = live_holding(r, stops_[k].second);
      },
      &*end_);
  end_->stop_watching();
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
