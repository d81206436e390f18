#include "reports/pools.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "stacks/call_site_rule.h"
#include "stacks/python_stacks.h"

namespace cumemtrace {
namespace {

using format::NvtxMemOp;

// [address, address + size), the end saturated: a range past 2^64 ends there.
uint64_t end_of(uint64_t address, uint64_t size) { return size > UINT64_MAX - address ? UINT64_MAX : address + size; }

// The regions live at one moment, replayed from the trace's NvtxMem records (pools.h's
// rules); run twice: once to find each heap's peak, once to read the figures there.
class RegionReplay {
 public:
  struct Live {
    size_t heap, site;
    uint64_t size;
    size_t registered_at;  // its register record
  };
  static constexpr size_t kNone = SIZE_MAX;
  // `names`: each register record's region's name (names_given() of a first replay of the
  // same records); null: every region unnamed.
  RegionReplay(const Trace& trace, const Stacks& stacks, std::vector<uint64_t> boundaries, size_t frames,
               const std::vector<std::string>* names)
      : trace_(trace), stacks_(stacks), users_(stacks), boundaries_(std::move(boundaries)), frames_(frames),
        names_(names), given_(trace.nvtx_mem.size()) {}

  // Applies record `i`; returns the heap it made or whose regions it may have added to
  // (kNone: none).
  // `before_gone(h)` runs when heap h is unregistered, before its regions go.
  template <class BeforeGone>
  size_t apply(size_t i, BeforeGone&& before_gone) {
    const NvtxMemEvent& m = trace_.nvtx_mem[i];
    size_t grew = kNone;
    for (; boundary_ < boundaries_.size() && m.time_ns > boundaries_[boundary_]; ++boundary_) take_boundary();
    switch (m.op) {
      case NvtxMemOp::kHeapRegister: {
        PoolHeap h;
        h.handle = m.heap, h.name = m.name, h.usage = m.usage, h.declared = true;
        h.address = m.address, h.size = m.size, h.registered_ns = m.time_ns;
        grew = add_heap(std::move(h));  // its peak is its empty state until a region comes
        break;
      }
      case NvtxMemOp::kHeapReset:
        if (m.heap == 0) {  // the process-wide heap: every heap's regions
          for (const auto& [handle, h] : current_) ++heaps_[h].resets, drop_heap(h);
        } else if (auto it = current_.find(m.heap); it != current_.end()) {
          ++heaps_[it->second].resets;
          drop_heap(it->second);
        } else {
          ++unknown_;  // a heap not registered then: no heap made of it
        }
        break;
      case NvtxMemOp::kHeapUnregister: {
        auto it = current_.find(m.heap);
        if (it == current_.end()) {
          ++unknown_;
          break;
        }
        const size_t h = it->second;
        before_gone(h);
        heaps_[h].gone_ns = m.time_ns;
        drop_heap(h);
        current_.erase(it);
        break;
      }
      case NvtxMemOp::kRegionRegister: {
        if (auto it = live_.find(m.address); it != live_.end()) drop(it);  // the address reused, unsaid
        const size_t h = heap(m.heap);
        PoolHeap& ph = heaps_[h];
        ++ph.regions_registered, ph.bytes_registered += m.size;
        if (ph.size && (m.address < ph.address || end_of(m.address, m.size) > end_of(ph.address, ph.size)))
          ++ph.outside;
        const UserSite us = users_.of(m.stack_id, m.python_stack_id);
        const size_t s = site(h, us, m.python_stack_id, names_ ? (*names_)[i] : std::string());
        ++sites_[s].second.registered;
        if (!boundaries_.empty() && m.time_ns > boundaries_.front() && m.time_ns <= boundaries_.back())
          ++sites_[s].second.registered_within;
        live_[m.address] = {h, s, m.size, i};
        by_heap_[h].insert(m.address);
        add(h, s, int64_t(m.size), 1);
        grew = h;
        break;
      }
      case NvtxMemOp::kRegionResize: {
        auto it = live_.find(m.address);
        if (it == live_.end()) {
          ++unknown_;
          break;
        }
        add(it->second.heap, it->second.site, int64_t(m.size) - int64_t(it->second.size), 0);
        it->second.size = m.size;
        grew = it->second.heap;
        break;
      }
      case NvtxMemOp::kRegionUnregister: {
        auto it = live_.find(m.address);
        if (it == live_.end()) ++unknown_;
        else drop(it);
        break;
      }
      case NvtxMemOp::kRegionName: {
        auto it = live_.find(m.address);
        if (it == live_.end()) ++unknown_;
        else given_[it->second.registered_at] = m.name;  // the last name it is given, for its whole life
        break;
      }
    }
    return grew;
  }
  // After the last record: the boundaries at or past it.
  void finish() {
    for (; boundary_ < boundaries_.size(); ++boundary_) take_boundary();
  }

  uint64_t bytes(size_t heap) const { return bytes_[heap]; }
  uint64_t count(size_t heap) const { return count_[heap]; }
  std::vector<PoolHeap>& heaps() { return heaps_; }
  std::vector<std::pair<size_t, PoolSite>>& sites() { return sites_; }
  uint64_t unknown_references() const { return unknown_; }
  // By register record: the last name its region was given while it lived.
  const std::vector<std::string>& names_given() const { return given_; }

