#include "heap.h"

#include "sim_config.h"

#include <vector>

namespace sim {
namespace {
constexpr uint64_t kSmallAlign = 512;
}

std::optional<uint64_t> Heap::fit_in_page(const Page &page, uint64_t page_addr, uint64_t rounded) const {
    uint64_t cursor = page_addr;
    for (auto [addr, len] : page.blocks) {
        if (addr - cursor >= rounded) return cursor;
        cursor = addr + len;
    }
    if (page_addr + kGranule - cursor >= rounded) return cursor;
    return std::nullopt;
}

uint64_t Heap::granules_needed(uint64_t size) const {
    if (size >= kGranule) return round_up(size, kGranule) / kGranule;
    uint64_t rounded = round_up(size, kSmallAlign);
    for (const auto &[addr, page] : pages_)
        if (fit_in_page(page, addr, rounded)) return 0;
    return 1;
}

std::optional<uint64_t> Heap::allocate(uint64_t size, Ctx *ctx) {
    if (size >= kGranule) {
        uint64_t reserved = round_up(size, kGranule);
        auto addr = space_.take(reserved, kGranule);
        if (!addr) return std::nullopt;
        runs_.emplace(*addr, reserved);
        granules_ += reserved / kGranule;
        blocks_.emplace(*addr, HeapBlock{*addr, size, ctx});
        return addr;
    }
    uint64_t rounded = round_up(size, kSmallAlign);
    for (auto &[page_addr, page] : pages_) {
        if (auto at = fit_in_page(page, page_addr, rounded)) {
            page.blocks.emplace(*at, rounded);
            blocks_.emplace(*at, HeapBlock{*at, size, ctx});
            return at;
        }
    }
    auto page_addr = space_.take(kGranule, kGranule);
    if (!page_addr) return std::nullopt;
    ++granules_;
    pages_[*page_addr].blocks.emplace(*page_addr, rounded);
    blocks_.emplace(*page_addr, HeapBlock{*page_addr, size, ctx});
    return page_addr;
}

bool Heap::release(uint64_t addr) {
    auto block = blocks_.find(addr);
    if (block == blocks_.end()) return false;
    blocks_.erase(block);
    if (auto run = runs_.find(addr); run != runs_.end()) {
        space_.give_back(addr, run->second);
        granules_ -= run->second / kGranule;
        runs_.erase(run);
        return true;
    }
    auto page = pages_.find(addr & ~(kGranule - 1));
    page->second.blocks.erase(addr);
    if (page->second.blocks.empty()) {
        space_.give_back(page->first, kGranule);
        --granules_;
        pages_.erase(page);
    }
    return true;
}

std::optional<HeapBlock> Heap::find(uint64_t p) const {
    auto it = blocks_.upper_bound(p);
    if (it == blocks_.begin()) return std::nullopt;
    --it;
    const HeapBlock &b = it->second;
    // A zero-length view never happens (size 0 is refused), so `<` is enough.
    if (p - b.addr < b.size) return b;
    return std::nullopt;
}

void Heap::release_all_of(const Ctx *ctx) {
    std::vector<uint64_t> doomed;
    for (const auto &[addr, b] : blocks_)
        if (b.ctx == ctx) doomed.push_back(addr);
    for (uint64_t addr : doomed) release(addr);
}

}  // namespace sim
