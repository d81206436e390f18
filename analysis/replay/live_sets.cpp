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

void LiveSets::take_all(const EventSource& events, uint64_t granule) {
  if (replayed_) throw std::logic_error("LiveSets::take_all twice");
  sets_ = live_after(events, granule, stops_);
  taken_.assign(sets_.size(), false);
  replayed_ = true;
}

std::vector<LiveAlloc> LiveSets::take(Ticket t) {
  if (!replayed_ || t.at_ >= sets_.size() || taken_[t.at_])
    throw std::logic_error("LiveSets::take before the replay, or twice");
  taken_[t.at_] = true;
  return std::move(sets_[t.at_]);
}

}  // namespace cumemtrace
