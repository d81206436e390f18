#include "heap.h"

#include "sim_config.h"

#include <vector>

namespace sim {
namespace {
constexpr uint64_t kSmallAlign = 512;
uint64_t page_of(uint64_t addr) { return addr & ~(kGranule - 1); }
}  // namespace

uint64_t Heap::granules_needed(uint64_t size) const {
    if (size >= kGranule) {
        auto reserved = round_up(size, kGranule);
        return reserved ? *reserved / kGranule : UINT64_MAX;
    }
    return gaps_.first_fit(*round_up(size, kSmallAlign)) ? 0 : 1;
}

std::optional<uint64_t> Heap::allocate(uint64_t size, Ctx *ctx) {
    if (size >= kGranule) {
        auto reserved = round_up(size, kGranule);
        if (!reserved) return std::nullopt;
        auto addr = space_.take(*reserved, kGranule);
        if (!addr) return std::nullopt;
        granules_ += *reserved / kGranule;
        blocks_.emplace(*addr, Live{HeapBlock{*addr, size, ctx}, *reserved});
        return addr;
    }
    uint64_t rounded = *round_up(size, kSmallAlign);  // under 2 MiB: cannot overflow
    std::optional<Extent> gap = gaps_.first_fit(rounded);
    if (gap) {
        gaps_.erase(gap->start);
        ++pages_[page_of(gap->start)];
    } else {
        auto page = space_.take(kGranule, kGranule);
        if (!page) return std::nullopt;
        ++granules_;
        pages_.emplace(*page, 1);
        gap = Extent{*page, kGranule};
    }
    uint64_t at = gap->start;
    if (gap->length > rounded) gaps_.insert(at + rounded, gap->length - rounded);
    blocks_.emplace(at, Live{HeapBlock{at, size, ctx}, rounded});
    return at;
}

void Heap::free_small(uint64_t addr, uint64_t reserved) {
    // Coalesce with the gaps on either side, but only within the same page.
    uint64_t page = page_of(addr), start = addr, end = addr + reserved;
    if (start != page)
        if (auto before = gaps_.at_or_before(start - 1); before && before->end() == start) {
            gaps_.erase(before->start);
            start = before->start;
        }
    if (end != page + kGranule)
        if (auto after = gaps_.at_or_after(end); after && after->start == end) {
            gaps_.erase(after->start);
            end = after->end();
        }
    auto count = pages_.find(page);
    if (--count->second == 0) {  // the whole page is free: its granule goes back
        pages_.erase(count);
        space_.give_back(page, kGranule);
        --granules_;
        return;
    }
    gaps_.insert(start, end - start);
}

bool Heap::release(uint64_t addr) {
    auto it = blocks_.find(addr);
    if (it == blocks_.end()) return false;
    uint64_t size = it->second.block.size, reserved = it->second.reserved;
    blocks_.erase(it);
    if (size >= kGranule) {
        space_.give_back(addr, reserved);
        granules_ -= reserved / kGranule;
    } else {
        free_small(addr, reserved);
    }
    return true;
}

std::optional<HeapBlock> Heap::find(uint64_t p) const {
    auto it = blocks_.upper_bound(p);
    if (it == blocks_.begin()) return std::nullopt;
    --it;
    const HeapBlock &b = it->second.block;
    // A zero-length view never happens (size 0 is refused), so `<` is enough.
    if (p - b.addr < b.size) return b;
    return std::nullopt;
}

void Heap::release_all_of(const Ctx *ctx) {
    std::vector<uint64_t> doomed;
    for (const auto &[addr, live] : blocks_)
        if (live.block.ctx == ctx) doomed.push_back(addr);
    for (uint64_t addr : doomed) release(addr);
}

}  // namespace sim
