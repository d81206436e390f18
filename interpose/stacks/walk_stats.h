// CUMEMTRACE_STACK_STATS=1: what the native walks cost in this process, told on stderr at
// exit. libunwind's fast trace (a frame kind cached per return address) gives up on a frame
// whose unwind rule is not one of its kinds, and then the whole stack is walked again by
// DWARF steps, about ten times the cost a frame (docs/performance.md, "A tensor's event on
// the job's CPU"); these counts say how often that happens and at which frames.
#pragma once

#include <x86intrin.h>

#include <cstdint>

namespace cumemtrace::interpose {

bool walk_stats_on();

// One walk: `cycles` by the time-stamp counter, `frames` walked, `slow`: the fast trace
// gave up at `stop_ip` (the frame it could not step over) and DWARF steps walked it all.
void walk_stats_add(uint64_t cycles, uint32_t frames, bool slow, uint64_t stop_ip);

// The parts of a caching allocator's block event, timed the same way (stderr at exit).
enum class HookPart {
  kPythonWalk,
  kNativeWalk,
  kBlockLocked,
  kBlockWhole,
  kUsageReport,
  kTraceEntry,
  kLockWait,
  kClock,
  kDriverCheck,
  kIntern,
  kEncode,
  kInternSeen,
  kCount
};
void hook_part_add(HookPart part, uint64_t cycles);

// Times the scope it lives in as `part`, when CUMEMTRACE_STACK_STATS is on.
class PartTimer {
 public:
  explicit PartTimer(HookPart part) : part_(part), start_(walk_stats_on() ? __rdtsc() : 0) {}
  ~PartTimer() {
    if (start_) hook_part_add(part_, __rdtsc() - start_);
  }
  PartTimer(const PartTimer&) = delete;
  PartTimer& operator=(const PartTimer&) = delete;

 private:
  HookPart part_;
  uint64_t start_;
};

// The counts on stderr, with the frames the fast trace stopped at as module+offset and
// symbol. Called at exit, outside any hook.
void walk_stats_report();

}  // namespace cumemtrace::interpose
