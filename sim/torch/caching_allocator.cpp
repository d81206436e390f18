// The stand-in caching allocator (simtorch.h). PyTorch's rules it keeps
// (c10/cuda/CUDACachingAllocator.cpp), because the figures tests check follow from them:
//   - a request is rounded up to 512 B; up to 1 MiB it is small, served from 2 MiB
//     segments; a larger one under 10 MiB from a 20 MiB segment; 10 MiB and over from a
//     segment of its size rounded up to 2 MiB;
//   - a request takes the smallest free block of its pool (small or large) on its device
//     that is large enough, split when what is left is at least 512 B (small) or over
//     1 MiB (large);
//   - a freed block merges with free neighbours in its segment;
//   - with no free block large enough it takes a new segment; when the driver refuses, it
//     gives back every segment with no allocated block and asks once more; then it
//     reports an out-of-memory error and returns NULL. Above the memory fraction it never
//     asks the driver: it gives back what it can and reports the error if still above.
// Not kept: streams and their events, expandable segments, graph pools, the block
// rounding of large requests (kRoundLarge), max_split_size_mb.
// SIMTORCH_BAD_REPORTS=1 reports every block 1 GiB past where it lies, as an allocator
// whose reports a tracer misreads would (the tracer must stop reading them).
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <iterator>
#include <map>
#include <mutex>

#include "c10_stub.h"
#include "simtorch.h"

namespace {

constexpr size_t kMinBlock = 512;
constexpr size_t kSmallSize = size_t(1) << 20;
constexpr size_t kSmallBuffer = size_t(2) << 20;
constexpr size_t kLargeBuffer = size_t(20) << 20;
constexpr size_t kMinLargeAlloc = size_t(10) << 20;
constexpr size_t kRoundLarge = size_t(2) << 20;

struct Block {
    uintptr_t segment;  // its segment's start
    size_t size;
    bool allocated;
    bool small;
};

struct Device {
    std::map<uintptr_t, Block> blocks;     // every block, by address
    std::map<uintptr_t, size_t> segments;  // by start: bytes
    size_t allocated = 0, reserved = 0;
    double fraction = 0;  // 0: no limit set
};

std::mutex g_mu;
std::map<int, Device> g_devices;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

void report(int device, uintptr_t at, int64_t size, const Device &d) {
    static const bool bad = [] {
        const char *v = std::getenv("SIMTORCH_BAD_REPORTS");
        return v && *v == '1';
    }();
    if (bad) at += size_t(1) << 30;
    c10::reportMemoryUsageToProfiler(reinterpret_cast<void *>(at), size, d.allocated, d.reserved,
                                     c10::Device{1, int8_t(device)});
}

size_t device_total(int device) {
    size_t free = 0, total = 0;
    int current = 0;
    cudaGetDevice(&current);
    cudaSetDevice(device);
    cudaMemGetInfo(&free, &total);
    cudaSetDevice(current);
    return total;
}

// Gives back every segment of `d` with no allocated block.
void release_free_segments(Device &d) {
    for (auto s = d.segments.begin(); s != d.segments.end();) {
        const auto b = d.blocks.find(s->first);
        if (b != d.blocks.end() && !b->second.allocated && b->second.size == s->second) {
            cudaFree(reinterpret_cast<void *>(s->first));
            d.reserved -= s->second;
            d.blocks.erase(b);
            s = d.segments.erase(s);
        } else {
            ++s;
        }
    }
}

bool new_segment(Device &d, int device, size_t bytes, bool small) {
    const double limit = d.fraction > 0 ? d.fraction * double(device_total(device)) : 0;
    auto allowed = [&] { return limit == 0 || double(d.reserved + bytes) <= limit; };
    void *p = nullptr;
    if (!allowed()) release_free_segments(d);
    if (!allowed()) return false;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
        release_free_segments(d);
        if (cudaMalloc(&p, bytes) != cudaSuccess) return false;
    }
    const auto at = reinterpret_cast<uintptr_t>(p);
    d.segments[at] = bytes;
    d.blocks[at] = {at, bytes, false, small};
    d.reserved += bytes;
    return true;
}

// The smallest free block of the pool large enough, or end().
std::map<uintptr_t, Block>::iterator best_fit(Device &d, size_t size, bool small) {
    auto best = d.blocks.end();
    for (auto it = d.blocks.begin(); it != d.blocks.end(); ++it)
        if (!it->second.allocated && it->second.small == small && it->second.size >= size &&
            (best == d.blocks.end() || it->second.size < best->second.size))
            best = it;
    return best;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void *simtorch_malloc(size_t bytes, int device) {
    std::lock_guard lock(g_mu);
    Device &d = g_devices[device];
    const size_t size = round_up(bytes ? bytes : 1, kMinBlock);
    const bool small = size <= kSmallSize;
    auto it = best_fit(d, size, small);
    if (it == d.blocks.end()) {
        const size_t segment = small                   ? kSmallBuffer
                               : size < kMinLargeAlloc ? kLargeBuffer
                                                       : round_up(size, kRoundLarge);
        if (!new_segment(d, device, segment, small)) {
            c10::reportOutOfMemoryToProfiler(int64_t(size), d.allocated, d.reserved, c10::Device{1, int8_t(device)});
            return nullptr;
        }
        it = best_fit(d, size, small);
    }
    Block &b = it->second;
    const size_t rest = b.size - size;
    if (small ? rest >= kMinBlock : rest > kSmallSize) {
        d.blocks[it->first + size] = {b.segment, rest, false, small};
        b.size = size;
    }
    b.allocated = true;
    d.allocated += b.size;
    report(device, it->first, int64_t(b.size), d);
    return reinterpret_cast<void *>(it->first);
}

__attribute__((visibility("default"))) void simtorch_free(void *p) {
    std::lock_guard lock(g_mu);
    const auto at = reinterpret_cast<uintptr_t>(p);
    for (auto &[device, d] : g_devices) {
        auto it = d.blocks.find(at);
        if (it == d.blocks.end() || !it->second.allocated) continue;
        it->second.allocated = false;
        d.allocated -= it->second.size;
        report(device, at, -int64_t(it->second.size), d);
        // Merge with the free neighbours of the same segment.
        if (auto next = std::next(it);
            next != d.blocks.end() && !next->second.allocated && next->second.segment == it->second.segment) {
            it->second.size += next->second.size;
            d.blocks.erase(next);
        }
        if (it != d.blocks.begin()) {
            auto prev = std::prev(it);
            if (!prev->second.allocated && prev->second.segment == it->second.segment) {
                prev->second.size += it->second.size;
                d.blocks.erase(it);
            }
        }
        return;
    }
}

__attribute__((visibility("default"))) void simtorch_empty_cache(void) {
    std::lock_guard lock(g_mu);
    for (auto &[device, d] : g_devices) release_free_segments(d);
}

__attribute__((visibility("default"))) void simtorch_set_memory_fraction(double fraction, int device) {
    std::lock_guard lock(g_mu);
    g_devices[device].fraction = fraction;
}

__attribute__((visibility("default"))) size_t simtorch_memory_allocated(int device) {
    std::lock_guard lock(g_mu);
    return g_devices[device].allocated;
}

__attribute__((visibility("default"))) size_t simtorch_memory_reserved(int device) {
    std::lock_guard lock(g_mu);
    return g_devices[device].reserved;
}

}  // extern "C"
