// Shared set-up for the sim self-test: a fresh simulated process per test.
#pragma once

#if __has_include(<catch2/catch_test_macros.hpp>)
#include <catch2/catch_test_macros.hpp>
#else
#include <catch2/catch.hpp>
#endif

#include <cuda.h>
#include <cudaTypedefs.h>

#include "simcuda_hooks.h"

#include <cstdlib>
#include <string>

constexpr unsigned long long MiB = 1ull << 20;
constexpr unsigned long long kBase0 = 0x7f0000000000ull;

// Sets the SIMCUDA_* variables (unset ones take their defaults), resets the
// driver as if the process had just started, and makes device 0's primary
// context current unless told not to.
struct FreshDriver {
  explicit FreshDriver(unsigned long long capacity = 0, int devices = 1, unsigned long long context_bytes = 0,
                       unsigned long long hidden_bytes = 0, bool with_context = true) {
    set("SIMCUDA_CAPACITY", capacity);
    set("SIMCUDA_DEVICES", devices);
    setenv("SIMCUDA_CONTEXT_BYTES", std::to_string(context_bytes).c_str(), 1);
    setenv("SIMCUDA_HIDDEN_BYTES", std::to_string(hidden_bytes).c_str(), 1);
    simcuda_reset();
    if (!with_context) return;
    REQUIRE(cuInit(0) == CUDA_SUCCESS);
    REQUIRE(cuDevicePrimaryCtxRetain(&primary, 0) == CUDA_SUCCESS);
    REQUIRE(cuCtxSetCurrent(primary) == CUDA_SUCCESS);
  }
  static void set(const char* name, unsigned long long value) {
    if (value) setenv(name, std::to_string(value).c_str(), 1);
    else unsetenv(name);
  }
  CUcontext primary = nullptr;
};

inline CUdeviceptr must_alloc(size_t bytes) {
  CUdeviceptr p = 0;
  REQUIRE(cuMemAlloc(&p, bytes) == CUDA_SUCCESS);
  return p;
}
