#include "granule_space.h"

#include "sim_config.h"

namespace sim {

std::optional<uint64_t> GranuleSpace::take(uint64_t size, uint64_t align) {
    if (align < kGranule) align = kGranule;
    uint64_t cursor = base_;
    auto try_gap = [&](uint64_t gap_end) -> std::optional<uint64_t> {
        uint64_t start = round_up(cursor, align);
        if (start >= cursor && start <= gap_end && gap_end - start >= size) return start;
        return std::nullopt;
    };
    for (auto [start, len] : used_) {
        if (auto hit = try_gap(start)) {
            used_.emplace(*hit, size);
            return hit;
        }
        cursor = start + len;
    }
    if (auto hit = try_gap(base_ + length_)) {
        used_.emplace(*hit, size);
        return hit;
    }
    return std::nullopt;
}

bool GranuleSpace::take_at(uint64_t addr, uint64_t size) {
    if (addr < base_ || addr + size > base_ + length_ || addr + size < addr) return false;
    auto next = used_.lower_bound(addr);
    if (next != used_.end() && next->first < addr + size) return false;
    if (next != used_.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second > addr) return false;
    }
    used_.emplace(addr, size);
    return true;
}

void GranuleSpace::give_back(uint64_t addr, uint64_t size) {
    // Pools return single granules out of a larger range they took at once,
    // so split the containing range rather than expecting an exact match.
    auto it = used_.upper_bound(addr);
    if (it == used_.begin()) return;
    --it;
    uint64_t start = it->first, len = it->second, end = start + len;
    if (addr + size > end) return;
    used_.erase(it);
    if (start < addr) used_.emplace(start, addr - start);
    if (addr + size < end) used_.emplace(addr + size, end - (addr + size));
}

}  // namespace sim
