#include "host_memory.h"

#include "sim_config.h"

#include <sys/mman.h>

namespace sim {
namespace {
uint64_t g_next_hint = 0x200000000000ull;  // advanced under the driver mutex
}

void *host_map(uint64_t size) {
    uint64_t length = round_up(size, 4096);
    void *hint = reinterpret_cast<void *>(g_next_hint);
    void *p = mmap(hint, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    // Leave a guard page between blocks, so an overrun faults instead of
    // silently landing in the next block. If the kernel ignored the hint, step
    // over the hinted range anyway rather than follow it into 0x7f... land.
    g_next_hint += length + 4096;
    return p;
}

void host_unmap(void *p, uint64_t size) { munmap(p, round_up(size, 4096)); }

}  // namespace sim
