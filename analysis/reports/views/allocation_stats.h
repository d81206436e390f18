// What `report --view top-allocations|temporary|sizes|tree|callers` show (docs/cli.md, "Views"), from
// one pass over a trace's events: per call site, how many allocations of device memory
// it made, their bytes, and how many were temporary; the same per whole stack (the trees);
// and every allocation's size in a histogram. The views answer heaptrack's questions (which sites allocate most often,
// which allocate only to free at once) for device memory, where each allocation is a
// driver call that costs far more than a host malloc.
//
// Temporary, as heaptrack counts it: an allocation freed before the process made any
// other allocation (frees of other allocations in between do not matter). A site whose
// allocations are mostly temporary would run as well with one buffer kept and reused.
//
// Allocations = allocates_device_memory (allocation_events.h), the rule the per-range
// and per-function figures use; a call site is the report's (call_site_rule.h): the
// call-site frame, and the innermost Python frame when there is one.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cumemtrace/rules/address_map.h"
#include "read/reader.h"
#include "stacks/stacks.h"

namespace cumemtrace {

struct SiteAllocations {
  uint32_t node = 0;          // call-site StackNode id; 0: no stack recorded
  uint32_t python_stack = 0;  // innermost PyFrameNode; 0: none
  std::string library;        // the owner frame's module (CallSite::library)
  uint64_t allocations = 0;
  uint64_t bytes = 0;
  uint64_t temporary = 0;  // allocations freed before any other allocation
  uint64_t temporary_bytes = 0;
};

// Allocations whose size s has 2^k <= s < 2^(k+1) (k = 0 for a 0- or 1-byte request).
struct SizeBucket {
  unsigned log2 = 0;
  uint64_t allocations = 0;
  uint64_t bytes = 0;
};

// What the allocations made with one whole stack (native and Python) did, for the trees.
struct StackAllocations {
  uint64_t allocations = 0;
  uint64_t bytes = 0;
};

struct AllocationStats {
  std::vector<SiteAllocations> sites;                                // in the order each site first allocated
  std::map<std::pair<uint32_t, uint32_t>, StackAllocations> stacks;  // (stack id, Python stack id)
  std::vector<SizeBucket> sizes;  // every bucket from the smallest size's to the largest's
  uint64_t allocations = 0, bytes = 0, temporary = 0;
};

// Fed every event in file order.
class AllocationScan {
 public:
  explicit AllocationScan(const Stacks& stacks) : stacks_(stacks) {}
  void observe(const Event& e);
  AllocationStats finish();

 private:
  const Stacks& stacks_;
  AllocationStats stats_;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> site_index_;  // (node, Python stack) -> sites
  std::map<unsigned, SizeBucket> buckets_;
  AddressMap<uint32_t> held_;  // live allocation -> its site
  uint64_t last_key_ = 0;      // the latest allocation, while no other has followed it
  uint64_t last_size_ = 0;
};

// The bucket of a size: floor(log2(size)), 0 for 0 and 1.
unsigned size_bucket(uint64_t size);

// The rankings every view of them shows (the text views and the page), all their rows:
// by number of allocations (of as many, the most bytes; then the first seen first), and
// the sites with temporary allocations by how many (of as many, the most of their bytes).
std::vector<const SiteAllocations*> ranked_by_allocations(const AllocationStats& st);
std::vector<const SiteAllocations*> ranked_by_temporary(const AllocationStats& st);

}  // namespace cumemtrace
