// The report's first pass over the events (report.h's build_report): the replay and what
// the sections read from single events.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "reports/oom/report_failures.h"
#include "reports/report.h"

namespace cumemtrace {

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
  uint64_t earliest_ns = UINT64_MAX, latest_ns = 0;        // the least and the greatest of their times

  void observe(const Event& e);
  // A block record (trace format 1.13), in file order with the events: its allocation's
  // site is named alike in every table; the loop search looks among the blocks first.
  void observe_block(const BlockEvent& b);
};

}  // namespace cumemtrace
