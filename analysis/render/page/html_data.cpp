// `cumemtrace html`'s data: html_data.h says what is kept and why.
#include "render/page/html_data.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "render/page/range_flame.h"
#include "render/page/site_bands.h"
#include "stacks/call_site_rule.h"
#include "base/escape.h"
#include "base/progress.h"
#include "stacks/python_stacks.h"
#include "replay/replay.h"
#include "base/units.h"

namespace cumemtrace {
namespace {

using Json = nlohmann::ordered_json;

// One reading of a device after an event.
struct Sample {
  uint64_t t = 0;  // ns since start
  uint64_t tracked = 0;
  uint64_t footprint = 0;
  uint64_t context = 0;
  SiteBands::Values bands{};  // live bytes by call site (site_bands.h)
  size_t event = 0;           // just after this event
};

// Per device, per time bucket: the minimum, maximum and last sample, emitted in time
// order when the bucket closes. A step line through them shows every extreme a pixel can.
class Timeline {
 public:
  Timeline(uint64_t duration, size_t buckets)
      : width_(std::max<uint64_t>(1, duration / std::max<size_t>(buckets, 1) + 1)) {}

  uint64_t width() const { return width_; }
  // Each bucket's highest and last moment (range_flame.h), once json() closed the last.
  const std::vector<TimeBucket>& buckets() const { return buckets_; }

  void add(const Sample& s) {
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

  // `bands`: how many of SiteBands::Values's bands are in use (then other).
  Json json(size_t bands) {
    if (open_) flush();
    Json t = Json::array(), tracked = Json::array(), footprint = Json::array(), context = Json::array();
    std::vector<Json> by_band(bands + 1, Json::array());
    for (const Sample& s : out_) {
      t.push_back(s.t);
      tracked.push_back(s.tracked);
      footprint.push_back(s.footprint);
      context.push_back(s.context);
      for (size_t b = 0; b < bands; ++b) by_band[b].push_back(s.bands[b]);
      by_band[bands].push_back(s.bands[SiteBands::kBands]);
    }
    return Json{{"t", t}, {"tracked", tracked}, {"footprint", footprint}, {"context", context}, {"bands", by_band}};
  }

 private:
  void flush() {
    auto moment = [](const Sample& x) { return BucketMoment{x.t, x.tracked, x.event}; };
    buckets_.push_back(TimeBucket{bucket_, moment(max_), moment(last_)});
    Sample s[3] = {min_, max_, last_};
    std::sort(std::begin(s), std::end(s), [](const Sample& a, const Sample& b) { return a.t < b.t; });
    for (const Sample& x : s)
      if (out_.empty() || out_.back().t != x.t || out_.back().tracked != x.tracked) out_.push_back(x);
    open_ = false;
  }

  uint64_t width_;
  bool open_ = false;
  uint64_t bucket_ = 0;
  Sample min_, max_, last_;
  std::vector<Sample> out_;
  std::vector<TimeBucket> buckets_;
};

// Frames the page's flame graph folds away unless asked to show every frame: CUDA's and
// the tracer's, allocators', framework dispatch's and the interpreter's, and Python frames
// that are not the user's (call_site_rule.h): a PyTorch icicle was mostly
// c10::impl::wrap_kernel_functor_unboxed_ and at::_ops, a pytest one sixty frames of
// pluggy and the interpreter before the test's own line.
bool folds(const Frame& f) { return f.python ? !is_user_python(f) : is_foreign_native(f); }

// Frame labels and call sites, interned: a flame graph or an address map names them by index.
class Names {
 public:
  Names(const Trace& trace, const Stacks& stacks) : trace_(trace), stacks_(stacks) {}

  // Outermost first, as an icicle draws them.
  const std::vector<uint32_t>& path(uint32_t stack_id, uint32_t python_stack_id) {
    const uint64_t key = uint64_t(stack_id) << 32 | python_stack_id;
    auto it = paths_.find(key);
    if (it != paths_.end()) return it->second;
    std::vector<uint32_t> p;
    for (const Frame& f : frames(stack_id, python_stack_id, SIZE_MAX)) p.push_back(label(f));
    if (p.empty()) p.push_back(intern("(no stack recorded)"));
    std::reverse(p.begin(), p.end());
    return paths_.emplace(key, std::move(p)).first->second;
  }

