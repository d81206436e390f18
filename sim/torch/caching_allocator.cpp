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
//   - a block is of one pool (the default {0, 0}, a CUDA graph's or a MemPool's) and comes
//     from that pool's segments only;
//   - a block used on other streams (simtorch_record_stream) is not back in the cache when
//     it is freed: its free waits until the streams' events complete (simtorch_process_events).
// Every action is told to the trace trackers attached (trace_tracker.h) as PyTorch 2.11's
// allocator tells them: ALLOC before the usage report, FREE_REQUESTED (and FREE_COMPLETED
// when nothing waits) before it, SEGMENT_ALLOC after the driver gave the segment,
// SEGMENT_FREE before it is given back, OOM before the out-of-memory report.
// Not kept: expandable segments, the block rounding of large requests (kRoundLarge),
// max_split_size_mb.
// SIMTORCH_BAD_REPORTS=1 reports every block 1 GiB past where it lies, as an allocator
// whose reports a tracer misreads would (the tracer must stop reading them);
// SIMTORCH_BAD_TRACE=1 does the same to the segments its trace entries name.
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <tuple>
#include <vector>

#include "c10_stub.h"
#include "simtorch.h"
#include "trace_tracker.h"

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
    unsigned long long pool = 0;  // MempoolId_t's first half ({0, 0}: the default pool)
    uintptr_t stream = 0;
    size_t requested = 0;
    bool stream_used = false;  // used on another stream: its free waits
    bool pending = false;      // freed, waiting on those streams' events
};

struct Segment {
    size_t size;
    unsigned long long pool;
};

// A free block as best_fit looks it up: the smallest of its pool and size class large
// enough, the lowest address among equals (what a walk of every block in address order
// chose, without walking the allocated ones: a job keeping many tensors stays fast).
using FreeKey = std::tuple<unsigned long long, bool, size_t, uintptr_t>;  // pool, small, size, address

struct Device {
    std::map<uintptr_t, Block> blocks;      // every block, by address
    std::set<FreeKey> free;                 // the blocks with is_free(), as FreeKeys
    std::map<uintptr_t, Segment> segments;  // by start
    size_t allocated = 0, reserved = 0;
    double fraction = 0;  // 0: no limit set
};

std::recursive_mutex g_mu;  // recursive as PyTorch's: a tracker may be attached from inside a report
std::map<int, Device> g_devices;
std::vector<c10::CachingDeviceAllocator::AllocatorTraceTracker> g_trackers;

void record_trace(c10::CachingDeviceAllocator::TraceEntry::Action action, int device, uintptr_t addr, size_t size,
                  uintptr_t stream, unsigned long long pool) {
    using c10::CachingDeviceAllocator::TraceEntry;
    static const bool bad = [] {
        const char *v = std::getenv("SIMTORCH_BAD_TRACE");
        return v && *v == '1';
    }();
    if (g_trackers.empty()) return;
    if (bad && (action == TraceEntry::SEGMENT_ALLOC || action == TraceEntry::SEGMENT_FREE)) addr += size_t(1) << 30;
    TraceEntry e{
        action, c10::DeviceIndex(device), addr, nullptr, reinterpret_cast<void *>(stream), size, {pool, 0}, {}, "N/A",
        ""};
    for (const auto &t : g_trackers) t(e);
}

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

using Action = c10::CachingDeviceAllocator::TraceEntry::Action;
using c10::CachingDeviceAllocator::TraceEntry;

bool is_free(const Block &b) { return !b.allocated && !b.pending; }

FreeKey free_key(uintptr_t at, const Block &b) { return {b.pool, b.small, b.size, at}; }

// Gives back every segment of `d` with no allocated or pending block.
void release_free_segments(Device &d, int device) {
    for (auto s = d.segments.begin(); s != d.segments.end();) {
        const auto b = d.blocks.find(s->first);
        if (b != d.blocks.end() && is_free(b->second) && b->second.size == s->second.size) {
            record_trace(TraceEntry::SEGMENT_FREE, device, s->first, s->second.size, 0, s->second.pool);
            cudaFree(reinterpret_cast<void *>(s->first));
            d.reserved -= s->second.size;
            d.free.erase(free_key(b->first, b->second));
            d.blocks.erase(b);
            s = d.segments.erase(s);
        } else {
            ++s;
        }
    }
}

bool new_segment(Device &d, int device, size_t bytes, bool small, uintptr_t stream, unsigned long long pool) {
    const double limit = d.fraction > 0 ? d.fraction * double(device_total(device)) : 0;
    auto allowed = [&] { return limit == 0 || double(d.reserved + bytes) <= limit; };
    void *p = nullptr;
    if (!allowed()) release_free_segments(d, device);
    if (!allowed()) return false;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
        release_free_segments(d, device);
        if (cudaMalloc(&p, bytes) != cudaSuccess) return false;
    }
    const auto at = reinterpret_cast<uintptr_t>(p);
    d.segments[at] = {bytes, pool};
    Block b{at, bytes, false, small};
    b.pool = pool, b.stream = stream;
    d.blocks[at] = b;
    d.free.insert(free_key(at, b));
    d.reserved += bytes;
    record_trace(TraceEntry::SEGMENT_ALLOC, device, at, bytes, stream, pool);
    return true;
}

// The smallest free block of the pool large enough, or end().
std::map<uintptr_t, Block>::iterator best_fit(Device &d, size_t size, bool small, unsigned long long pool) {
    const auto k = d.free.lower_bound({pool, small, size, 0});
    if (k == d.free.end() || std::get<0>(*k) != pool || std::get<1>(*k) != small) return d.blocks.end();
    return d.blocks.find(std::get<3>(*k));
}

