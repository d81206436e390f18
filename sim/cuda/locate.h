// Which allocation, if any, a pointer falls in: the one question behind
// cuMemFree, cuPointerGetAttribute and cuMemGetAddressRange.
#pragma once

#include "driver_state.h"

#include <optional>

namespace sim {

enum class Kind { Heap, Pool, Vmm, Managed, Pinned };

struct Located {
    Kind kind;
    uint64_t start;
    uint64_t size;
    int device;
    Ctx *ctx;    // allocating context; null for VMM mappings
    Pool *pool;  // Kind::Pool only
};

// Device ordinal whose region of that kind holds `addr`, or -1.
int region_device(uint64_t addr, uint64_t base, uint64_t length);

std::optional<Located> locate(uint64_t p);

}  // namespace sim
