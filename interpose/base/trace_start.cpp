#include "base/trace_start.h"

#include <ctime>

namespace cumemtrace::interpose {
namespace {

TraceStart g_start;

uint64_t clock_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

}  // namespace

void mark_trace_start() { g_start = {clock_ns(CLOCK_MONOTONIC), clock_ns(CLOCK_REALTIME)}; }
TraceStart trace_start() { return g_start; }
uint64_t monotonic_now_ns() { return clock_ns(CLOCK_MONOTONIC); }

}  // namespace cumemtrace::interpose
