// Growth across iterations: what each call site holds at each iteration boundary, and what
// that says (docs/cli.md, "Growth across iterations"). Where the iterations are
// is iterations.h's business (NVTX ranges, marks, or a loop found in the allocations; the
// trace's end alone when none was found). Per call site (the user's part of the stack,
// call_site_rule.h: the call-site frame and the user's callers of it; kind; device), the
// requested bytes live at each boundary, b_0 … b_n (n whole iterations; a partial first or
// last one is never among them), classify it:
//
//   leak          over the last half of the steps (two at least; or from its first growth
//                 on, when that came later) grows at every boundary by a steady amount
//                 (largest step ≤ 1.1 × smallest): growth_per_iteration is their mean,
//                 growth_min/growth_max the smallest and largest step (the spread). The
//                 first steps are left out: a caching allocator warms up over a few.
//                 Something it held at one boundary of those steps is still live at the next.
//   growing       grows as a leak does, but at each of those steps nothing it held at one
//                 boundary is live at the next: each iteration's buffer is freed and a larger
//                 one takes its place (a growing need, not a leak; not in possible leaks)
//   one-time      grows at one boundary at most, never shrinks (a workspace, weights); with
//                 no iterations found, whatever is live at the end
//   cache-growth  grows at two boundaries or more, then stops (a caching allocator adapting
//                 to larger requests): flat at the last boundary
//   transient     nothing live at any boundary, yet allocated between the first and the
//                 last (freed within its iteration; with no iterations, anywhere)
//   varies        anything else (shrinks, grows unevenly)
#pragma once

#include <climits>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include "read/reader.h"
#include "reports/growth/iterations.h"
#include "replay/live_sets.h"
#include "replay/replay.h"
#include "stacks/call_site_rule.h"
#include "stacks/stacks.h"

namespace cumemtrace {

struct GrowthSite {
  enum class Class { kLeak, kGrowing, kOneTime, kCacheGrowth, kTransient, kVaries };
  Class cls{};
  uint32_t node = 0;         // native StackNode id the rule gave (of the first stack seen through this site)
  uint64_t key = 0;          // the site's identity under the call-site rule (UserSite::key)
  bool from_python = false;  // the key names a Python frame
  std::string library;
  format::Kind kind{};
  int32_t device = -1;
  std::vector<uint64_t> bytes_at;           // at each boundary
  uint64_t count_at_end = 0;                // live allocations at the last boundary
  uint64_t allocations_within = 0;          // allocations between the first and the last boundary
  uint64_t growth_per_iteration = 0;        // leak and growing only
  uint64_t growth_min = 0, growth_max = 0;  // leak and growing: the smallest and largest step it was measured on
  // At each boundary k > 0, the bytes live there that were allocated at or before boundary
  // k - 1 (so live at both): what one boundary's allocations carried into the next.
  std::vector<uint64_t> carried_at;
  std::vector<Frame> frames;         // native, from the call site
  std::vector<Frame> python_frames;  // from the user's Python frame outwards, when the rule chose one
  CallerNames::Names caller;         // the caller that tells it from sites of the same frame (call_site_rule.h)
  // A site of blocks inside a caching allocator (blocks.h): that allocator ("PyTorch");
  // empty for device memory taken from the driver.
  std::string inside;
};
std::string_view class_name(GrowthSite::Class c);

// The rule above on one site's bytes live at each boundary (`allocations_within`: those
// made between the first boundary and the last; `carried_at` as GrowthSite's, or null when
// not known: then steady growth is a leak). Also used inside pools (pools.h).
struct GrowthFit {
  GrowthSite::Class cls = GrowthSite::Class::kVaries;
  uint64_t per_iteration = 0, min = 0, max = 0;  // leak and growing: the mean, smallest and largest step
};
GrowthFit classify_growth(const std::vector<uint64_t>& bytes_at, uint64_t allocations_within,
                          const std::vector<uint64_t>* carried_at = nullptr);

struct Growth {
  IterationsBy by = IterationsBy::kNone;  // how the iterations were found (iterations.h)
  std::string mark;                       // the range or mark name that delimits iterations; empty: none
  uint64_t iterations = 0;                // whole iterations: boundaries - 1 (0 when none were found)
  bool partial_left_out = false;          // a partial last iteration (or a range never ended) was left out
  // call-site: the stack that recurs once per iteration; `agreeing` of `stretches` stretches
  // between its allocations had one iteration's signature (iterations.h)
  uint32_t loop_stack = 0, loop_python = 0;
  std::string loop_inside;  // the loop was found in a caching allocator's blocks ("PyTorch"), else empty
  uint64_t stretches = 0, agreeing = 0;
  std::vector<Frame> loop_frames;   // its call site (native frames, then its Python frames)
  std::string loop_search_skipped;  // why no loop was looked for, when it was not
  std::vector<uint64_t> boundaries_ns;
  std::vector<GrowthSite> sites;  // leaks first (by growth), then one-time, cache-growth, transient, varies
};

// Growth worked out in two passes over the events (event_source.h), with the other
// readers of the same passes: the first (observe, every event in file order) finds where
// each boundary falls and counts allocations per stack; want() then has the second pass
// keep the bytes live per stack as it goes, added at each allocation and taken away at
// each free, and read that table at each boundary (live_sets.h: watch), and finish()
// classifies from what was read. Never the live set walked at a boundary: summing it there
// was the live set times the iterations (docs/performance.md, "Growth across many
// iterations").
class GrowthScan : private LiveWatcher {
 public:
  explicit GrowthScan(const Trace& trace);  // boundaries from its ranges or marks, if any
  void observe(const Event& e, size_t index);
  // A block record (trace format 1.13), in file order with the events: without boundaries
  // from records, the loop is looked for among the blocks' allocations first.
  void observe_block(const BlockEvent& b);
  // Asks `sets` to tell it of what is live as the second pass goes, and to stop just after
  // the last event at or before each boundary (for the devices the events touched);
  // `events`: how many observe() saw. The GrowthScan must stay where it is until
  // sets.take_all() has run.
  void want(size_t events, LiveSets& sets);
  // After sets.take_all().
  Growth finish(const Stacks& stacks, size_t frames);

