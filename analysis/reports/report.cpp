// build_report: the two passes over the events, what the sets they leave show (devices,
// failures, contexts), then each section's compute step (sections/steps.h).
#include "reports/report.h"

#include "base/progress.h"
#include "replay/live_sets.h"
#include "reports/oom/report_failures.h"
#include "reports/sections/at_exit.h"
#include "reports/sections/first_pass.h"
#include "reports/sections/readings.h"
#include "reports/sections/site_sums.h"
#include "reports/sections/steps.h"
#include "stacks/call_site_rule.h"
#include "stacks/python_stacks.h"

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

// What a device's peak shows of the set live there, summed while the second pass stands
// at the peak rather than from a copy of it.
struct PeakSums {
  explicit PeakSums(const Stacks& stacks) : sites(stacks), libraries(stacks) {}
  SiteSums sites;
  LibrarySums libraries;
};

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
  if (pass.kept) rep.earliest_event_ns = pass.earliest_ns, rep.latest_event_ns = pass.latest_ns;

  // Second pass: every live set the report shows, copied in one replay (live_sets.h):
  // each device's peak, each failure's group, each allocator map, each growth boundary.
  // What was live at a peak is what made it: another process's memory mapped here
  // (ipc-import) never did. Its sites and libraries are summed in place; only the
  // categories (--categories) need the set itself.
  LiveSets sets;
  std::map<int32_t, PeakSums> peak_sums;
  std::map<int32_t, LiveSets::Ticket> peak_sets;
  std::vector<void (*)(const LiveAlloc&, Report&)> at_peak_steps;
  for (const ReportStep& step : report_steps())
    if (step.at_peak) at_peak_steps.push_back(step.at_peak);
  for (const auto& [d, s] : final.devices()) {
    if (s.peak_event == kNoEvent) continue;
    rep.peak_events[d] = s.peak_event;
    PeakSums& sums = peak_sums.try_emplace(d, stacks).first->second;
    sets.visit(s.peak_event, d, [&sums, &at_peak_steps, &rep](const LiveAlloc& a) {
      if (a.kind == Kind::kIpcImport) return;
      sums.sites.add(a);
      sums.libraries.add(a);
      for (const auto step : at_peak_steps) step(a, rep);
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
  // The failures the trace's blocks add (the blocks step) name no caller of their own.
  for (FailedRow& f : rep.failed) f.caller = names.of_key(f.key);
  ReportInputs in{trace, all, opt, stacks, pass, names, end, last};
  for (const ReportStep& step : report_steps()) step.compute(in, rep);
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