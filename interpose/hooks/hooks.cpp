// Expands hook_table.def into: the exported entry points, kSlots wrappers per entry
// point (resolve.h explains slots), and the static facts each hook needs.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include "hooks/hooks_allocator.h"
#include "hooks/hooks_arrays_ipc.h"
#include "hooks/hooks_capture.h"
#include "hooks/hooks_driver.h"
#include "hooks/hooks_exec.h"
#include "hooks/hooks_exit.h"
#include "hooks/hooks_graph.h"
#include "hooks/hooks_runtime.h"
#include "hooks/hooks_start.h"
#include "resolve/resolve.h"

#define CUMEMTRACE_EXPORT __attribute__((visibility("default")))
// The arguments after `real`, each preceded by a comma (none for cudaDeviceReset()).
#define CUMEMTRACE_COMMA_ARGS(...) __VA_OPT__(, ) __VA_ARGS__

namespace cumemtrace::interpose {
namespace {

// What a hook returns when there is no real function to call: a program can only get
// here by linking against a symbol no loaded library defines.
template <class Ret>
Ret unresolved() {
  if constexpr (std::is_same_v<Ret, CUresult>) {
    return CUDA_ERROR_NOT_INITIALIZED;
  } else if constexpr (std::is_same_v<Ret, cudaError_t>) {
    return cudaErrorInitializationError;
  } else if constexpr (std::is_void_v<Ret>) {
    exit_without_libc();  // _exit itself: libc always has one, so this is never reached
  } else {
    errno = ENOSYS;  // an exec function libc does not have
    return -1;
  }
}

#define SLOT_WRAPPERS(Ret, symbol, body, params, args)                        \
  using symbol##_fn = Ret(*) params;                                          \
  template <int Slot>                                                         \
  Ret symbol##_slot params {                                                  \
    auto real = reinterpret_cast<symbol##_fn>(real_fn(HookId::symbol, Slot)); \
    if (!real) return unresolved<Ret>();                                      \
    return body(HookId::symbol, real CUMEMTRACE_COMMA_ARGS args);             \
  }
#define DRIVER_HOOK(symbol, body, base, since, params, args) SLOT_WRAPPERS(CUresult, symbol, body, params, args)
#define PROC_HOOK(symbol, body, base, since, params, args) SLOT_WRAPPERS(CUresult, symbol, body, params, args)
#define RUNTIME_HOOK(symbol, body, params, args) SLOT_WRAPPERS(cudaError_t, symbol, body, params, args)
#define EXEC_HOOK(symbol, body, params, args) SLOT_WRAPPERS(int, symbol, body, params, args)
#define EXIT_HOOK(symbol, body, params, args) SLOT_WRAPPERS(void, symbol, body, params, args)
#define START_HOOK(symbol, body, params, args) SLOT_WRAPPERS(int, symbol, body, params, args)
// An allocator hook with no real function still records: a program that defines no
// reporter of its own loses nothing by our having none to forward to.
#define ALLOCATOR_HOOK(symbol, mangled, body, params, args)                   \
  using symbol##_fn = void(*) params;                                         \
  template <int Slot>                                                         \
  void symbol##_slot params {                                                 \
    auto real = reinterpret_cast<symbol##_fn>(real_fn(HookId::symbol, Slot)); \
    body(HookId::symbol, real CUMEMTRACE_COMMA_ARGS args);                    \
  }
#include "hook_table.def"

static_assert(kSlots == 4, "the wrapper table below lists four slots");
#define WRAPPER_ROW(symbol)                                                                \
  {reinterpret_cast<void*>(&symbol##_slot<0>), reinterpret_cast<void*>(&symbol##_slot<1>), \
   reinterpret_cast<void*>(&symbol##_slot<2>), reinterpret_cast<void*>(&symbol##_slot<3>)},
void* const kWrappers[kHookCount][kSlots] = {
#define DRIVER_HOOK(symbol, body, base, since, params, args) WRAPPER_ROW(symbol)
#define PROC_HOOK(symbol, body, base, since, params, args) WRAPPER_ROW(symbol)
#define RUNTIME_HOOK(symbol, body, params, args) WRAPPER_ROW(symbol)
#define EXEC_HOOK(symbol, body, params, args) WRAPPER_ROW(symbol)
#define EXIT_HOOK(symbol, body, params, args) WRAPPER_ROW(symbol)
#define START_HOOK(symbol, body, params, args) WRAPPER_ROW(symbol)
#define ALLOCATOR_HOOK(symbol, mangled, body, params, args) WRAPPER_ROW(symbol)
#include "hook_table.def"
};

}  // namespace

void* slot_wrapper(HookId id, int slot) { return kWrappers[static_cast<int>(id)][slot]; }

}  // namespace cumemtrace::interpose

// The exported entry points. Their real function depends on who calls (resolve.h), so
// they pass their return address along; slot 0's wrapper is only for is_wrapper.
#define EXPORT_HOOK(Ret, symbol, body, params, args)                                                       \
  extern "C" CUMEMTRACE_EXPORT Ret symbol params {                                                         \
    using namespace cumemtrace::interpose;                                                                 \
    auto real = reinterpret_cast<symbol##_fn>(exported_real(HookId::symbol, __builtin_return_address(0))); \
    if (!real) return unresolved<Ret>();                                                                   \
    return body(HookId::symbol, real CUMEMTRACE_COMMA_ARGS args);                                          \
  }
#define DRIVER_HOOK(symbol, body, base, since, params, args) EXPORT_HOOK(CUresult, symbol, body, params, args)
#define PROC_HOOK(symbol, body, base, since, params, args) EXPORT_HOOK(CUresult, symbol, body, params, args)
#define RUNTIME_HOOK(symbol, body, params, args) EXPORT_HOOK(cudaError_t, symbol, body, params, args)
#define EXEC_HOOK(symbol, body, params, args) EXPORT_HOOK(int, symbol, body, params, args)
#define START_HOOK(symbol, body, params, args) EXPORT_HOOK(int, symbol, body, params, args)
// libc declares _exit and _Exit noreturn: no `return` in them, not even of a void.
#define EXIT_HOOK(symbol, body, params, args)                                                              \
  extern "C" CUMEMTRACE_EXPORT void symbol params {                                                        \
    using namespace cumemtrace::interpose;                                                                 \
    auto real = reinterpret_cast<symbol##_fn>(exported_real(HookId::symbol, __builtin_return_address(0))); \
    if (!real) exit_without_libc();                                                                        \
    body(HookId::symbol, real CUMEMTRACE_COMMA_ARGS args);                                                 \
  }
// Exported under the C++ name the framework's libraries bind to (the asm label).
#define ALLOCATOR_HOOK(symbol, mangled, body, params, args)                                                \
  extern "C" CUMEMTRACE_EXPORT void symbol params __asm__(mangled);                                        \
  extern "C" CUMEMTRACE_EXPORT void symbol params {                                                        \
    using namespace cumemtrace::interpose;                                                                 \
    auto real = reinterpret_cast<symbol##_fn>(exported_real(HookId::symbol, __builtin_return_address(0))); \
    body(HookId::symbol, real CUMEMTRACE_COMMA_ARGS args);                                                 \
  }
#include "hook_table.def"
