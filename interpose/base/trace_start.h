// When this process's trace begins: when the library was loaded, or, in a forked
// child, when the fork happened. Every event comes after it.
#pragma once

#include <cstdint>

namespace cumemtrace::interpose {

struct TraceStart {
  uint64_t monotonic_ns;
  uint64_t realtime_ns;
};

void mark_trace_start();
TraceStart trace_start();

// CLOCK_MONOTONIC now, in ns (the clock of every time_ns in the trace).
uint64_t monotonic_now_ns();

}  // namespace cumemtrace::interpose
