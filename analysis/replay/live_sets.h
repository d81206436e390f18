// Live sets wanted at past moments, taken together in one second replay (live_after).
// Each part of the report asks for the moments it needs and keeps the ticket it was given;
// after the replay it takes back its own set by that ticket. No part depends on how many
// sets another asked for or in which order, so adding or reordering a part cannot hand
// one analysis another's live set.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "read/event_source.h"
#include "replay/replay.h"

namespace cumemtrace {

class LiveSets {
 public:
  // Only want() makes one: a ticket never asked for cannot take another's set.
  class Ticket {
    friend class LiveSets;
    Ticket() = default;
    size_t at_ = 0;
  };

  // The device memory live on `device` just after the event at `event_index`.
  Ticket want(size_t event_index, int32_t device);
  // The same moment's set read in place during the replay, never copied: f sees each
  // allocation holding device memory live on `device` just after the event, in no
  // particular order (for a reader that only sums: a copy of a peak's set was 56 bytes per
  // allocation live there). f must outlive take_all.
  void visit(size_t event_index, int32_t device, std::function<void(const LiveAlloc&)> f);
  // For a reader that keeps its own figures (replay.h): `w` is told of every change to the
  // live set during the replay of take_all, and w.at(k) is called just after the event at
  // `stops[k]` (in the order given, for stops of one event). Where a figure is wanted at
  // many moments (each iteration's boundary), this is what keeps the work O(events +
  // moments × what `w` keeps) rather than O(moments × live set). `w` must outlive take_all.
  void watch(LiveWatcher& w, std::vector<size_t> stops);
  // One replay of `events`, laid out in `granule`, copying every set wanted so far and
  // going on to the last event. Throws std::logic_error when called twice.
  void take_all(const EventSource& events, uint64_t granule);
  // That replay at the end, after take_all (std::logic_error otherwise): what is live then
  // (live(), for_each_live(), reserved(), failed()), so that the first pass's replay need not
  // keep its own live set beside this one. Made with live_set_only: no per-moment figures.
  const Replayer& end() const;
  // The set of `t`, moved out: valid once, after take_all (std::logic_error otherwise).
  std::vector<LiveAlloc> take(Ticket t);

 private:
  std::vector<std::pair<size_t, int32_t>> stops_;
  struct Visit {
    size_t event_index;
    int32_t device;
    std::function<void(const LiveAlloc&)> f;
  };
  std::vector<Visit> visits_;
  std::vector<std::pair<LiveWatcher*, std::vector<size_t>>> watchers_;
  std::vector<std::vector<LiveAlloc>> sets_;
  std::vector<bool> taken_;
  std::optional<Replayer> end_;
  bool replayed_ = false;
};

}  // namespace cumemtrace