  // Heap h's figures now: each site's live bytes and count into (bytes, count) of `into`,
  // and the fragmentation inside it.
  FragmentationFigures read(size_t h, uint64_t PoolSite::*bytes, uint64_t PoolSite::*count) {
    std::vector<std::pair<uint64_t, uint64_t>> ranges;  // (start, end) of its regions, by start
    for (const uint64_t address : by_heap_[h]) {
      const Live& l = live_.at(address);
      sites_[l.site].second.*bytes += l.size;
      ++(sites_[l.site].second.*count);
      ranges.emplace_back(address, end_of(address, l.size));
    }
    const PoolHeap& ph = heaps_[h];
    FragmentationFigures f;
    f.live_bytes = bytes_[h], f.live_count = count_[h];
    if (!ph.size) return f;
    // The heap's bytes no region covers, in runs (regions may overlap or stray outside).
    const uint64_t lo = ph.address, hi = end_of(ph.address, ph.size);
    uint64_t covered_to = lo;
    auto gap = [&](uint64_t from, uint64_t to) {
      if (to <= from) return;
      f.gap_bytes += to - from;
      f.largest_gap = std::max(f.largest_gap, to - from);
    };
    for (const auto& [start, end] : ranges) {
      if (end <= lo || start >= hi) continue;
      gap(covered_to, std::max(start, lo));
      covered_to = std::max(covered_to, std::min(end, hi));
    }
    gap(covered_to, hi);
    f.arena_bytes = ph.size, f.arena_count = 1;
    return f;
  }

 private:
  size_t heap(uint64_t handle) {
    if (auto it = current_.find(handle); it != current_.end()) return it->second;
    PoolHeap h;  // not registered when used
    h.handle = handle;
    return add_heap(std::move(h));
  }
  size_t add_heap(PoolHeap h) {
    current_[h.handle] = heaps_.size();
    heaps_.push_back(std::move(h));
    bytes_.push_back(0), count_.push_back(0);
    by_heap_.emplace_back();
    return heaps_.size() - 1;
  }
  // Heap h's regions all go (a reset, an unregister).
  void drop_heap(size_t h) {
    const std::set<uint64_t> addresses = std::move(by_heap_[h]);
    by_heap_[h].clear();
    for (const uint64_t a : addresses) drop(live_.find(a));
  }
  size_t site(size_t heap, const UserSite& us, uint32_t python, const std::string& name) {
    auto [it, fresh] = site_index_.try_emplace({heap, us.key, us.from_python, name}, sites_.size());
    if (fresh) {
      PoolSite s;
      s.name = name, s.node = us.node, s.key = us.key, s.from_python = us.from_python;
      s.frames = stacks_.frames(us.node, frames_);
      s.python_frames = user_python_frames(trace_, us, python);
      s.bytes_at.assign(boundaries_.size(), 0);
      sites_.emplace_back(heap, std::move(s));
      current_bytes_.push_back(0);
    }
    return it->second;
  }
  void add(size_t h, size_t s, int64_t bytes, int64_t count) {
    bytes_[h] = uint64_t(int64_t(bytes_[h]) + bytes);
    count_[h] = uint64_t(int64_t(count_[h]) + count);
    current_bytes_[s] = uint64_t(int64_t(current_bytes_[s]) + bytes);
  }
  void drop(std::map<uint64_t, Live>::iterator it) {
    add(it->second.heap, it->second.site, -int64_t(it->second.size), -1);
    by_heap_[it->second.heap].erase(it->first);
    live_.erase(it);
  }
  void take_boundary() {
    for (size_t s = 0; s < sites_.size(); ++s) sites_[s].second.bytes_at[boundary_] = current_bytes_[s];
  }

