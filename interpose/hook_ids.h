// Identifiers and static facts of every hooked entry point, generated from
// hook_table.def. A HookId doubles as the trace's api id (ApiNameRecord).
#pragma once

#include <cstdint>

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

const HookInfo& hook_info(HookId id);

}  // namespace cumemtrace::interpose