  // The call site's index in sites(): its label, library and first frames.
  uint32_t site(uint32_t stack_id, uint32_t python_stack_id) {
    const CallSite cs = stacks_.call_site(stack_id);
    const uint64_t key = uint64_t(cs.node) << 32 | python_stack_id;
    auto it = site_index_.find(key);
    if (it != site_index_.end()) return it->second;
    Json fr = Json::array();
    for (const Frame& f : from_user_frame(stack_id, python_stack_id, 8)) fr.push_back(label(f));
    sites_.push_back(Json{{"library", printable(cs.library)}, {"frames", fr}});
    return site_index_.emplace(key, uint32_t(sites_.size() - 1)).first->second;
  }

  const Json& sites() const { return sites_; }
  Json labels() const { return Json(labels_); }
  Json label_folds() const { return Json(folds_); }

 private:
  // Innermost first, from the call site: the frames the text report shows.
  std::vector<Frame> frames(uint32_t stack_id, uint32_t python_stack_id, size_t max) const {
    const CallSite cs = stacks_.call_site(stack_id);
    std::vector<Frame> native =
        cs.node ? stacks_.frames(cs.node, python_stack_id ? SIZE_MAX : max) : std::vector<Frame>{};
    if (python_stack_id) {
      native = merge_stacks(native, python_frames(trace_, python_stack_id));
      if (native.size() > max) native.resize(max);
    }
    return native;
  }

  // From the user's frame (call_site_rule.h) outwards: what a call-site table names.
  std::vector<Frame> from_user_frame(uint32_t stack_id, uint32_t python_stack_id, size_t max) const {
    std::vector<Frame> all = frames(stack_id, python_stack_id, SIZE_MAX);
    const UserSite us = users_.of(stack_id, python_stack_id);
    const auto ips = stacks_.ips(us.node);
    size_t at = 0;
    for (int python = 0; at < all.size(); ++at) {
      if (us.from_python ? all[at].python && python++ == us.python
                         : !all[at].python && !ips.empty() && all[at].ip == ips[0])
        break;
    }
    if (at == all.size()) at = 0;  // not in the merged stack: the call site stands
    std::vector<Frame> out(all.begin() + long(at), all.begin() + long(std::min(all.size(), at + max)));
    return out;
  }

  uint32_t label(const Frame& f) { return intern(printable(describe(f, FrameStyle::kFlame)), folds(f)); }

  uint32_t intern(const std::string& s, bool fold = false) {
    auto [it, fresh] = label_index_.emplace(s, uint32_t(labels_.size()));
    if (fresh) labels_.push_back(s), folds_.push_back(fold ? 1 : 0);
    return it->second;
  }

  const Trace& trace_;
  const Stacks& stacks_;
  UserSites users_{stacks_};
  std::unordered_map<uint64_t, std::vector<uint32_t>> paths_;
  std::unordered_map<std::string, uint32_t> label_index_;
  std::vector<std::string> labels_;
  std::vector<int> folds_;  // per label: 1 when the flame graph folds it (folds())
  std::unordered_map<uint64_t, uint32_t> site_index_;
  Json sites_ = Json::array();
};

// An icicle of live bytes: [label, bytes, [children...]], the root labelled -1.
class Flame {
 public:
  void add(const std::vector<uint32_t>& path, uint64_t bytes) {
    size_t n = 0;
    nodes_[0].bytes += bytes;
    for (uint32_t label : path) {
      auto [it, fresh] = nodes_[n].children.emplace(label, nodes_.size());
      const size_t child = it->second;  // before a push_back moves nodes_
      if (fresh) nodes_.push_back(Node{int64_t(label), 0, {}});
      n = child;
      nodes_[n].bytes += bytes;
    }
  }
  Json json(size_t n = 0) const {
    Json kids = Json::array();
    for (const auto& [label, child] : nodes_[n].children) kids.push_back(json(child));
    return Json::array({nodes_[n].label, nodes_[n].bytes, kids});
  }

