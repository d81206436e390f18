#define UNW_LOCAL_ONLY
#include "stacks/stack.h"

#include <dlfcn.h>
#include <libunwind.h>
#include <link.h>

#include <algorithm>
#include <atomic>

#include "base/loader_lock.h"
#include "base/log.h"
#include "resolve/object_range.h"

namespace cumemtrace::interpose {
namespace {

// Address range of libcumemtrace.so's code, found once from this function's address.
AddressRange own_range() {
  static const AddressRange r = [] {
    const LoaderUse in_loader;
    Dl_info info{};
    const AddressRange range = dladdr(reinterpret_cast<void*>(&own_range), &info) ? loaded_object_range(info.dli_fbase)
                                                                                   : AddressRange{};
    // Per-thread caching: each thread keeps its own unwind cache, no shared lock.
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    return range;
  }();
  return r;
}

constexpr uint32_t kOwnFramesMax = 16;  // room for our own frames, dropped below

int backtrace_ips(void** ips, int max) {
#if defined(__SANITIZE_THREAD__)
  // unw_backtrace keeps a per-thread frame cache whose pthread-key destructor runs after
  // ThreadSanitizer has finished the exiting thread, and crashes there (a mutex lock
  // through TSan's interceptor). The TSan build walks frame by frame instead: slower,
  // the same stacks, no such cache.
  unw_context_t context;
  unw_cursor_t cursor;
  if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0) return 0;
  int n = 0;
  unw_word_t ip;
  while (n < max && unw_step(&cursor) > 0 && unw_get_reg(&cursor, UNW_REG_IP, &ip) == 0)
    ips[n++] = reinterpret_cast<void*>(ip);
  return n;
#else
  return unw_backtrace(ips, max);
#endif
}

}  // namespace

void stack_prepare_fork() { own_range(); }

void capture_stack(RawStack& out, uint32_t depth) {
  out.count = 0;
  if (depth == 0) return;
  if (!loader_usable()) {
    static std::atomic<bool> said{false};
    if (!said.exchange(true))
      log_warn("this process was forked while the tracer was inside NVML or the driver, which may have held the "
               "loader's lock: to be safe its events are recorded without stacks");
    return;
  }
  const AddressRange own = own_range();
  void* ips[RawStack::kMax + kOwnFramesMax];
  int n;
  {
    const LoaderUse in_loader;
    n = backtrace_ips(ips, static_cast<int>(std::min(depth, RawStack::kMax) + kOwnFramesMax));
  }
  // Our frames are dropped wherever they are: a driver hook reached through a runtime
  // hook has some of ours in the middle of the stack too.
  for (int i = 0; i < n && out.count < depth && out.count < RawStack::kMax; ++i) {
    const auto ip = reinterpret_cast<uint64_t>(ips[i]);
    if (!own.contains(ip)) out.ip[out.count++] = ip;
  }
}

}  // namespace cumemtrace::interpose
