// First-fit allocation of granule-aligned address ranges inside one region.
//
// Every device address the sim hands out comes from one of these: the
// ordinary heap, the stream-ordered pools and the VMM reservations each own a
// region per device. Lowest address first, so that tests can predict addresses.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace sim {

class GranuleSpace {
public:
    GranuleSpace(uint64_t base, uint64_t length) : base_(base), length_(length) {}

    // `size` and `align` must be multiples of kGranule (align may be 0).
    std::optional<uint64_t> take(uint64_t size, uint64_t align);
    // Takes exactly [addr, addr+size) if all of it is free and inside.
    bool take_at(uint64_t addr, uint64_t size);
    // Returns [addr, addr+size), which may be part of a range taken earlier.
    void give_back(uint64_t addr, uint64_t size);
    bool contains(uint64_t addr) const { return addr >= base_ && addr - base_ < length_; }

private:
    uint64_t base_, length_;
    std::map<uint64_t, uint64_t> used_;  // start -> size, never adjacent-merged
};

}  // namespace sim
