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
void simtorch_free(void *p);
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
