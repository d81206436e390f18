// build_report: the two passes over the events and what reads the sets they leave. Over
// 600 lines because those parts share FirstPass and the live sets' tickets, private to
// this file; sections that only read the report's results live in their own files
// (pools.cpp, blocks.cpp, ...).
#include "reports/report.h"

#include "stacks/call_site_rule.h"
#include "reports/moments.h"
#include "base/progress.h"
#include "stacks/python_stacks.h"
#include "reports/oom/report_failures.h"
#include "replay/live_sets.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

namespace cumemtrace {

using format::Kind;
using format::Op;
using format::SnapshotReason;

namespace {

constexpr auto by_bytes_desc = [](const auto& a, const auto& b) {
  return std::tie(b.bytes, b.count) < std::tie(a.bytes, a.count);
};

// Groups allocations by (call site, Python stack, kind, device); sorted by bytes, largest
// first. Two lines of one Python function reach the allocator through the same native
// frames: only their Python stacks tell them apart.
// The sums are fed one allocation at a time, so that a live set need not be copied to be grouped.
class SiteSums {
 public:
  explicit SiteSums(const Stacks& stacks) : stacks_(&stacks), users_(stacks) {}
  void add(const LiveAlloc& a) {
    CallSite cs = stacks_->call_site(a.stack_id);
    // Native frames from the user's (call_site_rule.h): past framework dispatch too, unless
    // a Python frame of the user's names the site: then from the allocator's caller.
    const uint32_t node = users_.of(a.stack_id, a.python_stack_id).node;
    auto& r = rows_[{node, a.python_stack_id, int(a.kind), a.device}];
    r.node = node;
    r.python_stack = a.python_stack_id;
    r.library = cs.library;
    r.device = a.device;
    r.kind = a.kind;
    r.bytes += a.size;
    r.count += 1;
    r.threads.insert(a.tid);
  }
  std::vector<SiteRow> rows() && {
    std::vector<SiteRow> out;
    for (auto& [k, r] : rows_) out.push_back(std::move(r));
    std::sort(out.begin(), out.end(), by_bytes_desc);
    return out;
  }

 private:
  const Stacks* stacks_;
  UserSites users_;
  std::map<std::tuple<uint32_t, uint32_t, int, int32_t>, SiteRow> rows_;
};

std::vector<SiteRow> group_sites(const std::vector<LiveAlloc>& allocs, const Stacks& stacks) {
  SiteSums sums(stacks);
  for (const auto& a : allocs) sums.add(a);
  return std::move(sums).rows();
}

// Keeps the first `top` rows, symbolizes them; returns how many were dropped.
uint64_t keep_top(std::vector<SiteRow>& rows, const Stacks& stacks, const ReportOptions& opt,
                  const CallerNames& names) {
  uint64_t omitted = rows.size() > opt.top ? rows.size() - opt.top : 0;
  if (omitted) rows.resize(opt.top);
  for (auto& r : rows) {
    r.frames = stacks.frames(r.node, opt.frames);
    r.python_frames = python_frames(stacks.trace(), r.python_stack);
    r.caller = names.of(r.node, r.python_stack);
    if (!r.python_frames.empty()) r.merged_frames = merge_stacks(stacks.frames(r.node, SIZE_MAX), r.python_frames);
  }
  return omitted;
}

class LibrarySums {
 public:
  explicit LibrarySums(const Stacks& stacks) : stacks_(&stacks) {}
  void add(const LiveAlloc& a) {
    if (!format::holds_device_memory(a.kind)) return;
    auto& r = rows_[stacks_->call_site(a.stack_id).library];
    r.bytes += a.size;
    r.count += 1;
    r.bytes_by_kind[int(a.kind)] += a.size;
  }
  std::vector<LibraryRow> rows() && {
    std::vector<LibraryRow> out;
    for (auto& [lib, r] : rows_) {
      r.library = lib;
      out.push_back(r);
    }
    std::sort(out.begin(), out.end(), by_bytes_desc);
    return out;
  }

