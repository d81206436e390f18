#include "resolve.h"

#include <cuda.h>
#include <dlfcn.h>

#include <cstring>
#include <string_view>

#include "log.h"

namespace cumemtrace::interpose {

std::atomic<void*> g_slot_real[kHookCount][kSlots];
namespace {
std::atomic<void*> g_any_driver_fn{nullptr};

void note_real(HookId id, void* fn) {
  if (fn && hook_info(id).layer != Layer::kRuntime) {
    void* expected = nullptr;
    g_any_driver_fn.compare_exchange_strong(expected, fn, std::memory_order_acq_rel);
  }
}

// Linear scans: the table has a few dozen entries and lookups happen once per name.
int find_symbol(std::string_view name) {
  for (int i = 0; i < kHookCount; ++i)
    if (name == hook_info(static_cast<HookId>(i)).symbol) return i;
  return -1;
}
}  // namespace

DlsymFn real_dlsym() {
  static DlsymFn fn = [] {
    // dlvsym is not hooked, so this cannot recurse into our dlsym.
    auto f = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34"));
    if (!f) f = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5"));
    return f;
  }();
  return fn;
}

void* resolve_exported(HookId id) {
  void* fn = real_dlsym()(RTLD_NEXT, hook_info(id).symbol);
  if (fn) {
    g_slot_real[static_cast<int>(id)][0].store(fn, std::memory_order_release);
    note_real(id, fn);
  }
  return fn;
}

bool is_wrapper(const void* fn) {
  for (int i = 0; i < kHookCount; ++i)
    for (int s = 0; s < kSlots; ++s)
      if (slot_wrapper(static_cast<HookId>(i), s) == fn) return true;
  return false;
}

void* substitute(HookId id, void* real) {
  if (!real || is_wrapper(real)) return real;
  note_real(id, real);
  auto& slots = g_slot_real[static_cast<int>(id)];
  for (int s = 1; s < kSlots; ++s) {
    void* cur = slots[s].load(std::memory_order_acquire);
    if (!cur && slots[s].compare_exchange_strong(cur, real, std::memory_order_acq_rel)) cur = real;
    if (cur == real) return slot_wrapper(id, s);
  }
  log_once_warn("all slots of {} are taken; calls through one more pointer go untracked",
                hook_info(id).symbol);
  return real;
}

void* hooked_dlsym(void* handle, const char* name) {
  if (!name || handle == RTLD_NEXT || name[0] != 'c' || name[1] != 'u') return nullptr;
  const int i = find_symbol(name);
  if (i < 0) return nullptr;
  // RTLD_DEFAULT would find our own export first; what the program would have got
  // without us is the next definition after this library.
  void* real = real_dlsym()(handle == RTLD_DEFAULT ? RTLD_NEXT : handle, name);
  return real ? substitute(static_cast<HookId>(i), real) : nullptr;
}

void* substitute_proc(const char* base, int version, uint64_t flags, void* real) {
  if (!base || !real) return real;
  const bool ptsz = flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  int best = -1;
  for (int i = 0; i < kHookCount; ++i) {
    const HookInfo& h = hook_info(static_cast<HookId>(i));
    if (h.layer == Layer::kRuntime || std::strcmp(h.base, base) != 0 || h.since > version) continue;
    if (best < 0 || h.since > hook_info(static_cast<HookId>(best)).since ||
        (h.since == hook_info(static_cast<HookId>(best)).since && h.ptsz == ptsz))
      best = i;
  }
  // A version older than every ABI we know (e.g. the 32-bit cuMemAlloc) passes through.
  return best < 0 ? real : substitute(static_cast<HookId>(best), real);
}

void* any_real_driver_function() { return g_any_driver_fn.load(std::memory_order_acquire); }

}  // namespace cumemtrace::interpose
