// `cumemtrace html`'s data: page_model.h says what is kept and why.
#include "reports/timeline/page_model.h"

#include <algorithm>
#include <unordered_map>

#include "base/progress.h"
#include "cumemtrace/rules/address_map.h"
#include "replay/replay.h"

namespace cumemtrace {
namespace {

struct Stop {
  std::string kind;     // "peak", "failed", "end", "spaced"
  int32_t device = -1;  // the device whose peak or failure it is; -1 for all
};

// The address map and the flame graph of one device at one moment (`at`).
DeviceMoment device_moment(const Replayer& r, const DeviceState& s, uint64_t start_ns, uint64_t at) {
  DeviceMoment m;
  m.device = s.device;
  m.tracked = s.device_bytes;
  m.figures = s.frag.figures();
  m.granule = s.frag.granule();
  const FragmentationFigures& f = m.figures;
  const uint64_t g = m.granule;
  // The first allocation listed at each address (a handle mapped where an allocation lies
  // comes after it), in a flat table rather than a heap node per allocation at every moment
  // (docs/performance.md, "`html` within 2× of `report`").
  AddressMap<const LiveAlloc*> by_address;
  const std::vector<LiveAlloc> live = r.live(s.device);
  for (const LiveAlloc& a : live)
    if (a.address && !by_address.find(a.address)) by_address.insert_or_assign(a.address, &a);

  uint64_t arena_start = 0, prev_end = 0;
  bool first = true;
  auto gap = [&](uint64_t from, uint64_t to) {
    if (to > from && !m.largest_gap_at && to - from == f.largest_gap) m.largest_gap_at.emplace(from, to - from);
  };
  for (const auto& [start, size] : s.frag.live()) {
    const uint64_t lo = start / g * g;
    if (first) {
      arena_start = lo;
      gap(lo, start);
    } else if ((prev_end + g - 1) / g * g >= lo) {
      gap(prev_end, start);
    } else {
      const uint64_t arena_end = (prev_end + g - 1) / g * g;
      gap(prev_end, arena_end);
      m.arenas.emplace_back(arena_start, arena_end);
      arena_start = lo;
      gap(lo, start);
    }
    first = false;
    prev_end = start + size;
    MapAlloc a{start, size, false, 0, 0, at};
    if (const LiveAlloc* const* found = by_address.find(start)) {
      const LiveAlloc& l = **found;
      a.has_stacks = true;
      a.stack_id = l.stack_id;
      a.python_stack_id = l.python_stack_id;
      a.born = l.time_ns - std::min(l.time_ns, start_ns);
    }
    m.allocs.push_back(a);
  }
  if (!first) {
    const uint64_t arena_end = (prev_end + g - 1) / g * g;
    gap(prev_end, arena_end);
    m.arenas.emplace_back(arena_start, arena_end);
  }

  std::unordered_map<uint64_t, size_t> index;  // pair of stacks -> its place in m.flame
  for (const LiveAlloc& a : live) {
    if (!format::holds_device_memory(a.kind)) continue;
    auto [it, fresh] = index.try_emplace(uint64_t(a.stack_id) << 32 | a.python_stack_id, m.flame.size());
    if (fresh) m.flame.push_back(StackBytes{a.stack_id, a.python_stack_id, 0});
    m.flame[it->second].bytes += a.size;
  }
  return m;
}

}  // namespace

PageTimeline::PageTimeline(uint64_t duration, size_t buckets)
    : width_(std::max<uint64_t>(1, duration / std::max<size_t>(buckets, 1) + 1)) {}

void PageTimeline::add(const PageSample& s) {
  const uint64_t b = s.t / width_;
  if (open_ && b != bucket_) flush();
  if (!open_) {
    open_ = true;
    bucket_ = b;
    min_ = max_ = s;
  }
  if (s.tracked < min_.tracked) min_ = s;
  if (s.tracked > max_.tracked) max_ = s;
  last_ = s;
}

void PageTimeline::close() {
  if (open_) flush();
}

void PageTimeline::flush() {
  auto moment = [](const PageSample& x) { return BucketMoment{x.t, x.tracked, x.event}; };
  buckets_.push_back(TimeBucket{bucket_, moment(max_), moment(last_)});
  PageSample s[3] = {min_, max_, last_};
  std::sort(std::begin(s), std::end(s), [](const PageSample& a, const PageSample& b) { return a.t < b.t; });
  for (const PageSample& x : s)
    if (out_.empty() || out_.back().t != x.t || out_.back().tracked != x.tracked) out_.push_back(x);
  open_ = false;
}

PageModel page_model(const Trace& trace, const EventSource& events, const Report& rep, const Stacks& stacks,
                     const HtmlDataOptions& opt) {
  const uint64_t start = rep.start_ns;
  auto rel = [&](uint64_t t) { return t - std::min(t, start); };
  const size_t n = events.size();

  // Which moments to keep, by event index: "just after this event". The report's first
  // pass found the peaks and failures (a replay of the page's own only to find them was a
  // quarter of `html`'s time).
  std::map<size_t, Stop> stops;
  for (const auto& [d, at] : rep.peak_events)
    if (d >= 0) stops[at] = Stop{"peak", d};
  size_t kept_failed = 0;
  for (const auto& [at, device] : rep.failed_events)
    if (kept_failed < opt.failed_moments && !stops.count(at)) {
      stops[at] = Stop{"failed", device};
      ++kept_failed;
    }
  if (n) {
    auto [it, fresh] = stops.try_emplace(n - 1, Stop{"end", -1});
    if (!fresh) it->second.kind += ",end";
  }
  std::map<size_t, Stop> spaced;
  for (size_t k = 1; n && k <= opt.spaced_moments; ++k) {
    const size_t i = k * n / (opt.spaced_moments + 1);
    if (i < n && !stops.count(i)) spaced[i] = Stop{"spaced", -1};
  }
  stops.insert(spaced.begin(), spaced.end());

  PageModel page;
  // The time range, from the first pass's least and greatest event times (rel() keeps
  // their order), before the replay: the range flame graph's buckets are taken during it.
  uint64_t first = n ? rel(rep.earliest_event_ns) : UINT64_MAX, last = n ? rel(rep.latest_event_ns) : 0;
  for (const Mark& m : trace.marks) {
    first = std::min(first, rel(m.time_ns));
    last = std::max(last, rel(m.time_ns));
  }
  if (first > last) first = 0, last = rep.duration_ns;
  page.first = first, page.last = last;
  page.flames = RangeFlame(PageTimeline(rep.duration_ns, opt.buckets).width(), first, last);
  RangeFlame& flames = page.flames;

  page.bands.emplace(rep, stacks);
  SiteBands& bands = *page.bands;
  size_t spent = 0;
  Replayer r(trace.granule());
  r.watch(flames);
  // A sample or the end may close a timeline bucket: the range flame graph takes each as it closes.
  const auto closing = [&](int32_t device, PageTimeline& tl, auto&& step) {
    const size_t closed = tl.buckets().size();
    step();
    if (tl.buckets().size() != closed) flames.timeline_bucket(device, tl.buckets().back());
  };
  AllocationScan allocations(stacks);
  auto next_stop = stops.begin();  // the events come in index order, each once
  events.scan([&](const Event& e, size_t i) {
    if ((i & 0xfff) == 0) progress("replaying", i, n);
    flames.event(i);
    r.apply(e, i);
    bands.observe(e);
    allocations.observe(e);
    auto dit = r.devices().find(e.device);
    if (dit != r.devices().end() && e.device >= 0) {
      const DeviceState& s = dit->second;
      PageTimeline& tl = page.timelines.try_emplace(e.device, rep.duration_ns, opt.buckets).first->second;
      closing(e.device, tl, [&] {
        tl.add(PageSample{rel(e.time_ns), s.device_bytes, s.frag.figures().arena_bytes, s.context_bytes,
                          bands.values(e.device, s.device_bytes), i});
      });
    }
    if (e.op == format::Op::kAlloc && e.result != 0) page.failed_times[e.device].push_back(rel(e.time_ns));
    if (next_stop == stops.end() || next_stop->first != i) return;
    const Stop& stop = (next_stop++)->second;
    // Spaced moments only while the budget lasts: the page must stay small for a big trace.
    if (stop.kind == "spaced") {
      size_t live = 0;
      for (const auto& [d, s] : r.devices())
        if (d >= 0) live += s.frag.figures().live_count;
      if (spent + live > opt.alloc_budget) return;
    }
    PageMoment m{rel(e.time_ns), i, stop.kind, stop.device, {}};
    for (const auto& [d, s] : r.devices()) {
      if (d < 0) continue;
      m.devices.push_back(device_moment(r, s, start, rel(e.time_ns)));
      if (stop.kind == "spaced") spent += size_t(m.devices.back().figures.live_count);
    }
    page.moments.push_back(std::move(m));
  });
  r.stop_watching();
  for (auto& entry : page.timelines) closing(entry.first, entry.second, [&] { entry.second.close(); });
  flames.finish();
  page.allocations = allocations.finish();
  return page;
}

}  // namespace cumemtrace
