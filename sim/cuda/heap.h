// The ordinary device heap of one device: what cuMemAlloc/cuMemAllocPitch take.
//
// Placement rules, as measured on an H200 (see docs/simulated-driver.md):
//  - requests under 2 MiB are rounded up to 512 B and packed first-fit into
//    2 MiB "small pages", each of which holds a whole granule of capacity
//    while any allocation lives in it;
//  - requests of 2 MiB or more get their own 2 MiB-aligned run of granules.
// Pages and runs come from one GranuleSpace, lowest address first.
#pragma once

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
    // in an existing small page).
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
    struct Page {
        std::map<uint64_t, uint64_t> blocks;  // addr -> rounded size
    };
    std::optional<uint64_t> fit_in_page(const Page &page, uint64_t page_addr, uint64_t rounded) const;

    GranuleSpace space_;
    std::map<uint64_t, Page> pages_;        // small pages by address
    std::map<uint64_t, HeapBlock> blocks_;  // every live allocation by address
    std::map<uint64_t, uint64_t> runs_;     // large allocations: addr -> reserved bytes
    uint64_t granules_ = 0;
};

}  // namespace sim
