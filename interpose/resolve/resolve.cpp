#include "resolve/resolve.h"

#include <cuda.h>
#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <mutex>

#include <cstring>
#include <string_view>

#include "base/errno_guard.h"
#include "base/loader_lock.h"
#include "resolve/object_range.h"
#include "base/log.h"

namespace cumemtrace::interpose {

std::atomic<void*> g_slot_real[kHookCount][kSlots];
namespace {
std::atomic<void*> g_any_driver_fn{nullptr};

// Remembers a function of the real libcuda, for driver_api.cpp to find the library by.
void note_real(HookId id, void* fn) {
  const Layer layer = hook_info(id).layer;
  if (fn && (layer == Layer::kDriver || layer == Layer::kProcAddress)) {
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

namespace {

// Per-library answers for hooks with no global definition (resolve.h). Entries are
// written once, under the mutex, and read without it: `fn` is published last.
struct CallerEntry {
  std::atomic<uint64_t> start{0}, end{0};
  std::atomic<void*> fn{nullptr};
};
constexpr int kCallerEntries = 8;
CallerEntry g_callers[kHookCount][kCallerEntries];
std::atomic<bool> g_no_global[kHookCount];
std::mutex g_callers_mu;

void* resolve_for_caller(HookId id, const void* caller) {
  auto& entries = g_callers[static_cast<int>(id)];
  const auto at = reinterpret_cast<uint64_t>(caller);
  for (auto& e : entries) {
    void* fn = e.fn.load(std::memory_order_acquire);
    if (!fn) break;
    if (at >= e.start.load(std::memory_order_relaxed) && at < e.end.load(std::memory_order_relaxed)) return fn;
  }
  const ErrnoGuard keep_errno;
  const LoaderUse in_loader;
  Dl_info info{};
  if (!dladdr(caller, &info) || !info.dli_fname || !*info.dli_fname) return nullptr;
  // RTLD_NOLOAD: a handle to the caller's library as loaded; dlsym on it searches that
  // library and its dependencies, the scope its own references resolve in.
  void* lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (!lib) return nullptr;
  void* fn = real_dlsym()(lib, hook_info(id).symbol);
  dlclose(lib);
  if (!fn || is_wrapper(fn)) return nullptr;
  note_real(id, fn);
  const AddressRange range = loaded_object_range(info.dli_fbase);
  std::lock_guard lock(g_callers_mu);
  for (auto& e : entries) {
    if (e.fn.load(std::memory_order_relaxed)) continue;
    e.start.store(range.start, std::memory_order_relaxed);
    e.end.store(range.end, std::memory_order_relaxed);
    e.fn.store(fn, std::memory_order_release);
    break;
  }  // a full table only means this library's calls take the slow path each time
  return fn;
}

}  // namespace

void* resolve_exported(HookId id, const void* caller) {
  const int i = static_cast<int>(id);
  if (!g_no_global[i].load(std::memory_order_relaxed)) {
    void* fn = real_dlsym()(RTLD_NEXT, hook_info(id).symbol);
    if (fn) {
      g_slot_real[i][0].store(fn, std::memory_order_release);
      note_real(id, fn);
      return fn;
    }
    g_no_global[i].store(true, std::memory_order_relaxed);
  }
  return resolve_for_caller(id, caller);
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
  log_once_warn("all slots of {} are taken; calls through one more pointer go untracked", hook_info(id).symbol);
  return real;
}

namespace {
// Whether `fn` lies in this library (one of our exported entry points).
bool is_own(const void* fn) {
  const ErrnoGuard keep_errno;
  const LoaderUse in_loader;
  Dl_info mine{}, its{};
  return dladdr(reinterpret_cast<const void*>(&is_wrapper), &mine) && dladdr(fn, &its) &&
         mine.dli_fbase == its.dli_fbase;
}
}  // namespace

void* hooked_dlsym(void* handle, const char* name) {
  const int i = find_symbol(name);
  if (i < 0) return nullptr;
  void* real = nullptr;
  if (handle == RTLD_DEFAULT) {
    // Without us the program gets the first definition in its scope. One before ours (the
    // program's own, an earlier preload's) is what it gets, as it is; when the first is
    // our own export, it would have got the next definition after this library.
    real = real_dlsym()(RTLD_DEFAULT, name);
    if (real && !is_own(real)) return real;
    real = real_dlsym()(RTLD_NEXT, name);
  } else {
    real = real_dlsym()(handle, name);
  }
  const ErrnoGuard keep_errno;  // as the real lookup left it
  if (!real) return handle == RTLD_DEFAULT ? kAbsent : nullptr;
  return substitute(static_cast<HookId>(i), real);
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