// A block back in the cache (free now, not yet in d.free) merges with its free neighbours
// of the same segment.
void merge_free(Device &d, std::map<uintptr_t, Block>::iterator it) {
    if (auto next = std::next(it);
        next != d.blocks.end() && is_free(next->second) && next->second.segment == it->second.segment) {
        d.free.erase(free_key(next->first, next->second));
        it->second.size += next->second.size;
        d.blocks.erase(next);
    }
    if (it != d.blocks.begin()) {
        auto prev = std::prev(it);
        if (is_free(prev->second) && prev->second.segment == it->second.segment) {
            d.free.erase(free_key(prev->first, prev->second));
            prev->second.size += it->second.size;
            d.blocks.erase(it);
            it = prev;
        }
    }
    d.free.insert(free_key(it->first, it->second));
}

}  // namespace

// The stand-in's allocator object, under the name and in the namespace of PyTorch's native
// caching allocator, whose run-time type a tracer checks before it attaches.
namespace c10::cuda::CUDACachingAllocator {
namespace Native {
class NativeCachingAllocator final : public CUDAAllocator {
   public:
    void attachAllocatorTraceTracker(CachingDeviceAllocator::AllocatorTraceTracker tracker) override {
        std::lock_guard lock(g_mu);
        g_trackers.push_back(std::move(tracker));
    }
};
NativeCachingAllocator g_native;
}  // namespace Native
__attribute__((visibility("default"))) std::atomic<CUDAAllocator *> allocator{&Native::g_native};
}  // namespace c10::cuda::CUDACachingAllocator

extern "C" {

__attribute__((visibility("default"))) void *simtorch_malloc_in(size_t bytes, int device, uintptr_t stream,
                                                                unsigned long long pool) {
    std::lock_guard lock(g_mu);
    Device &d = g_devices[device];
    const size_t size = round_up(bytes ? bytes : 1, kMinBlock);
    const bool small = size <= kSmallSize;
    auto it = best_fit(d, size, small, pool);
    if (it == d.blocks.end()) {
        const size_t segment = small                   ? kSmallBuffer
                               : size < kMinLargeAlloc ? kLargeBuffer
                                                       : round_up(size, kRoundLarge);
        if (!new_segment(d, device, segment, small, stream, pool)) {
            size_t free = 0, total = 0;
            cudaMemGetInfo(&free, &total);
            record_trace(TraceEntry::OOM, device, free, size, stream, pool);
            c10::reportOutOfMemoryToProfiler(int64_t(size), d.allocated, d.reserved, c10::Device{1, int8_t(device)});
            return nullptr;
        }
        it = best_fit(d, size, small, pool);
    }
    Block &b = it->second;
    d.free.erase(free_key(it->first, b));
    const size_t rest = b.size - size;
    if (small ? rest >= kMinBlock : rest > kSmallSize) {
        Block r{b.segment, rest, false, small};
        r.pool = pool;
        d.blocks[it->first + size] = r;
        d.free.insert(free_key(it->first + size, r));
        b.size = size;
    }
    b.allocated = true, b.stream = stream, b.requested = bytes, b.stream_used = false;
    d.allocated += b.size;
    record_trace(TraceEntry::ALLOC, device, it->first, bytes, stream, pool);
    report(device, it->first, int64_t(b.size), d);
    return reinterpret_cast<void *>(it->first);
}

__attribute__((visibility("default"))) void *simtorch_malloc(size_t bytes, int device) {
    return simtorch_malloc_in(bytes, device, 0, 0);
}

__attribute__((visibility("default"))) void simtorch_record_stream(void *p) {
    std::lock_guard lock(g_mu);
    for (auto &[device, d] : g_devices)
        if (auto it = d.blocks.find(reinterpret_cast<uintptr_t>(p)); it != d.blocks.end() && it->second.allocated)
            it->second.stream_used = true;
}

__attribute__((visibility("default"))) void simtorch_free(void *p) {
    std::lock_guard lock(g_mu);
    const auto at = reinterpret_cast<uintptr_t>(p);
    for (auto &[device, d] : g_devices) {
        auto it = d.blocks.find(at);
        if (it == d.blocks.end() || !it->second.allocated) continue;
        Block &b = it->second;
        b.allocated = false;
        d.allocated -= b.size;
        record_trace(TraceEntry::FREE_REQUESTED, device, at, b.requested, b.stream, b.pool);
        const size_t size = b.size;
        if (b.stream_used) {
            b.pending = true;
        } else {
            record_trace(TraceEntry::FREE_COMPLETED, device, at, b.requested, b.stream, b.pool);
            merge_free(d, it);
        }
        report(device, at, -int64_t(size), d);
        return;
    }
}

__attribute__((visibility("default"))) void simtorch_process_events(void) {
    std::lock_guard lock(g_mu);
    for (auto &[device, d] : g_devices) {
        std::vector<uintptr_t> done;
        for (const auto &[at, b] : d.blocks)
            if (b.pending) done.push_back(at);
        for (const uintptr_t at : done) {
            const auto it = d.blocks.find(at);
            it->second.pending = it->second.stream_used = false;
            record_trace(TraceEntry::FREE_COMPLETED, device, at, it->second.requested, it->second.stream,
                         it->second.pool);
            merge_free(d, it);
        }
    }
}

__attribute__((visibility("default"))) void simtorch_empty_cache(void) {
    std::lock_guard lock(g_mu);
    for (auto &[device, d] : g_devices) release_free_segments(d, device);
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
