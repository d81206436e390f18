// Where the real functions come from, and which pointer the program gets instead.
//
// Every hooked entry point has kSlots wrappers. Slot 0 is the exported symbol, whose
// real function is the next definition after us (RTLD_NEXT). Slots 1.. are handed out
// when the program *looks a function up* — dlsym(handle, "cuMemAlloc_v2"),
// cuGetProcAddress("cuMemAlloc", ...), cudaGetDriverEntryPoint — because those paths
// never pass through symbol interposition (a static cudart and PyTorch's expandable
// segments reach the driver only that way). Each slot remembers the exact pointer the
// driver returned and calls that one, so the legacy/_ptsz variant and the ABI the
// caller asked for are kept without our having to know which one it was.
#pragma once

#include <dlfcn.h>

#include <atomic>
#include <cstdint>

#include "hook_ids.h"

namespace cumemtrace::interpose {

inline constexpr int kSlots = 4;

using DlsymFn = void* (*)(void*, const char*);
DlsymFn real_dlsym();

// `name` from the library `lib` into a typed slot, through the real dlsym; whether found.
template <class F>
bool bind_function(void* lib, F& slot, const char* name) {
  slot = reinterpret_cast<F>(real_dlsym()(lib, name));
  return slot != nullptr;
}

extern std::atomic<void*> g_slot_real[kHookCount][kSlots];

// The real function behind an exported hook, for a call from `caller` (a return address).
// Normally the next definition in the global scope (RTLD_NEXT), found once. When there
// is none, the caller's library was loaded with dlopen(RTLD_LOCAL) and brought its own
// libcudart/libcuda (how Python loads extension modules): then it is the definition
// visible from the caller's library, found once per library.
void* resolve_exported(HookId id, const void* caller);

inline void* real_fn(HookId id, int slot) {
  return g_slot_real[static_cast<int>(id)][slot].load(std::memory_order_acquire);
}
inline void* exported_real(HookId id, const void* caller) {
  void* fn = real_fn(id, 0);
  return fn ? fn : resolve_exported(id, caller);
}

// Generated in hooks.cpp from the table.
void* slot_wrapper(HookId id, int slot);

// The pointer to give the program in place of `real` (the driver's/runtime's answer for
// `id`): one of our wrappers, or `real` itself when all slots are taken.
void* substitute(HookId id, void* real);

// Whether dlsym(handle, name) may be ours to answer: every tracked name starts with "cu",
// and RTLD_NEXT is always forwarded (dlsym.cpp says why).
inline bool maybe_tracked(void* handle, const char* name) {
  return name && handle != RTLD_NEXT && name[0] == 'c' && name[1] == 'u';
}

// dlsym for a name we track (handle is not RTLD_NEXT): our wrapper for the definition
// the program would have found; nullptr when the name is not ours, or has no definition
// in `handle`, so that the caller falls through to the real dlsym; kAbsent when it has
// no definition but our own export (RTLD_DEFAULT): the program must get NULL, as without
// us, with dlerror() already saying why.
inline void* const kAbsent = reinterpret_cast<void*>(~uintptr_t{0});
void* hooked_dlsym(void* handle, const char* name);
// After a kAbsent answer to `caller` (a return address): the next dlerror() in this thread
// names the caller's object where glibc's message names ours (dlerror.cpp).
void note_absent_lookup(const void* caller);

// cuGetProcAddress / cudaGetDriverEntryPointByVersion: `real` is what the driver
// returned for (base name, cudaVersion, flags); returns what the program should get.
void* substitute_proc(const char* base, int version, uint64_t flags, void* real);

// True if `fn` is one of our wrappers (so a pointer we handed out is not wrapped twice).
bool is_wrapper(const void* fn);

// Some real driver function, once one is known: lets driver_api.cpp find libcuda.
void* any_real_driver_function();

}  // namespace cumemtrace::interpose
