// `cumemtrace html`'s data: html_data.h says what is written.
#include "render/page/html_data.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "base/escape.h"
#include "base/json_object.h"
#include "render/page/allocation_views.h"
#include "render/page/range_flame.h"
#include "render/page/site_bands.h"
#include "stacks/call_site_rule.h"
#include "stacks/python_stacks.h"

namespace cumemtrace {
namespace {

using Json = nlohmann::ordered_json;

// `bands`: how many of SiteBands::Values's bands are in use (then other).
Json timeline_json(const PageTimeline& tl, size_t bands) {
  Json t = Json::array(), tracked = Json::array(), footprint = Json::array(), context = Json::array();
  std::vector<Json> by_band(bands + 1, Json::array());
  for (const PageSample& s : tl.samples()) {
    t.push_back(s.t);
    tracked.push_back(s.tracked);
    footprint.push_back(s.footprint);
    context.push_back(s.context);
    for (size_t b = 0; b < bands; ++b) by_band[b].push_back(s.bands[b]);
    by_band[bands].push_back(s.bands[SiteBands::kBands]);
  }
  return Json{{"t", std::move(t)},
              {"tracked", std::move(tracked)},
              {"footprint", std::move(footprint)},
              {"context", std::move(context)},
              {"bands", std::move(by_band)}};
}

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
    const std::vector<Frame> fs = frames(stack_id, python_stack_id, SIZE_MAX);
    const size_t startup = libc_startup_frames(fs);  // a stripped program's _start has no name to fold by
    for (size_t i = 0; i < fs.size(); ++i) p.push_back(label(fs[i], i + startup >= fs.size()));
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
    std::vector<Frame> fs = from_user_frame(stack_id, python_stack_id, 8);
    fs.resize(fs.size() - libc_startup_frames(fs));  // as the text views show a stack
    for (const Frame& f : fs) fr.push_back(label(f));
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

  uint32_t label(const Frame& f, bool startup = false) {
    return intern(printable(describe(f, FrameStyle::kFlame)), startup || folds(f));
  }

  uint32_t intern(const std::string& s, bool fold = false) {
    auto [it, fresh] = label_index_.emplace(s, uint32_t(labels_.size()));
    if (fresh) labels_.push_back(s), folds_.push_back(fold ? 1 : 0);
    else if (fold) folds_[it->second] = 1;  // a stripped _start, met first as a call site's frame
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
    return Json::array({nodes_[n].label, nodes_[n].bytes, std::move(kids)});
  }

 private:
  struct Node {
    int64_t label = -1;
    uint64_t bytes = 0;
    std::map<uint32_t, size_t> children;
  };
  std::vector<Node> nodes_{Node{}};
};

// The address map and the flame graph of one device at one moment, its stacks named in
// the order the moment holds them. Its arrays are moved into the object, never copied:
// with 100 k allocations live, copies of `allocs` (four values each) were about a tenth of `html`
// (docs/performance.md, "`html` within 2× of `report`").
Json device_moment_json(const DeviceMoment& m, Names& names) {
  const FragmentationFigures& f = m.figures;
  Json arenas = Json::array(), allocs = Json::array(), largest = nullptr;
  for (const auto& [from, to] : m.arenas) arenas.push_back(Json::array({from, to}));
  if (m.largest_gap_at) largest = Json::array({m.largest_gap_at->first, m.largest_gap_at->second});
  allocs.get_ref<Json::array_t&>().reserve(4 * m.allocs.size());
  for (const MapAlloc& a : m.allocs) {
    const int64_t site = a.has_stacks ? int64_t(names.site(a.stack_id, a.python_stack_id)) : -1;
    for (uint64_t v : {a.start, a.size}) allocs.push_back(v);
    allocs.push_back(site);
    allocs.push_back(a.born);
  }
  Flame flame;
  for (const StackBytes& s : m.flame) flame.add(names.path(s.stack_id, s.python_stack_id), s.bytes);
  return Json{{"device", m.device},
              {"tracked", m.tracked},
              {"live_bytes", f.live_bytes},
              {"live_count", f.live_count},
              {"arena_bytes", f.arena_bytes},
              {"arena_count", f.arena_count},
              {"gap_bytes", f.gap_bytes},
              {"largest_gap", f.largest_gap},
              {"gap_ratio", f.gap_ratio()},
              {"external_fragmentation", f.external_fragmentation()},
              {"granule", m.granule},
              {"arenas", std::move(arenas)},
              {"largest_gap_at", std::move(largest)},
              {"allocs", std::move(allocs)},
              {"flame", flame.json()}};
}

}  // namespace

Json html_data(const Trace& trace, const Report& rep, const Stacks& stacks, PageModel&& page,
               const HtmlDataOptions& opt) {
  const uint64_t start = rep.start_ns;
  auto rel = [&](uint64_t t) { return t - std::min(t, start); };

  Names names(trace, stacks);
  Json moments = Json::array();
  for (PageMoment& m : page.moments) {
    Json devs = Json::array();
    for (const DeviceMoment& d : m.devices) devs.push_back(device_moment_json(d, names));
    moments.push_back(
        Json{{"t", m.t}, {"event", m.event}, {"kind", m.kind}, {"device", m.device}, {"devices", std::move(devs)}});
    std::vector<DeviceMoment>().swap(m.devices);
  }

  Json devices = Json::array();
  for (const auto& [d, tl] : page.timelines) {
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
    const auto failed = page.failed_times.find(d);
    devices.push_back(Json{{"device", d},
                           {"timeline", timeline_json(tl, page.bands->bands(d))},
                           {"band_sites", band_sites_json(*page.bands, d)},
                           {"nvml", Json{{"t", nvml_t}, {"used", nvml_used}}},
                           {"cache", cache},
                           {"failed", failed != page.failed_times.end() ? Json(failed->second) : Json::array()}});
  }

  Json marks = Json::array();
  for (size_t i = 0; i < trace.marks.size() && i < opt.max_marks; ++i)
    marks.push_back(Json::array({rel(trace.marks[i].time_ns), printable(trace.marks[i].name)}));

  const PathOf path_of = [&](uint32_t stack_id, uint32_t python_stack_id) -> const std::vector<uint32_t>& {
    return names.path(stack_id, python_stack_id);
  };
  Json range_flame = range_flame_json(page.flames, path_of);

  // Its 12 keys and the report's Summary lines, which `html` adds (cli/html_command.cpp).
  Json out = reserved_object<Json>(13);
  out["start_ns"] = start;
  out["duration_ns"] = rep.duration_ns;
  out["devices"] = std::move(devices);
  out["time_range_ns"] = Json::array({page.first, page.last});
  out["marks"] = std::move(marks);
  out["marks_omitted"] = trace.marks.size() > opt.max_marks ? trace.marks.size() - opt.max_marks : 0;
  out["moments"] = std::move(moments);
  out["range_flame"] = std::move(range_flame);
  out["labels"] = names.labels();
  out["label_folds"] = names.label_folds();
  out["sites"] = names.sites();
  out["allocations"] = allocation_views_json(page.allocations, ViewContext{stacks, opt.top, opt.frames});
  return out;
}

}  // namespace cumemtrace
