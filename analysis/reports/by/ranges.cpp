#include "reports/by/ranges.h"

#include <algorithm>
#include <deque>
#include <map>
#include <tuple>

#include "reports/allocation_events.h"

namespace cumemtrace {

using format::MarkSource;

uint32_t RangeScan::row_of(const std::string& name, const char* kind) {
  auto [it, fresh] = row_index_.try_emplace(std::string(kind) + '\0' + name, uint32_t(rows_.size()));
  if (fresh) {
    RangeRow row;
    row.name = name;
    row.kind = kind;
    rows_.push_back(std::move(row));
  }
  return it->second;
}

RangeScan::RangeScan(const Trace& trace) {
  // Starts and ends in time order (a start before an end at the same moment).
  struct Edge {
    const Mark* mark;
    bool end;
  };
  std::vector<Edge> edges;
  for (const Mark& m : trace.marks) edges.push_back({&m, false});
  for (const Mark& m : trace.range_ends) edges.push_back({&m, true});
  std::stable_sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
    return std::tie(a.mark->time_ns, a.end) < std::tie(b.mark->time_ns, b.end);
  });
  constexpr uint64_t kOpen = ~uint64_t(0);
  using Stacks = std::map<std::pair<uint32_t, std::string>, std::vector<size_t>>;
  Stacks pushed;                                      // (tid, name) -> its open pushes of the name, innermost last
  Stacks tagged;                                      // (tid, name) -> its open tags of the name, innermost last
  std::map<std::string, std::deque<size_t>> started;  // name -> its open starts, oldest first
  std::map<std::string, size_t> marked;               // name -> its open mark stretch
  const auto add = [&](const Mark& m, const char* kind, uint32_t tid) {
    intervals_.push_back({row_of(m.name, kind), tid, m.time_ns, kOpen, false});
    return intervals_.size() - 1;
  };
  const auto end = [&](size_t i, uint64_t t) {
    intervals_[i].end_ns = t;
    intervals_[i].ended = true;
  };
  // A pop names the push it closes: it closes the innermost open one of that name on its
  // thread (a pop and a push at the same nanosecond, which the sort cannot order, still
  // pair right; pops the library did not write, past 64 deep, leave those ranges open, and
  // the trace counts them: Integrity::bounded).
  const auto close_named = [&](Stacks& stacks, const Mark& pop) {
    auto it = stacks.find({pop.tid, pop.name});
    if (it == stacks.end() || it->second.empty()) return;
    end(it->second.back(), pop.time_ns);
    it->second.pop_back();
  };
  // Before 1.10 no pop was recorded: a push is then a mark of its name, as the growth
  // analysis takes it.
  const bool pops_recorded = trace.version_minor >= 10;
  for (const Edge& e : edges) {
    const Mark& m = *e.mark;
    if (!e.end) {
      if (m.source == MarkSource::kNvtxPush && pops_recorded) {
        pushed[{m.tid, m.name}].push_back(add(m, "nvtx push", m.tid));
      } else if (m.source == MarkSource::kTagPush) {
        tagged[{m.tid, m.name}].push_back(add(m, "tag", m.tid));
      } else if (m.source == MarkSource::kNvtxStart && pops_recorded) {
        started[m.name].push_back(add(m, "nvtx start", 0));
      } else {  // cumemtrace_mark, nvtxMark: a stretch to the next mark of the name
        if (auto it = marked.find(m.name); it != marked.end()) end(it->second, m.time_ns);
        marked[m.name] = add(m, "mark", 0);
      }
    } else if (m.source == MarkSource::kNvtxPop) {
      close_named(pushed, m);
    } else if (m.source == MarkSource::kTagPop) {
      close_named(tagged, m);
    } else if (m.source == MarkSource::kNvtxEnd) {
      auto& queue = started[m.name];
      if (!queue.empty()) end(queue.front(), m.time_ns), queue.pop_front();
    }
  }
  // The last stretch of each mark name runs to the end: not an ended call.
  for (const auto& [name, i] : marked) intervals_[i].ended = false;
  std::stable_sort(intervals_.begin(), intervals_.end(),
                   [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; });
}

void RangeScan::LiveBytes::push_back() {
  // The new node i covers positions (i - lowbit(i), i]: all there but the new one, 0.
  const size_t i = tree_.size();
  tree_.push_back(prefix(i - 1) - prefix(i - (i & -i)));
}

void RangeScan::LiveBytes::add(size_t at, uint64_t delta) {
  for (size_t i = at + 1; i < tree_.size(); i += i & -i) tree_[i] += delta;
}

uint64_t RangeScan::LiveBytes::prefix(size_t n) const {
  uint64_t sum = 0;
  for (size_t i = n; i > 0; i -= i & -i) sum += tree_[i];
  return sum;
}

