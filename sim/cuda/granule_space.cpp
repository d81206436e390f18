#include "granule_space.h"

#include "sim_config.h"

namespace sim {

void GranuleSpace::carve(const Extent &from, uint64_t addr, uint64_t size) {
    free_.erase(from.start);
    if (from.start < addr) free_.insert(from.start, addr - from.start);
    if (addr + size < from.end()) free_.insert(addr + size, from.end() - (addr + size));
}

std::optional<uint64_t> GranuleSpace::take(uint64_t size, uint64_t align) {
    if (size == 0) return std::nullopt;
    if (align < kGranule) align = kGranule;
    // Every free range starts on a granule, so with the granule as alignment
    // the lowest range long enough is the answer. A coarser alignment (VMM
    // reservations) may have to skip ranges that are long enough but whose
    // aligned start leaves too little.
    for (auto range = free_.first_fit(size); range; range = free_.first_fit(size, range->start + 1)) {
        auto start = round_up(range->start, align);
        if (!start) break;  // no aligned address at or above this range exists
        if (*start < range->end() && range->end() - *start >= size) {
            carve(*range, *start, size);
            return start;
        }
    }
    return std::nullopt;
}

bool GranuleSpace::take_at(uint64_t addr, uint64_t size) {
    if (size == 0 || addr < base_ || addr + size < addr || addr + size > base_ + length_) return false;
    auto range = free_.at_or_before(addr);
    if (!range || range->end() < addr + size) return false;
    carve(*range, addr, size);
    return true;
}

void GranuleSpace::give_back(uint64_t addr, uint64_t size) {
    // Pools return single granules out of a larger range they took at once,
    // so any taken sub-range may come back; merge it with free neighbours.
    if (size == 0 || addr < base_ || addr + size < addr || addr + size > base_ + length_) return;
    uint64_t start = addr, end = addr + size;
    auto before = free_.at_or_before(addr);
    if (before && before->end() > addr) return;  // overlaps free space: not taken
    auto after = free_.at_or_after(addr);
    if (after && after->start < end) return;
    if (before && before->end() == start) {
        free_.erase(before->start);
        start = before->start;
    }
    if (after && after->start == end) {
        free_.erase(after->start);
        end = after->end();
    }
    free_.insert(start, end - start);
}

}  // namespace sim
