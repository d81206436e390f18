// Growth across iterations: what each call site holds at each iteration boundary, and what
// that says (issue "CI memory regression checks"). Marks with one name delimit iterations
// (the name with the most marks, two at least); the boundaries are those marks and the
// trace's end. Without such marks the snapshots' times serve as boundaries and the report
// says it had no iterations. Per call site (the call-site frame's address, whatever called
// it; kind; device), the requested bytes live at each boundary, b_0 … b_n, classify it:
//
//   leak          over the last half of the steps (two at least; or from its first growth
//                 on, when that came later) grows at every boundary by a steady amount
//                 (largest step ≤ 1.1 × smallest): growth_per_iteration is their mean. The
//                 first steps are left out: a caching allocator warms up over a few.
//   one-time      grows at one boundary at most, never shrinks (a workspace, weights)
//   cache-growth  grows at two boundaries or more, then stops (a caching allocator adapting
//                 to larger requests): flat at the last boundary
//   transient     nothing live at any boundary, yet allocated between the first and the
//                 last (freed within its iteration)
//   varies        anything else (shrinks, grows unevenly)
#pragma once

#include <climits>
#include <cstdint>
#include <map>
#include <span>
#include <tuple>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include "cumemtrace/reader.h"
#include "replay.h"
#include "stacks.h"

namespace cumemtrace {

struct GrowthSite {
  enum class Class { kLeak, kOneTime, kCacheGrowth, kTransient, kVaries };
  Class cls{};
  uint32_t node = 0;  // call-site StackNode id (of the first stack seen through this call site)
  std::string library;
  format::Kind kind{};
  int32_t device = -1;
  std::vector<uint64_t> bytes_at;  // at each boundary
  uint64_t count_at_end = 0;       // live allocations at the last boundary
  uint64_t allocations_within = 0; // allocations between the first and the last boundary
  uint64_t growth_per_iteration = 0;  // leak only
  std::vector<Frame> frames;
};
std::string_view class_name(GrowthSite::Class c);

struct Growth {
  std::string mark;          // the mark name that delimits iterations; empty: none
  uint64_t iterations = 0;   // marks of that name (each starts one)
  std::vector<uint64_t> boundaries_ns;
  std::vector<GrowthSite> sites;  // leaks first (by growth), then one-time, cache-growth, transient, varies
};

// Growth worked out in two passes over the events (event_source.h), with the other
// readers of the same passes: the first (observe, every event in file order) finds where
// each boundary falls and counts allocations per stack; stops() then names the moments
// whose live sets the second pass copies, and finish() classifies from those live sets.
class GrowthScan {
 public:
  explicit GrowthScan(const Trace& trace);  // boundaries from its marks or snapshots
  void observe(const Event& e, size_t index);
  // (event index, device): just after the last event at or before each boundary, on
  // each device the events touched; `events`: how many observe() saw.
  std::vector<std::pair<size_t, int32_t>> stops(size_t events);
  // `lives`: the live sets at stops(), in its order.
  Growth finish(const Stacks& stacks, size_t frames, std::span<const std::vector<LiveAlloc>> lives);

 private:
  Growth g_;
  uint64_t given_last_ = 0;          // the last boundary from records, as they came
  std::vector<uint64_t> given_;      // the boundaries from records, sorted
  std::vector<size_t> first_after_;  // per given_: the first event later than it (the prefix it ends)
  size_t cursor_ = 0;
  uint64_t end_ = 0;                 // the latest event or End record
  std::map<int32_t, bool> devices_;
  int32_t last_device_ = INT32_MIN;
  // Successful device-memory allocations after the first boundary, per (stack, kind,
  // device) in the order first seen (the first one names a site, as in file order).
  std::map<std::tuple<uint32_t, int, int32_t>, size_t> within_of_;
  std::vector<std::pair<std::tuple<uint32_t, int, int32_t>, uint64_t>> within_;
  std::vector<size_t> stop_of_;  // per boundary: its first stop, or kNoEvent
};

}  // namespace cumemtrace
