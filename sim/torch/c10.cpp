// A stand-in for PyTorch's libc10.so: the two functions its CUDA caching allocator reports
// blocks through (c10/core/Allocator.h), with the same C++ names and parameter types, so
// that the preload library under test interposes them as it does the real ones. They
// count the calls that reach them, for tests that check the tracer forwards every one.
#include <cstddef>
#include <cstdint>

#include "c10_stub.h"
#include "simtorch.h"

namespace {
simtorch_counts g_reports;
}

namespace c10 {

__attribute__((visibility("default"))) void reportMemoryUsageToProfiler(void *, int64_t alloc_size, size_t, size_t,
                                                                        Device) {
    ++(alloc_size > 0 ? g_reports.usage_allocs : g_reports.usage_frees);
}

__attribute__((visibility("default"))) void reportOutOfMemoryToProfiler(int64_t, size_t, size_t, Device) {
    ++g_reports.out_of_memory;
}

}  // namespace c10

extern "C" __attribute__((visibility("default"))) simtorch_counts simtorch_reports(void) { return g_reports; }
