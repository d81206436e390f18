// First-fit allocation of granule-aligned address ranges inside one region.
//
// Every device address the sim hands out comes from one of these: the
// ordinary heap, the stream-ordered pools and the VMM reservations each own a
// region per device. Lowest address first, so that tests can predict addresses.
// The free ranges are kept (merged) in a FreeExtents, so a take is O(log n)
// rather than a walk over every range handed out.
#pragma once

#include "free_extents.h"

#include <cstdint>
#include <optional>

namespace sim {

class GranuleSpace {
   public:
    GranuleSpace(uint64_t base, uint64_t length) : base_(base), length_(length) { free_.insert(base, length); }

    // `size` and `align` must be multiples of kGranule (align may be 0).
    std::optional<uint64_t> take(uint64_t size, uint64_t align);
    // Takes exactly [addr, addr+size) if all of it is free and inside.
    bool take_at(uint64_t addr, uint64_t size);
    // Returns [addr, addr+size), which may be part of a range taken earlier.
    // A range that is not wholly taken is ignored.
    void give_back(uint64_t addr, uint64_t size);
    bool contains(uint64_t addr) const { return addr >= base_ && addr - base_ < length_; }

   private:
    void carve(const Extent &from, uint64_t addr, uint64_t size);

    uint64_t base_, length_;
    FreeExtents free_;  // maximal free ranges
};

}  // namespace sim
