// Sizes and times the tests write their figures in, defined once for every test file:
// batched builds (CUMEMTRACE_UNITY) compile several test files as one, where a copy in
// each file's own anonymous namespace would be a second definition.
#pragma once

#include <cstdint>

inline constexpr uint64_t MiB = 1ull << 20, GiB = 1ull << 30;
inline constexpr uint64_t ms = 1'000'000, kSec = 1'000'000'000;  // in nanoseconds, the traces' unit
