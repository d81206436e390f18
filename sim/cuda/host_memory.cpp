#include "host_memory.h"

#include "sim_config.h"

#include <sys/mman.h>

namespace sim {
namespace {
uint64_t g_next_hint = 0x200000000000ull;  // advanced under the driver mutex
// Host blocks stay below the device regions (driver_state.h, kHeapBase).
constexpr uint64_t kHintLimit = 0x7f0000000000ull;
constexpr uint64_t kPage = 4096;
}  // namespace

void *host_map(uint64_t size) {
    // A size whose pages (plus the guard) do not fit below the device regions
    // is out of memory. Unchecked, SIZE_MAX rounded to 0 pages, and a huge
    // MAP_NORESERVE mapping could succeed and push later hints into 0x7f... land.
    auto rounded = round_up(size, kPage);
    uint64_t room = g_next_hint < kHintLimit ? kHintLimit - g_next_hint : 0;  // for the block and its guard
    if (!rounded || room < kPage || *rounded > room - kPage) return nullptr;
    uint64_t length = *rounded;
    void *hint = reinterpret_cast<void *>(g_next_hint);
    void *p = mmap(hint, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    // Leave a guard page between blocks, so an overrun faults instead of
    // silently landing in the next block. If the kernel ignored the hint, step
    // over the hinted range anyway rather than follow it into 0x7f... land.
    g_next_hint += length + kPage;
    return p;
}

// `size` was mapped, so it rounds without overflow.
void host_unmap(void *p, uint64_t size) { munmap(p, *round_up(size, kPage)); }

}  // namespace sim
