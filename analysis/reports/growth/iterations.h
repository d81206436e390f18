// Where a program's iterations are (docs/cli.md, "Growth across iterations"): from NVTX
// ranges, from marks, or found in the allocations themselves; the growth analysis
// (growth.h) measures each call site at their boundaries. The rules, in the order tried:
//
//   nvtx-ranges  a range name pushed (or started) and popped (or ended) twice or more
//                (1.10 traces): each complete range, a start followed by an end before the
//                next start, is one iteration. The boundaries are the first complete range's
//                start and each complete range's end; a range never ended (the process
//                stopped inside it) is a partial iteration, left out. Among names, the most
//                complete ranges win, then the longest in all (an outer "step" over an
//                inner "forward" of as many).
//   marks        a mark name seen twice or more (the most marks win): each mark starts an
//                iteration and ends the one before. The stretch after the last mark is a
//                whole iteration only when the trace ended cleanly (an End record) and the
//                stretch allocates as an iteration did: its successful device-memory
//                allocations come from the same stacks, as many times each, as those of one
//                of the iterations between marks (allocating nothing matches only an
//                iteration that allocated nothing), however long it lasts; then the
//                trace's end is one more boundary, else it is left out.
//   call-site    without either, from the successful device-memory allocations in file
//                order: a stack (native and Python) that recurs, taken with each stretch from
//                one of its allocations to the next as an iteration. A stretch's signature is
//                the set of stacks it allocates from (with counts) and how many frees it has;
//                a candidate is taken when two stretches or more share one signature that
//                frees something (a loop that only allocates is loading, not stepping) and
//                those stretches cover at least half of the allocations between its first
//                and its last; among candidates, the one covering the most allocations, then
//                the earliest. The boundaries are the stack's allocations (just before each);
//                the stretch after the last is whole when its first allocations and frees are
//                one iteration's signature, and then the trace's end is one more boundary.
//                How sure: `agreeing` of `iterations` stretches share the signature (all of
//                them: exact). A caching allocator's block allocations, where the trace has
//                them, are searched first (the program's tensors; growth.cpp), the driver's
//                when no loop is found there.
//   none         no iterations found: the only boundary is the trace's end.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "read/reader.h"

namespace cumemtrace {

enum class IterationsBy { kNone, kRanges, kMarks, kCallSite };
std::string_view iterations_by_name(IterationsBy by);

// Iterations whose boundaries are times (ranges, marks), found from the trace's records.
struct TimedIterations {
  IterationsBy by = IterationsBy::kNone;
  std::string name;                  // the range or mark name
  std::vector<uint64_t> boundaries;  // times (ns), sorted; iterations = boundaries - 1
  bool partial_left_out = false;     // ranges: one never ended was left out
};
TimedIterations timed_iterations(const Trace& trace);

// What a stretch between boundaries allocates: the stacks (native and Python) of its
// successful device-memory allocations, with how many each, as a multiset hash.
struct StretchSignature {
  uint64_t hash = 0;
  uint64_t allocations = 0;
  void add(uint32_t stack, uint32_t python);
  bool operator==(const StretchSignature&) const = default;
};
// Marks: whether the stretch after the last mark is one more iteration (the rule above).
bool last_stretch_whole(const std::vector<StretchSignature>& iterations, const StretchSignature& last, bool clean_end);

// One successful device-memory allocation, for the loop search.
struct AllocStep {
  size_t event = 0;  // its index in file order
  uint64_t time_ns = 0;
  uint32_t stack = 0;
  uint32_t python = 0;
  uint32_t frees_before = 0;  // device-memory frees in file order before it
};

struct FoundLoop {
  bool found = false;
  uint32_t stack = 0, python = 0;  // the recurring stack
  std::vector<size_t> starts;      // AllocStep positions that start each iteration
  bool last_whole = false;         // the stretch after the last start is an iteration
  uint64_t stretches = 0;          // stretches between starts
  uint64_t agreeing = 0;           // of which share the signature
};
// `frees_total`: device-memory frees in the whole trace.
FoundLoop find_loop(const std::deque<AllocStep>& allocs, uint32_t frees_total);

}  // namespace cumemtrace