void RangeScan::open(size_t i, const Replayer& r) {
  Interval& in = intervals_[i];
  for (const auto& [d, s] : r.devices())
    if (d >= 0 && s.device_bytes > in.peak) in.peak = s.device_bytes, in.peak_device = d;
  const Tally& t = tally_of(in.tid);
  in.allocations_at_open = t.allocations, in.bytes_at_open = t.bytes;
  in.readings_at_open = reading_count_;
  ++open_count_;
  ++(in.tid ? open_by_thread_[in.tid] : open_all_);
}

void RangeScan::close(size_t i) {
  Interval& in = intervals_[i];
  RangeRow& row = rows_[in.row];
  const Tally& t = tally_of(in.tid);
  // The largest reading since it opened, the first of its size (readings_ never rises).
  const auto first = std::lower_bound(readings_.begin(), readings_.end(), in.readings_at_open,
                                      [](const Reading& x, size_t at) { return x.at < at; });
  if (first != readings_.end() && first->bytes > in.peak) in.peak = first->bytes, in.peak_device = first->device;
  ++row.calls;
  if (!in.ended) ++row.open_at_end;
  row.time_ns += in.end_ns - in.start_ns;
  row.allocations += t.allocations - in.allocations_at_open;
  row.bytes_allocated += t.bytes - in.bytes_at_open;
  row.held_after_bytes += t.live.from(size_t(in.allocations_at_open));
  if (in.peak > row.peak_bytes) row.peak_bytes = in.peak, row.peak_device = in.peak_device;
  in.closed = true;
  --open_count_;
  --(in.tid ? open_by_thread_[in.tid] : open_all_);
}

void RangeScan::advance(uint64_t t, const Replayer& r) {
  // Ends first: an interval that ended at or before `t` saw nothing at `t`. In the order
  // they opened, as rows take the first of equal peaks.
  std::vector<size_t> ending;
  for (; !ends_.empty() && ends_.top().first <= t; ends_.pop()) ending.push_back(ends_.top().second);
  std::sort(ending.begin(), ending.end());
  for (size_t i : ending) close(i);
  for (; next_ < intervals_.size() && intervals_[next_].start_ns <= t; ++next_) {
    Interval& in = intervals_[next_];
    open(next_, r);
    if (in.ended && in.end_ns <= t) close(next_);  // began and ended between two events
    else if (in.ended) ends_.emplace(in.end_ns, next_);
  }
}

void RangeScan::observe(const Event& e, const Replayer& r) {
  // A graph's allocation node made during a stream capture holds no device memory (the
  // replay counts it apart, graph_pool.h).
  if (open_count_ == 0 || e.result != 0 || !format::holds_device_memory(e.kind) || (e.flags & format::kEventCaptured))
    return;
  if (e.op == format::Op::kAlloc) {
    Tally& all = all_;
    Tally* thread = e.tid ? &threads_[e.tid] : nullptr;
    const size_t all_at = all.live.size(), thread_at = thread ? thread->live.size() : 0;
    for (Tally* t : {&all, thread}) {
      if (!t) continue;
      ++t->allocations;
      t->bytes += e.size;
      t->live.push_back();
    }
    const auto mine = e.tid ? open_by_thread_.find(e.tid) : open_by_thread_.end();
    const bool inside = open_all_ || (mine != open_by_thread_.end() && mine->second);
    if (inside && allocation_key(e)) {
      all.live.add(all_at, e.size);
      if (thread) thread->live.add(thread_at, e.size);
      inside_[allocation_key(e)] = {e.size, e.tid, thread_at, all_at};
    }
  } else if (e.op == format::Op::kFree) {
    // Off the intervals still open that it was made inside; those closed kept their figure.
    if (auto it = inside_.find(allocation_key(e)); it != inside_.end()) {
      const Inside& a = it->second;
      all_.live.add(a.all_at, -a.size);
      if (a.tid) threads_[a.tid].live.add(a.thread_at, -a.size);
      inside_.erase(it);
    }
  }
  const auto d = r.devices().find(e.device);
  if (d == r.devices().end() || e.device < 0) return;
  const uint64_t bytes = d->second.device_bytes;
  while (!readings_.empty() && readings_.back().bytes < bytes) readings_.pop_back();
  readings_.push_back({bytes, e.device, reading_count_++});
}

std::vector<RangeRow> RangeScan::finish(uint64_t end_ns, const Replayer& r) {
  advance(end_ns, r);  // what ended by the last moment
  for (size_t i = 0; i < next_; ++i) {
    Interval& in = intervals_[i];
    if (in.closed) continue;
    in.end_ns = std::max(in.start_ns, std::min(in.end_ns, end_ns));
    close(i);
  }
  for (; next_ < intervals_.size(); ++next_) {  // began after the last event
    Interval& in = intervals_[next_];
    in.end_ns = std::max(in.start_ns, std::min(in.end_ns, end_ns));
    open(next_, r);
    close(next_);
  }
  std::vector<RangeRow> out = std::move(rows_);
  std::stable_sort(out.begin(), out.end(), [](const RangeRow& a, const RangeRow& b) {
    return std::tie(b.bytes_allocated, b.calls) < std::tie(a.bytes_allocated, a.calls);
  });
  return out;
}

}  // namespace cumemtrace
