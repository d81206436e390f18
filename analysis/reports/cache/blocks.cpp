#include "reports/cache/blocks.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "base/plural.h"
#include "base/units.h"
#include "read/in_file_order.h"
#include "reports/report.h"
#include "stacks/call_site_rule.h"
#include "stacks/python_stacks.h"

namespace cumemtrace {
namespace {

using format::BlockOp;

// The blocks live as the records are applied in file order, each under its site.
class BlockReplay {
 public:
  BlockReplay(const Trace& trace, const Stacks& stacks, std::vector<uint64_t> boundaries, size_t frames)
      : trace_(trace), stacks_(stacks), users_(stacks), boundaries_(std::move(boundaries)), frames_(frames) {}

  // Applies a record (its boundaries before it first).
  void apply(const BlockEvent& b) {
    for (; boundary_ < boundaries_.size() && b.time_ns > boundaries_[boundary_]; ++boundary_) take_boundary();
    BlockDevice& d = device(b.device);
    if (b.op == BlockOp::kAlloc) {
      ++d.allocations;
      const size_t s = site(b);
      ++sites_[s].allocations;
      if (!boundaries_.empty() && b.time_ns > boundaries_.front() && b.time_ns <= boundaries_.back())
        ++sites_[s].allocations_within;
      if (auto old = live_.find(key(b)); old != live_.end()) drop(old);  // its free was not recorded
      live_[key(b)] = {s, b.size, boundary_};
      add(s, int64_t(b.size), 1);
      fresh_[s] += b.size;
    } else if (b.op == BlockOp::kFree) {
      ++d.frees;
      if (auto it = live_.find(key(b)); it != live_.end()) drop(it);
      else ++d.unknown_frees;
    }
    if (b.allocated != format::kUnknown64) d.end_allocated = b.allocated;
    if (b.reserved != format::kUnknown64) {
      d.end_reserved = b.reserved;
      if (b.reserved > d.peak_reserved) d.peak_reserved = b.reserved, d.peak_reserved_time_ns = b.time_ns;
    }
  }
  void finish() {
    for (; boundary_ < boundaries_.size(); ++boundary_) take_boundary();
  }

  // The allocator's allocated bytes after record `b`, or the sum of the blocks live when
  // it did not say.
  uint64_t allocated_after(const BlockEvent& b) const {
    return b.allocated != format::kUnknown64 ? b.allocated : bytes_.count(b.device) ? bytes_.at(b.device) : 0;
  }

  // Each site of `device`: its live bytes and count now into (bytes, count).
  void read(int32_t device, uint64_t BlockSite::*bytes, uint64_t BlockSite::*count) {
    for (size_t s = 0; s < sites_.size(); ++s)
      if (sites_[s].device == device) sites_[s].*bytes = current_[s].first, sites_[s].*count = current_[s].second;
  }
  // The sites of `device` with blocks live now, largest first, at most `top`.
  std::vector<BlockSite> live_sites(int32_t device, size_t top) const {
    std::vector<BlockSite> out;
    for (size_t s = 0; s < sites_.size(); ++s)
      if (sites_[s].device == device && current_[s].first) {
        BlockSite row = sites_[s];
        row.end_bytes = current_[s].first, row.end_count = current_[s].second;
        row.bytes_at.clear(), row.carried_at.clear();
        out.push_back(std::move(row));
      }
    std::stable_sort(out.begin(), out.end(),
                     [](const BlockSite& a, const BlockSite& b) { return a.end_bytes > b.end_bytes; });
    if (out.size() > top) out.resize(top);
    return out;
  }

  std::map<int32_t, BlockDevice>& devices() { return devices_; }
  std::vector<BlockSite>& sites() { return sites_; }
  uint64_t live_count(int32_t device) const {
    uint64_t n = 0;
    for (size_t s = 0; s < sites_.size(); ++s)
      if (sites_[s].device == device) n += current_[s].second;
    return n;
  }