 private:
  const Stacks* stacks_;
  std::map<std::string, LibraryRow> rows_;
};

std::vector<LibraryRow> group_libraries(const std::vector<LiveAlloc>& allocs, const Stacks& stacks) {
  LibrarySums sums(stacks);
  for (const auto& a : allocs) sums.add(a);
  return std::move(sums).rows();
}

// What a device's peak shows of the set live there, summed while the second pass stands
// at the peak rather than from a copy of it.
struct PeakSums {
  explicit PeakSums(const Stacks& stacks) : sites(stacks), libraries(stacks) {}
  SiteSums sites;
  LibrarySums libraries;
};

// What the first pass over the events gathers besides the replay: everything the
// report reads from single events, so that no other pass needs them (event_source.h).
struct FirstPass {
  FirstPass(const Trace& t, const Stacks& stacks, const ReportOptions& opt)
      : final(t.granule()), growth(t), owners(stacks), failed_frees(t, stacks) {
    if (opt.by_range) ranges.emplace(t);
    if (opt.by_function) functions.emplace(t, stacks);
  }
  Replayer final;
  std::map<std::pair<int32_t, uint16_t>, ApiCounts> by_api_id;  // (device, API id)
  std::map<int32_t, std::vector<LiveAlloc>> graph_nodes;        // per device
  std::vector<Event> contexts;                                  // successful creations
  GraphPoolCalls graph_calls;
  GrowthScan growth;
  std::optional<RangeScan> ranges;        // --by range
  std::optional<FunctionScan> functions;  // --by function
  CachingAllocators owners;
  FailedFrees failed_frees;
  IpcScan ipc;
  std::set<std::string> caches;                            // caching allocators that took device memory (blocks.h)
  std::set<std::pair<uint32_t, uint32_t>> allocated_from;  // (stack, Python stack) of every allocation
  size_t kept = 0;                                         // events replayed (all but the impossible ones)
  uint64_t last_kept_ns = 0;                               // the time of the last of them