  const Trace& trace_;
  const Stacks& stacks_;
  const UserSites users_;
  const std::vector<uint64_t> boundaries_;
  const size_t frames_;
  const std::vector<std::string>* names_;
  std::vector<std::string> given_;
  size_t boundary_ = 0;
  std::vector<PoolHeap> heaps_;
  std::vector<uint64_t> bytes_, count_;             // by heap: live region bytes and count
  std::unordered_map<uint64_t, size_t> current_;    // a registered heap's handle -> heaps_
  std::map<uint64_t, Live> live_;                   // live regions by address
  std::vector<std::set<uint64_t>> by_heap_;         // by heap: its live regions' addresses
  std::vector<std::pair<size_t, PoolSite>> sites_;  // (heap, site)
  std::vector<uint64_t> current_bytes_;             // each site's live bytes now
  std::map<std::tuple<size_t, uint64_t, bool, std::string>, size_t> site_index_;
  uint64_t unknown_ = 0;
};

// Where each declared heap with a range lies: the last successful device-memory allocation
// made before its register whose bytes hold its start, and not freed before it.
void place(const EventSource& events, std::vector<PoolHeap>& heaps) {
  std::vector<std::pair<uint64_t, size_t>> starts;  // (address, heap), sorted
  for (size_t h = 0; h < heaps.size(); ++h)
    if (heaps[h].declared && heaps[h].size) starts.emplace_back(heaps[h].address, h);
  if (starts.empty()) return;
  std::sort(starts.begin(), starts.end());
  std::unordered_map<uint64_t, std::vector<size_t>> held_by;  // an allocation's address -> heaps placed in it
  events.scan([&](const Event& e, size_t) {
    if (e.result != 0 || !format::holds_device_memory(e.kind)) return;
    if (e.op == format::Op::kFree) {
      auto it = held_by.find(e.address);
      if (it == held_by.end()) return;
      for (size_t h : it->second)
        if (e.time_ns <= heaps[h].registered_ns && heaps[h].backing_address == e.address)
          heaps[h].device = -1, heaps[h].backing_address = heaps[h].backing_size = 0;
      held_by.erase(it);
      return;
    }
    if (e.op != format::Op::kAlloc || !e.size) return;
    for (auto it = std::lower_bound(starts.begin(), starts.end(), std::make_pair(e.address, size_t(0)));
         it != starts.end() && it->first < end_of(e.address, e.size); ++it) {
      PoolHeap& h = heaps[it->second];
      if (e.time_ns > h.registered_ns) continue;
      h.device = e.device, h.backing_address = e.address, h.backing_size = e.size;
      held_by[e.address].push_back(it->second);
    }
  });
}

}  // namespace

Pools pool_report(const Trace& trace, const EventSource& events, const Stacks& stacks, const Growth& growth,
                  size_t frames) {
  Pools out;
  if (trace.nvtx_mem.empty()) return out;
  const size_t n = trace.nvtx_mem.size();
  const auto nothing = [](size_t) {};

  // First: each heap's peak, the record after which its regions' bytes are at their most
  // (the first time; a heap whose regions never held a byte: when it came), and each
  // region's name.
  struct Peak {
    size_t at = SIZE_MAX;
    uint64_t bytes = 0, count = 0, time_ns = 0;
  };
  std::vector<Peak> peaks;
  std::vector<std::string> names;
  {
    RegionReplay r(trace, stacks, {}, frames, nullptr);
    for (size_t i = 0; i < n; ++i) {
      const size_t h = r.apply(i, nothing);
      peaks.resize(r.heaps().size());
      if (h != RegionReplay::kNone && (peaks[h].at == SIZE_MAX || r.bytes(h) > peaks[h].bytes))
        peaks[h] = {i, r.bytes(h), r.count(h), trace.nvtx_mem[i].time_ns};
    }
    names = r.names_given();
  }

  // Then the same records again: the figures at each peak and each end, and at growth's
  // boundaries.
  RegionReplay r(trace, stacks, growth.boundaries_ns, frames, &names);
  auto at_end = [&](size_t h) {
    PoolHeap& ph = r.heaps()[h];
    ph.end_bytes = r.bytes(h), ph.end_count = r.count(h);
    ph.inside_at_end = r.read(h, &PoolSite::end_bytes, &PoolSite::end_count);
  };
  for (size_t i = 0; i < n; ++i) {
    const size_t h = r.apply(i, at_end);
    if (h != RegionReplay::kNone && peaks[h].at == i) {
      PoolHeap& ph = r.heaps()[h];
      ph.peak_bytes = peaks[h].bytes, ph.peak_count = peaks[h].count;
      ph.peak_time_ns = peaks[h].bytes ? peaks[h].time_ns : 0;  // 0: its regions never held a byte
      ph.inside_at_peak = r.read(h, &PoolSite::peak_bytes, &PoolSite::peak_count);
    }
  }
  r.finish();
  for (size_t h = 0; h < r.heaps().size(); ++h)
    if (!r.heaps()[h].gone_ns) at_end(h);  // an unregistered heap's end was read as it went

  std::vector<PoolHeap>& heaps = r.heaps();
  for (auto& [h, s] : r.sites()) {
    const GrowthFit fit = classify_growth(s.bytes_at, s.registered_within);
    s.cls = fit.cls, s.growth_per_iteration = fit.per_iteration, s.growth_min = fit.min, s.growth_max = fit.max;
    heaps[h].sites.push_back(std::move(s));
  }
  place(events, heaps);  // a pass over the events, only for a trace with pools
  for (PoolHeap& h : heaps)
    std::stable_sort(h.sites.begin(), h.sites.end(), [](const PoolSite& a, const PoolSite& b) {
      const bool la = a.cls == GrowthSite::Class::kLeak, lb = b.cls == GrowthSite::Class::kLeak;
      return std::tuple(la, la ? a.growth_per_iteration : 0, a.peak_bytes, a.end_bytes, b.name) >
             std::tuple(lb, lb ? b.growth_per_iteration : 0, b.peak_bytes, b.end_bytes, a.name);
    });
  std::stable_partition(heaps.begin(), heaps.end(), [](const PoolHeap& h) { return h.declared; });
  out.heaps = std::move(heaps);
  out.unknown_references = r.unknown_references();
  return out;
}

}  // namespace cumemtrace