 private:
  struct Live {
    size_t site;
    uint64_t size;
    size_t epoch;  // the boundaries taken before it was allocated
  };
  static std::pair<int32_t, uint64_t> key(const BlockEvent& b) { return {b.device, b.address}; }
  BlockDevice& device(int32_t d) {
    auto [it, fresh] = devices_.try_emplace(d);
    if (fresh) it->second.device = d;
    return it->second;
  }
  size_t site(const BlockEvent& b) {
    const UserSite us = users_.of(b.stack_id, b.python_stack_id);
    auto [it, fresh] = index_.try_emplace({b.device, us.key, us.from_python}, sites_.size());
    if (fresh) {
      BlockSite s;
      s.device = b.device, s.node = us.node, s.key = us.key, s.from_python = us.from_python;
      s.python_stack = b.python_stack_id;
      s.frames = stacks_.frames(us.node, frames_);
      s.python_frames = user_python_frames(trace_, us, b.python_stack_id);
      s.bytes_at.assign(boundaries_.size(), 0);
      s.carried_at.assign(boundaries_.size(), 0);
      sites_.push_back(std::move(s));
      current_.emplace_back(0, 0);
      fresh_.push_back(0);
    }
    return it->second;
  }
  void add(size_t s, int64_t bytes, int64_t count) {
    current_[s].first = uint64_t(int64_t(current_[s].first) + bytes);
    current_[s].second = uint64_t(int64_t(current_[s].second) + count);
    uint64_t& dev = bytes_[sites_[s].device];
    dev = uint64_t(int64_t(dev) + bytes);
  }
  void drop(std::map<std::pair<int32_t, uint64_t>, Live>::iterator it) {
    add(it->second.site, -int64_t(it->second.size), -1);
    if (it->second.epoch == boundary_) fresh_[it->second.site] -= it->second.size;
    live_.erase(it);
  }
  // growth.h's carried_at without a walk of the live blocks: what is live less what was
  // allocated since the boundary before.
  void take_boundary() {
    for (size_t s = 0; s < sites_.size(); ++s) {
      sites_[s].bytes_at[boundary_] = current_[s].first;
      sites_[s].carried_at[boundary_] = boundary_ ? current_[s].first - fresh_[s] : 0;
      fresh_[s] = 0;
    }
  }