  void observe(const Event& e) {
    const size_t k = kept++;
    if (ranges) ranges->advance(e.time_ns, final);
    final.apply(e, k);
    if (ranges) ranges->observe(e, final);
    if (functions) functions->observe(e);
    last_kept_ns = e.time_ns;
    growth.observe(e, k);
    graph_calls.observe(e);
    failed_frees.observe(e);
    ipc.observe(e);
    if (e.op == Op::kAlloc || e.op == Op::kFree) {
      // Calls by the API the program used, so a user can check each allocation was seen
      // once. Counted by API id, named once per id after (naming each event was most of the time).
      ApiCounts& c = by_api_id[{e.device, e.api}];
      if (e.flags & format::kEventRestored) --c.frees;       // that free failed
      else if (e.op == Op::kFree) c.frees += e.result == 0;  // a refused free freed nothing
      else if (e.result != 0) ++c.failed;
      else ++c.allocs;
      // A stream-ordered pool is the driver's, whose every allocation is traced: no cache hides it.
      if (e.op == Op::kAlloc && e.result == 0 && format::holds_device_memory(e.kind) && e.kind != Kind::kAsyncPool)
        if (const std::string& cache = owners.of(e.stack_id); !cache.empty()) caches.insert(cache);
      if (e.op == Op::kAlloc || e.result != 0)  // a failed free is a site too; no node made when known
        allocated_from.insert({e.stack_id, e.python_stack_id});
      if (e.op == Op::kAlloc && e.result == 0 && (e.flags & format::kEventCaptured))
        graph_nodes[e.device].push_back(LiveAlloc{e.address, e.size, e.handle, e.time_ns, e.stack_id, e.tid, e.device,
                                                  e.api, e.kind, e.python_stack_id});
    } else if (e.op == Op::kContextCreate && e.result == 0) {
      contexts.push_back(e);
    }
  }
  // A block record (trace format 1.13), in file order with the events: its allocation's
  // site is named alike in every table; the loop search looks among the blocks first.
  void observe_block(const BlockEvent& b) {
    if (b.op == format::BlockOp::kAlloc) allocated_from.insert({b.stack_id, b.python_stack_id});
    growth.observe_block(b);
  }
};

uint64_t context_bytes_until(const std::vector<Event>& contexts, int32_t device, uint64_t until_ns) {
  uint64_t sum = 0;
  for (const auto& e : contexts)
    if (e.device == device && e.time_ns <= until_ns) sum += e.size;
  return sum;
}

// Device memory of one reading laid out in granules: the arenas of mapped allocations,
// plus physical memory (cuMemCreate) not mapped at that moment, which holds memory all the
// same (XLA creates its 105 GiB pool a moment before it maps it). 1.9: CUDA arrays too, at their descriptors' bytes:
// they hold device memory but have no address in the arenas (H200 run K: 16 MiB of arrays were otherwise "untracked").
uint64_t footprint(const DeviceSnapshot& d) {
  const uint64_t phys = d.live_bytes[int(Kind::kVmmPhysical)], mapped = d.live_bytes[int(Kind::kVmmMap)];
  return d.arena_bytes + (phys > mapped ? phys - mapped : 0) + d.live_bytes[int(Kind::kArray)];
}

NvmlSplit nvml_split(const Trace& t, const std::vector<Event>& contexts, int32_t device, uint64_t peak_bytes,
                     uint64_t peak_ns) {
  NvmlSplit n;
  const Choice c = choose_reading(t, device, peak_bytes, peak_ns);
  const std::optional<Reading>& r = c.reading;
  n.at_peak = c.at;
  n.same_moment = c.same;
  for (const auto& s : t.snapshots)
    if (const DeviceSnapshot* d = s.find(device); d && (d->moment & format::kMomentReadingMissed)) {
      ++n.readings_missed;
      if (peak_bytes && d->device_bytes == peak_bytes && s.time_ns >= peak_ns) n.peak_reading_missed = true;
    }
  if (!r) return n;
  const DeviceSnapshot& d = *r->device;
  n.known = true;
  n.snapshot_time_ns = r->snapshot->time_ns;
  n.reason = r->snapshot->reason;
  n.device_bytes = d.device_bytes;
  n.process_used = d.nvml_process_used;
  n.footprint = footprint(d);
  n.context = context_bytes_until(contexts, device, n.snapshot_time_ns);
  // A stream-ordered pool keeps freed memory for reuse: held, but in no allocation.
  const uint64_t pool = d.pool_reserved_bytes, async_live = d.live_bytes[int(format::Kind::kAsyncPool)];
  n.pool_slack = pool != format::kUnknown64 && pool > async_live ? pool - async_live : 0;
  // The graph memory pool's reserve is held in no allocation the trace saw (graph_pool.h).
  if (d.graph_reserved_current != format::kUnknown64) n.graph_pool = d.graph_reserved_current;
  const uint64_t accounted = n.footprint + n.context + n.pool_slack + n.graph_pool;
  n.untracked = n.process_used > accounted ? n.process_used - accounted : 0;
  return n;
}

// The reading right after a failed allocation when it is of one moment (nothing came
// between the failure and it), else the nearest reading of one moment, else any.
void attach_snapshot(const Trace& t, FailedRow& row) {
  const Choice c = choose_reading(t, row.device, row.live_device_bytes, row.time_ns);
  const std::optional<Reading>& r = c.reading;
  row.snapshot_at_failure = c.at;
  row.snapshot_same_moment = c.same;
  if (r) {
    const DeviceSnapshot& d = *r->device;
    row.snapshot_known = true;
    row.snapshot_time_ns = r->snapshot->time_ns;
    row.snapshot_reason = r->snapshot->reason;
    row.snapshot_device_bytes = d.device_bytes;
    row.snapshot_arena_bytes = footprint(d);
    row.snapshot_pool_reserved = d.pool_reserved_bytes;
    row.snapshot_async_live = d.live_bytes[int(format::Kind::kAsyncPool)];
    row.snapshot_graph_reserved = d.graph_reserved_current;
    row.device_free = d.nvml_device_free;
    if (d.nvml_device_total != format::kUnknown64) row.device_total = d.nvml_device_total;
    row.process_used = d.nvml_process_used;
  }
  if (const GpuProcesses* g = processes_near(t, row.device, row.time_ns)) {
    row.processes_known = true;
    const uint32_t self = t.process ? t.process->pid : 0;
    for (const auto& p : g->processes)
      if (p.pid != self) row.other_processes.push_back(p);
  }
}

// Each allocator map goes to the row of the nearest failed allocation before it on its
// device (the first map after a failure wins), with the live set asked for at the moment
// it was given.
struct MapAtFailure {
  const AllocatorMap* map;
  size_t row;
  LiveSets::Ticket live;
};
std::vector<MapAtFailure> pick_allocator_maps(const Trace& t, const Replayer& final, const std::vector<size_t>& row_of,
                                              std::vector<FailedRow>& rows, LiveSets& sets) {
  std::vector<MapAtFailure> picked;
  for (const auto& m : t.allocator_maps) {
    size_t row = kNoEvent;
    for (size_t i = 0; i < final.failed().size() && final.failed()[i].event_index < m.events_before; ++i)
      if (final.failed()[i].event.device == m.device) row = row_of[i];
    if (row == kNoEvent || rows[row].allocator_map) continue;
    rows[row].allocator_map.emplace();  // taken; filled once the live sets are known
    picked.push_back({&m, row, sets.want(m.events_before - 1, m.device)});
  }
  return picked;
}

uint64_t last_time(const Trace& t, const FirstPass& pass) {
  uint64_t last = 0;
  if (pass.kept) last = std::max(last, pass.last_kept_ns);
  if (!t.snapshots.empty()) last = std::max(last, t.snapshots.back().time_ns);
  if (t.end) last = std::max(last, t.end->time_ns);
  return last;
}

// Leaks in the order a reader wants them: what holds device memory, then managed,
// then host-pinned, then anything else.
int leak_rank(Kind k) {
  if (format::holds_device_memory(k)) return 0;
  if (k == Kind::kManaged) return 1;
  if (k == Kind::kHostPinned) return 2;
  return 3;
}

// The replay's figures of one device, as they stood at the end and at its peak (its gap
// figures at the end read before the first pass forgot its allocations).
void copy_replayed(const DeviceState& s, const FragmentationFigures& frag_at_end, DeviceReport& dr) {
  dr.peak_bytes = s.peak_bytes;
  dr.peak_time_ns = s.peak_time_ns;
  dr.peak_pinned_bytes = s.peak_pinned_bytes;
  dr.peak_pinned_time_ns = s.peak_pinned_time_ns;
  dr.peak_import_bytes = s.peak_import_bytes;
  dr.import_pids = s.import_pids;
  dr.frag_at_peak = s.frag_at_peak;
  dr.max_gap_ratio = s.max_gap_ratio;
  dr.max_gap_ratio_time_ns = s.max_gap_ratio_time_ns;
  dr.end_device_bytes = s.device_bytes;
  std::copy(std::begin(s.live_bytes), std::end(s.live_bytes), dr.end_live_bytes);
  std::copy(std::begin(s.live_count), std::end(s.live_count), dr.end_live_count);
  dr.frag_at_end = frag_at_end;
  dr.counts = s.counts;
  dr.context_bytes = s.context_bytes;
}

// A device's VMM address-space reservations: counts, peak, and what is still reserved at
// the end by call site.
ReservationReport reservations_of(const DeviceState& s, const Replayer& end, const Stacks& stacks,
                                  const ReportOptions& opt, const CallerNames& names) {
  ReservationReport rr;
  rr.device = s.device;
  rr.reserves = s.counts.reserves;
  rr.frees = s.counts.reserve_frees;
  rr.peak_bytes = s.peak_reserved_bytes;
  rr.end_bytes = s.reserved_bytes;
  const std::vector<LiveAlloc> live = end.reserved(s.device);
  rr.end_count = live.size();
  rr.sites = group_sites(live, stacks);
  keep_top(rr.sites, stacks, opt, names);
  return rr;
}

// Live at the end, split: device memory a caching allocator (allocator_map.h) holds is
// "held by its cache at exit", and memory a library's handles keep (cuBLAS's workspaces:
// library_handle_owner) "held by its handles at exit", unless growth classifies its call
// site `leak`; everything else live is a possible leak. Groups by kind (leaks) or allocator (cache), then call site;
// each device's two sums go to its DeviceReport.
// Read from the replay at the end one allocation at a time: a copy of the set there (and
// one more per group) was the largest part of a report's memory after the replays' maps.
void split_at_exit(const Replayer& end, Report& rep, const Stacks& stacks, const ReportOptions& opt,
                   const CallerNames& names) {
  const CachingAllocators owners(stacks);
  // growth's `leak` sites, as growth keys them (call_site_rule.h): (key, from Python, device, kind)
  std::set<std::tuple<uint64_t, bool, int32_t, int>> leaking;
  // (a site of blocks inside a cache is not: its segments are the cache's either way)
  for (const auto& g : rep.growth.sites)
    if (g.cls == GrowthSite::Class::kLeak && g.inside.empty())
      leaking.insert({g.key, g.from_python, g.device, int(g.kind)});
  struct Group {
    explicit Group(const Stacks& stacks) : sites(stacks) {}
    uint64_t bytes = 0, count = 0;
    SiteSums sites;
    void add(const LiveAlloc& a) { bytes += a.size, count += 1, sites.add(a); }
  };
  std::map<std::pair<int, int>, Group> by_kind;
  std::map<std::string, Group> by_cache;
  std::map<int32_t, uint64_t> held;
  const UserSites users(stacks);
  std::set<std::string> handle_owners;                   // the names in by_cache that are libraries' handles
  std::unordered_map<uint32_t, std::string> handles_of;  // per stack: many live allocations share one
  end.for_each_live([&](const LiveAlloc& a) {
    std::string cache = format::holds_device_memory(a.kind) ? owners.of(a.stack_id) : std::string();
    if (cache.empty() && format::holds_device_memory(a.kind)) {
      auto [it, fresh] = handles_of.try_emplace(a.stack_id);
      if (fresh) it->second = library_handle_owner(stacks.call_site(a.stack_id).library);
      cache = it->second;
      if (!cache.empty()) handle_owners.insert(cache);
    }
    const UserSite site = cache.empty() ? UserSite{} : users.of(a.stack_id, a.python_stack_id);
    if (!cache.empty() && !leaking.count({site.key, site.from_python, a.device, int(a.kind)})) {
      by_cache.try_emplace(cache, stacks).first->second.add(a);
      held[a.device] += a.size;
    } else {
      by_kind.try_emplace({leak_rank(a.kind), int(a.kind)}, stacks).first->second.add(a);
      cache.clear();
    }
    if (rep.ipc.live_at_end.count(a.address))  // where an export was counted: job.h may move it
      rep.ipc.counted_at_end(a, cache, users.of(a.stack_id, a.python_stack_id).node);
  });
  const auto group = [&](Group& sums, Kind kind, std::string allocator) {
    LeakGroup g;
    g.kind = kind;
    g.allocator = std::move(allocator);
    g.bytes = sums.bytes, g.count = sums.count;
    g.sites = std::move(sums.sites).rows();
    g.sites_omitted = keep_top(g.sites, stacks, opt, names);
    return g;
  };
  for (auto& [key, sums] : by_kind) rep.leaks.push_back(group(sums, static_cast<Kind>(key.second), ""));
  for (auto& [name, sums] : by_cache) {
    rep.held_by_cache.push_back(group(sums, Kind::kDevice, name));
    rep.held_by_cache.back().library_handles = handle_owners.count(name) > 0;
  }
  for (auto& d : rep.devices) {
    d.end_held_by_cache_bytes = std::min(held[d.device], d.end_device_bytes);
    d.end_possible_leak_bytes = d.end_device_bytes - d.end_held_by_cache_bytes;
  }
}

const DeviceSnapshot* exit_snapshot(const Trace& t, int32_t device) {
  for (auto it = t.snapshots.rbegin(); it != t.snapshots.rend(); ++it)
    if (it->reason == SnapshotReason::kExit) return it->find(device);
  return nullptr;
}

// At the end: the exit snapshot split as the peak's reading is, when it is of one moment
// and saw the replayed end's bytes; else the contexts and the graph pool's last reading.
MemoryBeyondAllocations beyond_at_end(const Trace& t, const std::vector<Event>& contexts, const DeviceReport& dr,
                                      uint64_t last) {
  const uint64_t ctx = context_bytes_until(contexts, dr.device, last);
  const GraphPoolReading& g = dr.graph_pool.at_end;
  const DeviceSnapshot* x = exit_snapshot(t, dr.device);
  if (!x || !(x->moment & format::kMomentSame) || x->device_bytes != dr.end_device_bytes)
    return {ctx, 0, g.known ? g.reserved : 0, 0};
  return beyond_of_reading({footprint(*x), x->pool_reserved_bytes, x->live_bytes[int(Kind::kAsyncPool)],
                            x->graph_reserved_current, x->nvml_process_used},
                           ctx);
}

}  // namespace

Report build_report(const Trace& trace, const ReportOptions& opt) {
  return build_report(trace, MemoryEvents(trace.events), opt);
}

Report build_report(const Trace& trace, const EventSource& all, const ReportOptions& opt) {
  Report rep;
  rep.integrity = check_records(trace, all.size());
  rep.path = trace.path;
  rep.frames = opt.frames;
  rep.process = trace.process;
  rep.complete = trace.end.has_value();
  if (trace.end && trace.end->exec) rep.exec_into = trace.end->exec_into;
  if (trace.end) rep.exit_status = trace.end->exit_status;
  rep.error = trace.error;
  rep.events = all.size() + trace.set_aside.size();  // those the reader set aside were read too
  rep.unknown_records = trace.unknown_records;
  rep.start_ns = trace.process ? trace.process->start_monotonic_ns : 0;
  if (trace.end) rep.events_dropped = trace.end->events_dropped;
  else if (!trace.snapshots.empty()) rep.events_dropped = trace.snapshots.back().events_dropped;

  Stacks stacks(trace);
  stacks.set_symbols(opt.extra_symbols);
  rep.symbols = trace.symbols.size() + (opt.extra_symbols ? opt.extra_symbols->size() : 0);
  std::optional<Categorizer> cats;
  if (opt.categories) cats.emplace(stacks, *opt.categories);
  rep.categories = opt.categories != nullptr;
  rep.category_user_rules = opt.categories ? opt.categories->user_rules() : 0;

  // First pass: replayed and gathered (FirstPass). Impossible events never get here: the
  // reader set them aside (plausible.h), and check_records said them.
  FirstPass pass(trace, stacks, opt);
  all.scan_in_file_order(
      trace,
      [&](const Event& e, size_t i) {
        if ((i & 0xfff) == 0) progress("replaying", i, all.size());
        pass.observe(e);
      },
      [&](const BlockEvent& b, size_t) { pass.observe_block(b); });
  // One replay's live set at a time: the second pass goes on to the end and says what is
  // live there, so the first forgets its own (its figures stay) before the second starts.
  std::map<int32_t, FragmentationFigures> frag_at_end;
  for (const auto& [d, s] : pass.final.devices()) frag_at_end[d] = s.frag.figures();
  pass.final.forget_allocations();
  const Replayer& final = pass.final;
  // Sites of one user frame are told apart by their callers among every site allocated at,
  // pools' regions and a cache's blocks among them: a site is named alike in every table.
  for (const NvtxMemEvent& m : trace.nvtx_mem)
    if (m.op == format::NvtxMemOp::kRegionRegister) pass.allocated_from.insert({m.stack_id, m.python_stack_id});
  const UserSites users(stacks);
  const CallerNames names(users, pass.allocated_from);
  const uint64_t last = last_time(trace, pass);
  rep.duration_ns = last > rep.start_ns ? last - rep.start_ns : 0;

  // Second pass: every live set the report shows, copied in one replay (live_sets.h):
  // each device's peak, each failure's group, each allocator map, each growth boundary.
  // What was live at a peak is what made it: another process's memory mapped here
  // (ipc-import) never did. Its sites and libraries are summed in place; only the
  // categories (--categories) need the set itself.
  LiveSets sets;
  std::map<int32_t, PeakSums> peak_sums;
  std::map<int32_t, LiveSets::Ticket> peak_sets;
  for (const auto& [d, s] : final.devices()) {
    if (s.peak_event == kNoEvent) continue;
    rep.peak_events[d] = s.peak_event;
    PeakSums& sums = peak_sums.try_emplace(d, stacks).first->second;
    sets.visit(s.peak_event, d, [&sums](const LiveAlloc& a) {
      if (a.kind == Kind::kIpcImport) return;
      sums.sites.add(a);
      sums.libraries.add(a);
    });
    if (cats) peak_sets.emplace(d, sets.want(s.peak_event, d));
  }
  for (const FailedAlloc& fa : final.failed()) {
    rep.failed_events.emplace_back(fa.event_index, fa.event.device);
    if (fa.recovered_after_ns) ++rep.failed_recovered;
  }
  std::vector<size_t> firsts, row_of;
  rep.failed = failed_rows(trace, final.failed(), stacks, opt, rep.failed_total, rep.failed_omitted, firsts, row_of);
  rep.failed_frees = std::move(pass.failed_frees).rows(opt, names, rep.failed_frees_total, rep.failed_frees_omitted);
  std::vector<LiveSets::Ticket> failure_sets;  // per row of rep.failed
  for (size_t i : firsts)
    failure_sets.push_back(sets.want(final.failed()[i].event_index, final.failed()[i].event.device));
  const auto maps = pick_allocator_maps(trace, final, row_of, rep.failed, sets);
  pass.growth.want(pass.kept, sets);
  sets.take_all(all, trace.granule());
  const Replayer& end = sets.end();

  std::map<int32_t, std::vector<LiveAlloc>> at_peak;  // with --categories
  for (const auto& [d, ticket] : peak_sets) {
    at_peak[d] = sets.take(ticket);
    std::erase_if(at_peak[d], [](const LiveAlloc& a) { return a.kind == Kind::kIpcImport; });
  }
  // Every device the trace names, plus every device events touched (host: -1).
  std::map<int32_t, bool> ordinals;
  for (const auto& d : trace.devices) ordinals[d.ordinal] = true;
  for (const auto& [d, s] : final.devices()) ordinals[d] = true;

  std::map<int32_t, std::map<std::string, ApiCounts>> by_api;
  for (const auto& [key, counts] : pass.by_api_id) {
    ApiCounts& c = by_api[key.first][trace.api_name(key.second)];  // two ids may share a name
    c.allocs += counts.allocs;
    c.frees += counts.frees;
    c.failed += counts.failed;
  }

  for (const auto& [ordinal, unused] : ordinals) {
    DeviceReport dr;
    dr.by_api = by_api[ordinal];
    dr.device = ordinal;
    if (const DeviceInfo* info = trace.device(ordinal)) {
      dr.name = info->name;
      dr.total_bytes = info->total_bytes;
    } else if (ordinal < 0) {
      dr.name = "host";
    }
    auto sit = final.devices().find(ordinal);
    if (sit != final.devices().end()) {
      const DeviceState& s = sit->second;
      copy_replayed(s, frag_at_end[ordinal], dr);
      // Without a peak (nothing was ever live here) NVML is split at the trace's last
      // moment, so the device section and the failed allocations tell one story.
      const bool peak = s.peak_event != kNoEvent;
      dr.nvml = peak ? nvml_split(trace, pass.contexts, ordinal, s.peak_bytes, s.peak_time_ns)
                     : nvml_split(trace, pass.contexts, ordinal, 0, last);
      dr.nvml.has_peak = peak;
      dr.graph_pool = graph_pool_figures(trace, pass.graph_calls, ordinal, peak ? s.peak_time_ns : 0);
      if (auto p = peak_sums.find(ordinal); p != peak_sums.end()) {
        dr.top_sites = std::move(p->second.sites).rows();
        dr.top_sites_omitted = keep_top(dr.top_sites, stacks, opt, names);
        dr.by_library = std::move(p->second.libraries).rows();
      }
      if (cats && ordinal >= 0) {  // the host row holds pinned memory, no device memory to split
        const auto p = at_peak.find(ordinal);
        const uint64_t ctx = context_bytes_until(pass.contexts, ordinal, peak ? s.peak_time_ns : last);
        dr.categories_at_peak = cats->table(p != at_peak.end() ? p->second : std::vector<LiveAlloc>{},
                                            beyond_at_peak(dr.nvml, dr.graph_pool, ctx));
        dr.categories_at_end = cats->table(end.live(ordinal), beyond_at_end(trace, pass.contexts, dr, last));
      }
      if (s.reserved_bytes + s.peak_reserved_bytes + s.counts.reserves > 0)
        rep.reservations.push_back(reservations_of(s, end, stacks, opt, names));
    }
    if (const auto graph = pass.graph_nodes.find(ordinal); graph != pass.graph_nodes.end()) {
      const std::vector<LiveAlloc>& nodes = graph->second;  // graph allocation nodes made on this device
      dr.graph_nodes = nodes.size();
      for (const auto& a : nodes) dr.graph_node_bytes += a.size;
      dr.graph_node_sites = group_sites(nodes, stacks);
      dr.graph_node_sites_omitted = keep_top(dr.graph_node_sites, stacks, opt, names);
    }
    if (const DeviceSnapshot* x = exit_snapshot(trace, ordinal)) dr.exit_snapshot = *x;
    // A "host" row only earns its place when something happened on the host.
    if (ordinal < 0 && sit == final.devices().end()) continue;
    rep.devices.push_back(std::move(dr));
  }

  for (const auto& e : pass.contexts) {
    ContextRow row{e.time_ns, e.device, e.size, trace.api_name(e.api), e.tid, {}, {}, {}};
    const CallSite cs = stacks.call_site(e.stack_id);
    row.library = cs.library;
    row.frames = stacks.frames(cs.node, opt.frames);
    row.python_frames = python_frames(trace, e.python_stack_id);
    rep.contexts.push_back(std::move(row));
  }

  // Failed allocations, identical ones grouped (report_failures.h); each row diagnosed
  // with what was live on its device at its first failure, and its block map if given.
  for (const MapAtFailure& m : maps) {
    FailedRow& row = rep.failed[m.row];
    row.allocator_map = view_allocator_map(*m.map, sets.take(m.live), row.size, stacks, opt.top);
  }
  // The trace's own blocks split each failure's cache into free and in-use segments.
  std::vector<SegmentsAt> at_failures;
  for (size_t i : firsts)
    at_failures.push_back(
        {final.failed()[i].event_index, final.failed()[i].event.device, final.failed()[i].event.time_ns});
  const SegmentsInUse block_segments = segments_in_use_at(trace, all, at_failures);
  for (size_t k = 0; k < rep.failed.size(); ++k) {
    FailedRow& row = rep.failed[k];
    attach_snapshot(trace, row);
    FailureFacts facts;
    facts.request = row.size;
    facts.result = row.result;
    facts.runtime_layer = row.runtime_layer;
    facts.device_free = row.device_free;
    facts.process_used = row.process_used;
    facts.reading_at_failure = row.snapshot_at_failure;
    facts.tracked_footprint = row.snapshot_arena_bytes;
    facts.pool_reserved = row.snapshot_pool_reserved;
    facts.async_live = row.snapshot_async_live;
    facts.other_processes = row.other_processes;
    facts.device_total = row.device_total;
    facts.contexts = context_bytes_until(pass.contexts, row.device, row.time_ns);
    facts.graph_pool = row.snapshot_graph_reserved;
    if (row.allocator_map) facts.allocator_map = &*row.allocator_map;
    if (!block_segments.at[k].empty())
      facts.block_segments = &block_segments.at[k], facts.block_allocator = block_segments.allocator;
    facts.live = sets.take(failure_sets[k]);
    row.diagnosis = diagnose(facts, stacks);
    row.sites_at_failure = group_sites(facts.live, stacks);
    keep_top(row.sites_at_failure, stacks, opt, names);
    if (cats) {
      const Event& e = final.failed()[firsts[k]].event;
      const Categorizer::Found f = cats->of(e.stack_id, e.python_stack_id, e.kind);
      row.request_category = f.category;
      row.request_segment = f.segment;
      row.categories = cats->table(facts.live, beyond_at_failure(row, facts.contexts));
    }
  }
  rep.growth = pass.growth.finish(stacks, opt.frames);
  rep.pools = pool_report(trace, all, stacks, rep.growth, opt.frames);
  rep.blocks = block_report(trace, all, stacks, rep.growth, opt.frames, opt.top,
                            std::vector<std::string>(pass.caches.begin(), pass.caches.end()));
  for (PoolHeap& h : rep.pools.heaps)
    for (PoolSite& s : h.sites) s.caller = names.of_key(s.key);
  for (BlockDevice& d : rep.blocks.devices)
    for (BlockSite& s : d.sites) s.caller = names.of_key(s.key);
  for (FailedRow& f : rep.failed) f.caller = names.of_key(f.key);
  add_block_findings(rep, stacks);  // blocks' sites join growth's with their names
  for (auto& g : rep.growth.sites) g.caller = names.of_key(g.key);
  if (pass.ranges) rep.ranges = pass.ranges->finish(last, final);
  if (pass.functions) rep.functions = pass.functions->finish();
  // Live at the end: what a caching allocator's cache holds (kept until exit by design),
  // apart from possible leaks (the rest), each grouped.
  rep.ipc = std::move(pass.ipc).finish();
  split_at_exit(end, rep, stacks, opt, names);
  rep.framework_limit = framework_limit(trace, rep);
  return rep;
}

LiveReport live_report(const Trace& trace, const Stacks& stacks, const Replayer& r, uint64_t at_ns,
                       uint64_t events_applied) {
  LiveReport lr;
  lr.path = trace.path;
  lr.at_ns = at_ns;
  lr.events_applied = events_applied;
  for (const auto& [d, s] : r.devices()) {
    LiveDevice ld;
    ld.device = d;
    std::copy(std::begin(s.live_bytes), std::end(s.live_bytes), ld.live_bytes);
    std::copy(std::begin(s.live_count), std::end(s.live_count), ld.live_count);
    ld.device_bytes = s.device_bytes;
    const auto live = r.live(d);
    ld.count = live.size();
    ld.reserved_bytes = s.reserved_bytes;
    ld.frag = s.frag.figures();
    ld.by_library = group_libraries(live, stacks);
    lr.devices.push_back(std::move(ld));
  }
  return lr;
}

LiveReport build_live(const Trace& trace, uint64_t at_ns) {
  return std::move(build_live(trace, std::vector{at_ns})[0]);
}

std::vector<LiveReport> build_live(const Trace& trace, const std::vector<uint64_t>& ats) {
  const auto& ev = trace.events;
  const bool in_time_order =
      std::is_sorted(ev.begin(), ev.end(), [](const Event& a, const Event& b) { return a.time_ns < b.time_ns; });
  return build_live(trace, MemoryEvents(ev), ats, in_time_order);
}

std::vector<LiveReport> build_live(const Trace& trace, const EventSource& events, const std::vector<uint64_t>& ats,
                                   bool in_time_order) {
  std::vector<LiveReport> out(ats.size());
  if (ats.empty()) return out;
  const Stacks stacks(trace);
  const size_t n = events.size();
  if (!in_time_order) {
    // "time_ns <= t in file order" is then no prefix of the file: one replay per moment.
    for (size_t k = 0; k < ats.size(); ++k) {
      Replayer r(trace.granule());
      uint64_t applied = 0;
      events.scan([&](const Event& e, size_t i) {
        if ((i & 0xfff) == 0) progress("replaying", i, n);
        if (e.time_ns > ats[k]) return;
        r.apply(e, i);
        ++applied;
      });
      out[k] = live_report(trace, stacks, r, ats[k], applied);
    }
    return out;
  }
  // Events in time order: the events of a moment are a prefix of the file, and a later
  // moment's prefix extends an earlier one's, so one replay serves every moment.
  std::vector<size_t> order(ats.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ats[a] < ats[b]; });
  Replayer r(trace.granule());
  size_t next = 0;  // in `order`: the first moment not answered yet
  events.scan([&](const Event& e, size_t i) {
    for (; next < order.size() && e.time_ns > ats[order[next]]; ++next)
      out[order[next]] = live_report(trace, stacks, r, ats[order[next]], i);
    if (next == order.size()) return;  // every moment answered: the rest is only read
    if ((i & 0xfff) == 0) progress("replaying", i, n);
    r.apply(e, i);
  });
  for (; next < order.size(); ++next) out[order[next]] = live_report(trace, stacks, r, ats[order[next]], n);
  return out;
}

}  // namespace cumemtrace
