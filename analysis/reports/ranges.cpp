#include "reports/ranges.h"

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
  std::map<uint32_t, std::vector<size_t>> pushed;     // tid -> its open pushes, innermost last
  std::map<uint32_t, std::vector<size_t>> tagged;     // tid -> its open tags, innermost last
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
  // pair right; pops the library did not write, past 64 deep, leave those ranges open).
  const auto close_named = [&](std::vector<size_t>& stack, const Mark& pop) {
    for (size_t k = stack.size(); k-- > 0;)
      if (rows_[intervals_[stack[k]].row].name == pop.name) {
        end(stack[k], pop.time_ns);
        stack.erase(stack.begin() + long(k));
        return;
      }
  };
  // Before 1.10 no pop was recorded: a push is then a mark of its name, as the growth
  // analysis takes it.
  const bool pops_recorded = trace.version_minor >= 10;
  for (const Edge& e : edges) {
    const Mark& m = *e.mark;
    if (!e.end) {
      if (m.source == MarkSource::kNvtxPush && pops_recorded) {
        pushed[m.tid].push_back(add(m, "nvtx push", m.tid));
      } else if (m.source == MarkSource::kTagPush) {
        tagged[m.tid].push_back(add(m, "tag", m.tid));
      } else if (m.source == MarkSource::kNvtxStart && pops_recorded) {
        started[m.name].push_back(add(m, "nvtx start", 0));
      } else {  // cumemtrace_mark, nvtxMark: a stretch to the next mark of the name
        if (auto it = marked.find(m.name); it != marked.end()) end(it->second, m.time_ns);
        marked[m.name] = add(m, "mark", 0);
      }
    } else if (m.source == MarkSource::kNvtxPop) {
      close_named(pushed[m.tid], m);
    } else if (m.source == MarkSource::kTagPop) {
      close_named(tagged[m.tid], m);
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

void RangeScan::open(Interval& in, const Replayer& r) {
  for (const auto& [d, s] : r.devices())
    if (d >= 0 && s.device_bytes > in.peak) in.peak = s.device_bytes, in.peak_device = d;
}

void RangeScan::close(Interval& in) {
  RangeRow& row = rows_[in.row];
  ++row.calls;
  if (!in.ended) ++row.open_at_end;
  row.time_ns += in.end_ns - in.start_ns;
  row.held_after_bytes += in.held;
  if (in.peak > row.peak_bytes) row.peak_bytes = in.peak, row.peak_device = in.peak_device;
}

void RangeScan::advance(uint64_t t, const Replayer& r) {
  // Ends first: an interval that ended at or before `t` saw nothing at `t`.
  const auto ended = [&](uint32_t i) { return intervals_[i].ended && intervals_[i].end_ns <= t; };
  for (uint32_t i : open_)
    if (ended(i)) close(intervals_[i]);
  std::erase_if(open_, ended);
  for (; next_ < intervals_.size() && intervals_[next_].start_ns <= t; ++next_) {
    Interval& in = intervals_[next_];
    if (in.ended && in.end_ns <= t) {  // began and ended between two events
      open(in, r);
      close(in);
      continue;
    }
    open(in, r);
    open_.push_back(uint32_t(next_));
  }
}

void RangeScan::observe(const Event& e, const Replayer& r) {
  // A graph's allocation node made during a stream capture holds no device memory (the
  // replay counts it apart, graph_pool.h).
  if (open_.empty() || e.result != 0 || !format::holds_device_memory(e.kind) || (e.flags & format::kEventCaptured))
    return;
  if (e.op == format::Op::kAlloc) {
    std::vector<uint32_t> in;
    for (uint32_t i : open_) {
      Interval& iv = intervals_[i];
      if (iv.tid != 0 && iv.tid != e.tid) continue;
      RangeRow& row = rows_[iv.row];
      ++row.allocations;
      row.bytes_allocated += e.size;
      iv.held += e.size;
      in.push_back(i);
    }
    if (!in.empty() && allocation_key(e)) inside_[allocation_key(e)] = {e.size, std::move(in)};
  } else if (e.op == format::Op::kFree) {
    if (auto it = inside_.find(allocation_key(e)); it != inside_.end()) {
      for (uint32_t i : it->second.second)
        if (std::find(open_.begin(), open_.end(), i) != open_.end()) intervals_[i].held -= it->second.first;
      inside_.erase(it);
    }
  }
  const auto d = r.devices().find(e.device);
  if (d == r.devices().end() || e.device < 0) return;
  for (uint32_t i : open_) {
    Interval& iv = intervals_[i];
    if (d->second.device_bytes > iv.peak) iv.peak = d->second.device_bytes, iv.peak_device = e.device;
  }
}

std::vector<RangeRow> RangeScan::finish(uint64_t end_ns, const Replayer& r) {
  advance(end_ns, r);  // what ended by the last moment
  for (uint32_t i : open_) {
    Interval& in = intervals_[i];
    in.end_ns = std::max(in.start_ns, std::min(in.end_ns, end_ns));
    close(in);
  }
  open_.clear();
  for (; next_ < intervals_.size(); ++next_) {  // began after the last event
    Interval& in = intervals_[next_];
    in.end_ns = std::max(in.start_ns, std::min(in.end_ns, end_ns));
    open(in, r);
    close(in);
  }
  std::vector<RangeRow> out = std::move(rows_);
  std::stable_sort(out.begin(), out.end(), [](const RangeRow& a, const RangeRow& b) {
    return std::tie(b.bytes_allocated, b.calls) < std::tie(a.bytes_allocated, a.calls);
  });
  return out;
}

}  // namespace cumemtrace
