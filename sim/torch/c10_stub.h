// What the stand-in for libc10_cuda.so calls in the stand-in for libc10.so: PyTorch's
// reporting functions, c10::Device as they take it (two int8_t, passed by value).
#pragma once

#include <cstddef>
#include <cstdint>

namespace c10 {
struct Device {
    int8_t type;   // c10::DeviceType: 1 is CUDA
    int8_t index;  // the CUDA ordinal
};
void reportMemoryUsageToProfiler(void *ptr, int64_t alloc_size, size_t total_allocated, size_t total_reserved,
                                 Device device);
void reportOutOfMemoryToProfiler(int64_t alloc_size, size_t total_allocated, size_t total_reserved, Device device);
}  // namespace c10
