// One stream-ordered memory pool (CUmemoryPool).
//
// Model (docs/simulated-driver.md, "Memory pools"): the pool reserves device
// memory in whole 2 MiB granules, taken from the device's capacity and from the
// device's async address region. Blocks (rounded to 512 B) are placed first-fit
// inside runs of contiguous reserved granules; when none fits, the pool grows
// by a fresh run just big enough and places the block at its start. A freed
// block's memory stays reserved until a trim gives whole unused granules back:
// cuMemPoolTrimTo explicitly, or a synchronize when the pool holds more than its
// release threshold (as the real driver does).
#pragma once

#include "granule_space.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>

namespace sim {

struct Ctx;

struct PoolBlock {
    uint64_t addr;
    uint64_t size;     // as requested
    uint64_t rounded;  // what the pool accounts as used
    Ctx *ctx;
};

class Pool {
   public:
    explicit Pool(int device) : device(device) {}

    uint64_t granules_needed(uint64_t size) const;
    // Caller has checked capacity for granules_needed(size).
    std::optional<uint64_t> allocate(uint64_t size, Ctx *ctx, GranuleSpace &space);
    bool release(uint64_t addr);
    // Gives back unused granules, highest address first, until at most `keep`
    // bytes stay reserved (or no unused granule is left). Returns granules freed.
    uint64_t trim_to(uint64_t keep, GranuleSpace &space);
    std::optional<PoolBlock> find(uint64_t p) const;

    uint64_t reserved_bytes() const;
    uint64_t used_bytes() const { return used_; }
    uint64_t granules() const { return granules_.size(); }
    bool empty() const { return blocks_.empty(); }

    const int device;
    uint64_t release_threshold = 0;  // CU_MEMPOOL_ATTR_RELEASE_THRESHOLD
    uint64_t reserved_high = 0, used_high = 0;
    bool destroyed = false;  // cuMemPoolDestroy with blocks still live: wait for them

   private:
    std::optional<uint64_t> first_fit(uint64_t rounded) const;
    void note_highs();

    std::set<uint64_t> granules_;           // addresses of reserved granules
    std::map<uint64_t, PoolBlock> blocks_;  // live blocks by address
    uint64_t used_ = 0;
};

}  // namespace sim