 private:
  struct Node {
    int64_t label = -1;
    uint64_t bytes = 0;
    std::map<uint32_t, size_t> children;
  };
  std::vector<Node> nodes_{Node{}};
};

struct Stop {
  std::string kind;     // "peak", "failed", "end", "spaced"
  int32_t device = -1;  // the device whose peak or failure it is; -1 for all
};

// The address map (arenas of granules, allocations by call site) and the flame graph of
// one device at one moment. Returns how many allocations it drew.
size_t device_moment(const Replayer& r, const DeviceState& s, uint64_t start_ns, uint64_t at, Names& names, Json& out) {
  const FragmentationFigures f = s.frag.figures();
  const uint64_t g = s.frag.granule();
  std::unordered_map<uint64_t, const LiveAlloc*> by_address;
  const std::vector<LiveAlloc> live = r.live(s.device);
  for (const LiveAlloc& a : live)
    if (a.address) by_address.emplace(a.address, &a);

  // Arenas and gaps as fragmentation.h defines them: neighbours share an arena when the
  // granule-rounded end of one reaches the granule-rounded start of the next.
  Json arenas = Json::array(), allocs = Json::array(), largest = nullptr;
  uint64_t arena_start = 0, prev_end = 0;
  bool first = true;
  auto gap = [&](uint64_t from, uint64_t to) {
    if (to > from && largest.is_null() && to - from == f.largest_gap) largest = Json::array({from, to - from});
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
      arenas.push_back(Json::array({arena_start, arena_end}));
      arena_start = lo;
      gap(lo, start);
    }
    first = false;
    prev_end = start + size;
    auto it = by_address.find(start);
    // A VMM mapping has no allocation of its own at its address: its handle was made apart.
    const int64_t site =
        it == by_address.end() ? -1 : int64_t(names.site(it->second->stack_id, it->second->python_stack_id));
    const uint64_t born = it == by_address.end() ? at : it->second->time_ns - std::min(it->second->time_ns, start_ns);
    for (uint64_t v : {start, size}) allocs.push_back(v);
    allocs.push_back(site);
    allocs.push_back(born);
  }
  if (!first) {
    const uint64_t arena_end = (prev_end + g - 1) / g * g;
    gap(prev_end, arena_end);
    arenas.push_back(Json::array({arena_start, arena_end}));
  }

  Flame flame;
  for (const LiveAlloc& a : live)
    if (format::holds_device_memory(a.kind)) flame.add(names.path(a.stack_id, a.python_stack_id), a.size);