  const Trace& trace_;
  const Stacks& stacks_;
  const UserSites users_;
  const std::vector<uint64_t> boundaries_;
  const size_t frames_;
  size_t boundary_ = 0;
  std::map<int32_t, BlockDevice> devices_;
  std::vector<BlockSite> sites_;
  std::vector<std::pair<uint64_t, uint64_t>> current_;  // per site: live bytes and count now
  std::vector<uint64_t> fresh_;                         // per site: live bytes allocated since the last boundary
  std::map<std::tuple<int32_t, uint64_t, bool>, size_t> index_;
  std::map<std::pair<int32_t, uint64_t>, Live> live_;  // (device, address) -> the live block
  std::map<int32_t, uint64_t> bytes_;                  // per device: live block bytes
};

bool outside_the_cache(Cause c) {
  return c == Cause::kOtherProcesses || c == Cause::kPoolReserve || c == Cause::kGraphPool ||
         c == Cause::kContextAndUntracked;
}

// blocks.h's rule for an out-of-memory error the allocator raised.
Diagnosis diagnose_oom(const BlockOom& o, const std::string& allocator) {
  Diagnosis d;
  const uint64_t cached_free = o.reserved > o.allocated ? o.reserved - o.allocated : 0;
  d.figures = {{"request", o.request},
               {"allocated", o.allocated},
               {"reserved", o.reserved},
               {"free inside the cache", cached_free}};
  if (!o.driver_refused) {
    d.cause = Cause::kAllocatorLimit;
    d.summary = allocator + "'s allocator refused " + iec(o.request) +
                " on its own, with no driver call failing: " + iec(o.reserved) +
                " reserved and the request would pass its limit";
    d.advice = {
        "a per-process memory fraction (torch.cuda.set_per_process_memory_fraction) or another limit of "
        "the allocator's stops it: raise the limit, or make the live tensors (" +
        iec(o.allocated) + " allocated) fewer"};
  } else if (cached_free >= o.request && o.cache.pending && o.cache.free < o.request) {
    d.cause = Cause::kPendingFrees;
    d.figures.push_back({"pending free", o.cache.pending});
    d.summary = iec(o.cache.pending) + " of the " + iec(cached_free) + " free inside " + allocator +
                "'s cache was freed by the program but still waits on other streams' events, and what was free "
                "at once (" +
                iec(o.cache.free) + ") is less than the " + iec(o.request) + " asked for";
    d.advice = {
        "a tensor used on another stream (Tensor.record_stream, or NCCL's streams) stays out of the cache until "
        "that stream's work completes: synchronize the streams before the large allocation, or allocate on the "
        "stream that uses the tensor"};
  } else if (cached_free >= o.request) {
    d.cause = Cause::kFragmentedCache;
    const bool seen = o.cache.segments > 0;
    if (seen) d.figures.push_back({"largest free block", o.cache.largest_free});
    d.summary = iec(cached_free) + " free inside " + allocator + "'s cache, at least the " + iec(o.request) +
                " asked for, but in pieces between live tensors: ";
    if (!seen) d.summary += "no free block was as large";
    else if (o.cache.largest_free < o.request)
      d.summary += "the largest free block was " + iec(o.cache.largest_free) + " (" +
                   count_of(o.cache.free_blocks, "free block") + ")";
    else
      d.summary += "the one free block as large (" + iec(o.cache.largest_free) +
                   ") lies where the allocator would not take it for this request (another stream's or pool's "
                   "segment, or the pool of small blocks)";
    d.advice = {
        "run with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, so that a segment grows instead of "
        "being split, or max_split_size_mb:N so that large blocks are not cut for small requests",
        "torch.cuda.empty_cache() cannot help: it gives back only segments with no live tensor"};
  } else {
    d.cause = Cause::kDemand;
    d.summary = "live tensors hold " + iec(o.allocated) + " and the cache has only " + iec(cached_free) +
                " free: the program's own tensors need the memory";
    d.advice = {
        "the call sites below hold the live tensors: free what is no longer needed, or make the batch "
        "or the model smaller"};
  }
  return d;
}

// Marks each error whose thread had a device-memory allocation refused by the driver
// since its last block action before the error (BlockOom::since_ns): one scan of the events.
void find_driver_refusals(const EventSource& events, std::vector<BlockOom>& ooms) {
  std::unordered_map<uint32_t, std::vector<size_t>> by_tid;
  for (size_t i = 0; i < ooms.size(); ++i) by_tid[ooms[i].tid].push_back(i);
  events.scan([&](const Event& e, size_t) {
    if (e.op != format::Op::kAlloc || e.result == 0 || (e.flags & format::kEventRestored)) return;
    const auto it = by_tid.find(e.tid);
    if (it == by_tid.end()) return;
    for (const size_t i : it->second)
      if (e.time_ns > ooms[i].since_ns && e.time_ns <= ooms[i].time_ns) ooms[i].driver_refused = true;
  });
}

}  // namespace

bool Blocks::visible(int32_t device) const {
  if (!recorded) return false;
  for (const auto& d : devices)
    if (d.device == device) return true;
  return false;
}

Blocks block_report(const Trace& trace, const EventSource& events, const Stacks& stacks, const Growth& growth,
                    size_t frames, size_t top, const std::vector<std::string>& cached) {
  Blocks out;
  for (const BlockSource& s : trace.block_sources) {
    const bool blocks = s.flags & format::kBlockSourceUsageReports;
    if (s.state == format::BlockSourceState::kOn && !out.recorded) {
      out.recorded = true;
      out.allocator = std::string(format::block_allocator_name(s.allocator));
      out.version = s.version, out.settings = s.settings;
    }
    if (s.state == format::BlockSourceState::kOn && (s.flags & format::kBlockSourceTraceEntries))
      out.trace_entries = true;
    if (s.state == format::BlockSourceState::kOff && blocks && !out.off_time_ns) {
      out.off_time_ns = s.time_ns, out.off_reason = s.reason;
    } else if (s.state == format::BlockSourceState::kOff && !blocks && out.entries_off_reason.empty()) {
      out.entries_off_reason = s.reason.empty() ? "turned off" : s.reason;
    }
  }
  for (const std::string& a : cached)
    if (!out.recorded || a != out.allocator || out.off_time_ns) out.not_visible.push_back(a);
  if (!out.recorded) return out;

  // The records come from the trace's source in three scans (EventSource::scan_blocks) and
  // none is kept here: what memory keeps grows with the blocks live and the sites, not with
  // the records (docs/performance.md, "Block events in bounded memory").
  // First: each device's span of record times.
  std::map<int32_t, std::pair<uint64_t, uint64_t>> spans;  // device -> first, last time
  events.scan_blocks(trace, [&](const BlockEvent& b, size_t) {
    auto [it, fresh] = spans.try_emplace(b.device, b.time_ns, b.time_ns);
    it->second.first = std::min(it->second.first, b.time_ns);
    it->second.second = std::max(it->second.second, b.time_ns);
  });

  // Then: each device's peak of allocated (the first record after which it was at its
  // most), of reserved likewise, and the records its timeline shows: the span cut into
  // kTimelinePoints stretches, in each the record after which allocated was highest.
  std::map<int32_t, std::pair<size_t, uint64_t>> peaks, reserved_peaks;  // device -> (record, bytes)
  constexpr size_t kNone = ~size_t(0);
  struct Pick {
    size_t record = kNone;
    uint64_t allocated = 0;
    // The allocator's reserved bytes as last said by the record or before it on its device
    // (a segment's or a completed free's record says none): the timeline's, never a dip.
    uint64_t reserved_said = format::kUnknown64;
  };
  std::map<int32_t, std::vector<Pick>> picks;  // device -> per stretch
  {
    BlockReplay r(trace, stacks, {}, frames);
    std::map<int32_t, uint64_t> last_reserved;
    events.scan_blocks(trace, [&](const BlockEvent& b, size_t i) {
      r.apply(b);
      if (b.reserved != format::kUnknown64) last_reserved[b.device] = b.reserved;
      const auto said = last_reserved.find(b.device);
      const uint64_t a = r.allocated_after(b);
      if (b.op == BlockOp::kAlloc) {
        auto [it, fresh] = peaks.try_emplace(b.device, i, a);
        if (!fresh && a > it->second.second) it->second = {i, a};
      }
      if (b.reserved != format::kUnknown64) {
        auto [it, fresh] = reserved_peaks.try_emplace(b.device, i, b.reserved);
        if (!fresh && b.reserved > it->second.second) it->second = {i, b.reserved};
      }
      const auto [t0, t1] = spans[b.device];
      const size_t stretch = size_t((unsigned __int128)(b.time_ns - t0) * kTimelinePoints / (t1 - t0 + 1));
      Pick& p = picks.try_emplace(b.device, kTimelinePoints).first->second[stretch];
      if (p.record == kNone || a > p.allocated)
        p = {i, a, said != last_reserved.end() ? said->second : format::kUnknown64};
    });
  }

  // Then again, with the events in file order: the sites at each peak, each error and the
  // end, and at growth's boundaries; inside the segments (cache_layout.h) right after the
  // records above, each error's and at the end.
  std::map<size_t, CacheFigures> at;  // record -> its device's figures right after it
  for (const auto& [device, p] : peaks) at[p.first];
  for (const auto& [device, p] : reserved_peaks) at[p.first];
  for (const auto& [device, p] : picks)
    for (const Pick& pick : p)
      if (pick.record != kNone) at[pick.record];
  BlockReplay r(trace, stacks, growth.boundaries_ns, frames);
  const UserSites users(stacks);
  CacheLayout layout;
  std::unordered_map<uint32_t, uint64_t> last_action;  // per thread: its last block action so far
  in_file_order(trace, events, [&](const Event* e, const BlockEvent* bp, size_t i) {
    if (e) return layout.apply(*e);
    const BlockEvent& b = *bp;
    layout.apply(b);
    r.apply(b);
    if (auto p = peaks.find(b.device); p != peaks.end() && p->second.first == i) {
      BlockDevice& d = r.devices()[b.device];
      d.peak_allocated = p->second.second, d.peak_time_ns = b.time_ns;
      d.reserved_at_peak = b.reserved != format::kUnknown64 ? b.reserved : 0;
      r.read(b.device, &BlockSite::peak_bytes, &BlockSite::peak_count);
    }
    if (b.op == BlockOp::kOom) {
      BlockOom o;
      o.time_ns = b.time_ns, o.device = b.device, o.tid = b.tid, o.request = b.size;
      o.allocated = b.allocated != format::kUnknown64 ? b.allocated : r.allocated_after(b);
      o.reserved = b.reserved != format::kUnknown64 ? b.reserved : 0;
      const auto last = last_action.find(b.tid);
      o.since_ns = last != last_action.end() ? last->second : 0;
      const UserSite us = users.of(b.stack_id, b.python_stack_id);
      o.frames = stacks.frames(us.node, frames);
      o.python_frames = user_python_frames(trace, us, b.python_stack_id);
      o.live_sites = r.live_sites(b.device, top);
      o.cache = layout.figures(b.device, b.time_ns);
      out.ooms.push_back(std::move(o));
    } else {
      last_action[b.tid] = b.time_ns;
    }
    if (auto it = at.find(i); it != at.end()) it->second = layout.figures(b.device, b.time_ns);
  });
  r.finish();
  for (auto& [device, d] : r.devices()) {
    r.read(device, &BlockSite::end_bytes, &BlockSite::end_count);
    d.end_count = r.live_count(device);
  }
  for (BlockSite& s : r.sites()) {
    const GrowthFit fit = classify_growth(s.bytes_at, s.allocations_within, &s.carried_at);
    s.cls = fit.cls, s.growth_per_iteration = fit.per_iteration, s.growth_min = fit.min, s.growth_max = fit.max;
    r.devices()[s.device].sites.push_back(std::move(s));
  }
  for (auto& [device, d] : r.devices()) {
    std::stable_sort(d.sites.begin(), d.sites.end(), [](const BlockSite& a, const BlockSite& b) {
      const bool la = a.cls == GrowthSite::Class::kLeak, lb = b.cls == GrowthSite::Class::kLeak;
      return std::tuple(la, la ? a.growth_per_iteration : 0, a.peak_bytes, a.end_bytes) >
             std::tuple(lb, lb ? b.growth_per_iteration : 0, b.peak_bytes, b.end_bytes);
    });
    out.devices.push_back(std::move(d));
  }
  for (BlockDevice& d : out.devices) {
    if (auto p = peaks.find(d.device); p != peaks.end()) d.at_peak = at[p->second.first];
    if (auto p = reserved_peaks.find(d.device); p != reserved_peaks.end()) d.at_peak_reserved = at[p->second.first];
    d.at_end = layout.figures(d.device, spans[d.device].second);
    for (const Pick& p : picks[d.device])
      if (p.record != kNone)
        d.timeline.push_back({p.allocated,
                              p.reserved_said != format::kUnknown64 ? p.reserved_said : at[p.record].reserved,
                              at[p.record]});
  }
  if (!out.ooms.empty()) find_driver_refusals(events, out.ooms);
  for (BlockOom& o : out.ooms) o.diagnosis = diagnose_oom(o, out.allocator);
  return out;
}

std::vector<std::string> not_visible_notes(const Blocks& b) {
  std::vector<std::string> out;
  for (const std::string& a : b.not_visible) {
    std::string why = !b.recorded || a != b.allocator ? "no block records in this trace"
                                                      : "its block records were turned off: " + b.off_reason;
    out.push_back("inside " + a + "'s cache: not visible (" + why + ")");
  }
  return out;
}

// What the blocks inside a caching allocator (blocks.h) add to the report's findings: their
// sites join growth (marked `inside`), so that a tensor kept per iteration is a leak
// wherever leaks are read (the summary, check, baseline); the allocator's own
// out-of-memory errors are failed allocations diagnosed from the blocks: the driver's
// refusal just before one (the allocator's cudaMalloc) takes its diagnosis, and one that
// no driver call preceded (a memory fraction) is a failed allocation of its own.
void add_block_findings(Report& rep, const Stacks& stacks) {
  const Blocks& b = rep.blocks;
  for (const BlockDevice& d : b.devices)
    for (const BlockSite& s : d.sites) {
      GrowthSite g;
      g.cls = s.cls, g.node = s.node, g.key = s.key, g.from_python = s.from_python;
      g.library = stacks.module_basename(
          stacks.trace().stack_nodes.count(s.node) ? stacks.trace().stack_nodes.at(s.node).ip : 0);
      g.kind = format::Kind::kDevice, g.device = s.device, g.bytes_at = s.bytes_at, g.carried_at = s.carried_at;
      g.count_at_end = s.end_count;
      g.allocations_within = s.allocations_within, g.growth_per_iteration = s.growth_per_iteration;
      g.growth_min = s.growth_min, g.growth_max = s.growth_max;
      g.frames = s.frames, g.python_frames = s.python_frames, g.inside = b.allocator;
      rep.growth.sites.push_back(std::move(g));
    }
  std::stable_sort(rep.growth.sites.begin(), rep.growth.sites.end(), [](const GrowthSite& x, const GrowthSite& y) {
    const bool lx = x.cls == GrowthSite::Class::kLeak, ly = y.cls == GrowthSite::Class::kLeak;
    if (lx != ly) return lx;
    return lx && x.growth_per_iteration > y.growth_per_iteration;
  });
  for (const BlockOom& o : b.ooms) {
    // The driver's refusals of the allocator's segments on its thread since its last block
    // action (PyTorch asks again after giving cached segments back): the same failure.
    // The blocks decide what only they can see (a limit, pending frees, a fragmented
    // cache); where they say the live tensors need the memory, the driver's split (its
    // cache split by the same blocks) may find it elsewhere first: other processes, a
    // pool's reserve, contexts and untracked memory.
    bool refused = false;
    if (o.driver_refused)
      for (FailedRow& row : rep.failed)
        if (row.tid == o.tid && row.device == o.device && row.last_time_ns > o.since_ns && row.time_ns <= o.time_ns) {
          if (o.diagnosis.cause != Cause::kDemand || !outside_the_cache(row.diagnosis.cause))
            row.diagnosis = o.diagnosis;
          refused = true;
        }
    if (refused) continue;
    FailedRow row;
    row.time_ns = row.last_time_ns = o.time_ns;
    row.device = o.device, row.size = o.request, row.kind = format::Kind::kDevice, row.tid = o.tid;
    row.api = b.allocator + "'s caching allocator";
    row.result = 2;  // out of memory, as the allocator raised it
    row.frames = o.frames, row.python_frames = o.python_frames;
    row.live_device_bytes = o.reserved;
    row.diagnosis = o.diagnosis;
    rep.failed.push_back(std::move(row));
    ++rep.failed_total;
  }
  std::stable_sort(rep.failed.begin(), rep.failed.end(),
                   [](const FailedRow& x, const FailedRow& y) { return x.time_ns < y.time_ns; });
}

}  // namespace cumemtrace
