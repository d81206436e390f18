// Identifiers and static facts of every hooked entry point, generated from
// hook_table.def. A HookId doubles as the trace's api id (ApiNameRecord).
#pragma once

#include <cstdint>
#include <string_view>

namespace cumemtrace::interpose {

enum class HookId : uint16_t {
#define DRIVER_HOOK(symbol, body, base, since, params, args) symbol,
#define RUNTIME_HOOK(symbol, body, params, args) symbol,
#define PROC_HOOK(symbol, body, base, since, params, args) symbol,
#define EXEC_HOOK(symbol, body, params, args) symbol,
#define EXIT_HOOK(symbol, body, params, args) symbol,
#define START_HOOK(symbol, body, params, args) symbol,
#define ALLOCATOR_HOOK(symbol, mangled, body, params, args) symbol,
#include "hook_table.def"
  kCount
};
inline constexpr int kHookCount = static_cast<int>(HookId::kCount);

enum class Layer : uint8_t { kDriver, kRuntime, kProcAddress, kExec, kExit, kStart, kAllocator };

struct HookInfo {
  const char* symbol;  // exported name (an allocator hook's: its mangled C++ name), also what dlsym is asked for
  const char* base;    // cuGetProcAddress name (driver layer), else == symbol
  int since;           // lowest cudaVersion cuGetProcAddress returns this ABI for
  Layer layer;
  bool ptsz;  // per-thread default stream twin
};

// Constant data, there from the library's load: resolve/ looks rows up in the first dlsym,
// which may come before any constructor of ours has run.
inline constexpr HookInfo kHookInfo[kHookCount] = {
#define DRIVER_HOOK(symbol, body, base, since, params, args) \
  {#symbol, base, since, Layer::kDriver, std::string_view(#symbol).ends_with("_ptsz")},
#define PROC_HOOK(symbol, body, base, since, params, args) {#symbol, base, since, Layer::kProcAddress, false},
#define RUNTIME_HOOK(symbol, body, params, args) {#symbol, #symbol, 0, Layer::kRuntime, false},
#define EXEC_HOOK(symbol, body, params, args) {#symbol, #symbol, 0, Layer::kExec, false},
#define EXIT_HOOK(symbol, body, params, args) {#symbol, #symbol, 0, Layer::kExit, false},
#define START_HOOK(symbol, body, params, args) {#symbol, #symbol, 0, Layer::kStart, false},
#define ALLOCATOR_HOOK(symbol, mangled, body, params, args) {mangled, mangled, 0, Layer::kAllocator, false},
#include "hook_table.def"
};

inline const HookInfo& hook_info(HookId id) { return kHookInfo[static_cast<int>(id)]; }

}  // namespace cumemtrace::interpose