  out = Json{{"device", s.device},
             {"tracked", s.device_bytes},
             {"live_bytes", f.live_bytes},
             {"live_count", f.live_count},
             {"arena_bytes", f.arena_bytes},
             {"arena_count", f.arena_count},
             {"gap_bytes", f.gap_bytes},
             {"largest_gap", f.largest_gap},
             {"gap_ratio", f.gap_ratio()},
             {"external_fragmentation", f.external_fragmentation()},
             {"granule", g},
             {"arenas", arenas},
             {"largest_gap_at", largest},
             {"allocs", allocs},
             {"flame", flame.json()}};
  return size_t(f.live_count);
}

}  // namespace

Json html_data(const Trace& trace, const Report& rep, const Stacks& stacks, const HtmlDataOptions& opt) {
  return html_data(trace, MemoryEvents(trace.events), rep, stacks, opt);
}

Json html_data(const Trace& trace, const EventSource& events, const Report& rep, const Stacks& stacks,
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

  Names names(trace, stacks);
  SiteBands bands(rep, stacks);
  std::map<int32_t, Timeline> timelines;
  std::map<int32_t, Json> failed_times;
  Json moments = Json::array();
  size_t spent = 0;
  uint64_t first_event = UINT64_MAX, last_event = 0;
  Replayer r(trace.granule());
  events.scan([&](const Event& e, size_t i) {
    if ((i & 0xfff) == 0) progress("replaying", i, n);
    r.apply(e, i);
    first_event = std::min(first_event, rel(e.time_ns));
    last_event = std::max(last_event, rel(e.time_ns));
    bands.observe(e);
    auto dit = r.devices().find(e.device);
    if (dit != r.devices().end() && e.device >= 0) {
      const DeviceState& s = dit->second;
      auto [tl, fresh] = timelines.try_emplace(e.device, rep.duration_ns, opt.buckets);
      tl->second.add(Sample{rel(e.time_ns), s.device_bytes, s.frag.figures().arena_bytes, s.context_bytes,
                            bands.values(e.device, s.device_bytes), i});
    }
    if (e.op == format::Op::kAlloc && e.result != 0) failed_times[e.device].push_back(rel(e.time_ns));
    auto st = stops.find(i);
    if (st == stops.end()) return;
    const Stop& stop = st->second;
    // Spaced moments only while the budget lasts: the page must stay small for a big trace.
    if (stop.kind == "spaced") {
      size_t live = 0;
      for (const auto& [d, s] : r.devices())
        if (d >= 0) live += s.frag.figures().live_count;
      if (spent + live > opt.alloc_budget) return;
    }
    Json devs = Json::array();
    for (const auto& [d, s] : r.devices()) {
      if (d < 0) continue;
      Json dj;
      const size_t drawn = device_moment(r, s, start, rel(e.time_ns), names, dj);
      if (stop.kind == "spaced") spent += drawn;
      devs.push_back(std::move(dj));
    }
    moments.push_back(
        Json{{"t", rel(e.time_ns)}, {"event", i}, {"kind", stop.kind}, {"device", stop.device}, {"devices", devs}});
  });

  Json devices = Json::array();
  for (auto& [d, tl] : timelines) {
    Json nvml_t = Json::array(), nvml_used = Json::array();
    for (const Snapshot& snap : trace.snapshots)
      if (const DeviceSnapshot* ds = snap.find(d); ds && ds->nvml_process_used != format::kUnknown64) {
        nvml_t.push_back(rel(snap.time_ns));
        nvml_used.push_back(ds->nvml_process_used);
      }
    // Inside a caching allocator (reports/cache/blocks.h): its allocated bytes (the tensors)
    // beside the reserved segments the tracked bytes show.
    Json cache = nullptr;
    for (const BlockDevice& bd : rep.blocks.devices)
      if (bd.device == d) {
        Json t = Json::array(), allocated = Json::array(), reserved = Json::array();
        for (const BlockDevice::Moment& m : bd.timeline) {
          t.push_back(rel(m.inside.time_ns));
          allocated.push_back(m.allocated);
          reserved.push_back(m.reserved);
        }
        cache = Json{{"allocator", rep.blocks.allocator}, {"t", t}, {"allocated", allocated}, {"reserved", reserved}};
      }
    devices.push_back(Json{{"device", d},
                           {"timeline", tl.json(bands.bands(d))},
                           {"band_sites", bands.sites_json(d)},
                           {"nvml", Json{{"t", nvml_t}, {"used", nvml_used}}},
                           {"cache", cache},
                           {"failed", failed_times.count(d) ? failed_times[d] : Json::array()}});
  }

  Json marks = Json::array();
  for (size_t i = 0; i < trace.marks.size() && i < opt.max_marks; ++i)
    marks.push_back(Json::array({rel(trace.marks[i].time_ns), printable(trace.marks[i].name)}));

  // The time charts' one range: from the first memory event or mark to the last. A reading
  // taken before or after (NVML's at exit) would stretch the axis and squeeze the run into
  // one edge; a trace with neither keeps its whole duration.
  uint64_t first = n ? first_event : UINT64_MAX, last = n ? last_event : 0;
  for (const Mark& m : trace.marks) {
    first = std::min(first, rel(m.time_ns));
    last = std::max(last, rel(m.time_ns));
  }
  if (first > last) first = 0, last = rep.duration_ns;

  // The flame graph over a time range (range_flame.h): each bucket's highest moment from
  // the timelines, then the live bytes by stack there from one more replay.
  RangeFlame flames(Timeline(rep.duration_ns, opt.buckets).width(), first, last);
  for (const auto& [d, tl] : timelines) flames.add_device(d, tl.buckets());
  const std::vector<size_t> flame_stops = flames.stops();
  const RangeFlame::PathOf path_of = [&](uint32_t stack_id, uint32_t python_stack_id) -> const std::vector<uint32_t>& {
    return names.path(stack_id, python_stack_id);
  };
  if (!flame_stops.empty())
    replay_to_stops(events, trace.granule(), flame_stops,
                    [&](size_t k, const Replayer& at) { flames.at(flame_stops[k], at, path_of); });

  return Json{{"start_ns", start},
              {"duration_ns", rep.duration_ns},
              {"devices", devices},
              {"time_range_ns", Json::array({first, last})},
              {"marks", marks},
              {"marks_omitted", trace.marks.size() > opt.max_marks ? trace.marks.size() - opt.max_marks : 0},
              {"moments", moments},
              {"range_flame", flames.json()},
              {"labels", names.labels()},
              {"label_folds", names.label_folds()},
              {"sites", names.sites()}};
}

}  // namespace cumemtrace
