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

#include <atomic>
#include <cstdint>

#include "hook_ids.h"

namespace cumemtrace::interpose {

inline constexpr int kSlots = 4;

using DlsymFn = void* (*)(void*, const char*);
DlsymFn real_dlsym();

extern std::atomic<void*> g_slot_real[kHookCount][kSlots];
void* resolve_exported(HookId id);  // slot 0, on first use

inline void* real_fn(HookId id, int slot) {
  void* fn = g_slot_real[static_cast<int>(id)][slot].load(std::memory_order_acquire);
  return fn || slot != 0 ? fn : resolve_exported(id);
}

// Generated in hooks.cpp from the table.
void* slot_wrapper(HookId id, int slot);

// The pointer to give the program in place of `real` (the driver's/runtime's answer for
// `id`): one of our wrappers, or `real` itself when all slots are taken.
void* substitute(HookId id, void* real);

// dlsym for a name we track (handle is not RTLD_NEXT); nullptr when the name is not
// ours or has no real definition, so the caller falls through to the real dlsym.
void* hooked_dlsym(void* handle, const char* name);

// cuGetProcAddress / cudaGetDriverEntryPointByVersion: `real` is what the driver
// returned for (base name, cudaVersion, flags); returns what the program should get.
void* substitute_proc(const char* base, int version, uint64_t flags, void* real);

// True if `fn` is one of our wrappers (so a pointer we handed out is not wrapped twice).
bool is_wrapper(const void* fn);

// Some real driver function, once one is known: lets driver_api.cpp find libcuda.
void* any_real_driver_function();

}  // namespace cumemtrace::interpose
