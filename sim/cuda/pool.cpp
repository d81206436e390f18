#include "pool.h"

#include "sim_config.h"

#include <vector>

namespace sim {
namespace {
constexpr uint64_t kBlockAlign = 512;
}

uint64_t Pool::reserved_bytes() const { return granules_.size() * kGranule; }

void Pool::note_highs() {
    if (reserved_bytes() > reserved_high) reserved_high = reserved_bytes();
    if (used_ > used_high) used_high = used_;
}

std::optional<uint64_t> Pool::first_fit(uint64_t rounded) const {
    // Walk runs of contiguous granules; inside each, walk the gaps between blocks.
    auto g = granules_.begin();
    while (g != granules_.end()) {
        uint64_t run_start = *g, run_end = *g + kGranule;
        for (++g; g != granules_.end() && *g == run_end; ++g) run_end += kGranule;
        uint64_t cursor = run_start;
        for (auto b = blocks_.lower_bound(run_start); b != blocks_.end() && b->first < run_end; ++b) {
            if (b->first - cursor >= rounded) return cursor;
            cursor = b->first + b->second.rounded;
        }
        if (run_end - cursor >= rounded) return cursor;
    }
    return std::nullopt;
}

namespace {
// Granules a fresh run for `size` would take, or nothing when `size` rounded
// to a block or to granules does not fit in 64 bits.
std::optional<uint64_t> run_bytes(uint64_t size) {
    auto rounded = round_up(size, kBlockAlign);
    return rounded ? round_up(*rounded, kGranule) : std::nullopt;
}
}  // namespace

uint64_t Pool::granules_needed(uint64_t size) const {
    auto grow = run_bytes(size);
    if (!grow) return UINT64_MAX;  // can never fit
    if (first_fit(*round_up(size, kBlockAlign))) return 0;
    return *grow / kGranule;
}

std::optional<uint64_t> Pool::allocate(uint64_t size, Ctx *ctx, GranuleSpace &space) {
    auto grow = run_bytes(size);
    if (!grow) return std::nullopt;
    uint64_t rounded = *round_up(size, kBlockAlign);
    auto at = first_fit(rounded);
    if (!at) {
        at = space.take(*grow, kGranule);
        if (!at) return std::nullopt;
        for (uint64_t g = 0; g < *grow; g += kGranule) granules_.insert(*at + g);
    }
    blocks_.emplace(*at, PoolBlock{*at, size, rounded, ctx});
    used_ += rounded;
    note_highs();
    return at;
}

bool Pool::release(uint64_t addr) {
    auto it = blocks_.find(addr);
    if (it == blocks_.end()) return false;
    used_ -= it->second.rounded;
    blocks_.erase(it);
    return true;
}

uint64_t Pool::trim_to(uint64_t keep, GranuleSpace &space) {
    std::vector<uint64_t> unused;
    for (uint64_t g : granules_) {
        auto b = blocks_.upper_bound(g + kGranule - 1);
        bool busy = false;
        if (b != blocks_.begin()) {
            --b;
            busy = b->first + b->second.rounded > g;
        }
        if (!busy) unused.push_back(g);
    }
    uint64_t freed = 0;
    for (auto g = unused.rbegin(); g != unused.rend() && reserved_bytes() > keep; ++g) {
        granules_.erase(*g);
        space.give_back(*g, kGranule);
        ++freed;
    }
    return freed;
}

std::optional<PoolBlock> Pool::find(uint64_t p) const {
    auto it = blocks_.upper_bound(p);
    if (it == blocks_.begin()) return std::nullopt;
    --it;
    if (p - it->first < it->second.size) return it->second;
    return std::nullopt;
}

}  // namespace sim
