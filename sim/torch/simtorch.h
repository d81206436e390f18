// A stand-in for PyTorch's CUDA caching allocator (libc10_cuda.so), for tests without a
// GPU: it takes segments from the CUDA runtime (cudaMalloc, the simulated driver's) and
// hands out blocks inside them, by the rules of PyTorch's native allocator that decide
// the figures tests check, and reports each block through c10::reportMemoryUsageToProfiler
// and each of its own out-of-memory errors through c10::reportOutOfMemoryToProfiler, as
// libc10_cuda.so does (docs/simulated-driver.md, "PyTorch's caching allocator").
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// A block of at least `bytes` on `device` (the current device must be it), or NULL after
// an out-of-memory error (reported first).
void *simtorch_malloc(size_t bytes, int device);
// The same on `stream` (any value: the stand-in keeps it, as PyTorch's cudaStream_t) from
// `pool`'s segments (MempoolId_t {pool, 0}: 0 the default pool, else a CUDA graph's or a
// MemPool's), as allocations during a graph capture or inside torch.cuda.use_mem_pool.
void *simtorch_malloc_in(size_t bytes, int device, uintptr_t stream, unsigned long long pool);
// The block `p` is used on another stream too (Tensor.record_stream): its free waits for
// that stream's events and the block stays out of the cache until simtorch_process_events.
void simtorch_record_stream(void *p);
void simtorch_free(void *p);
// The events of every waiting free have completed: their blocks are back in the cache.
void simtorch_process_events(void);
// Gives every segment with no allocated block back to the driver (torch.cuda.empty_cache).
void simtorch_empty_cache(void);
// The allocator refuses to hold more than `fraction` of the device's memory
// (torch.cuda.set_per_process_memory_fraction); no driver call fails then.
void simtorch_set_memory_fraction(double fraction, int device);
// torch.cuda.memory_allocated / memory_reserved.
size_t simtorch_memory_allocated(int device);
size_t simtorch_memory_reserved(int device);

// The reports that reached the stand-in libc10.so (defined there): what a tracer that
// interposes them must forward, every one.
struct simtorch_counts {
    uint64_t usage_allocs, usage_frees, out_of_memory;
};
struct simtorch_counts simtorch_reports(void);

#ifdef __cplusplus
}
#endif
