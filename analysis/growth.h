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

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cumemtrace/reader.h"
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

Growth analyze_growth(const Trace& trace, const Stacks& stacks, size_t frames);

}  // namespace cumemtrace