  static constexpr size_t kMaxLoopAllocs = size_t(1) << 22;  // allocations kept for the loop search

 private:
  using Within = std::tuple<uint32_t, uint32_t, int, int32_t>;  // (stack, Python stack, kind, device)
  void count_within(const Within& key);
  // The second pass (LiveWatcher): each allocation holding device memory as it enters and
  // leaves the live set, and each boundary's stop.
  void entered(const LiveAlloc& a) override;
  void left(const LiveAlloc& a) override;
  void at(size_t stop, const Replayer& r) override;

  Growth g_;
  TimedIterations timed_;
  bool clean_end_ = false;
  std::vector<uint64_t> given_;      // the boundaries from records, sorted
  std::vector<size_t> first_after_;  // per given_: the first event later than it (the prefix it ends)
  // Marks: what each stretch allocates, [k] the one after given_[k - 1] ([0]: before the first).
  std::vector<StretchSignature> stretches_;
  size_t cursor_ = 0;
  uint64_t end_ = 0;  // the latest event or End record
  std::map<int32_t, bool> devices_;
  int32_t last_device_ = INT32_MIN;
  // Without boundaries from records: every successful device-memory allocation, for the
  // loop search (up to kMaxLoopAllocs), and the frees so far.
  // In blocks, not one array: a vector's doubling left up to half of it unused, and the
  // copy at each doubling held both at once (per allocation, they were most of what a
  // report's memory grew by with the trace's allocations: docs/performance.md).
  std::deque<AllocStep> allocs_;
  std::deque<std::pair<int, int32_t>> alloc_kinds_;  // per allocs_: (kind, device)
  // The same of the block records' allocations (the loop search's first place), and the
  // allocator of the first block record.
  std::deque<AllocStep> block_steps_;
  uint32_t block_frees_ = 0;
  bool too_many_blocks_ = false;
  std::optional<format::BlockAllocator> block_allocator_;
  uint32_t frees_ = 0;
  bool too_many_ = false;
  // Successful device-memory allocations after the first boundary (all of them, while
  // that is not known yet), per (stack, kind, device) in the order first seen (the first
  // one names a site, as in file order).
  std::map<Within, size_t> within_of_;
  std::vector<std::pair<Within, uint64_t>> within_;
  std::vector<size_t> prefix_end_;  // per boundary: the events before it (its live set's prefix)
  // What the second pass showed, per (stack, Python stack, kind, device): bytes live at
  // each boundary, how many at the last, and where it was first met: (boundary, device,
  // kept by handle, address or handle), the order in which finish() met allocations when it
  // read copies of the sets (live_holding's), so that the same allocation names each site.
  struct AtBoundaries {
    std::tuple<size_t, int32_t, bool, uint64_t> first;
    std::vector<uint64_t> bytes_at;
    std::vector<uint64_t> carried_at;  // GrowthSite::carried_at
    uint64_t count_at_end = 0;
  };
  std::map<Within, AtBoundaries> at_boundaries_;
  // What the second pass keeps as it goes, per (stack, Python stack, kind, device) on a
  // device the events touched: what is live of it now, and of that what was allocated at
  // or before the boundary before the next one (carried_at's). Until it is first live at a
  // boundary, which of its allocations are live (kept by handle, address or handle): the
  // least of them there is where it was first met. Not kept for the last stop, which reads
  // that from the replay once: with no iterations found (one boundary, the end) nothing.
  struct Tally {
    AtBoundaries* at = nullptr;  // once met at a boundary
    int32_t device = -1;
    uint64_t bytes = 0, count = 0, carried = 0;
    size_t slot = 0;  // in live_tallies_, while count > 0
    std::set<std::pair<bool, uint64_t>> unmet;
  };
  struct WithinHash {
    size_t operator()(const Within& w) const;
  };
  using Tallied = std::pair<const Within, Tally>;
  Tallied* tally(const LiveAlloc& a);  // null: not on a device the events touched
  void carry_below(size_t rank);
  std::vector<uint64_t> bound_ns_;  // per boundary, its time
  std::vector<size_t> stop_bound_;  // per stop asked for: its boundary
  size_t stops_left_ = 0;           // not reached yet
  std::vector<uint64_t> ranks_;     // the boundaries' times, sorted, each once
  std::unordered_map<Within, Tally, WithinHash> tallies_;
  std::vector<Tallied*> live_tallies_;  // those with something live
  // Per rank of allocation time (ranks_: the first boundary at or after it), per tally, the
  // bytes and count live; an allocation whose rank is below `carried_below_` is carried.
  // With the boundaries in time order, only the ranks not carried yet are kept.
  std::map<size_t, std::unordered_map<Tallied*, std::pair<uint64_t, uint64_t>>> by_rank_;
  size_t carried_below_ = 0;
  bool in_time_order_ = true;
};

}  // namespace cumemtrace
