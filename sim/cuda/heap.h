// The ordinary device heap of one device: what cuMemAlloc/cuMemAllocPitch take.
//
// Placement rules, as measured on an H200 (see docs/simulated-driver.md):
//  - requests under 2 MiB are rounded up to 512 B and packed first-fit into
//    2 MiB "small pages", each of which holds a whole granule of capacity
//    while any allocation lives in it;
//  - requests of 2 MiB or more get their own 2 MiB-aligned run of granules.
// Pages and runs come from one GranuleSpace, lowest address first.
//
// "First fit" means: the lowest address, over all small pages, with room for
// the rounded request; only when no page has room does a new page come from
// the GranuleSpace (which may be lower than every existing page). The free
// space of all small pages lives in one FreeExtents, one range per maximal gap,
// never merged across a page boundary, so that lowest fitting gap is found in
// O(log n).
#pragma once

#include "free_extents.h"
#include "granule_space.h"

#include <cstdint>
#include <map>
#include <optional>

namespace sim {

struct Ctx;

struct HeapBlock {
    uint64_t addr;
    uint64_t size;  // as requested (pitch * height for pitched allocations)
    Ctx *ctx;
};

class Heap {
   public:
    Heap(uint64_t base, uint64_t length) : space_(base, length) {}

    // Granules the request would add to the footprint right now (0 if it fits
    // in an existing small page); UINT64_MAX for a size that cannot exist.
    uint64_t granules_needed(uint64_t size) const;
    // Caller has checked capacity for granules_needed(size).
    std::optional<uint64_t> allocate(uint64_t size, Ctx *ctx);
    bool release(uint64_t addr);
    // The live allocation whose [addr, addr+size) holds `p`.
    std::optional<HeapBlock> find(uint64_t p) const;
    uint64_t granules() const { return granules_; }
    // Frees everything `ctx` allocated (its context was destroyed).
    void release_all_of(const Ctx *ctx);

   private:
    struct Live {
        HeapBlock block;
        uint64_t reserved;  // rounded to 512 B (small) or to whole granules (run)
    };
    void free_small(uint64_t addr, uint64_t reserved);

    GranuleSpace space_;
    FreeExtents gaps_;                    // free space inside small pages
    std::map<uint64_t, uint32_t> pages_;  // small page -> live allocations in it
    std::map<uint64_t, Live> blocks_;     // every live allocation by address
    uint64_t granules_ = 0;
};

}  // namespace sim
