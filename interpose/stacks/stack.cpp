#define UNW_LOCAL_ONLY
#include "stacks/stack.h"

#include <dlfcn.h>
#include <libunwind.h>
#include <link.h>
#include <x86intrin.h>

#include <algorithm>
#include <atomic>

#include "base/loader_lock.h"
#include "base/log.h"
#include "base/thread_state.h"
#include "resolve/object_range.h"
#include "stacks/walk_stats.h"

namespace cumemtrace::interpose {
namespace {

// Address range of libcumemtrace.so's code, found once from this function's address.
AddressRange own_range() {
  static const AddressRange r = [] {
    const LoaderUse in_loader;
    Dl_info info{};
    const AddressRange range =
        dladdr(reinterpret_cast<void*>(&own_range), &info) ? loaded_object_range(info.dli_fbase) : AddressRange{};
    // Per-thread caching: each thread keeps its own unwind cache, no shared lock.
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    return range;
  }();
  return r;
}

constexpr uint32_t kOwnFramesMax = 16;  // room for our own frames, dropped below

#if !defined(__SANITIZE_THREAD__)
// unw_backtrace's two parts (libunwind 1.6's mi/backtrace.c, built by scripts/setup.sh),
// called one by one so that CUMEMTRACE_STACK_STATS can tell which of them walked.
extern "C" int _Ux86_64_getcontext_trace(unw_context_t*);
extern "C" int _ULx86_64_tdep_trace(unw_cursor_t*, void**, int*);
#endif

int dwarf_steps(void** ips, int max, unw_context_t& context) {
  unw_cursor_t cursor;
  if (unw_init_local(&cursor, &context) != 0) return 0;
  int n = 0;
  unw_word_t ip;
  while (n < max && unw_step(&cursor) > 0 && unw_get_reg(&cursor, UNW_REG_IP, &ip) == 0)
    ips[n++] = reinterpret_cast<void*>(ip);
  return n;
}

// What unw_backtrace does: the fast trace, and where it gives up, the whole stack again by
// DWARF steps. Never inlined, so that its frame is the first dropped as ours whatever the
// caller.
__attribute__((noinline)) int backtrace_ips(void** ips, int max) {
  unw_context_t context;
#if defined(__SANITIZE_THREAD__)
  // unw_backtrace keeps a per-thread frame cache whose pthread-key destructor runs after
  // ThreadSanitizer has finished the exiting thread, and crashes there (a mutex lock
  // through TSan's interceptor). The TSan build walks frame by frame instead: slower,
  // the same stacks, no such cache.
  if (unw_getcontext(&context) != 0) return 0;
  return dwarf_steps(ips, max, context);
#else
  const bool stats = walk_stats_on();
  const uint64_t t0 = stats ? __rdtsc() : 0;
  _Ux86_64_getcontext_trace(&context);
  unw_cursor_t cursor;
  if (unw_init_local(&cursor, &context) != 0) return 0;
  int n = max;
  if (_ULx86_64_tdep_trace(&cursor, ips, &n) >= 0) {
    if (stats) walk_stats_add(__rdtsc() - t0, uint32_t(n), false, 0);
    return n;
  }
  const uint64_t stop = n > 0 ? reinterpret_cast<uint64_t>(ips[n - 1]) : 0;
  unw_getcontext(&context);
  n = dwarf_steps(ips, max, context);
  if (stats) walk_stats_add(__rdtsc() - t0, uint32_t(n), true, stop);
  return n;
#endif
}

}  // namespace

void stack_prepare_fork() { own_range(); }

void walk_stack(RawStack& out, uint32_t depth, bool as_before) {
  out.count = 0;
  if (depth == 0) return;
  if (!loader_usable()) {
    static std::atomic<bool> said{false};
    if (!said.exchange(true))
      log_warn(
          "this process was forked while the tracer was inside NVML or the driver, which may have held the "
          "loader's lock: to be safe its events are recorded without stacks");
    return;
  }
  const AddressRange own = own_range();
  const uint32_t want = std::min(depth, RawStack::kMax);
  void* ips[RawStack::kMax + kOwnFramesMax];
  // Room for as many of our own frames as this thread's last stack had, not always the
  // most we allow: libunwind walks every frame it is asked for (~80 instructions each),
  // and a hook has 5-10 of ours, so asking for 16 walked 6-11 frames for nothing on a
  // deep stack. The result is the same: a walk is the same whatever its length up to
  // where it stops, so when the shorter one was cut short before `want` of the program's
  // frames, the full length is walked again.
  ThreadState& t = thread_state();
  // Two more than last time: a thread's calls come through one hook or two (a runtime
  // call reaches the driver's), and a walk again costs as much as the first.
  const uint32_t guess = t.own_frames_plus_one && !as_before
                             ? std::min<uint32_t>(t.own_frames_plus_one + 1u, kOwnFramesMax)
                             : kOwnFramesMax;
  uint32_t asked = want + guess;
  int n;
  for (;;) {
    {
      const LoaderUse in_loader;
      n = backtrace_ips(ips, static_cast<int>(asked));
    }
    // Our frames are dropped wherever they are: a driver hook reached through a runtime
    // hook has some of ours in the middle of the stack too.
    out.count = 0;
    int i = 0;
    for (; i < n && out.count < want; ++i) {
      const auto ip = reinterpret_cast<uint64_t>(ips[i]);
      if (!own.contains(ip)) out.ip[out.count++] = ip;
    }
    t.own_frames_plus_one = uint8_t(std::min<uint32_t>(uint32_t(i) - out.count, kOwnFramesMax) + 1);
    if (out.count == want || uint32_t(n) < asked || asked == want + kOwnFramesMax) return;
    asked = want + kOwnFramesMax;
  }
}

}  // namespace cumemtrace::interpose
